@smoke @server
Feature: Meeting the shop server
  Before an AI assistant can sell anything it has to find the shop and learn what it can do.
  The shop introduces itself by name and version and declares the capabilities it offers,
  so a client knows which questions it may ask. If this handshake breaks, nothing else works.

  Background:
    Given the MCP server "shop" is running

  Rule: The shop says who it is

    Scenario: The shop introduces itself by name and version
      Then the server name is "shop"
      And the server version is "1.0.0"

    Scenario: The shop speaks the current protocol by default
      Then the protocol version is "2026-07-28"

    Scenario: The shop tells the assistant how its tools fit together
      Then the server instructions mention "orders"
      And the server instructions mention "check_stock"

  Rule: The shop declares everything it offers

    Scenario Outline: The shop supports <capability>
      Then the server supports <capability>

      Examples: What the shop offers
        | capability             |
        | tools                  |
        | resources              |
        | prompts                |
        | completions            |
        | logging                |
        | tools list changes     |
        | resources list changes |
        | prompts list changes   |

    Scenario: The shop keeps answering after a conversation
      When I call the tool "list_products"
      Then the tool call succeeds
      And the server still responds
