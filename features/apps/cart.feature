@apps
Feature: The cart's app: checking out from the UI a tool carries
  The cart server binds an interactive app to its "show_cart" tool (an MCP App, the
  io.modelcontextprotocol/ui extension). A host that supports apps shows it beside the
  conversation: the user sees the cart, sets the quantity and checks out with a button. The app
  places the order through the host, which calls the server's "checkout" tool, and tells the
  conversation what happened. A client without apps still gets the cart, as text.

  Rule: The user checks out from the app the cart tool carries

    Scenario: Checking out two items places the order and says so in the conversation
      Given the client supports MCP Apps
      And the MCP server "cart" is running
      Then the tool "show_cart" has an app
      And the app of the tool "show_cart" is served as an MCP App
      And the tool "cart_total" has no app
      When I open the app of the tool "show_cart"
      Then the result at "$.shown_as" is "app"
      And the app shows "Your cart"
      And the app shows "Blue mug"
      When I type "2" into "Quantity" in the app
      And I click "Checkout" in the app
      Then the app called the tool "checkout" with:
        | quantity |
        | 2        |
      And the app sent the message "Order placed"
      And the app shows "Order placed"
      And the app does not show "Checkout failed"
      And the app has no errors

  Rule: A client without apps still gets the cart

    Scenario: The cart as text for a plain client
      Given the MCP server "cart" is running
      When I call the tool "show_cart"
      Then the tool call succeeds
      And the result at "$.shown_as" is "text"
      And the result at "$.items" has 2 items
