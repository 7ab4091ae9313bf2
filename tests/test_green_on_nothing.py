"""A step that would check nothing does not pass: it is a usage error, at its file:line.

An expectation table with only its heading row, an empty expected text ("contains" finds "" in
every text), a count of "at least 0", an outline whose Examples have no rows: each would have let
a run stay green without testing anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from behave_project import SHOP, make_project, run_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def test_a_table_of_expectations_with_only_its_heading_row_is_a_usage_error(tmp_path: Path) -> None:
    feature = """
Feature: tables that check nothing
  Scenario: tools include, heading only
    Given the MCP server "shop" is running
    Then the tools include:
      | name |

  Scenario: fake database contains, heading only
    Given the table "inventory" of the fake database "db" contains:
      | product_id | quantity |
      | LAMP-01    | 5        |
    Then the table "inventory" of the fake database "db" contains:
      | product_id | quantity |

  Scenario: a missing heading is still named as such
    Given the MCP server "shop" is running
    Then the tools include:
      | add |

  Scenario: a table with rows still checks them
    Given the MCP server "shop" is running
    Then the tools include:
      | name |
      | add  |

  Scenario: seeding an empty table is no expectation
    Given the table "orders" of the fake database "db" contains:
      | id | status |
    Then the table "orders" of the fake database "db" has 0 rows
"""
    root = make_project(tmp_path, SHOP, {"t.feature": feature})
    run = run_behave(root, "-f", "plain")
    assert run.counts() == {"passed": 2, "failed": 0, "error": 3, "skipped": 0}, run.failures()
    assert (
        "UsageError: features/t.feature:5: Then the tools include:\n"
        "  the table has only its heading row: nothing would be checked.\n"
        "  Tip: add a row under | name | for each value to look for." in run.output
    ), run.failures()
    assert (
        'UsageError: features/t.feature:12: Then the table "inventory" of the fake database "db" contains:\n'
        "  the table has only its heading row: nothing would be checked.\n"
        "  Tip: add a row under | product_id | quantity | for each value to look for." in run.output
    ), run.failures()
    assert "features/t.feature:17: this step takes a one-column table with the heading `name`" in run.output


def test_an_empty_expected_text_is_a_usage_error(tmp_path: Path) -> None:
    feature = """
Feature: texts that check nothing
  Background:
    Given the MCP server "shop" is running
    When I call the tool "add" with:
      | a | b |
      | 1 | 1 |

  Scenario: result text contains nothing
    Then the result text contains ""

  Scenario: a variable that is empty
    Given the variable "nothing" is ""
    Then the result text contains "${nothing}"

  Scenario: a description mentions nothing
    Then the tool "add" description mentions ""

  Scenario: an error mentions nothing
    When I call the tool "no_such_tool"
    Then the tool call fails with an error mentioning ""

  Scenario: a real text is still checked
    Then the result text contains "2"
"""
    root = make_project(tmp_path, SHOP, {"t.feature": feature})
    run = run_behave(root, "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 0, "error": 4, "skipped": 0}, run.failures()
    assert (
        'UsageError: features/t.feature:10: Then the result text contains ""\n'
        "  the expected text is empty: every text contains it, so nothing would be checked.\n"
        '  Tip: write the text to look for between the quotes, e.g. contains "order placed".' in run.output
    ), run.failures()
    assert (
        'features/t.feature:14: Then the result text contains "${nothing}"\n'
        '  the expected text is empty ("${nothing}" is empty once its variables are filled in)' in run.output
    ), run.failures()
    assert 'features/t.feature:17: Then the tool "add" description mentions ""\n' in run.output, run.failures()
    assert 'features/t.feature:21: Then the tool call fails with an error mentioning ""\n' in run.output


def test_an_outline_whose_examples_have_no_rows_is_named_before_the_run(tmp_path: Path) -> None:
    feature = """
Feature: outlines
  Scenario: real
    Given the MCP server "shop" is running

  Scenario Outline: heading only
    Given the MCP server "shop" is running
    Then the result text is "<t>"
    Examples:
      | t |

  Scenario Outline: no table at all
    Given the MCP server "shop" is running
    Examples:

  Scenario Outline: with rows
    Given the MCP server "<s>" is running
    Examples:
      | s    |
      | shop |
      | shop |

  @later
  Scenario Outline: left out by the tags
    Given the MCP server "shop" is running
    Examples:
      | t |
