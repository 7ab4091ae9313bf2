@auth
Feature: Only properly authorized clients reach the protected shop
  Over HTTP the shop can be an OAuth 2.1 resource server: every request needs a bearer token
  issued by its authorization server "${fake.auth.issuer}" for the audience "shop", with the
  scope "orders:read". The authorization server here is a fake that issues real signed tokens;
  the shop verifies them against its published keys, as it would in production.

  Scenario: A client without a token is sent to the resource metadata
    Given the client has no access token
    When I connect to the MCP server "shop-secure"
    Then the server answers 401 with a WWW-Authenticate header pointing to its resource metadata
    And the last HTTP response has the header "WWW-Authenticate" containing "invalid_token"

  Scenario: A token for another audience is refused
    Given the client is authorized with the scopes "orders:read"
    And the client's access token is for the audience "https://analytics.example.com"
    When I connect to the MCP server "shop-secure"
    Then the server answers 401 with a WWW-Authenticate header pointing to its resource metadata

  Scenario: An expired token is refused
    Given the client is authorized with the scopes "orders:read"
    And the client's access token has expired
    When I connect to the MCP server "shop-secure"
    Then the last HTTP response has status 401

  Scenario: A token with too few scopes is refused for insufficient scope
    Given the client is authorized with the scopes "orders:write"
    When I connect to the MCP server "shop-secure"
    Then the request is refused for insufficient scope

  Scenario: A properly authorized client is served
    Given the client is authorized with the scopes "orders:read orders:write"
    And the MCP server "shop-secure" is running
    When I call the tool "check_stock" with:
      | product_id |
      | PROD-123   |
    Then the tool call succeeds
    And the result at "$.quantity" is 10
    And the server's protected resource metadata names the authorization server "${fake.auth.issuer}"
