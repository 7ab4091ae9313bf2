@realworld @apps
Feature: The reference PDF server's viewer, an MCP App
  The npm package @modelcontextprotocol/server-pdf binds a PDF viewer to its "display_pdf" tool. The viewer is an
  app: it reads the document through the host, in chunks, with the server's app-only tool
  "read_pdf_bytes", which the model is never offered. The server is given one PDF of this
  repository. Run over stdio by default and over Streamable HTTP with -D transport=streamable-http.

  Background:
    Given the client supports MCP Apps
    And the MCP server "pdf" is running

  Scenario: The viewer is bound to display_pdf and served as an MCP App
    Then the tool "display_pdf" has an app
    And the app of the tool "display_pdf" is served as an MCP App
    And the tool "list_pdfs" has no app

  Scenario: The viewer opens the PDF it was given and reads it through the host
    When I call the tool "list_pdfs"
    Then the result at "$.localFiles" has 1 item
    When I remember the result at "$.localFiles[0]" as "pdf"
    And I open the app of the tool "display_pdf" with:
      | url    |
      | ${pdf} |
    Then the app called the tool "read_pdf_bytes"
    And the app shows "Quarterly report"
