@tools @calls
Feature: Calling the shop's tools
  An assistant talks to the shop by calling tools. It may pass arguments as a simple table
  or as raw JSON, address a named server, give up on a slow answer, fire several requests
  at once or change its mind and cancel. Whatever it does, the shop must answer correctly
  and stay responsive.

  Background:
    Given the MCP server "shop" is running

  Rule: Arguments can be given as a table or as JSON

    @smoke
    Scenario: Adding two numbers with an argument table
      When I call the tool "add" with:
        | a | b |
        | 2 | 3 |
      Then the tool call succeeds
      And the result at "$.result" is 5

    Scenario: Adding two numbers with JSON arguments
      When I call the tool "add" with arguments:
        """json
        {"a": 40, "b": 2}
        """
      Then the tool call succeeds
      And the result is:
        """json
        {"result": 42}
        """

    Scenario: A tool without arguments
      When I call the tool "list_products"
      Then the tool call succeeds

    Scenario: An optional argument left empty is simply not sent
      When I call the tool "create_order" with:
        | product_id | quantity | customer_email |
        | PROD-123   | 1        |                |
      Then the tool call succeeds
      And the result at "$.customer_email" is null

    Scenario Outline: Adding <a> and <b> gives <sum>
      When I call the tool "add" with:
        | a   | b   |
        | <a> | <b> |
      Then the result at "$.result" is <sum>

      Examples:
        | a   | b  | sum |
        | 1   | 1  | 2   |
        | -5  | 5  | 0   |
        | 100 | 23 | 123 |

  Rule: A call can name the server it is meant for

    Scenario: Calling a tool on "shop" by name
      When I call the tool "add" on "shop" with:
        | a | b |
        | 1 | 2 |
      Then the result at "$.result" is 3

    Scenario: Calling a tool without arguments on "shop" by name
      When I call the tool "list_products" on "shop"
      Then the result at "$.count" is 3

    Scenario: Calling a tool on "shop" with JSON arguments
      When I call the tool "echo" on "shop" with arguments:
        """json
        {"text": "hello"}
        """
      Then the result text is "hello"

  Rule: A caller that stops waiting leaves the shop healthy

    Scenario: Giving up on a slow answer
      When I call the tool "slow" with a timeout of 0.3 seconds with:
        | seconds |
        | 2       |
      Then the tool call times out
      And the server still responds

    Scenario: An answer that comes in time is not a timeout
      When I call the tool "slow" with a timeout of 5 seconds with:
        | seconds |
        | 0.05    |
      Then the tool call succeeds
      And the result at "$.slept" is 0.05

    Scenario: Cancelling a call that takes too long
      When I call the tool "slow" and cancel it after 0.2 seconds with:
        | seconds |
        | 5       |
      Then the tool call is cancelled
      And the server still responds
      When I call the tool "add" with:
        | a | b |
        | 1 | 1 |
      Then the tool call succeeds

  Rule: Many calls at once are each answered on their own

    Scenario: Five additions at the same time
      When I call the tool "add" 5 times concurrently with:
        | a    | b  |
        | ${i} | 10 |
      Then all 5 calls succeed
      And the results at "$.result" are all different

    @orders
    Scenario: Five customers order at the same time and each gets an order of their own
      When I call the tool "create_order" 5 times concurrently with:
        | product_id | quantity | customer_email         |
        | PROD-123   | 1        | buyer${i}@example.com  |
      Then all 5 calls succeed
      And the results at "$.id" are all different
      When I call the tool "check_stock" with:
        | product_id |
        | PROD-123   |
      Then the result at "$.quantity" is 5
