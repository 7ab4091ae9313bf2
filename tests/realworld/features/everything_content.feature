@realworld
Feature: The reference server's rich content, context-aware completions and unsubscribing

  Background:
    Given the MCP server "everything" is running

  Scenario: Content annotated for its audience and priority
    When I call the tool "get-annotated-message" with:
      | messageType | includeImage |
      | success     | true         |
    Then the tool call succeeds
    And the result has content for the "user" audience with priority 0.7
    And the result has content for the "user" audience with priority 0.5
    And the result contains an image of type "image/png"

  Scenario: A tool answers with an embedded text resource
    When I call the tool "get-resource-reference" with:
      | resourceType | resourceId |
      | Text         | 3          |
    Then the tool call succeeds
    And the result embeds the resource "demo://resource/dynamic/text/3" with text containing "Resource 3"

  Scenario: A prompt embeds a resource
    When I get the prompt "resource-prompt" with:
      | resourceType | resourceId |
      | Text         | 2          |
    Then the prompt has 2 messages
    And prompt message 2 contains a link to the resource "demo://resource/dynamic/text/2"
    And the result embeds the resource "demo://resource/dynamic/text/2" with text containing "Resource 2"

  Scenario: Completions narrowed by the arguments already chosen
    When I ask for completions of the argument "name" of the prompt "completable-prompt" with "" given:
      | department |
      | Sales      |
    Then the completions include "Eve"
    When I ask for completions of the argument "name" of the prompt "completable-prompt" with "" given:
      | department  |
      | Engineering |
    Then the completions include "Alice"

  Scenario: Unsubscribing from a resource
    When I subscribe to the resource "demo://resource/dynamic/text/1"
    And I unsubscribe from the resource "demo://resource/dynamic/text/1"
    Then the server still responds
