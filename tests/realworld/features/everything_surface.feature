@realworld
Feature: The reference server's resources, prompts, completions and logging

  Background:
    Given the MCP server "everything" is running

  Scenario: Resources and templates
    When I list the resources
    Then the resources include "demo://resource/static/document/features.md"
    When I list the resource templates
    Then the resource templates include "demo://resource/dynamic/text/{resourceId}"
    When I read the resource "demo://resource/dynamic/text/1"
    Then the resource text contains "Resource 1"
    When I read the resource "demo://resource/dynamic/blob/1"
    Then the resource is binary

  Scenario: Subscribing to a resource brings updates
    When I call the tool "toggle-subscriber-updates"
    And I subscribe to the resource "demo://resource/dynamic/text/1"
    Then I receive an update for the resource "demo://resource/dynamic/text/1" within 15 seconds

  Scenario: Prompts with arguments
    When I list the prompts
    Then the prompts include "args-prompt"
    When I get the prompt "args-prompt" with:
      | city  |
      | Paris |
    Then the prompt has 1 messages
    And prompt message 1 is from the "user" and contains "Paris"

  Scenario: Completions
    When I ask for completions of the argument "department" of the prompt "completable-prompt" with "Eng"
    Then the completions include "Engineering"

  Scenario: Logging
    Given the log level is "debug"
    When I call the tool "toggle-simulated-logging"
    Then I receive a "log message" notification within 15 seconds
