@realworld @apps
Feature: An example App published with @modelcontextprotocol/ext-apps: the server's clock
  The vanilla JS example of the MCP Apps SDK binds an app to its "get-time" tool. A host that
  supports apps shows it: the server's time, a button that asks the server for it again through
  the host, and a box whose text the app sends to the conversation (its box has no label, placeholder
  or name, so a scenario sends the text it starts with). Run over stdio by default and
  over Streamable HTTP with -D transport=streamable-http.

  Background:
    Given the client supports MCP Apps
    And the MCP server "clock" is running

  Scenario: The tool's app is bound and served as an MCP App
    Then the tool "get-time" has an app
    And the app of the tool "get-time" is served as an MCP App

  Scenario: The app shows the server's time and asks the server for it again
    When I open the app of the tool "get-time"
    Then the app shows "Server Time"
    And the app does not show "Loading..."
    When I click "Get Server Time" in the app
    Then the app called the tool "get-time"
    And the app has no errors

  Scenario: The app sends the text in its box to the conversation
    When I open the app of the tool "get-time"
    Then the app shows "Send Message"
    When I click "Send Message" in the app
    Then the app sent the message "This is message text."
    And the app has no errors
