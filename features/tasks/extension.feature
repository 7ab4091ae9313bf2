@tasks
Feature: Long reports on the 2026-07-28 tasks extension
  On 2026-07-28 Tasks are an extension (io.modelcontextprotocol/tasks): the server offers it
  among its capabilities' extensions, spells a task's durations in whole milliseconds under
  new names, and inlines the result in the task once it is complete.

  Background:
    Given the MCP server "reports-ext" is running

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
    And the task at "$.result.structuredContent.pages" is 1
    And the task at "$.result.isError" is false

  Scenario: Tasks are offered only as the extension
    Then the server offers tasks only as the extension

  Scenario: Only a request that declares the extension may ask about a task
    When I call the tool "report" as a task with:
      | title  | pages |
      | Gated  | 5000  |
    Then the task is created
    When I send "tasks/get" for the task without the tasks extension
    Then the request is rejected with error code -32021
    When I send "tasks/update" for the task without the tasks extension
    Then the request is rejected with error code -32021
    When I send "tasks/cancel" for the task without the tasks extension
    Then the request is rejected with error code -32021
    And the task status becomes "working"
    When I cancel the task
    Then the task status becomes "cancelled"

  Scenario: A plain call of a tool that may run as a task is answered at once
    When I call the tool "report" with:
      | title | pages |
      | Now   | 1     |
    Then the tool call succeeds
    And the answer has the result type "complete"
    And the result at "$.title" is "Now"

  Scenario: A finished task stays available, its inlined result without the task's metadata
    When I call the tool "report" as a task with:
      | title | pages |
      | Q5    | 1     |
    Then the task status becomes "completed"
    And the task at "$.result.structuredContent.title" is "Q5"
    And the task has nothing at "$.result._meta['io.modelcontextprotocol/related-task']"
    And the task is still available

  Scenario: A task carries no request state, at creation or while it runs
    When I call the tool "report" as a task with:
      | title | pages |
      | Long  | 5000  |
    Then the task has no field "requestState"
    When I send "tasks/get" for the task
    Then the task at "$.status" is "working"
    And the task has no field "requestState"
    When I cancel the task
    Then the task status becomes "cancelled"

  Scenario: The methods the extension removed are refused, and so is a task nobody created
    When I call the tool "report" as a task with:
      | title | pages |
      | Q6    | 1     |
    And I send "tasks/result" for the task
    Then the request is rejected with error code -32601
    When I send "tasks/list" for the task
    Then the request is rejected with error code -32601
    When I send "tasks/get" for the task "tasks-conformance-nonexistent-12345"
    Then the request is rejected with error code -32602

  Scenario: A task exists as soon as its call is answered, and every answer about it is complete
    When I call the tool "report" as a task with:
      | title   | pages |
      | Durable | 5000  |
    Then the answer has the result type "task"
    When I send "tasks/get" for the task
    Then the answer has the result type "complete"
    And the task at "$.status" is "working"
    When I send "tasks/update" for the task
    Then the answer has the result type "complete"
    When I send "tasks/cancel" for the task
    Then the answer has the result type "complete"
    And the task status becomes "cancelled"

  Scenario: The 2025-11-25 task hint is ignored by a tool without tasks
    When I call the tool "ping" with the legacy task hint
    Then the tool call succeeds
    And the answer has the result type "complete"
    And the result text is "pong"
