@realworld
Feature: The reference server asks the client: sampling, elicitation, roots

  Scenario: The client answers a sampling request
    Given the client answers sampling requests with "It is four."
    And the MCP server "everything" is running
    When I call the tool "trigger-sampling-request" with:
      | prompt          |
      | What is 2 + 2?  |
    Then the tool call succeeds
    And the result text contains "It is four."
    And the server requested sampling 1 time
    And the last sampling request contains "2 + 2"

  Scenario: The client accepts an elicitation
    Given the client accepts elicitation requests with:
      | name | check | integer | number |
      | Ada  | true  | 7       | 2.5    |
    And the MCP server "everything" is running
    When I call the tool "trigger-elicitation-request"
    Then the tool call succeeds
    And the result text contains "Ada"
    And the server requested elicitation with a message containing "provide inputs"

  Scenario: The client declines an elicitation
    Given the client declines elicitation requests
    And the MCP server "everything" is running
    When I call the tool "trigger-elicitation-request"
    Then the result text contains "declined"

  Scenario: The client exposes its roots
    Given the client exposes the roots:
      | uri                  | name |
      | file:///srv/projects | work |
    And the MCP server "everything" is running
    When I call the tool "get-roots-list"
    Then the result text contains "file:///srv/projects"
