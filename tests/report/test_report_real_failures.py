"""The report of a real run that fails in every way a run can fail: each failure filed under its
category (from the typed errors, not from hand-set fields), the call that produced a wrong value
shown first (the tools/call, not the listing before it), what setup did said in words, and no
step's traffic starting with an answer whose request is missing."""

from __future__ import annotations

import base64
import json
import re
import sys
from collections import Counter
from typing import Any

import pytest
from behave_project import REPO, SHOP, Run, make_project, run_behave

from mcp_bdd.report.model import Run as ReportRun
from mcp_bdd.report.model import Scenario, load_run, walk_scenarios
from mcp_bdd.report.render import unpack
from mcp_bdd.transcript import TRANSCRIPT_MIME

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]

HOSTILE = json.dumps([sys.executable, str(REPO / "tests" / "servers" / "hostile.py")])
GONE = json.dumps(
    [sys.executable, "-c", "import sys; print('cannot open the orders database', file=sys.stderr); sys.exit(3)"]
)

CONFIG = f"""
timeout = 5
{SHOP}
[servers.hostile]
command = {HOSTILE}
protocol = "legacy"

[servers.gone]
command = {GONE}
"""

FEATURE = """
Feature: Every way a run fails

  Scenario: A wrong value
    Given the MCP server "shop" is running
    And the table "inventory" of the fake database "stock" contains:
      | sku | qty |
      | A1  | 3   |
      | B2  | 0   |
      | C3  | 7   |
    When I call the tool "add" with:
      | a | b |
      | 2 | 3 |
    Then the result text is "6"

  Scenario: A call that should have failed
    Given the MCP server "shop" is running
    When I call the tool "render_html"
    Then the tool call fails

  Scenario: A request the server answers with an error
    Given the MCP server "shop" is running
    When I read the resource "shop://no/such/thing"
    Then the resource text contains "anything"

  Scenario: A call that outlasts the timeout
    Given the MCP server "shop" is running
    When I call the tool "slow" with:
      | seconds |
      | 120     |
    Then the tool call succeeds

  Scenario: An answer that cannot be parsed
    Given the MCP server "hostile" is running
    When I call the tool "deep"
    Then the tool call succeeds

  Scenario: A server that does not start
    Given the MCP server "gone" is running
    When I call the tool "anything"

  Scenario: A transport the server cannot serve
    Given the MCP server "hostile" is running over sse
    When I call the tool "echo"

  @prepared
  Scenario: Set up by a hook
    When I call the tool "add" with:
      | a | b |
      | 1 | 1 |
    Then the result text is "2"

  @seeded
  Scenario: Set up by a hook, then a step nobody defined
    When I add 1 and 1 by hand
    Then the result text is "2"

  @broken_hook
  Scenario: A hook that breaks
    Given the MCP server "shop" is running

  @broken_teardown
  Scenario: A teardown that breaks
    Given the MCP server "shop" is running

  Scenario Outline: Adding <a> and <b> again
    Given the MCP server "shop" is running
    When I call the tool "add" with:
      | a   | b   |
      | <a> | <b> |
    Then the result text is "<sum>"

    Examples:
      | a | b | sum |
      | 1 | 1 | 2   |
      | 1 | 1 | 2   |
"""

# A user's own hooks: prepare @prepared scenarios (the behave idiom: execute_steps) and make a last
# call after them; break @broken_hook ones with a plain exception.
ENVIRONMENT = """
from mcp_bdd.environment import *  # noqa: F401,F403
from mcp_bdd import environment as _mcp


def before_scenario(context, scenario):
    _mcp.before_scenario(context, scenario)
    if "broken_hook" in scenario.tags:
        raise RuntimeError("the orders fixture could not be loaded")
    if "seeded" in scenario.tags:  # set up in Python, no nested steps: only the hooks' evidence has it
        context.mcp.fakes.get("ledger", "database")
    if "prepared" in scenario.tags:
        context.execute_steps('''
            Given the MCP server "shop" is running
            And the table "inventory" of the fake database "stock" contains:
              | sku | qty |
              | A1  | 3   |
        ''')


def after_scenario(context, scenario):
    if "broken_hook" in scenario.tags:  # a note of the user's after hook, when no step ran
        context.attach("text/plain", b"orders fixture: nothing to clean up")
    if "seeded" in scenario.tags:  # Python-level work of the user's after hook: after the steps
        context.mcp.fakes.get("audit", "database")
    if "prepared" in scenario.tags:  # a last check of the user's own, after the steps
        context.execute_steps('''
            When I call the tool "add" with:
              | a  | b |
              | 40 | 2 |
        ''')
    _mcp.after_scenario(context, scenario)
    if "broken_teardown" in scenario.tags:
        raise RuntimeError("the audit log could not be flushed")
"""


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, ReportRun, str]:
    root = make_project(tmp_path_factory.mktemp("failures"), CONFIG, {"every.feature": FEATURE})
    (root / "environment.py").write_text(ENVIRONMENT, encoding="utf-8")
    out = root / "doc.html"
    run = run_behave(  # behave's own json formatter too: what Cucumber tooling reads (-o pairs with the first -f)
        root,
        "-D",
        f"mcp_bdd.report={out}",
        "-f",
        "json",
        "-o",
        str(root / "behave.json"),
        "-f",
        "plain",
        "-f",
        "mcp_bdd.report:LivingDocFormatter",
        timeout=300,
    )
    assert out.exists(), run.output[-4000:]
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    return run, load_run(data), out.read_text(encoding="utf-8")


