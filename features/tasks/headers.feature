@tasks
Feature: Tasks requests carry their routing headers
  Over streamable HTTP on 2026-07-28 a gateway routes a request by its headers: Mcp-Method names
  the method and, for the tasks requests about one task, Mcp-Name names the task. The reports
  server answers a request whose headers match its body, and refuses one whose headers do not.

  Scenario: A tasks request whose headers match its body is answered
    Given the MCP server "reports-http" is running
    When I call the tool "report" as a task with:
      | title  | pages |
      | Routed | 5000  |
    And I send "tasks/get" for the task
    Then the answer has the result type "complete"
    And the task at "$.status" is "working"
    When I cancel the task
    Then the task status becomes "cancelled"

  Scenario: A call whose Mcp-Method names another method is refused
    Given the client sends a wrong Mcp-Method header
    And the MCP server "reports-http" is running
    When I call the tool "ping"
    Then the request is rejected with error code -32020

  Scenario: A tasks request whose Mcp-Name names another task is refused
    Given the client sends a wrong Mcp-Name header on tasks requests
    And the MCP server "reports-http" is running
    When I call the tool "report" as a task with:
      | title     | pages |
      | Misrouted | 1     |
    Then the task is created
    When I send "tasks/get" for the task
    Then the request is rejected with error code -32020
    When I send "tasks/cancel" for the task
    Then the request is rejected with error code -32020
