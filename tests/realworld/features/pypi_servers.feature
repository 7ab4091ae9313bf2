@realworld
Feature: Python servers from PyPI: time and git

  Scenario: mcp-server-time converts between zones
    Given the MCP server "time" is running
    When I call the tool "convert_time" with:
      | source_timezone | time  | target_timezone |
      | UTC             | 12:00 | Asia/Tokyo      |
    Then the tool call succeeds
    And the result at "$.target.timezone" is "Asia/Tokyo"
    And the result at "$.target.datetime" matches "T21:00:00"

  Scenario: mcp-server-git reads a repository the scenario created
    Given the MCP server "git" is running
    When I call the tool "git_log" with:
      | repo_path         |
      | ${fake.repo.path} |
    Then the tool call succeeds
    And the result text contains "Initial commit"
    When I call the tool "git_status" with:
      | repo_path         |
      | ${fake.repo.path} |
    Then the result text contains "nothing to commit"
