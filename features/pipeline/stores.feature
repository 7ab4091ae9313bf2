@pipeline
Feature: Finding a store by region
  The analytics server reports on the shop's stores, one page per store:
  analytics://stores/{region}/{store}. While a person types the store, it offers only the stores
  of the region already chosen, so a northern Bradford is not offered for the south.

  Scenario: A store is completed within the region already chosen
    Given the MCP server "analytics" is running
    When I ask for completions of the argument "store" of the resource template "analytics://stores/{region}/{store}" with "B" given:
      | region |
      | south  |
    Then the completions include "Brighton"
    When I ask for completions of the argument "store" of the resource template "analytics://stores/{region}/{store}" with "B" given:
      | region |
      | north  |
    Then the completions include "Bradford"
