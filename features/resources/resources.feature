@surface @resources
Feature: Reading the shop's resources
  Besides tools, the shop publishes documents an assistant can read directly: the live product
  catalogue, the shop logo and a documentation page per topic. Resources are how an assistant
  grounds its answers in the shop's own words and numbers instead of guessing.

  Background:
    Given the MCP server "shop" is running

  Rule: The shop lists what can be read

    Scenario: The catalogue and the logo are listed
      When I list the resources
      Then the resources include "shop://catalog"
      And the resources include "shop://logo.png"

    Scenario: Documentation pages are offered as a template
      When I list the resource templates
      Then the resource templates include "shop://docs/{topic}"

  Rule: Each resource comes with the right content and type

    @smoke
    Scenario: The catalogue is JSON listing every product
      When I read the resource "shop://catalog"
      Then the resource MIME type is "application/json"
      And the resource text contains "PROD-123"
      And the result at "$" has 3 items
      And the result at "$[0].product_id" is "PROD-123"

    Scenario: The catalogue follows the stock
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 4        |
      And I read the resource "shop://catalog"
      Then the result at "$[0].quantity" is 6

    Scenario: The logo is a binary PNG image
      When I read the resource "shop://logo.png" on "shop"
      Then the resource is binary
      And the resource MIME type is "image/png"

    Scenario Outline: The documentation page about <topic>
      When I read the resource "shop://docs/<topic>"
      Then the resource MIME type is "text/markdown"
      And the resource text contains "<text>"

      Examples: Topics the shop documents
        | topic    | text                           |
        | payments | How the shop handles payments  |
        | shipping | How the shop handles shipping  |

      Examples: Topics without a page yet
        | topic    | text                           |
        | gifts    | No documentation yet           |

    Scenario: A link handed out by a tool can be followed
      When I call the tool "find_docs" with:
        | topic  |
        | orders |
      Then the result contains a link to the resource "shop://docs/orders"
      When I read the resource "shop://docs/orders"
      Then the resource text contains "# Orders"

  Rule: Subscribers hear when the catalogue changes

    @orders
    Scenario: An order updates the catalogue for its subscribers
      When I subscribe to the resource "shop://catalog"
      And I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-789   | 1        |
      Then I receive an update for the resource "shop://catalog" within 2 seconds

    @orders
    Scenario: A cancellation updates the catalogue too
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-789   | 1        |
      And I remember the result at "$.id" as "order"
      And I subscribe to the resource "shop://catalog"
      And I call the tool "cancel_order" with:
        | order_id |
        | ${order} |
      Then I receive a "resource updated" notification within 2 seconds

  Rule: Reading something that does not exist is refused

    @errors
    Scenario: Reading an unknown resource
      When I read the resource "shop://nothing-here"
      Then the request is rejected with error code -32602
