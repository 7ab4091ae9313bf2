@tools
Feature: Calculator tools
  The shop exposes arithmetic as MCP tools so that an agent can total a basket
  without doing the maths itself.

  Background:
    Given the "shop" server is running

  @smoke
  Scenario: Adding two numbers
    When I call "add" with 2 and 3
    Then the result is 5

  Scenario: A wrong total is reported as a failure
    When I call "add" with 2 and 2
    Then the result is 5

  Scenario: A step nobody has written yet
    When I juggle the numbers

  @slow
  Scenario Outline: Multiplying <a> by <b>
    When I call "multiply" with <a> and <b>
    Then the result is <product>

    Examples: small numbers
      | a | b | product |
      | 2 | 3 | 6       |
      | 4 | 5 | 21      |

  Rule: Division by zero is refused
    A divisor of zero must give a tool error, never a crash.

    Scenario: Dividing by zero
      When I call "divide" with 1 and 0
      Then the tool reports an error

    Scenario: Dividing normally
      When I call "divide" with 6 and 3
      Then the result is 2

  Rule: Division rounds down
    Scenario: Dividing normally
      When I call "divide" with 7 and 2
      Then the result is 3
