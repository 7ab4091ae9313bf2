"""The MCP Apps phrases that judge a binding before any browser opens, and their usage errors: a real behave
run against tests/servers/hostile_apps.py (no browser needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import make_project, run_behave

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]

CONFIG = """
server = "hostile"
[servers.hostile]
app = "tests.servers.hostile_apps:create_server"
"""

FEATURE = """
Feature: Bindings
  Scenario: good bindings
    Given the client supports MCP Apps
    And the MCP server "hostile" is running
    Then the tool "good" has an app
    And the tool "legacy_bound" has an app
    And the app of the tool "good" is served as an MCP App
    And the app of the tool "legacy_bound" is served as an MCP App
    And the tool "secret_report" has no app

  Scenario: web bound
    Then the tool "web_bound" has an app

  Scenario: plain html
    Then the app of the tool "plain_html" is served as an MCP App

  Scenario: dangling
    Then the app of the tool "dangling" is served as an MCP App

  Scenario: has no app
    Then the tool "good" has no app

  Scenario: no such tool
    Then the tool "goood" has an app

  Scenario: a plain tool
    Then the tool "secret_report" has an app

  Scenario: too late
    Given the MCP server "hostile" is running
    And the client supports MCP Apps

  Scenario: nothing open
    Then the app shows "anything"
"""

#: scenario -> what its failure says
FAILURES = {
    "web bound": ['binds its app to "https://example.com/app", which is not a ui:// URI'],
    "plain html": ["is not served as an MCP App", "text/html;profile=mcp-app", '"text/html"'],
    "dangling": ["could not be read", "ui://hostile/missing.html"],
    "has no app": ['The tool "good" of "hostile" has an app', "ui://hostile/good.html"],
    "no such tool": ['has no tool "goood"', 'Did you mean "good"'],
    "a plain tool": ['The tool "secret_report" of "hostile" has no app', "Given the client supports MCP Apps"],
    "too late": ["is already open", "Move this step above the server step"],
    "nothing open": ["no app is open in this scenario", "When I open the app of the tool"],
}


def test_bindings_are_judged_as_a_host_judges_them(tmp_path: Path) -> None:
    root = make_project(tmp_path, CONFIG, {"bindings.feature": FEATURE})
    run = run_behave(root, "-f", "plain", timeout=120)
    counts = run.counts()
    assert counts["passed"] == 1 and counts["failed"] + counts["error"] == len(FAILURES), run.output[-5000:]
    blocks = {b.split("\n", 1)[0].strip(): b for b in run.stdout.split("  Scenario: ")[1:]}
    for name, said in FAILURES.items():
        for text in said:
            assert text in blocks[name], f"{name}: {text!r} not in\n{blocks[name]}"
