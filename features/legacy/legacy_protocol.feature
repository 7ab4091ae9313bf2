@legacy
Feature: Clients that speak the 2025-11-25 protocol
  Not every client has moved to the current protocol. Older clients open a session with a
  handshake, check the server is alive with a ping, subscribe to resources and set how much
  logging they want. The shop keeps serving them: every scenario here talks to the shop
  configured for that older protocol ("shop-legacy").

  Background:
    Given the MCP server "shop-legacy" is running

  Rule: The handshake agrees on the older protocol

    Scenario: The session uses protocol 2025-11-25
      Then the protocol version is "2025-11-25"
      And the server name is "shop"
      And the server supports resource subscriptions

    Scenario: The shop answers a ping
      When I ping the server
      Then the server still responds

    Scenario Outline: Checking the stock of <product> works as on the current protocol
      When I call the tool "check_stock" with:
        | product_id |
        | <product>  |
      Then the tool call succeeds
      And the result at "$.quantity" is <quantity>

      Examples:
        | product  | quantity |
        | PROD-123 | 10       |
        | PROD-456 | 0        |

  Rule: Subscribers hear about changes to a resource

    @surface @resources
    Scenario: Ordering updates the catalogue for its subscribers
      When I subscribe to the resource "shop://catalog"
      And I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 1        |
      Then I receive an update for the resource "shop://catalog" within 2 seconds
      And I receive a "resource updated" notification within 1 seconds

  Rule: The client chooses how much the shop logs

    @surface @notifications
    Scenario: Setting the log level during a session
      Given the log level is "info"
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 1        |
      Then the server logged a "info" message containing "created: 1 x PROD-123"
