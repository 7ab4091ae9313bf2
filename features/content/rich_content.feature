@surface @content
Feature: Sound, embedded documents and who each part of an answer is for
  Not every answer is text. The shop plays a jingle (audio), hands over its return policy as a
  document inside the answer (an embedded resource), marks which parts are for the customer and
  which for the assistant (annotations), and drafts product cards that carry the logo and a link
  to the docs. Subscribers can also stop listening to the catalogue.

  Rule: A tool answers with audio, and says who each part is for

    Scenario: The jingle is audio for the customer and a note for the assistant
      Given the MCP server "shop" is running
      When I call the tool "play_jingle"
      Then the tool call succeeds
      And the result contains audio of type "audio/wav"
      And the result has content for the "user" audience
      And the result has content for the "assistant" audience with priority 1.0
      And the result has content for the "user" audience with priority 0.5

  Rule: A document travels inside the answer

    Scenario: The return policy is embedded with its text
      Given the MCP server "shop" is running
      When I call the tool "get_return_policy"
      Then the tool call succeeds
      And the result embeds the resource "shop://docs/returns" with text containing "within 30 days"
      And the result contains a link to the resource "shop://docs/returns"

  Rule: Prompt messages carry images, links and documents

    Scenario: A product card brings the logo, a link to the docs and the policy
      Given the MCP server "shop" is running
      When I get the prompt "product_card" with:
        | product_id |
        | PROD-123   |
      Then the prompt has 4 messages
      And prompt message 1 is from the "user" and contains "PROD-123"
      And prompt message 2 contains an image of type "image/png"
      And prompt message 3 contains a link to the resource "shop://docs/inventory"
      And prompt message 4 contains a link to the resource "shop://docs/returns"
      And the result contains an image of type "image/png"
      And the result embeds the resource "shop://docs/returns" with text containing "30 days"

  Rule: A subscriber can stop listening

    @orders
    Scenario Outline: No catalogue update reaches a client that unsubscribed (<server>)
      Given the MCP server "<server>" is running
      When I subscribe to the resource "shop://catalog"
      And I unsubscribe from the resource "shop://catalog"
      And I call the tool "create_order" with:
        | product_id | quantity |
        | PROD-789   | 1        |
      Then the tool call succeeds
      And no update for the resource "shop://catalog" arrived after unsubscribing

      Examples:
        | server      |
        | shop        |
        | shop-legacy |
