@realworld
Feature: The reference server's URL elicitations and the schema of its forms

  Scenario: The client completes a URL elicitation, answering without content
    Given the client completes URL elicitations
    And the MCP server "everything" is running
    When I call the tool "trigger-url-elicitation" with:
      | url                              | elicitationId |
      | https://example.com/connect/bank | flow-42       |
    Then the tool call succeeds
    And the server requested a URL elicitation of "https://example.com/connect/bank"
    When I remember the elicitation id as "flow"
    Then the result text contains "Elicitation ID: ${flow}"
    And the result text contains "completed the URL elicitation"
    And the result text does not contain "content"

  Scenario: The client declines a URL elicitation
    Given the client declines URL elicitations
    And the MCP server "everything" is running
    When I call the tool "trigger-url-elicitation" with:
      | url                         |
      | https://example.com/consent |
    Then the result text contains "declined"

  Scenario: A request that needs a URL elicitation first is refused with -32042 and what to open
    Given the client completes URL elicitations
    And the MCP server "everything" is running
    When I call the tool "trigger-url-elicitation" with:
      | url                         | errorPath |
      | https://example.com/consent | true      |
    Then the request is rejected with error code -32042
    And the error asks for a URL elicitation of "https://modelcontextprotocol.io"

  Scenario: The form's schema: types, required fields, defaults and choices
    Given the client accepts elicitation requests with:
      | name |
      | Ada  |
    And the MCP server "everything" is running
    When I call the tool "trigger-elicitation-request"
    Then the tool call succeeds
    And the elicitation asked for the field "name" of type "string"
    And the elicitation asked for the field "integer" of type "integer"
    And the elicitation field "name" is required
    And the elicitation field "integer" defaults to 42
    And the elicitation field "number" defaults to 3.14
    And the elicitation field "titledSingleSelectEnum" defaults to "hero-1"
    And the elicitation field "firstLine" defaults to "It was a dark and stormy night."
    And the elicitation field "untitledSingleSelectEnum" defaults to "Monica"
    And the elicitation field "untitledMultipleSelectEnum" defaults to ["Guitar"]
    And the elicitation asked for the field "check" of type "boolean"
    And the elicitation field "untitledSingleSelectEnum" offers the choices:
      | value  |
      | Monica |
      | Phoebe |
    And the elicitation field "untitledMultipleSelectEnum" offers the choices:
      | value  |
      | Guitar |
      | Drums  |
    And the elicitation field "titledSingleSelectEnum" offers the choices:
      | value  |
      | hero-1 |
      | hero-3 |
    And the elicitation field "legacyTitledEnum" offers the choices:
      | value |
      | pet-1 |
      | pet-5 |
    And the elicitation field "titledMultipleSelectEnum" offers the choices:
      | value  |
      | fish-2 |
