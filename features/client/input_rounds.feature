@surface @client
Feature: The shop asks its questions in rounds
  On the 2026-07-28 protocol the shop does not call the client back in the middle of a request:
  it answers "input required" with its questions and a sealed request state, and the client
  answers them and asks again. Questions that do not depend on each other come in one round;
  a question that needs an earlier answer comes in the next. A client that tampers with the
  state, or answers badly, is refused; a client that cannot answer is never asked.

  Rule: The shop asks only what it needs, round by round

    Scenario: A gift needs the recipient first, then the card
      Given the client accepts elicitation requests with:
        | name |
        | Ada  |
      And the client answers sampling requests with "Happy birthday, Ada!"
      And the MCP server "shop" is running
      When I call the tool "send_gift" with:
        | product_id |
        | PROD-123   |
      Then the tool call succeeds
      And the result at "$.card" is "Happy birthday, Ada!"
      And the server asked for input 2 times
      And input round 1 asked for "gift_recipient" by elicitation
      And input round 1 asked with a message containing "Who is the gift for?"
      And input round 1 carried a request state
      And input round 2 asked for "gift_card" by sampling
      And input round 2 asked with a message containing "gift card for Ada"
      And input round 2 carried a request state

    Scenario: Independent questions come in one round
      Given the client accepts elicitation requests with:
        | file_name    |
        | catalog.json |
      And the client exposes the roots:
        | uri                 | name     |
        | file:///srv/exports | exports  |
      And the client answers sampling requests with "Spring catalogue"
      And the MCP server "shop" is running
      When I call the tool "export_catalog"
      Then the tool call succeeds
      And the result at "$.path" is "file:///srv/exports/catalog.json"
      And the result at "$.title" is "Spring catalogue"
      And the server asked for input 1 time
      And input round 1 asked for "export_target" by elicitation
      And input round 1 asked for "export_roots" by roots
      And input round 1 asked for "export_title" by sampling

    Scenario: A prompt asks too
      Given the client accepts elicitation requests with:
        | occasion      |
        | a housewarming |
      And the MCP server "shop" is running
      When I get the prompt "gift_note" with:
        | product_id |
        | PROD-456   |
      Then prompt message 1 is from the "user" and contains "for a housewarming"
      And the server asked for input 1 time
      And input round 1 asked for "occasion" by elicitation

    Scenario: A client that cannot sample is never asked to
      Given the client accepts elicitation requests with:
        | name |
        | Ada  |
      And the MCP server "shop" is running
      When I call the tool "send_gift" with:
        | product_id |
        | PROD-123   |
      Then the tool call fails with an error mentioning "needs a client that supports sampling"
      And no input round asked by sampling

  Rule: The shop refuses a client that gets the rounds wrong

    Scenario: A tampered request state is rejected
      Given the client accepts elicitation requests with:
        | name |
        | Ada  |
      And the client answers sampling requests with "Happy birthday!"
      And the client tampers with the request state
      And the MCP server "shop" is running
      When I call the tool "send_gift" with:
        | product_id |
        | PROD-123   |
      Then the request is rejected with error code -32602

    Scenario: A client that resends without its answers is asked again
      Given the client accepts elicitation requests with:
        | name |
        | Ada  |
      And the client answers sampling requests with "Happy birthday!"
      And the client resends without its input responses
      And the MCP server "shop" is running
      When I call the tool "send_gift" with:
        | product_id |
        | PROD-123   |
      Then the tool call succeeds
      And input round 2 asked for "gift_recipient" by elicitation

    Scenario: An answer nobody asked for is ignored
      Given the client accepts elicitation requests with:
        | name |
        | Ada  |
      And the client answers sampling requests with "Happy birthday!"
      And the client adds an input response nobody asked for
      And the MCP server "shop" is running
      When I call the tool "send_gift" with:
        | product_id |
        | PROD-123   |
      Then the tool call succeeds
      And the server asked for input 2 times

    Scenario: Malformed answers are refused
      Given the client accepts elicitation requests with:
        | name |
        | Ada  |
      And the client answers sampling requests with "Happy birthday!"
      And the client sends malformed input responses
      And the MCP server "shop" is running
      When I call the tool "send_gift" with:
        | product_id |
        | PROD-123   |
      Then the server refused the input responses
