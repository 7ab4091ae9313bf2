"""Meta-test: behave runs a real project with the formatter; the report tells every case apart.

The sample project (sample_project/) uses plain custom steps that attach synthetic MCP
transcripts, so this does not depend on the MCP step library. It has passing, failing,
undefined-step, pending, hook-error (scenario and feature), skipped, outline and Rule scenarios.
"""

from __future__ import annotations

from typing import Any

import pytest
from report_helpers import FORMATTER, SampleRun, make_sample_run

from mcp_bdd.report.model import load_run, walk_scenarios
from mcp_bdd.secrets import MASK

pytestmark = pytest.mark.slow


def _scenarios(data: dict[str, Any]) -> dict[str, Any]:
    run = load_run(data)
    out: dict[str, Any] = {}
    for f in run.features:
        for s in walk_scenarios(f.children):
            out.setdefault(s.name, s)
    return out


def test_every_outcome_is_told_apart(sample_run: SampleRun) -> None:
    statuses = {name: s.status for name, s in _scenarios(sample_run.data).items()}
    assert statuses == {
        "Adding two numbers": "passed",
        "A wrong total is reported as a failure": "failed",
        "A step nobody has written yet": "undefined",
        "Multiplying 2 by 3": "passed",
        "Multiplying 4 by 5": "failed",
        "Dividing by zero": "passed",
        "Dividing normally": "passed",
        "Reading the catalog": "passed",
        "A scenario whose setup hook breaks": "hook_error",
        "A scenario that is not ready": "skipped",
        "A pending step": "pending",
        "Echoing <b>hostile</b> markup": "passed",
        "Never runs because the feature hook fails": "untested",
    }
    assert sample_run.proc.returncode == 1  # behave itself still fails the run


def test_structure_rules_outlines_backgrounds(sample_run: SampleRun) -> None:
    run = load_run(sample_run.data)
    assert run.label == "stdio" and run.title == "Shop <MCP> server"
    calc = next(f for f in run.features if f.name == "Calculator tools")
    assert [c.kind for c in calc.children] == ["scenario", "scenario", "scenario", "outline", "rule", "rule"]
    assert calc.tags == ("tools",) and calc.description[0].startswith("The shop exposes arithmetic")
    assert calc.background is not None and calc.background.steps[0].name == 'the "shop" server is running'
    outline, rule = calc.children[3], calc.children[4]
    assert outline.kind == "outline" and outline.examples[0].table.rows == (("2", "3", "6"), ("4", "5", "21"))
    assert [s.example.row for s in outline.scenarios if s.example] == [1, 2]
    assert rule.kind == "rule" and rule.description == ("A divisor of zero must give a tool error, never a crash.",)
    ids = [s.id for s in walk_scenarios(calc.children)]
    assert len(ids) == len(set(ids))  # same-named scenarios in two Rules get distinct anchors
    broken = next(f for f in run.features if f.name.startswith("Prompts"))
    assert broken.status == "hook_error" and "prompts fixture could not be created" in (broken.error_message or "")


def test_steps_carry_status_duration_evidence_and_definition(sample_run: SampleRun) -> None:
    scenarios = _scenarios(sample_run.data)
    adding = scenarios["Adding two numbers"]
    given, when, _then = adding.steps
    assert given.background and not when.background
    assert [x.kind for x in when.evidence.exchanges] == ["request", "response", "notification"]
    assert when.evidence.exchanges[0].target == "add" and len(when.evidence.exchanges[1].images) == 1
    assert when.definition and when.definition.startswith("steps/sample_steps.py:")
    assert all(s.status == "passed" and s.duration >= 0 for s in adding.steps) and adding.duration > 0
    wrong = scenarios["A wrong total is reported as a failure"]
    assert (wrong.steps[-1].error_message or "").startswith("ASSERT FAILED: Expected result to be 5, but it was 4\n")
    failure = wrong.steps[-1].failure  # the parts, for the page to read top-down
    assert failure is not None and failure.sentence == "Expected result to be 5, but it was 4"
    assert (failure.expected, failure.actual, failure.path) == (5, 4, "$.structuredContent.result")
    assert failure.tip == "check the numbers in the Examples table." and wrong.steps[-1].error_kind == "expectation"
    [tail] = wrong.steps[-1].evidence.stderr
    assert f"API_TOKEN={MASK}" in tail.text and "s3cr3t" not in tail.text
    undefined = scenarios["A step nobody has written yet"].steps[-1]
    assert undefined.status == "undefined" and "Undefined step" in (undefined.error_message or "")
    hook = scenarios["A scenario whose setup hook breaks"]
    assert "HOOK-ERROR in before_scenario" in (hook.error_message or "")
    assert [s.status for s in hook.steps] == ["untested"]
    reading = scenarios["Reading the catalog"].steps[1].evidence.exchanges
    assert reading[1].truncated and reading[1].size > 20_000


def test_server_surface_glossary_and_coverage(sample_run: SampleRun) -> None:
    run = load_run(sample_run.data)
    [shop] = run.servers
    assert (shop.name, shop.version, shop.protocol, shop.transport) == (
        "Shop <Demo>",
        "1.0",
        "2026-07-28",
        "in-memory",
    )
    assert shop.extra["env"] == {"SHOP_DB": "/tmp/shop.db", "API_TOKEN": MASK}
    assert [t["name"] for t in shop.tools or ()] == ["add", "multiply", "divide", "echo", "refund"]
    phrases = {d.pattern: d for d in run.glossary}
    assert phrases['the "{server}" server is running'].doc.startswith("Start the named server for this scenario.")
    assert phrases['the "{server}" server is running'].uses >= 10
    assert phrases["a step that is still pending"].uses == 1
    [cov] = sample_run.data["coverage"]
    items = {(i["kind"], i["name"]): i for i in cov["items"]}
    assert items[("tool", "divide")]["error_calls"] == 1 and items[("tool", "refund")]["calls"] == 0
    assert items[("prompt", "missing")]["in_catalog"] is False and items[("prompt", "missing")]["error_calls"] == 1


def test_html_is_one_self_contained_page(sample_run: SampleRun) -> None:
    html = sample_run.text
    assert html.startswith("<!doctype html>") and "<title>Shop &lt;MCP&gt; server</title>" in html
    for anchor in (
        "summary",
        "servers",
        "glossary",
        "tools-calculator",
        "tools-calculator--adding-two-numbers",
    ):
        assert f'id="{anchor}"' in html
    assert "Division by zero is refused" in html and "A divisor of zero must give a tool error" in html
    assert "Undefined step" in html and "Hook error" in html and "Pending" in html and "Untested" in html
    assert 'class="datatable examples-table"' in html
    assert "<script>window.__pwned" not in html and "Echoing &lt;b&gt;hostile&lt;/b&gt; markup" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    assert "<link" not in html and "@import" not in html


def test_userdata_options(tmp_path: Any) -> None:
    sample = make_sample_run(tmp_path, "http", "-D", "mcp_bdd.label=shard-2", "-D", "mcp_bdd.junit=out/j.xml")
    assert sample.data["label"] == "shard-2"
    assert (sample.project / "out" / "j.xml").read_text().startswith('<?xml version="1.0"')
    assert FORMATTER in " ".join(sample.proc.args)
