@surface @notifications
Feature: Keeping the assistant informed while it works
  Long jobs should not feel like a black box. The shop reports progress while it imports a
  catalogue, writes a log of what it does (at the level of detail the client asks for) and
  announces when its list of tools changes, so an assistant always works with up-to-date
  knowledge.

  Rule: The shop logs what it does, at the level asked for

    Scenario: A new order is logged
      Given the log level is "info"
      And the MCP server "shop" is running
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 2        |
      And I remember the result at "$.id" as "order"
      Then the server logged a "info" message containing "Order ${order} created: 2 x PROD-123"
      And I receive a "log message" notification within 1 seconds

    Scenario: Payment details are logged at debug level
      Given the fake HTTP service "payments" responds to POST "/charges" with status 201
      And the MCP server "shop" is running
      And the log level is "debug"
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-789   | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the server logged a "debug" message containing "Charging 12.5 for order ${order}"
      And the server logged a "info" message containing "Order ${order} paid"

  Rule: Long jobs report their progress

    Scenario Outline: Importing <count> products reports progress all the way
      Given the MCP server "shop" is running
      When I call the tool "import_catalog" with:
        | count   |
        | <count> |
      Then the tool call succeeds
      And the result at "$.imported" is <count>
      And the result at "$.product_ids" has <count> items
      And I received at least <count> progress notifications
      And the progress never decreased
      And I receive a "progress" notification within 1 seconds

      Examples:
        | count |
        | 3     |
        | 10    |

  Rule: The shop announces when its tools change

    Scenario: Enabling the admin tools announces a new tool
      Given the MCP server "shop" is running
      When I call the tool "enable_admin_tools"
      Then the tool call succeeds
      And the result at "$.added" contains "purge_orders"
      And I receive a "tools list changed" notification within 2 seconds
      When I list the tools
      Then the tool list includes "purge_orders"
      And the tool "purge_orders" is marked destructive
