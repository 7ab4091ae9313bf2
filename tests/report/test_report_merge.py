"""`mcp-bdd report merge`: two runs of the same features, one report, a column per run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import SampleRun, make_sample_run

from mcp_bdd.report.merge import load_runs, main
from mcp_bdd.report.render import unpack
from mcp_bdd.report.views import build_report

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def http_run(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    """The same project over "http", where division is broken: it disagrees with stdio."""
    return make_sample_run(tmp_path_factory.mktemp("http"), "http", "-D", "break_division=1")


def test_merge_shows_runs_side_by_side(sample_run: SampleRun, http_run: SampleRun, tmp_path: Path) -> None:
    a = sample_run.html.with_suffix(".json")
    b = http_run.html.with_suffix(".json")
    out = tmp_path / "merged" / "all.html"
    assert main([str(a), str(b), "-o", str(out), "--title", "Transport matrix"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<title>Transport matrix</title>" in html
    assert "Runs disagree: passed on stdio · failed on http" in html
    view = build_report(load_runs([a, b]))
    assert view.labels == ["stdio", "http"]
    flagged = sorted(s.name for s in view.scenarios if s.inconsistent)
    assert flagged == ["Dividing normally", "Dividing normally"]
    # legs that disagree are flaky on the page: marked, counted, filterable
    index = {e["id"]: e for e in unpack(html)["index"]}
    assert sorted(s.name for s in view.scenarios if index[s.id]["flaky"]) == flagged
    assert html.count('<span class="flag flaky"') == 4  # each on its scenario and under Needs attention
    agreed = next(s for s in view.scenarios if s.name == "Adding two numbers")
    assert [r.status for r in agreed.results if r] == ["passed", "passed"] and not agreed.inconsistent


def test_merge_disambiguates_equal_labels_and_reports_bad_files(sample_run: SampleRun, tmp_path: Path) -> None:
    a = sample_run.html.with_suffix(".json")
    copy = tmp_path / "again.json"
    copy.write_text(a.read_text(encoding="utf-8"), encoding="utf-8")
    assert [r.label for r in load_runs([a, copy])] == ["stdio (living-doc)", "stdio (again)"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"behave": "json"}]), encoding="utf-8")
    assert main([str(a), str(bad), "-o", str(tmp_path / "x.html")]) == 1
    assert not (tmp_path / "x.html").exists()
    assert main(["--help"]) == 0
    assert main([]) == 2
