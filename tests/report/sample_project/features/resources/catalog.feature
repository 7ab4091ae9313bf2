Feature: Catalog resources
  Product owners can read the catalog as MCP resources.

  Scenario: Reading the catalog
    Given the "shop" server is running
    When I read the resource "shop://catalog"
    Then the result mentions "apples"

  @hook_error
  Scenario: A scenario whose setup hook breaks
    Given the "shop" server is running

  @skip
  Scenario: A scenario that is not ready
    Given the "shop" server is running

  Scenario: A pending step
    Given a step that is still pending

  Scenario: Echoing <b>hostile</b> markup
    Given the "shop" server is running
    When I call "echo" with hostile markup
    Then the result mentions "script"
