@tasks
Feature: Long reports on the 2026-07-28 tasks extension
  On 2026-07-28 Tasks are an extension (io.modelcontextprotocol/tasks): the server offers it
  among its capabilities' extensions, spells a task's durations in whole milliseconds under
  new names, and inlines the result in the task once it is complete.

  Background:
    Given the MCP server "reports" is running

  Scenario: The server offers tasks as the extension
    Then the protocol version is "2026-07-28"
    And the server supports tasks

  Scenario: A task's durations are whole milliseconds, under the extension's names
    When I call the tool "report" as a task with:
      | title | pages |
      | Q3    | 2     |
    Then the task is created
    And the task at "$.ttlMs" is "#integer"
    And the task at "$.pollIntervalMs" is "#integer"
    And the task has no field "ttl"
    And the task has no field "pollInterval"

  Scenario: The finished task carries its result
    When I call the tool "report" as a task with:
      | title | pages |
      | Q4    | 1     |
    Then the task status becomes "completed"
    And the task at "$.result.structuredContent.title" is "Q4"
