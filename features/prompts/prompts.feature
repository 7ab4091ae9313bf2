@surface @prompts
Feature: Prompt templates and completions
  Shop staff use ready-made prompts: greet a customer, confirm an order. The shop fills them
  in with real data, so every confirmation quotes the right order. While a person types an
  argument, the shop suggests values (names, topics, order ids), so nobody has to remember
  an order number by heart.

  Background:
    Given the MCP server "shop" is running

  Rule: The shop offers its prompts by name

    Scenario: Listing the prompts
      When I list the prompts
      Then the prompts include "greeting"
      And the prompts include "order_confirmation"

  Rule: A prompt is filled in with the arguments given

    @smoke
    Scenario Outline: Greeting <name>
      When I get the prompt "greeting" with:
        | name   |
        | <name> |
      Then the prompt has 1 messages
      And prompt message 1 is from the "user" and contains "Please greet our customer <name>"

      Examples:
        | name    |
        | Ada     |
        | Linus   |

    @orders
    Scenario: Confirming a real order
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-789   | 2        |
      And I remember the result at "$.id" as "order"
      And I get the prompt "order_confirmation" with:
        | order_id |
        | ${order} |
      Then the prompt has 2 messages
      And prompt message 1 is from the "user" and contains "Write a confirmation for order ${order}"
      And prompt message 2 is from the "assistant" and contains "Thank you for your order ${order}"
      And prompt message 2 is from the "assistant" and contains "total 25.0"

  Rule: The shop completes arguments as they are typed

    Scenario Outline: Names starting with "<typed>"
      When I ask for completions of the argument "name" of the prompt "greeting" with "<typed>"
      Then the completions include "<suggestion>"

      Examples:
        | typed | suggestion |
        | A     | Ada        |
        | A     | Alan       |
        | gr    | Grace      |

    Scenario: Documentation topics are completed
      When I ask for completions of the argument "topic" of the resource template "shop://docs/{topic}" with "pay"
      Then the completions include "payments"

    @orders
    Scenario: Order ids are completed from the real orders
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 1        |
      And I remember the result at "$.id" as "order"
      And I ask for completions of the argument "order_id" of the prompt "order_confirmation" with "ORD-"
      Then the completions include "${order}"