def _all(report: ReportRun) -> list[Scenario]:
    return [s for feature in report.features for s in walk_scenarios(feature.children)]


def _scenarios(report: ReportRun) -> dict[str, Scenario]:
    return {s.name: s for s in _all(report)}


def _kind(scenario: Scenario) -> str | None:
    step = next((s for s in scenario.steps if s.error_kind), None)
    return scenario.error_kind or (step.error_kind if step else None)


def test_each_failure_is_filed_under_what_happened(failed_run: tuple[Run, ReportRun, str]) -> None:
    run, report, html = failed_run
    kinds = {name: _kind(s) for name, s in _scenarios(report).items()}
    assert kinds == {
        "A wrong value": "expectation",
        "A call that should have failed": "expectation",
        "A request the server answers with an error": "server-error",
        "A call that outlasts the timeout": "timeout",
        "An answer that cannot be parsed": "protocol",
        "A server that does not start": "setup",
        "A transport the server cannot serve": "not-served",
        "Set up by a hook": None,
        "Set up by a hook, then a step nobody defined": "usage",  # an undefined step is the author's to fix
        "A hook that breaks": "setup",  # the user's before_scenario raised a plain RuntimeError
        "A teardown that breaks": "error",  # its after_scenario, once the steps ran: not a setup failure
        "Adding 1 and 1 again": None,
        "Adding 1 and 1 again (row 1.2)": None,  # equal values: still two names CI tools can tell apart
    }, run.output[-4000:]
    # the page offers each category as a filter, with its count
    for kind, n in Counter(filter(None, kinds.values())).items():
        assert re.search(rf'data-kind="{kind}"[^>]*>[^<]+<span class="n">{n}</span>', html), kind
    # and says what to do about a timeout, not "read the error text"
    assert "raise `timeout`" in run.output[run.output.index("Scenario: A call that outlasts") :], run.output[-4000:]


@pytest.mark.parametrize(
    ("scenario", "tool", "arguments", "said"),
    [
        ("A wrong value", "add", {"a": 2, "b": 3}, "The result text differs: expected 6, but it was 5"),
        # the step lists the tools for its "no such tool" hint after the call: that listing is not the call
        ("A call that should have failed", "render_html", {}, "did not fail"),
    ],
)
def test_the_call_shown_first_is_the_one_that_produced_the_value(
    failed_run: tuple[Run, ReportRun, str], scenario: str, tool: str, arguments: dict[str, int], said: str
) -> None:
    run, report, html = failed_run
    start = html.index(f'id="{_scenarios(report)[scenario].id}"')
    block = html[html.index('<div class="failure">', start) :]
    block = block[: block.index("</li>")]
    number = int(block.split('data-call="', 1)[1].split('"', 1)[0])
    call = unpack(html)["rows"][number]
    values = unpack(html)["values"]
    assert [(m["k"], m["m"]) for m in call] == [("request", "tools/call"), ("response", "tools/call")], call
    request = json.loads(values[call[0]["b"]]) if isinstance(values[call[0]["b"]], str) else values[call[0]["b"]]
    assert request["name"] == tool and request.get("arguments", {}) == arguments
    assert said in block, block[:2000]
    # the console says it in the same order: sentence, Expected/Actual, the call, the tip
    console = run.output[run.output.index(f"Scenario: {scenario}") :]
    console = console[: console.index("Scenario:", 10)]
    order = [console.index(p) for p in ("Expected", "Actual", "The call that produced the value", "tools/call")]
    assert order == sorted(order), console[:3000]
    assert "tools/list" not in console.split("The call that produced the value", 1)[1], console[:3000]


def test_setup_is_said_in_words(failed_run: tuple[Run, ReportRun, str]) -> None:
    _run, report, html = failed_run
    by_name = _scenarios(report)
    start = html.index(f'id="{by_name["A wrong value"].id}"')
    scenario = html[start : html.index(f'id="{by_name["A request the server answers with an error"].id}"', start)]
    assert "Seeded the table inventory of stock with 3 rows" in scenario
    assert "Connected to shop" in scenario


def test_no_step_traffic_starts_with_an_answer_whose_request_is_missing(
    failed_run: tuple[Run, ReportRun, str],
) -> None:
    _run, report, _html = failed_run
    checked = 0
    for scenario in _all(report):
        for step in scenario.steps:
            seen: set[int] = set()
            for x in step.evidence.exchanges:
                if x.kind in ("response", "error") and x.related is not None:
                    assert x.related in seen, f"{scenario.name} / {step.name}: {x.method} answer without its request"
                    checked += 1
                if x.kind == "request":
                    seen.add(x.seq)
    assert checked >= 4  # the run did make calls: the check is not vacuous


