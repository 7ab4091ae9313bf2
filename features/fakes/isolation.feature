@fakes
Feature: Every scenario starts from a clean slate
  Tests that share state pass or fail depending on their order, and nobody trusts them. Each
  scenario therefore gets its own database file and its own payment provider: the orders,
  users and charges of one scenario are never seen by the next.

  Background:
    Given the fake HTTP service "payments" responds to POST "/charges" with status 200
    And the MCP server "shop" is running

  Rule: Orders and charges do not leak between scenarios

    Scenario: A first customer orders and pays
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 10       |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the fake HTTP service "payments" received 1 request to "/charges"
      And the table "orders" of the fake database "shop" has 1 row

    Scenario: The next scenario sees a full shelf, no orders and no charges
      When I call the tool "check_stock" with:
        | product_id |
        | PROD-123   |
      Then the result at "$.quantity" is 10
      And the table "orders" of the fake database "shop" has 0 rows
      And the fake HTTP service "payments" received no requests

  Rule: The catalogue is whatever the scenario puts in the database

    Scenario Outline: A catalogue of just <first> and <second>
      Given the table "inventory" of the fake database "shop" contains:
        | product_id | quantity | price   |
        | <first>    | 1        | 1.5     |
        | <second>   | 2        | 2.5     |
      When I call the tool "list_products"
      Then the result at "$.count" is 2
      And the result at "$.items[0].product_id" is "<first>"
      And the result at "$.items[1].quantity" is 2

      Examples:
        | first  | second  |
        | APPLE  | BANANA  |
        | PEN-1  | PEN-2   |

    Scenario: A catalogue without prices still works
      Given the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | TOY-1      | 4        |
      When I call the tool "create_order" with:
        | product_id | quantity |
        | TOY-1      | 1        |
      Then the tool call succeeds
      And the result at "$.total" is null
