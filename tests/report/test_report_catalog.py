"""A server's catalog does not set the report's size: 5,000 tools and a 10 MB description made
14 MB of HTML and 13 MB of JSON, while message payloads were already cut at 20,000 characters.

The end-to-end test runs a real behave project against tests/servers/catalog.py (a stdio server
of the standard library only); the others build the surface attachment by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from behave_project import make_project, run_behave
from report_helpers import REPO, exchange, feature, run, scenario

from mcp_bdd.report.evidence import CATALOG_ITEMS, CATALOG_NAMES, PAYLOAD_LIMIT, surface_from_json
from mcp_bdd.report.formatter import write_run_json
from mcp_bdd.report.render import render_html

CATALOG = REPO / "tests" / "servers" / "catalog.py"
DESCRIPTION = 10_000_000


@pytest.mark.slow
def test_a_huge_catalog_makes_a_small_report(tmp_path: Path) -> None:
    project = make_project(
        tmp_path,
        f"""
        [servers.catalog]
        command = ["{sys.executable}", "{CATALOG}", "--tools", "5000", "--description-bytes", "{DESCRIPTION}"]
        """,
        {
            "huge.feature": """
            Feature: a huge catalog
              Scenario: two calls, one to a tool past those listed in full
                Given the MCP server "catalog" is running
                When I call the tool "list_order_1" with:
                  | account |
                  | ACC-1   |
                Then the tool call succeeds
                When I call the tool "list_invoice_4021" with:
                  | account |
                  | ACC-1   |
                Then the tool call succeeds
            """
        },
    )
    done = run_behave(project, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "reports/doc.html", timeout=180)
    assert done.returncode == 0, done.failures()
    html = (project / "reports" / "doc.html").read_text(encoding="utf-8")
    data = (project / "reports" / "doc.json").read_text(encoding="utf-8")
    assert len(html) < 1_000_000 and len(data) < 1_500_000, (len(html), len(data))
    assert f"… ({DESCRIPTION:,} characters in all)" in html  # the long description, cut as a payload is
    assert f"{CATALOG_ITEMS} of 5000 listed in full" in html
    assert html.count('<tr class="covered">') == 2  # both called tools are rows, the one past the cut too
    run_data = json.loads(data)
    assert run_data["coverage"][0]["total"] == 5000 and run_data["coverage"][0]["exercised"] == 2
    assert run_data["servers"][0]["named_only"] == {"tools": 5000 - CATALOG_ITEMS}


def _tools(count: int, **extra: object) -> list[dict[str, object]]:
    return [{"name": f"tool_{i}", "description": f"Tool {i}.", **extra} for i in range(count)]


def test_each_record_is_cut_to_the_payload_limit_however_it_is_built() -> None:
    """Wide, deep or long: a record's strings share one budget, and what is left out is counted."""
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 50} for i in range(5000)}}
    deep: dict[str, object] = {"type": "object"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"inner": deep}}
    surface = surface_from_json(
        {"server": "s", "tools": [{"name": "wide", "inputSchema": wide}, {"name": "deep", "inputSchema": deep}]}
    )
    assert surface.tools is not None
    for record in surface.tools:
        assert len(json.dumps(record)) < PAYLOAD_LIMIT + 2_000
    assert any("more keys, left out" in key or "more keys, left out" in str(value)
               for key, value in surface.tools[0]["inputSchema"]["properties"].items())  # fmt: skip


def test_past_the_names_kept_only_a_count_and_the_coverage_still_totals_all(tmp_path: Path) -> None:
    listed = CATALOG_NAMES + 50
    surface = surface_from_json({"server": "shop", "tools": _tools(listed)})
    assert surface.tools is not None and len(surface.tools) == CATALOG_NAMES
    assert surface.named_only == {"tools": CATALOG_NAMES - CATALOG_ITEMS} and surface.left_out == {"tools": 50}
    called = scenario("s1", exchanges=(exchange(1, "request", "tools/call", {"name": f"tool_{CATALOG_ITEMS + 7}"}),))
    bounded_run = run(feature("f", called), servers=(surface,))
    write_run_json(tmp_path / "run.json", bounded_run)
    coverage = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["coverage"][0]
    assert (coverage["total"], coverage["exercised"]) == (listed, 1)
    html = render_html([bounded_run])
    assert f"{CATALOG_ITEMS} of {listed} listed in full" in html and "… and 50 more, not kept." in html
    assert html.count('<tr class="covered">') == 1


@pytest.mark.parametrize("limit", [2_000, 20_000])
def test_the_payload_limit_sets_the_cut(limit: int) -> None:
    surface = surface_from_json({"server": "s", "instructions": "i" * 50_000, "tools": _tools(1)}, limit)
    assert surface.instructions is not None and surface.instructions.endswith("… (50,000 characters in all)")
    assert len(surface.instructions) < limit + 100