"""
    root = make_project(tmp_path, SHOP, {"o.feature": feature})
    run = run_behave(root, "-f", "plain", "--tags", "not @later")
    assert run.returncode == 0, run.failures()  # behave allows it: a warning, not a failure
    assert run.counts() == {"passed": 3, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert (
        'mcp-bdd: warning: features/o.feature:6: Scenario Outline "heading only" has no example rows: '
        "it runs nothing.\n"
        "  Tip: add a row of values under | t | in its Examples, or remove the outline.\n" in run.stderr
    ), run.output
    assert (
        'mcp-bdd: warning: features/o.feature:12: Scenario Outline "no table at all" has no example rows' in run.stderr
    ), run.output
    assert run.stderr.count("mcp-bdd: warning:") == 2, run.stderr


def test_at_least_zero_is_a_usage_error(tmp_path: Path) -> None:
    feature = """
Feature: counts that check nothing
  Background:
    Given the MCP server "shop" is running

  Scenario: descriptions of at least 0 characters
    Then every tool has a description of at least 0 characters

  Scenario: at least 0 progress notifications
    When I call the tool "add" with:
      | a | b |
      | 1 | 1 |
    Then I received at least 0 progress notifications

  Scenario: a count below 0 holds as well
    Then I receive at least -1 progress notification

  Scenario: a real count is still checked
    When I call the tool "import_catalog" with:
      | count |
      | 2     |
    Then I received at least 2 progress notifications
    And every tool has a description of at least 1 characters
"""
    root = make_project(tmp_path, SHOP, {"t.feature": feature})
    run = run_behave(root, "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 0, "error": 3, "skipped": 0}, run.failures()
    assert (
        "UsageError: features/t.feature:7: Then every tool has a description of at least 0 characters\n"
        '  "at least 0" holds whatever the server does: nothing would be checked.\n'
        '  Tip: count from 1 up, e.g. "every tool has a description of at least 20 characters".' in run.output
    ), run.failures()
    assert (
        "UsageError: features/t.feature:13: Then I received at least 0 progress notifications\n"
        '  "at least 0" holds whatever the server does: nothing would be checked.\n'
        '  Tip: count from 1 up, e.g. "I received at least 1 progress notification".' in run.output
    ), run.failures()
    assert (
        "UsageError: features/t.feature:16: Then I receive at least -1 progress notification\n"
        '  "at least -1" holds whatever the server does' in run.output
    ), run.failures()


OWN_HOOKS = """
from mcp_bdd.chain import chain_hooks


def before_scenario(context, scenario):
    print(f"own hook sees the scenario's transcript: {context.mcp.transcript is not None}")


