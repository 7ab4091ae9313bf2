@tasks
Feature: Long reports run as tasks
  Building a long report takes a while. Instead of holding the call open, the reports server
  answers a task-augmented call with a task at once; the assistant follows its status, fetches
  the report when it is ready, and may cancel one it no longer needs. A tool that only ever runs
  in the background says so, and the server keeps a list of the tasks it runs.

  Background:
    Given the MCP server "reports" is running

  Rule: Tools say whether they run as tasks

    Scenario: The report tool may run as a task, archiving only as one
      Then the tool "report" supports tasks
      And the tool "archive" supports tasks
      And the tool "archive" requires tasks

  Rule: A task is followed until its result is ready

    @smoke
    Scenario: A report built as a task becomes the result
      When I call the tool "report" as a task with:
        | title | pages |
        | Q1    | 3     |
      Then the task is created
      And the task status becomes "completed"
      And the task at "$.createdAt" is "#string"
      And the task at "$.lastUpdatedAt" is "#string"
      When I wait for the task result
      Then the tool call succeeds
      And the result at "$.title" is "Q1"
      And the result at "$.pages" is 3

    Scenario: Archiving runs only as a task
      When I call the tool "archive" as a task with:
        | year |
        | 2025 |
      Then the task is created
      When I wait for the task result
      Then the result at "$.archived" is 12

    Scenario: A task the assistant no longer needs is cancelled
      When I call the tool "report" as a task with:
        | title  | pages |
        | Annual | 5000  |
      Then the task status becomes "working"
      When I cancel the task
      Then the task status becomes "cancelled"

    Scenario: A report that cannot be built fails with the reason
      When I call the tool "report" as a task with:
        | title | pages |
        | Empty | 0     |
      Then the task status becomes "failed"

  @legacy-only
  Rule: The server lists its tasks (2025-11-25; the 2026-07-28 extension has no tasks/list)

    Scenario: A task the server runs is in its task list
      When I call the tool "archive" as a task
      Then the task is created
      When I list the tasks
      Then the task list includes the task

    Scenario: A task says how long it is kept and how often to ask
      When I call the tool "report" as a task with:
        | title | pages |
        | Q2    | 2     |
      Then the task is created
      And the task at "$.ttl" is "#number"
      And the task at "$.pollInterval" is "#number"

    Scenario: Archiving without a task is refused
      When I call the tool "archive" with:
        | year |
        | 2025 |
      Then the request is rejected with error code -32601
