@fakes @postgres
Feature: Orders kept in a real PostgreSQL database
  Most servers worth testing sit in front of a database. The orders service keeps its products
  and orders in PostgreSQL; each scenario gets a database of its own, copied from the schema in
  demo/db/orders.sql, so what one scenario sells never shows in the next. The server finds it
  through DATABASE_URL = "${fake.ordersdb.url}" in its configuration.

  Background:
    Given the table "products" of the fake database "ordersdb" contains:
      | id     | name          | price | stock | active | attributes            |
      | PEN-1  | Fountain pen  | 24.50 | 5     | yes    | {"colour": "blue"}    |
      | INK-1  | Ink cartridge | 3.20  | 40    | yes    | {"pack": 5}           |
      | NIB-9  | Gold nib      | 80    | 1     | no     | {}                    |
    And the MCP server "orders-pg" is running

  Scenario: An order takes its quantity from the stock and is recorded
    When I call the tool "place_order" with:
      | product_id | quantity |
      | PEN-1      | 2        |
    Then the tool call succeeds
    And the result at "$.total" is 49.0
    And the table "orders" of the fake database "ordersdb" contains:
      | product_id | quantity | total | status |
      | PEN-1      | 2        | 49.00 | placed |
    And the table "products" of the fake database "ordersdb" contains:
      | id    | stock | active | attributes          |
      | PEN-1 | 3     | true   | {"colour": "blue"}  |

  Scenario: The next scenario starts from the seeded catalogue, with no orders
    When I call the tool "list_products"
    Then the result at "$.count" is 2
    And the result at "$.items[1].stock" is 5
    And the table "orders" of the fake database "ordersdb" has 0 rows

  Scenario: An inactive product cannot be ordered, and nothing is written
    When I call the tool "place_order" with:
      | product_id | quantity |
      | NIB-9      | 1        |
    Then the tool call fails with an error mentioning "Unknown product"
    And the table "orders" of the fake database "ordersdb" has 0 rows

  Scenario: Cancelling puts the stock back
    Given the table "orders" of the fake database "ordersdb" contains:
      | id  | product_id | quantity | total | placed_at              |
      | 100 | INK-1      | 10       | 32.00 | 2026-03-01 09:30:00+00 |
    When I call the tool "cancel_order" with:
      | order_id |
      | 100      |
    Then the tool call succeeds
    And the table "orders" of the fake database "ordersdb" contains:
      | id  | status    | placed_at           |
      | 100 | cancelled | 2026-03-01T09:30:00 |
    And the table "products" of the fake database "ordersdb" contains:
      | id    | stock |
      | INK-1 | 50    |