def test_what_a_hook_did_is_shown_under_the_hooks_not_the_first_step(failed_run: tuple[Run, ReportRun, str]) -> None:
    run, report, html = failed_run
    prepared = _scenarios(report)["Set up by a hook"]
    assert prepared.status == "passed", run.output[-4000:]
    hooks = [x.method for x in prepared.evidence.exchanges]
    assert "connected" in hooks and any(m.startswith("seed ") for m in hooks), hooks
    first = [x.method for x in prepared.steps[0].evidence.exchanges]
    assert "connected" not in first and "tools/call" in first, first  # the listing is for coercing the table
    start = html.index(f'id="{prepared.id}"')
    block = html[start : html.index("</details>", html.index("Before the steps", start))]
    assert "Connected to shop" in block and "Seeded the table inventory of stock with 1 row" in block
    # the user's after_scenario call is the hooks' doing too, shown after the steps
    after = [(x.method, x.payload) for x in prepared.after_evidence.exchanges if x.kind == "request"]
    assert ("tools/call", {"name": "add", "arguments": {"a": 40, "b": 2}}) in after, after
    end = html.index(f'id="{_scenarios(report)["Set up by a hook, then a step nobody defined"].id}"')
    assert "After the steps (hooks, teardown)" in html[start:end]


def _behave_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The failed_run project's behave `-f json` output: elements by scenario name."""
    path = next(tmp_path_factory.getbasetemp().glob("failures*/behave.json"))
    return {e["name"]: e for f in json.loads(path.read_text(encoding="utf-8")) for e in f["elements"]}


def _exchanges(step: dict[str, Any]) -> list[dict[str, Any]]:
    """mcp-bdd's exchanges in a behave-json step's embeddings (its own, the hooks', the teardown's)."""
    return [
        x
        for e in step.get("embeddings", [])
        if e["mime_type"].startswith(TRANSCRIPT_MIME)
        for x in json.loads(base64.b64decode(e["data"]))
    ]


def test_behaves_json_formatter_takes_what_comes_before_and_after_the_steps(
    failed_run: tuple[Run, ReportRun, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """behave's json formatter files an attachment under the step at its cursor. During
    before_scenario it has no steps yet: the evidence of a hook's `execute_steps` setup raised
    IndexError there. Past the last step, the evidence of a user's after_scenario call raised it
    too, and the green scenario was a hook error; after a failed step the cursor is on a step that
    never ran. Now: before the steps under the first step, after them under the last that ran."""
    run, _report, _html = failed_run
    assert "IndexError" not in run.output and "could not take" not in run.output, run.failures()
    elements = _behave_json(tmp_path_factory)
    prepared = elements["Set up by a hook"]
    assert prepared["status"] == "passed", run.failures()
    first = [x["method"] for x in _exchanges(prepared["steps"][0])]
    assert "connected" in first and any(m.startswith("seed ") for m in first), first  # the hook's setup
    calls = [x["payload"] for x in _exchanges(prepared["steps"][-1]) if x["kind"] == "request"]
    assert {"name": "add", "arguments": {"a": 40, "b": 2}} in calls, prepared["steps"][-1]
    undefined = elements["Set up by a hook, then a step nobody defined"]["steps"]
    audit = [[(x["server"], x["method"]) for x in _exchanges(step)] for step in undefined]
    assert ("audit", "fake database started") in audit[0] and audit[1] == [], audit  # not the skipped step


def test_what_an_after_hook_attaches_goes_after_the_steps_when_a_before_hook_failed(
    failed_run: tuple[Run, ReportRun, str],
) -> None:
    """No step ran, so no step result tells the collector where the after hooks begin: mcp-bdd's
    hooks say it, and the user's note is not filed under "Before the steps" by its position."""
    run, report, _html = failed_run
    scenario = _scenarios(report)["A hook that breaks"]
    assert [s.status for s in scenario.steps] == ["untested"], run.output[-4000:]  # no step ran
    after = [a.text for a in scenario.after_evidence.attachments]
    before = [a.text for a in scenario.evidence.attachments]
    assert after == ["orders fixture: nothing to clean up"] and before == [], (before, after)


def test_a_hooks_setup_stays_before_the_steps_when_the_first_step_is_undefined(
    failed_run: tuple[Run, ReportRun, str],
) -> None:
    """behave runs no before_step for an undefined step: the before hook's evidence still goes
    before the steps, and what the user's after hook did in Python after them."""
    run, report, _html = failed_run
    scenario = _scenarios(report)["Set up by a hook, then a step nobody defined"]
    assert [s.status for s in scenario.steps] == ["undefined", "skipped"], run.output[-4000:]
    before = [(x.server, x.method) for x in scenario.evidence.exchanges]
    assert before == [("ledger", "fake database started")], before
    after = [(x.server, x.method) for x in scenario.after_evidence.exchanges]
    assert after == [("audit", "fake database started")], after
