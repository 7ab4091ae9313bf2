"""Meta-tests of the phrases added to the vocabulary: each one runs in behave against the demo servers.

Every added phrase appears in a scenario that must pass, and the negative checks also in a
scenario that must fail with their own message, so a phrase that stops matching (undefined) or
stops checking (always green) fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import REPO, make_project, run_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

TWO_SERVERS = f"""
server = "shop"

[servers.shop]
app = "demo.shop:create_server"
cwd = "{REPO}"

[servers.analytics]
app = "demo.analytics:create_server"
cwd = "{REPO}"
"""

PASSING = r'''
Feature: phrases users reached for

  Scenario: negative text and JSON checks, quotes inside quoted values
    Given the MCP server "shop" is running
    When I call the tool "echo" with:
      | text          |
      | say "hi" now  |
    Then the result text does not contain "bye"
    And the result text is "say \"hi\" now"
    And the result text contains "\"hi\""
    When I call the tool "add" with:
      | a | b |
      | 2 | 3 |
    Then the result does not contain:
      """json
      {"result": 6}
      """
    And the result at "$" has 1 item

  Scenario: every call form and listing on a named server
    Given the MCP server "shop" is running
    When I list the tools on "analytics"
    Then the tool list includes "stock_value" on "analytics"
    And the tool list does not include "add" on "analytics"
    And the tool list includes "add"
    When I list the resources on "shop"
    Then the resources include "shop://catalog" on "shop"
    When I list the prompts on "shop"
    Then the prompts include "greeting" on "shop"
    When I get the prompt "greeting" on "shop" with:
      | name |
      | Ada  |
    Then the prompt has 1 message
    When I call the tool "slow" on "shop" with a timeout of 1 second with:
      | seconds |
      | 0.01    |
    Then the tool call succeeds
    When I call the tool "slow" on "shop" with a timeout of 0.2 seconds with:
      | seconds |
      | 30      |
    Then the tool call times out
    And the tool call on "shop" times out
    When I call the tool "slow" on "shop" and cancel it after 0.2 seconds with:
      | seconds |
      | 30      |
    Then the tool call is cancelled
    And the tool call on "shop" is cancelled
    When I call the tool "add" on "shop" with:
      | a | b |
      | 1 | 2 |
    And I call the tool "stock_value" on "analytics" with arguments:
      """json
      {"products": "not a list"}
      """
    Then the tool call on "shop" succeeds
    And the tool call on "analytics" fails
    And the tool call on "analytics" returns an error result
    And the tool call on "analytics" fails with an error mentioning "products"
    And the tool call fails
    When I call the tool "add" on "shop" 3 times concurrently with:
      | a    | b |
      | ${i} | 1 |
    Then all 3 calls succeed
    And the server still responds on "analytics"
    And the server still responds on "shop"

  Scenario: tenses, articles and singular forms of notifications
    Given the log level is "debug"
    And the MCP server "shop" is running
    When I call the tool "import_catalog" on "shop" with:
      | count |
      | 1     |
    Then I received a "progress" notification on "shop" within 1 second
    And I receive at least 1 progress notification
    And I received at least 1 progress notification
    And the server logged an "info" message containing "Import finished" on "shop"
    And the server logged a "debug" message containing "Imported IMP-001"
    And I received a "log message" notification within 2 seconds

  Scenario: a fake web page and a fake XML API get their content type from the body
    Given the fake HTTP service "site" responds to GET "/page" with status 200 and body:
      """
      <!DOCTYPE html>
      <html><body><h1>Docs</h1></body></html>
      """
    And the fake HTTP service "site" responds to GET "/feed" with status 200 and body:
      """
      <?xml version="1.0"?>
      <feed><entry>one</entry></feed>
      """
    When I fetch "${fake.site.url}/page"
    Then the fetched content type is "text/html; charset=utf-8"
    When I fetch "${fake.site.url}/feed"
    Then the fetched content type is "application/xml; charset=utf-8"
'''

# A project's own steps (as a user would write them) to see what the fake sent.
FETCH_STEPS = """
import httpx2
from behave import then, when


@when('I fetch "{url}"')
def fetch(context, url):
    context.fetched = httpx2.get(context.mcp.interpolate(url), trust_env=False, timeout=5)


@then('the fetched content type is "{value}"')
def content_type(context, value):
    assert context.fetched.headers["content-type"] == value, context.fetched.headers
"""

FAILING = r'''
Feature: the negative checks fail when they should

  Scenario: the text contains it
    Given the MCP server "shop" is running
    When I call the tool "echo" with:
      | text     |
      | say hi   |
    Then the result text does not contain "hi"

  Scenario: the JSON contains it
    Given the MCP server "shop" is running
    When I call the tool "add" with:
      | a | b |
      | 2 | 3 |
    Then the result does not contain:
      """json
      {"result": "#integer"}
      """

  Scenario: a prompt on a named server is really asked of that server
    Given the MCP server "shop" is running
    When I get the prompt "greeting" on "analytics"

  Scenario: the last call on a server that was not called
    Given the MCP server "shop" is running
    When I call the tool "add" on "shop" with:
      | a | b |
      | 1 | 2 |
    Then the tool call on "analytics" succeeds

  Scenario: a quote inside a quoted value, unescaped
    Given the MCP server "shop" is running
    When I call the tool "echo" with:
      | text     |
      | say "hi" |
    Then the result text is "say "hi""
'''


def test_added_phrases_pass(tmp_path: Path) -> None:
    root = make_project(tmp_path, TWO_SERVERS, {"phrases.feature": PASSING})
    (root / "steps" / "fetch_steps.py").write_text(FETCH_STEPS)
    run = run_behave(root)
    assert run.counts() == {"passed": 4, "failed": 0, "error": 0, "skipped": 0}, run.output[-4000:]
    assert run.returncode == 0, run.output[-4000:]


def test_negative_phrases_fail_with_their_own_message(tmp_path: Path) -> None:
    root = make_project(tmp_path, TWO_SERVERS, {"failing.feature": FAILING})
    run = run_behave(root)
    output = run.output
    # 3 failed checks; a usage error and the undefined step make 2 scenarios errors (behave's count).
    assert run.counts() == {"passed": 0, "failed": 3, "error": 2, "skipped": 0}, output
    assert 'no tool was called on "analytics" yet in this scenario (servers called: "shop")' in output
    assert "1 undefined" in run.stdout, output
    assert 'The result text contains "hi"' in output, output
    assert "The result contains what it should not" in output, output
    assert 'Getting the prompt "greeting" from "analytics" failed' in output, output
    # The undefined step: the hint is the \" fix, not "the phrase just used".
    assert "A quoted value holds a double quote" in output, output
    assert 'the result text is "say \\"hi\\""' in output, output
    assert "Closest phrases" not in output, output
