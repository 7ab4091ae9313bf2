@surface
Feature: Clients know how long they may keep what the shop lists
  On the 2026-07-28 protocol every listing and every read says how long it stays fresh and
  whether a client may share it between users. The shop's prompts and resource templates never
  change while it runs; its tools (an admin may enable more) and its catalogue (every order
  changes the stock) may change at any time.

  Background:
    Given the MCP server "shop" is running

  Scenario: Prompts and resource templates may be kept for an hour and shared
    When I list the prompts
    Then the prompt list may be cached for 3600000 ms
    And the prompt list has the cache scope "public"
    When I list the resource templates
    Then the resource template list may be cached for 3600000 ms
    And the resource template list has the cache scope "public"

  Scenario: The tools and the catalogue are stale at once and kept per user
    When I list the tools
    Then the tool list carries caching hints
    And the tool list may be cached for 0 ms
    And the tool list has the cache scope "private"
    When I read the resource "shop://catalog"
    Then the resource may be cached for 0 ms
    And the resource has the cache scope "private"
