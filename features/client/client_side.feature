@surface @client
Feature: The shop asks the client for help
  Some jobs need something only the client has: its language model to write a summary, its
  user to confirm a deletion, or its list of project folders. The shop asks, the client
  answers (or refuses), and the shop respects the answer. A client that cannot help is told
  plainly what it is missing.

  Rule: Order summaries are written by the client's language model

    @orders
    Scenario: Summarising an order
      Given the client answers sampling requests with "Two lamps, paid, ready to ship."
      And the MCP server "shop" is running
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 2        |
      And I remember the result at "$.id" as "order"
      And I call the tool "summarize_order" with:
        | order_id |
        | ${order} |
      Then the tool call succeeds
      And the result at "$.summary" is "Two lamps, paid, ready to ship."
      And the result at "$.order_id" is "${order}"
      And the server requested sampling 1 time
      And the last sampling request contains "Summarize order ${order}"

    @errors
    Scenario: A client without a language model is told what is missing
      Given the MCP server "shop" is running
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 1        |
      And I remember the result at "$.id" as "order"
      And I call the tool "summarize_order" with:
        | order_id |
        | ${order} |
      Then the tool call fails with an error mentioning "needs a client that supports sampling"

  Rule: An account is only deleted when the user confirms

    @accounts
    Scenario: The user confirms the deletion
      Given the client accepts elicitation requests with:
        | confirm | reason             |
        | true    | Closing my account |
      And the MCP server "shop" is running
      When I call the tool "create_user" with:
        | email           | name         |
        | ada@example.com | Ada Lovelace |
      And I remember the result at "$.id" as "user"
      And I call the tool "confirm_delete" with:
        | user_id |
        | ${user} |
      Then the tool call succeeds
      And the result is:
        """json
        {"action": "accepted", "confirm": true, "reason": "Closing my account", "deleted": true}
        """
      And the server requested elicitation with a message containing "Delete the account of Ada Lovelace"
      When I call the tool "get_user" with:
        | user_id |
        | ${user} |
      Then the tool call fails with an error mentioning "does not exist"

    @accounts
    Scenario Outline: The user <answers> the question, so the account stays
      Given the client <answers> elicitation requests
      And the MCP server "shop" is running
      When I call the tool "create_user" with:
        | email             | name  |
        | grace@example.com | Grace |
      And I remember the result at "$.id" as "user"
      And I call the tool "confirm_delete" with:
        | user_id |
        | ${user} |
      Then the tool call succeeds
      And the result at "$.action" is "<action>"
      And the result at "$.deleted" is false
      And the table "users" of the fake database "shop" has 1 row

      Examples:
        | answers  | action    |
        | declines | declined  |
        | cancels  | cancelled |

  Rule: The shop can see the folders the client shares

    Scenario: Listing the client's roots
      Given the client exposes the roots:
        | uri                      | name      |
        | file:///home/ada/shop    | shop      |
        | file:///home/ada/exports | exports   |
      And the MCP server "shop" is running
      When I call the tool "list_roots"
      Then the tool call succeeds
      And the result at "$.uris" has 2 items
      And the result at "$.uris" contains "file:///home/ada/shop"
      And the result at "$.roots[1].name" is "exports"
