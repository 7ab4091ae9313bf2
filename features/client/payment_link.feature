@surface @client @payments
Feature: A customer links a payment account on the provider's page
  Card details never pass through the assistant: the shop sends the user to the payment
  provider's consent page (a URL elicitation), and tells the client once the flow is complete
  (notifications/elicitation/complete), so the client can close the page. The shop asks the client
  in the middle of the call, which the 2025-11-25 protocol allows, so this runs on "shop-legacy";
  on 2026-07-28 the shop refuses the tool and says why.

  Scenario: The user completes the consent page
    Given the client completes URL elicitations
    And the MCP server "shop-legacy" is running
    When I call the tool "link_payment_account" with:
      | email           |
      | ada@example.com |
    Then the tool call succeeds
    And the result at "$.linked" is true
    When I remember the elicitation id as "link"
    Then the result at "$.link_id" is "${link}"
    And I receive the elicitation-complete notification within 5 seconds
