@orders
Feature: Ordering products
  Customers order through their assistant. An order reserves stock the moment it is created,
  so two customers can never buy the same last unit; cancelling gives the stock back. When an
  order cannot be placed, the assistant is told why and what to do instead, so it can help the
  customer rather than give up.

  Background: A small catalogue
    Given the table "inventory" of the fake database "shop" contains:
      | product_id | quantity | price |
      | LAMP-01    | 5        | 25.0  |
      | CHAIR-02   | 1        | 80.0  |
      | SOFA-03    | 0        | 400.0 |
    And the MCP server "shop" is running

  Rule: An order reserves its stock straight away

    @smoke
    Scenario: Ordering two lamps
      When I call the tool "create_order" with:
        | product_id | quantity | customer_email    |
        | LAMP-01    | 2        | ada@example.com   |
      Then the tool call succeeds
      And the result at "$.status" is "pending"
      And the result at "$.total" is 50.0
      And the result at "$.id" matches "^ORD-[0-9A-F]{8}$"
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 3        |
      And the table "orders" of the fake database "shop" has 1 row

    Scenario: The order can be looked up again by its id
      When I call the tool "create_order" with:
        | product_id | quantity |
        | CHAIR-02   | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "get_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the result at "$.id" is "${order}"
      And the result at "$.product_id" is "CHAIR-02"
      And the result at "$.items" has 1 items

    Scenario: The catalogue shows what is left
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 5        |
      And I call the tool "check_stock" with:
        | product_id |
        | LAMP-01    |
      Then the result at "$.quantity" is 0
      And the result at "$.in_stock" is false

  Rule: Nobody can order more than is in stock

    Scenario Outline: Ordering <quantity> of <product> is refused because <reason>
      When I call the tool "create_order" with:
        | product_id | quantity   |
        | <product>  | <quantity> |
      Then the tool call returns an error result
      And the tool call fails with an error mentioning "<advice>"
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 5        |
        | CHAIR-02   | 1        |
        | SOFA-03    | 0        |

      Examples:
        | product  | quantity | reason                 | advice                                 |
        | LAMP-01  | 6        | only five are left     | Order at most 5                        |
        | CHAIR-02 | 2        | only one is left       | only 1 available                       |
        | SOFA-03  | 1        | it is sold out         | call list_products to see what is in stock |
        | LAMP-01  | 0        | nothing was asked for  | quantity >= 1                          |
        | BED-99   | 1        | the product is unknown | Call list_products to see valid product ids |

  Rule: Cancelling an order releases its stock

    Scenario: A cancelled order gives its lamps back
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 4        |
      And I remember the result at "$.id" as "order"
      And I call the tool "cancel_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the result at "$.status" is "cancelled"
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 5        |

    Scenario: Cancelling twice changes nothing and says so
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "cancel_order" with:
        | order_id |
        | ${order} |
      And I call the tool "cancel_order" with:
        | order_id |
        | ${order} |
      Then the tool call fails with an error mentioning "already cancelled"
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 5        |

    Scenario: A cancelled order cannot be paid
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "cancel_order" with:
        | order_id |
        | ${order} |
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call fails with an error mentioning "cannot be paid"
      And the tool call fails with an error mentioning "Create a new order"

  Rule: Concurrent orders share the stock fairly

    Scenario: Five lamps ordered at the same time empty the shelf
      When I call the tool "create_order" 5 times concurrently with:
        | product_id | quantity | customer_email        |
        | LAMP-01    | 1        | buyer${i}@example.com |
      Then all 5 calls succeed
      And the results at "$.id" are all different
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 0        |
      And the table "orders" of the fake database "shop" has 5 rows
