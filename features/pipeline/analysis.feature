@pipeline @fakes
Feature: An analysis pipeline across two servers
  The shop knows what is in stock; the analytics server knows how to value it and how sales
  went, reading the warehouse's sales API and writing reports for the team. An assistant chains
  them: it reads the catalogue from one server and hands it to the other. Each scenario gets its
  own fake warehouse API, database and workspace.

  Background:
    Given the table "inventory" of the fake database "shop" contains:
      | product_id | quantity | price |
      | PROD-123   | 10       | 19.99 |
      | PROD-456   | 4        | 5.00  |
    And the fake HTTP service "warehouse" responds to GET "/sales" with status 200 and body:
      """json
      [
        {"product_id": "PROD-123", "quantity": 3, "unit_price": 19.99},
        {"product_id": "PROD-456", "quantity": 1, "unit_price": 5.0},
        {"product_id": "PROD-123", "quantity": 2, "unit_price": 19.99}
      ]
      """

  Rule: Data flows from one server to the next

    Scenario: The stock listed by the shop is valued by analytics
      Given the MCP server "shop" is running
      And the MCP server "analytics" is running
      When I call the tool "list_products" on "shop"
      And I remember the result at "$.items" as "catalogue"
      And I call the tool "stock_value" on "analytics" with arguments:
        """json
        {"products": ${catalogue}}
        """
      Then the tool call succeeds
      And the result is:
        """json
        {"products": 2, "units": 14, "value": 219.9}
        """

  Rule: Reports are built from the warehouse's sales and written to the workspace

    Scenario: A sales report is written for the team
      Given the MCP server "analytics" is running
      When I call the tool "write_sales_report" with:
        | title         |
        | Weekly sales  |
      Then the tool call succeeds
      And the result text is "reports/sales.md"
      And the workspace file "reports/sales.md" contains "Revenue: 104.95"
      And the workspace file "reports/sales.md" contains "Best seller: PROD-123"
      And the fake HTTP service "warehouse" received 1 request to "/sales"

    Scenario: The warehouse API being down is explained, not hidden
      Given the fake HTTP service "warehouse" responds to GET "/sales" with status 503
      And the MCP server "analytics" is running
      When I call the tool "sales_summary"
      Then the tool call fails with an error mentioning "HTTP 503"
      And the tool call fails with an error mentioning "retry later"
