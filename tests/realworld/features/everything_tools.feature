@realworld
Feature: The MCP reference server "everything": tools
  The npm reference server exercises every protocol feature. Run over stdio by default and over
  Streamable HTTP with -D transport=streamable-http.

  Background:
    Given the MCP server "everything" is running

  Scenario: Identity and capabilities
    Then the server name is "mcp-servers/everything"
    And the server supports tools
    And the server supports resource subscriptions
    And the server supports completions
    And the protocol version is "2025-11-25"
    When I ping the server

  Scenario: Discovery without client callbacks
    When I list the tools
    Then the tools include:
      | name                           |
      | echo                           |
      | get-sum                        |
      | get-structured-content         |
      | trigger-long-running-operation |
    And the tool list does not include "trigger-sampling-request"
    And the tool "get-sum" requires the arguments:
      | name |
      | a    |
      | b    |
    And the tool "get-sum" argument "a" is of type "number"
    And the tool "get-structured-content" has an output schema

  Scenario: Echo and arithmetic
    When I call the tool "echo" with:
      | message       |
      | hello, world! |
    Then the tool call succeeds
    And the result text contains "hello, world!"
    When I call the tool "get-sum" with:
      | a | b   |
      | 2 | 3.5 |
    Then the result text contains "5.5"

  Scenario: Structured content conforms to its output schema
    When I call the tool "get-structured-content" with:
      | location |
      | Chicago  |
    Then the tool call succeeds
    And the result contains:
      """json
      {"temperature": "#number", "conditions": "#string", "humidity": "#number"}
      """
    And the result conforms to the tool's output schema

  Scenario: Images and resource links
    When I call the tool "get-tiny-image"
    Then the result contains an image of type "image/png"
    When I call the tool "get-resource-links" with:
      | count |
      | 2     |
    Then the result contains a link to the resource "demo://resource/dynamic/text/2"
    And the result contains a link to the resource "demo://resource/dynamic/blob/1"

  Scenario: Progress of a long-running operation
    When I call the tool "trigger-long-running-operation" with:
      | duration | steps |
      | 0.6      | 3     |
    Then the tool call succeeds
    And I received at least 3 progress notifications
    And the progress never decreased

  Scenario: An unknown tool is an error
    When I call the tool "no-such-tool"
    Then the tool call fails with an error mentioning "no-such-tool"
