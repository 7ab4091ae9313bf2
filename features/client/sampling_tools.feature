@surface @client
Feature: Recommendations from a model that may look up the stock
  The shop recommends a product by asking the client's language model, and offers that model
  its check_stock tool so it can see what is really in stock before it answers. A server may
  offer tools only to a client that declared it can use them in sampling (sampling.tools), so a
  client that did not is told what is missing. This runs on the shop's current protocol
  (2026-07-28), where the sampling request comes back as an input-required round.

  Scenario: The model is offered the stock lookup
    Given the client supports tools in sampling
    And the client answers sampling requests with "PROD-123, ten in stock."
    And the MCP server "shop" is running
    When I call the tool "recommend_products" with:
      | need           |
      | a reading lamp |
    Then the tool call succeeds
    And the result at "$.recommendation" is "PROD-123, ten in stock."
    And the result at "$.tools_offered" contains "check_stock"
    And the last sampling request contains "check_stock"

  Scenario: A client whose model cannot use tools is told what is missing
    Given the client answers sampling requests with "PROD-123."
    And the MCP server "shop" is running
    When I call the tool "recommend_products" with:
      | need           |
      | a reading lamp |
    Then the tool call fails with an error mentioning "supports tools in sampling"
    And the server requested sampling 0 times
