@check
Feature: The shop passes the MCP compliance gate
  Besides what the shop itself must do, every MCP server must do what the protocol and the
  assistants that load it need: answer what it declares, describe its tools honestly, reject a
  bad call with an error that names the argument, and never speak to the model behind the
  user's back. `mcp-bdd check` runs these checks on any server; the same checks are steps.
  Only tools annotated read-only are called.

  Background:
    Given the MCP server "shop" is running

  @smoke
  Scenario: The shop passes every compliance check
    # "slow" sleeps as long as it is asked to: that is what it is for
    Then the server passes the MCP compliance checks, never calling the tools "slow"

  Scenario: A bad call gets an error the assistant can act on
    Then every tool's error for a missing argument names the argument

  Scenario: No description speaks to the model behind the user's back
    Then no tool description contains instructions to the model
    And the server passes the checks "poisoning, schemas.tool-name, schemas.input-valid"

  Scenario Outline: The read-only tool "<tool>" passes the checks on its own
    Then the tool "<tool>" passes the checks

    Examples:
      | tool            |
      | list_products   |
      | check_stock     |
      | get_order       |
      | add             |
      | echo            |
      | render_html     |
      | find_docs       |
      | summarize_order |

  Scenario: The tool surface keeps its contract
    # contracts/shop.json is kept in git; `mcp-bdd contract update contracts/shop.json shop` records a
    # deliberate change (and `mcp-bdd probe --baseline contracts/shop.json` reads the same file)
    Then the tool surface has no breaking change against the contract "contracts/shop.json"
