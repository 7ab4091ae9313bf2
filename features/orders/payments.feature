@orders @payments
Feature: Paying for an order
  The shop does not handle money itself: it asks the payment provider to charge the customer.
  An order is only "paid" once the provider has confirmed the charge, exactly once, for the
  right order and amount. When the provider is down the customer keeps their order (it stays
  pending) and the assistant learns it may simply try again later.

  Every scenario gets a fresh database and a fresh payment provider, so no scenario sees the
  orders or charges of another.

  Background: A stocked shop and a payment provider that accepts charges
    Given the table "inventory" of the fake database "shop" contains:
      | product_id | quantity | price |
      | LAMP-01    | 10       | 9.5   |
    And the fake HTTP service "payments" responds to POST "/charges" with status 201 and body:
      """json
      {"id": "ch_test_0001", "status": "succeeded"}
      """
    And the MCP server "shop" is running

  Rule: A paid order is charged exactly once, for the right order

    @smoke
    Scenario: The complete order flow: order, pay, and the stock goes down
      When I call the tool "create_order" with:
        | product_id | quantity | customer_email  |
        | LAMP-01    | 2        | ada@example.com |
      Then the tool call succeeds
      When I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the result at "$.status" is "paid"
      And the result at "$.charge_id" is "ch_test_0001"
      And the fake HTTP service "payments" received 1 request to "/charges"
      And the fake HTTP service "payments" received a POST request to "/charges" with body containing "${order}"
      And the fake HTTP service "payments" received a POST request to "/charges" whose body at "$.order_id" is "${order}"
      And the fake HTTP service "payments" received a POST request to "/charges" whose body at "$.amount" is 19
      And the fake HTTP service "payments" received a POST request to "/charges" with a JSON body containing:
        """json
        {"order_id": "${order}", "amount": "#number"}
        """
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 8        |
      And the table "orders" of the fake database "shop" contains:
        | id       | status | charge_id    |
        | ${order} | paid   | ch_test_0001 |

    Scenario: Paying twice does not charge the customer twice
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the result at "$.status" is "paid"
      And the fake HTTP service "payments" received 1 request to "/charges"

    Scenario: Nothing is charged before the customer pays
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 1        |
      Then the fake HTTP service "payments" received no requests

  Rule: When the provider fails, the order stays pending and the assistant knows what to do

    @errors
    Scenario: The payment provider is down
      Given the fake HTTP service "payments" responds to POST "/charges" with status 503
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 3        |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call returns an error result
      And the tool call fails with an error mentioning "payment provider is unavailable (HTTP 503)"
      And the tool call fails with an error mentioning "still pending; retry pay_order later"
      And the fake HTTP service "payments" received 1 request to "/charges"
      When I call the tool "get_order" with:
        | order_id |
        | ${order} |
      Then the result at "$.status" is "pending"
      And the result at "$.charge_id" is null
      And the table "inventory" of the fake database "shop" contains:
        | product_id | quantity |
        | LAMP-01    | 7        |

    @errors
    Scenario Outline: The provider answers <status>: <advice>
      Given the fake HTTP service "payments" responds to POST "/charges" with status <status>
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call fails with an error mentioning "<problem>"
      And the tool call fails with an error mentioning "<advice>"
      And the table "orders" of the fake database "shop" contains:
        | id       | status  |
        | ${order} | pending |

      Examples: The provider is in trouble: try again later
        | status | problem                                   | advice                  |
        | 500    | payment provider is unavailable (HTTP 500) | retry pay_order later   |
        | 503    | payment provider is unavailable (HTTP 503) | retry pay_order later   |

      Examples: The provider refuses the charge: ask for another way to pay
        | status | problem                                       | advice                               |
        | 402    | payment provider rejected the charge (HTTP 402) | ask the customer for another payment method |
        | 400    | payment provider rejected the charge (HTTP 400) | do not retry with the same details   |

    @errors
    Scenario: The provider hangs up without answering
      Given the fake HTTP service "payments" drops the connection on POST "/charges"
      When I call the tool "create_order" with:
        | product_id | quantity |
        | LAMP-01    | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "pay_order" with:
        | order_id |
        | ${order} |
      Then the tool call fails with an error mentioning "payment provider is unreachable"
      And the tool call fails with an error mentioning "retry pay_order later"
      And the table "orders" of the fake database "shop" contains:
        | id       | status  |
        | ${order} | pending |
