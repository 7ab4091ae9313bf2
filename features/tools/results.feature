@tools @results
Feature: What the shop's tools give back
  An assistant relies on answers it can read: plain text for people, structured data for
  programs, pictures and links where they help. These scenarios pin down the shape of the
  shop's answers, so an assistant (and the people reading its replies) are never surprised.
  Values that change on every call, such as ids and timestamps, are checked by their form.

  Background:
    Given the MCP server "shop" is running

  Rule: Text answers say exactly what they should

    Scenario: Echo answers with the same text
      When I call the tool "echo" with:
        | text                |
        | Welcome to the shop |
      Then the result text is "Welcome to the shop"
      And the result text contains "shop"
      And the result text matches "^Welcome to the \w+$"

    Scenario: Even HTML comes back unchanged, as text
      When I call the tool "render_html"
      Then the result text contains "<h1>Special offer</h1>"
      And the result text contains "<script>"

  Rule: Structured answers have a predictable shape

    Scenario: A new order, checked as a whole
      When I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-123   | 2        |
      Then the result is:
        """json
        {
          "id": "#regex ^ORD-[0-9A-F]{8}$",
          "status": "pending",
          "product_id": "PROD-123",
          "quantity": 2,
          "total": 39.98,
          "customer_email": null,
          "charge_id": null,
          "created_at": "#datetime",
          "items": [{"product_id": "PROD-123", "quantity": 2, "unit_price": 19.99}]
        }
        """

    Scenario: A new order, checked only where it matters
      When I call the tool "create_order" with:
        | product_id | quantity | customer_email    |
        | PROD-789   | 1        | grace@example.com |
      Then the result contains:
        """json
        {"status": "pending", "customer_email": "#string", "created_at": "#datetime", "id": "#regex ORD-[0-9A-F]{8}"}
        """

    Scenario: A new user account gets a UUID and a creation time
      When I call the tool "create_user" with:
        | email           | name         |
        | ada@example.com | Ada Lovelace |
      Then the result is:
        """json
        {"id": "#uuid", "email": "ada@example.com", "name": "Ada Lovelace", "created_at": "#datetime"}
        """

    Scenario: Looking into the catalogue item by item
      When I call the tool "list_products"
      Then the result at "$.items" has 3 items
      And the result at "$.count" is 3
      And the result at "$.items[0].product_id" is "PROD-123"
      And the result at "$.items[0].price" is 19.99
      And the result at "$.items" contains "PROD-456"
      And the result at "$.items[2].product_id" matches "^PROD-\d{3}$"
      And the result at "$.items[1].product_id" contains "456"

    Scenario Outline: Stock of <product> is <quantity>, in stock: <in stock>
      When I call the tool "check_stock" with:
        | product_id |
        | <product>  |
      Then the result at "$.quantity" is <quantity>
      And the result at "$.in_stock" is <in stock>

      Examples:
        | product  | quantity | in stock |
        | PROD-123 | 10       | true     |
        | PROD-456 | 0        | false    |
        | PROD-789 | 3        | true     |

  Rule: Structured answers keep the promise of the tool's output schema

    Scenario: The catalogue matches a hand-written schema
      When I call the tool "list_products"
      Then the result matches the schema:
        """json
        {
          "type": "object",
          "required": ["items", "count"],
          "properties": {
            "count": {"type": "integer", "minimum": 0},
            "items": {
              "type": "array",
              "items": {
                "type": "object",
                "required": ["product_id", "quantity"],
                "properties": {"product_id": {"type": "string"}, "quantity": {"type": "integer"}}
              }
            }
          }
        }
        """

    Scenario Outline: "<tool>" answers as its output schema promises
      When I call the tool "<tool>" with arguments:
        """json
        <arguments>
        """
      Then the tool call succeeds
      And the result conforms to the tool's output schema

      Examples:
        | tool          | arguments                                      |
        | list_products | {}                                             |
        | check_stock   | {"product_id": "PROD-123"}                     |
        | create_order  | {"product_id": "PROD-789", "quantity": 1}      |
        | create_user   | {"email": "linus@example.com", "name": "Linus"} |
        | add           | {"a": 1, "b": 2}                               |

  Rule: Pictures and links come as proper content

    Scenario: The shop logo is a PNG image
      When I call the tool "get_logo"
      Then the tool call succeeds
      And the result contains an image of type "image/png"

    Scenario: Documentation is handed out as a link to a resource
      When I call the tool "find_docs" with:
        | topic    |
        | payments |
      Then the result contains a link to the resource "shop://docs/payments"
