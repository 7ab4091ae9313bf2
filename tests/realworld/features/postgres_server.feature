@realworld @postgres
Feature: @modelcontextprotocol/server-postgres on a real database per scenario
  The reference PostgreSQL MCP server takes the database URL as its argument:
  "${fake.warehouse.url}", a database of the scenario's own, copied from features/warehouse.sql.

  Scenario: It reads the rows this scenario seeded, typed by their columns
    Given the table "shipments" of the fake database "warehouse" contains:
      | destination | weight_kg | express | labels              | shipped_at             |
      | Lyon        | 12.5      | yes     | ["fragile"]         | 2026-05-01 08:00:00+00 |
      | Oslo        | 3         | no      | []                  |                        |
    And the MCP server "postgres" is running
    When I call the tool "query" with:
      | sql                                                                             |
      | SELECT destination, express, labels FROM shipments WHERE express ORDER BY id |
    Then the tool call succeeds
    And the result text contains "Lyon"
    And the result at "$" has 1 items
    And the result at "$[0].express" is true
    And the result at "$[0].labels" is ["fragile"]

  Scenario: The next scenario's database is empty again
    Given the MCP server "postgres" is running
    When I call the tool "query" with:
      | sql                                 |
      | SELECT count(*) AS n FROM shipments |
    Then the tool call succeeds
    And the result at "$[0].n" is "0"

  Scenario: It lists the tables of the schema as resources
    Given the MCP server "postgres" is running
    Then the resources include "postgres://postgres@127.0.0.1:${fake.warehouse.port}/shipments/schema"

  Scenario: It refuses to write: its queries run in a read-only transaction
    Given the MCP server "postgres" is running
    When I call the tool "query" with:
      | sql                                                              |
      | INSERT INTO shipments (destination, weight_kg) VALUES ('X', 1) |
    Then the tool call fails with an error mentioning "read-only transaction"
    And the table "shipments" of the fake database "warehouse" has 0 rows
