@tools @discovery
Feature: Discovering the shop's tools
  An AI assistant chooses what to do by reading the tool list: names, descriptions, the
  arguments each tool needs and what it returns. A tool that is missing, vaguely described
  or wrongly typed is a tool the assistant will misuse. These rules keep the catalogue of
  tools honest and self-explanatory.

  Background:
    Given the MCP server "shop" is running
    When I list the tools

  Rule: The shop offers exactly the tools its customers need

    @smoke
    Scenario: The complete tool catalogue
      Then the tools are:
        | name                 |
        | list_products        |
        | check_stock          |
        | create_order         |
        | pay_order            |
        | get_order            |
        | cancel_order         |
        | import_catalog       |
        | add                  |
        | slow                 |
        | echo                 |
        | render_html          |
        | get_logo             |
        | find_docs            |
        | play_jingle          |
        | get_return_policy    |
        | create_user          |
        | get_user             |
        | delete_user          |
        | summarize_order      |
        | confirm_delete       |
        | list_roots           |
        | send_gift            |
        | export_catalog       |
        | recommend_products   |
        | link_payment_account |
        | enable_admin_tools   |
        | register_customer    |

    Scenario: The ordering tools are all there
      Then the tools include:
        | name         |
        | create_order |
        | pay_order    |
        | cancel_order |
      And the tool list includes "check_stock"

    Scenario: Admin tools stay hidden until they are enabled
      Then the tool list does not include "purge_orders"

  Rule: Every tool says which arguments it needs, and of what type

    Scenario: Ordering needs a product and a quantity, but not an email address
      Then the tool "create_order" requires the arguments:
        | name       |
        | product_id |
        | quantity   |

    Scenario: Listing the products needs nothing at all
      Then the tool "list_products" requires the arguments:
        | name |

    Scenario Outline: The argument "<argument>" of "<tool>" is of type <type>
      Then the tool "<tool>" argument "<argument>" is of type "<type>"

      Examples:
        | tool           | argument       | type    |
        | create_order   | product_id     | string  |
        | create_order   | quantity       | integer |
        | create_order   | customer_email | string  |
        | slow           | seconds        | number  |
        | import_catalog | count          | integer |
        | add            | a              | integer |

  Rule: Tools that return data describe its shape

    Scenario Outline: "<tool>" declares an output schema
      Then the tool "<tool>" has an output schema

      Examples:
        | tool          |
        | list_products |
        | create_order  |
        | get_order     |
        | create_user   |

  Rule: Tools say whether they only look, or destroy something

    Scenario Outline: "<tool>" is marked <marking>
      Then the tool "<tool>" is marked <marking>

      Examples: Tools that only read
        | tool          | marking   |
        | list_products | read-only |
        | check_stock   | read-only |
        | get_order     | read-only |
        | get_user      | read-only |

      Examples: Tools that cannot be undone
        | tool         | marking     |
        | cancel_order | destructive |
        | delete_user  | destructive |

  Rule: Every tool is described well enough for an assistant to pick it

    Scenario: No tool has a one-word description
      Then every tool has a description of at least 20 characters

    Scenario: Dangerous tools warn that they cannot be undone
      Then the tool "delete_user" description mentions "cannot be undone"
      And the tool "pay_order" description mentions "payment provider"

  Rule: Hosts show each tool by its title and icon, and know which calls are safe to repeat

    Scenario: The tutorial tool has a title a person can read
      Then the tool "add" has the title "Add two numbers"
      And the tool "add" at "$.title" is "Add two numbers"

    Scenario: Adding the same numbers twice changes nothing
      Then the tool "add" is marked idempotent
      And the tool "add" at "$.annotations.readOnlyHint" is true
      And the tool "add" at "$.outputSchema.properties.result.type" is "integer"

    Scenario: Paying reaches beyond the shop, to the payment provider
      Then the tool "pay_order" is marked open-world
      And the tool "pay_order" at "$.annotations.destructiveHint" is false

    Scenario: The logo tool carries the logo as its icon
      Then the tool "get_logo" at "$.icons[0].mimeType" is "image/png"
      And the tool "get_logo" at "$.icons" is [{"src": "#regex data:image/png;base64,.+", "mimeType": "image/png", "sizes": ["1x1"]}]

  Rule: A tool's input schema reaches the assistant as the shop wrote it (JSON Schema 2020-12)

    Scenario: Registering a customer keeps every 2020-12 keyword of its schema
      Then the tool "register_customer" at "$.inputSchema['$schema']" is "https://json-schema.org/draft/2020-12/schema"
      And the tool "register_customer" at "$.inputSchema['$defs'].address.type" is "object"
      And the tool "register_customer" at "$.inputSchema['$defs'].address['$anchor']" is "addressDef"
      And the tool "register_customer" at "$.inputSchema.properties.address['$ref']" is "#/$defs/address"
      And the tool "register_customer" at "$.inputSchema.additionalProperties" is false
      And the tool "register_customer" at "$.inputSchema.allOf" is [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
      And the tool "register_customer" at "$.inputSchema.if" is {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]}
      And the tool "register_customer" at "$.inputSchema.then" is {"required": ["phone"]}
      And the tool "register_customer" at "$.inputSchema.else" is {"required": ["email"]}

    Scenario: A customer registered with a nested address is reached the way they chose
      When I call the tool "register_customer" with arguments:
        """
        {"name": "Ada", "address": {"street": "1 Main St", "city": "Leeds"}, "contactMethod": "email", "email": "ada@example.com"}
        """
      Then the tool call succeeds
      And the result at "$.contact" is "email:ada@example.com"
      And the result at "$.city" is "Leeds"
