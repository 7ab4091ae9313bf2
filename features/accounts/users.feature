@accounts
Feature: Customer accounts
  Customers have accounts: an email address, a name and an id the shop hands out. One email
  address belongs to one account, so nobody ends up with a twin. Deleting an account is
  permanent, and the shop says so before anyone calls it.

  Background:
    Given the MCP server "shop" is running

  Rule: Every new account gets its own id

    @smoke
    Scenario: Opening an account
      When I call the tool "create_user" with:
        | email           | name         |
        | ada@example.com | Ada Lovelace |
      Then the tool call succeeds
      And the result contains:
        """json
        {"id": "#uuid", "email": "ada@example.com", "created_at": "#datetime"}
        """
      And the table "users" of the fake database "shop" has 1 row

    Scenario: An account can be found again by its id
      When I call the tool "create_user" with:
        | email             | name          |
        | grace@example.com | Grace Hopper  |
      And I remember the result at "$.id" as "user"
      And I call the tool "get_user" with:
        | user_id |
        | ${user} |
      Then the tool call succeeds
      And the result at "$.id" is "${user}"
      And the result at "$.name" is "Grace Hopper"
      And the result at "$.email" is "grace@example.com"

    Scenario: Five sign-ups at once get five different ids
      When I call the tool "create_user" 5 times concurrently with:
        | email                 | name       |
        | user${i}@example.com  | Customer ${i} |
      Then all 5 calls succeed
      And the results at "$.id" are all different
      And the table "users" of the fake database "shop" has 5 rows

  Rule: One email address, one account

    Scenario: Signing up twice with the same address is refused
      Given the variable "email" is "linus@example.com"
      When I call the tool "create_user" with:
        | email    | name  |
        | ${email} | Linus |
      And I call the tool "create_user" with:
        | email    | name        |
        | ${email} | Linus again |
      Then the tool call returns an error result
      And the tool call fails with an error mentioning "already exists"
      And the tool call fails with an error mentioning "Call get_user with that id"
      And the table "users" of the fake database "shop" has 1 row

    Scenario: Email addresses are compared without regard to case
      When I call the tool "create_user" with:
        | email              | name     |
        | alan@example.com   | Alan     |
      And I call the tool "create_user" with:
        | email              | name     |
        | ALAN@EXAMPLE.COM   | Alan T.  |
      Then the tool call fails with an error mentioning "already exists"

    Scenario Outline: "<email>" is not an email address
      When I call the tool "create_user" with:
        | email   | name     |
        | <email> | Somebody |
      Then the tool call fails with an error mentioning "not a valid email address"
      And the tool call fails with an error mentioning "Pass an address like ada@example.com"

      Examples:
        | email               |
        | ada.example.com     |
        | @example.com        |
        | ada@                |
        | ada love@example.com |

  Rule: Deleting an account is permanent

    Scenario: The delete tool warns before it is used
      Then the tool "delete_user" is marked destructive
      And the tool "delete_user" description mentions "cannot be undone"

    Scenario: A deleted account is gone for good
      When I call the tool "create_user" with:
        | email              | name     |
        | barbara@example.com | Barbara |
      And I remember the result at "$.id" as "user"
      And I call the tool "delete_user" with:
        | user_id |
        | ${user} |
      Then the tool call succeeds
      And the result is:
        """json
        {"id": "${user}", "deleted": true}
        """
      When I call the tool "get_user" with:
        | user_id |
        | ${user} |
      Then the tool call fails with an error mentioning "does not exist"
      And the table "users" of the fake database "shop" has 0 rows

    Scenario: Deleting an account that does not exist
      When I call the tool "delete_user" with:
        | user_id |
        | ${uuid} |
      Then the tool call fails with an error mentioning "Use the id returned by create_user"
