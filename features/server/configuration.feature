@server
Feature: Running the shop in different set-ups
  The same shop runs on a laptop without any payment provider, in a test environment with a
  fake one, and for clients connecting in different ways. Its behaviour must follow its
  configuration, never a leftover from somewhere else. (Every feature of this folder also runs
  over stdio, streamable HTTP and SSE: `behave -D transport=stdio features/`.)

  Rule: Without a payment provider, payments are simulated

    @payments
    Scenario: A shop with no payment provider configured
      Given the MCP server "shop" is running with the environment:
        | name         | value |
        | PAYMENTS_URL |       |
      When I list the tools
      Then the tool "pay_order" description mentions "payments are simulated and succeed"
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the result at "$.status" is "paid"
      And the result at "$.charge_id" matches "^ch_simulated_ord-"

    @payments
    Scenario: A shop with a payment provider does not simulate
      Given the MCP server "shop" is running
      Then the tool "pay_order" description mentions "payment provider"
      And the tool "pay_order" description mentions "status becomes 'paid'"