chain_hooks(globals())
"""


def test_a_scenario_without_steps_is_skipped_not_passed(tmp_path: Path) -> None:
    """Also under a Background (a title written ahead would run it and pass), in every output,
    and a project's own hooks still see `context.mcp` in a skipped scenario."""
    feature = """
Feature: titles only
  Background:
    Given the MCP server "shop" is running

  Scenario: real
    When I list the tools

  Scenario: a title only

  Scenario Outline: an outline without steps, <n>
    Examples:
      | n |
      | 1 |
      | 2 |

  @later
  Scenario: left out by the tags
"""
    root = make_project(tmp_path, SHOP, {"e.feature": feature})
    (root / "environment.py").write_text(OWN_HOOKS)
    reports = ("-f", "mcp_bdd.report:LivingDocFormatter", "-o", "r.html", "-f", "mcp_bdd.report:JUnitFormatter")
    cucumber = ("-f", "mcp_bdd.report:CucumberJsonFormatter", "-o", "c.json")
    messages = ("-f", "mcp_bdd.report:CucumberMessagesFormatter", "-o", "m.ndjson")
    run = run_behave(
        root, *reports, "-o", "j.xml", *cucumber, *messages, "-f", "plain", "--no-capture", "--tags", "not @later"
    )
    assert run.returncode == 0, run.failures()  # the real scenario ran: a warning, not a failure
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 4}, run.failures()
    assert run.stdout.count("own hook sees the scenario's transcript: True") == 4, run.output[-3000:]
    assert (
        'mcp-bdd: warning: features/e.feature:9: Scenario "a title only" has no steps: it tests nothing, so it '
        "is reported as skipped, not passed.\n  Tip: write its steps, or remove it.\n" in run.stderr
    ), run.output
    assert 'features/e.feature:11: Scenario Outline "an outline without steps, <n>" has no steps' in run.stderr
    assert run.stderr.count("mcp-bdd: warning:") == 2, run.stderr  # the outline once; not the one the tags left out
    reason = "the scenario has no steps: it tests nothing"
    assert f'<skipped message="{reason}" />' in (root / "j.xml").read_text(), (root / "j.xml").read_text()
    assert f'class="skip-reason muted">Skipped: {reason}' in (root / "r.html").read_text()
    model = json.loads((root / "r.json").read_text())
    children = model["features"][0]["children"]
    reasons = {s["name"]: s["skip_reason"] for s in children if s["kind"] == "scenario"}
    assert reasons == {"real": None, "a title only": reason, "left out by the tags": None}, reasons
    [outline] = [s for s in children if s["kind"] != "scenario"]
    assert [s["skip_reason"] for s in outline["scenarios"]] == [reason, reason], outline
    [empty] = [e for e in json.loads((root / "c.json").read_text())[0]["elements"] if e["name"] == "a title only"]
    assert empty["before"][0]["result"] == {"status": "skipped", "duration": 0, "error_message": reason}, empty
    results = [
        next(iter(e.values()))["testStepResult"]
        for line in (root / "m.ndjson").read_text().splitlines()
        if "testStepFinished" in (e := json.loads(line))
    ]
    assert {"duration": {"seconds": 0, "nanos": 0}, "status": "SKIPPED", "message": reason} in results, results


def test_a_run_of_scenarios_without_steps_tested_nothing(tmp_path: Path) -> None:
    feature = "Feature: titles only\n  Scenario: one\n\n  Scenario: two\n"
    root = make_project(tmp_path, SHOP, {"e.feature": feature})
    run = run_behave(root, "-f", "plain")
    assert run.returncode != 0, run.output
    assert (
        "No scenario ran (paths: features): the 2 scenarios selected have no steps "
        "(features/e.feature:2, features/e.feature:4): nothing was tested, and that is not a pass." in run.output
    ), run.output
    assert "Tip: write their steps." in run.output, run.output


def test_allow_empty_lets_a_run_that_selects_no_scenario_pass(tmp_path: Path) -> None:
    """The opt-out: a run whose tags select no scenario fails, naming the tags and the option;
    with `-D mcp_bdd.allow_empty=true` the same run exits 0 and says nothing of it."""
    feature = """
Feature: tagged
  @later
  Scenario: not selected
    Given the MCP server "shop" is running
    When I list the tools
"""
    root = make_project(tmp_path, SHOP, {"t.feature": feature})
    run = run_behave(root, "-f", "plain", "--tags", "@nosuchtag")
    assert run.returncode != 0, run.output
    assert "No scenario ran (paths: features; tags: @nosuchtag)" in run.output, run.output
    assert "-D mcp_bdd.allow_empty=true accepts an empty run" in run.output, run.output
    run = run_behave(root, "-f", "plain", "--tags", "@nosuchtag", "-D", "mcp_bdd.allow_empty=true")
    assert run.returncode == 0, run.output
    assert run.counts() == {"passed": 0, "failed": 0, "error": 0, "skipped": 1}, run.output
    assert "No scenario ran" not in run.output, run.output


def test_a_misspelt_scenario_keyword_is_named_with_its_line_once(tmp_path: Path) -> None:
    """`Scenari:` is description text to behave: the run selects nothing. The failure says so once
    (behave prints the hook's error; mcp-bdd printed it again), on a line of its own, and names
    the line and the keyword meant."""
    feature = 'Feature: misspelt\n  Scenari: the one\n    Given the MCP server "shop" is running\n'
    run = run_behave(make_project(tmp_path, SHOP, {"m.feature": feature}), "-f", "plain")
    assert run.returncode != 0, run.output
    assert run.output.count("No scenario ran") == 1, run.output
    assert 'features/m.feature:2: "Scenari:" is read as description text: did you mean "Scenario:"?' in run.output
    assert "is running----" not in run.output, run.output  # the error starts on a line of its own
