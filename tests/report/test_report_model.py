"""The run model: status arithmetic and the JSON round trip that `merge` depends on."""

from __future__ import annotations

import json

import pytest
from report_helpers import exchange, feature, run, scenario

from mcp_bdd.report.cucumber_common import hook_errors
from mcp_bdd.report.model import Outline, Rule, combine, dump_run, load_run, outcome, walk_scenarios


def test_combine_takes_the_worst_and_skipped_counts_least() -> None:
    assert combine([]) == "skipped"
    assert combine(["passed", "skipped", "skipped"]) == "passed"
    assert combine(["passed", "failed", "undefined"]) == "undefined"
    assert combine(["passed", "untested"]) == "untested"
    assert combine(["pending", "failed"]) == "failed"
    assert combine(["hook_error", "error"]) == "hook_error"


def test_outcomes_tell_failed_errored_pending_and_not_run_apart() -> None:
    assert [outcome(s) for s in ("passed", "failed", "error", "undefined", "hook_error")] == [
        "passed",
        "failed",
        "errored",
        "errored",
        "errored",
    ]
    assert (outcome("pending"), outcome("skipped"), outcome("untested")) == ("pending", "skipped", "untested")


def test_json_round_trip_keeps_rules_outlines_and_evidence() -> None:
    x = exchange(1, "request", "tools/call", {"name": "add", "arguments": {"a": 1}})
    s1 = scenario("f--a", exchanges=(x,), tags=("smoke",))
    s2 = scenario("f--o--row", status="failed", error="boom")
    outline = Outline(
        id="f--o", name="O <a>", keyword="Scenario Outline", location="f:3", status="failed", scenarios=(s2,)
    )
    rule = Rule(id="f--r", name="R", keyword="Rule", location="f:9", status="failed", children=(outline,))
    original = run(feature("f", s1, rule, status="failed"), label="http")
    data = json.loads(json.dumps(dump_run(original)))
    assert data["schema"] == "mcp-bdd.run/1"
    again = load_run(data)
    assert again == original
    assert [s.id for f in again.features for s in walk_scenarios(f.children)] == ["f--a", "f--o--row"]


def test_load_run_refuses_other_json() -> None:
    with pytest.raises(ValueError, match="not an mcp-bdd run file"):
        load_run([{"keyword": "Feature"}])  # behave's own json output


def test_the_report_imports_neither_the_sdk_nor_the_steps() -> None:
    """Layering: the report reads attachments; it never needs the MCP SDK or the step library."""
    import subprocess
    import sys

    code = (
        "import sys, mcp_bdd.report, mcp_bdd.report.merge\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_bdd.steps'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_hook_error_belongs_to_the_side_of_the_steps_it_came_from() -> None:
    """A failing before hook skips the steps; so when they ran, the error came after them (an
    after_scenario, after_rule or after_feature hook) and Cucumber shows it as an After hook."""
    ran = scenario("s1", "passed")
    skipped = scenario("s2", "skipped")
    broken_teardown = feature("f1", ran, error_message="after_feature: the audit log could not be flushed")
    assert hook_errors(broken_teardown, None, ran) == (None, "after_feature: the audit log could not be flushed")
    broken_setup = feature("f2", skipped, error_message="before_feature: the fixture could not be created")
    assert hook_errors(broken_setup, None, skipped) == ("before_feature: the fixture could not be created", None)
    own = scenario("s3", "failed", error_message="after_scenario broke")
    assert hook_errors(feature("f3", own), None, own) == (None, "after_scenario broke")
    assert hook_errors(feature("f4", ran), None, ran) == (None, None)
    both = scenario("s4", "failed", error_message="after_scenario broke")
    teardowns = feature("f5", both, error_message="after_feature broke")
    assert hook_errors(teardowns, None, both) == (None, "after_scenario broke\nafter_feature broke")
