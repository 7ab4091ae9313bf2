@surface
Feature: The shop's HTTP endpoint refuses requests it cannot trust
  Over streamable HTTP the shop is a web endpoint on the user's machine. A web page on another
  site must not reach it through the user's browser (DNS rebinding), and on the 2026-07-28
  protocol a gateway may route a request by its Mcp-Method and Mcp-Name headers alone, so the
  shop checks that they say what the body says: no request reaches one tool while a gateway
  believes it reached another. An older client's session is kept apart by its session id.

  Scenario: A page on another site cannot reach the shop through the browser
    Given the MCP server "shop" is running over streamable HTTP
    Then the server passes the checks "transport.dns-rebinding"

  Scenario: An older client's HTTP session is its own, and ends when the client says so
    Given the MCP server "shop-legacy" is running over streamable HTTP
    Then the server gave the client a session id
    And a request without the session id is refused with status 400
    When the client ends its HTTP session
    Then the last HTTP response has status 200
    And a request with the session id is refused with status 404

  Scenario Outline: A call with <what> is refused
    Given the client <sends>
    And the MCP server "shop" is running over streamable HTTP
    When I call the tool "check_stock" with:
      | product_id |
      | PROD-123   |
    Then the request is rejected with error code -32020
    And the last HTTP response has status 400

    Examples:
      | what                      | sends                           |
      | a wrong Mcp-Method header | sends a wrong Mcp-Method header |
      | a wrong Mcp-Name header   | sends a wrong Mcp-Name header   |
      | no Mcp-Name header        | leaves out the Mcp-Name header  |
      | a wrong product header    | sends wrong Mcp-Param headers   |
