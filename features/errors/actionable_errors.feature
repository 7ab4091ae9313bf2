@errors
Feature: Errors an assistant can act on
  When something goes wrong the shop answers with an error result, not a crash, and the
  message says what went wrong and what to do next: which tool to call, which value to use.
  An assistant that reads such a message can recover on its own instead of asking the
  customer to start over.

  Background:
    Given the MCP server "shop" is running

  Rule: Every business error names the next step

    Scenario Outline: The shop explains what to do when <situation>
      When I call the tool "<tool>" with arguments:
        """json
        <arguments>
        """
      Then the tool call returns an error result
      And the tool call fails with an error mentioning "<advice>"

      Examples:
        | situation                          | tool         | arguments                                    | advice                                          |
        | asking about an unknown product    | check_stock  | {"product_id": "PROD-999"}                   | Call list_products to see valid product ids     |
        | ordering an unknown product        | create_order | {"product_id": "PROD-999", "quantity": 1}    | Call list_products to see valid product ids     |
        | ordering a sold-out product        | create_order | {"product_id": "PROD-456", "quantity": 1}    | Choose another product                          |
        | ordering more than is in stock     | create_order | {"product_id": "PROD-789", "quantity": 4}    | Order at most 3                                 |
        | looking up an unknown order        | get_order    | {"order_id": "ORD-00000000"}                 | Use the id returned by create_order             |
        | paying an unknown order            | pay_order    | {"order_id": "ORD-00000000"}                 | it looks like ORD-1A2B3C4D                      |
        | cancelling an unknown order        | cancel_order | {"order_id": "ORD-00000000"}                 | does not exist                                  |
        | importing far too many products    | import_catalog | {"count": 5000}                            | count must be between 0 and 1000                |

  Rule: Mistakes in the call itself are reported, not swallowed

    Scenario: Calling a tool that does not exist
      When I call the tool "drop_database"
      Then the tool call fails
      And the tool call fails with an error mentioning "Unknown tool"
      And the tool call fails with an error mentioning "drop_database"

    Scenario: Passing text where a number is expected
      When I call the tool "add" with arguments:
        """json
        {"a": "one", "b": 2}
        """
      Then the tool call returns an error result
      And the tool call fails with an error mentioning "valid integer"

    Scenario: Leaving out a required argument
      When I call the tool "add" with:
        | a |
        | 1 |
      Then the tool call fails with an error mentioning "Field required"

  Rule: An error never takes the shop down

    Scenario: The shop keeps working after a failed call
      When I call the tool "check_stock" with:
        | product_id |
        | NOPE       |
      Then the tool call fails
      And the server still responds
      When I call the tool "check_stock" with:
        | product_id |
        | PROD-123   |
      Then the tool call succeeds
