"""Run history across three consecutive real behave runs: the trend, each scenario's dots,
flaky marks (flips between runs, and between transport legs in a merged report), "new failure"
vs "still failing", failure categories and requirement links (from the project's config);
`mcp-bdd report merge` with and without a history."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from report_helpers import feature, make_sample_run, run, scenario

from mcp_bdd.report import dump_run
from mcp_bdd.report.history import read_history, record_run
from mcp_bdd.report.merge import main as merge_main
from mcp_bdd.report.render import unpack

DIVIDING = "tools-calculator--division-by-zero-is-refused--dividing-normally"
WRONG = "tools-calculator--a-wrong-total-is-reported-as-a-failure"


def _index(html: Path) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in unpack(html.read_text(encoding="utf-8"))["index"]}


def _scenario_html(html: Path, sid: str) -> str:
    text = html.read_text(encoding="utf-8")
    start = text.index(f'id="{sid}"')
    return text[start : text.index("</summary>", start)]


# The history folder and the requirement links come from the project's configuration; the
# folder is relative to the config file (each run's project is tmp/<n>/project).
PROJECT_FILES = {
    "mcp-bdd.toml": 'history = "../../history"\nhistory_runs = 5\n[links]\nJIRA = "https://jira.example.com/browse/{}"\n',
    "features/tools/traced.feature": (
        "@JIRA-7\nFeature: Traced to a requirement\n  Scenario: Adding is traced\n"
        '    Given the "shop" server is running\n    When I call "add" with 1 and 1\n    Then the result is 2\n'
    ),
}


def test_three_consecutive_runs(tmp_path: Path) -> None:
    history = tmp_path / "history"
    first = make_sample_run(tmp_path / "1", "stdio", files=PROJECT_FILES)
    second = make_sample_run(tmp_path / "2", "stdio", "-D", "break_division=1", files=PROJECT_FILES)
    third = make_sample_run(tmp_path / "3", "stdio", "-D", "slow_adding=1", files=PROJECT_FILES)

    entries = read_history(history, "stdio")
    assert len(entries) == 3 and len(list(history.glob("run-*.json"))) == 3
    assert [e.scenarios[DIVIDING][0] for e in entries] == ["passed", "failed", "passed"]
    assert entries[1].scenarios[DIVIDING][2] == "expectation"  # the category is kept

    # run 1: no history yet, so no trend and no marks
    assert "<h2>History" not in first.text and 'class="trend"' not in first.text
    # run 2: the division breaks (new failure); the wrong total keeps failing
    assert "new failure" in _scenario_html(second.html, DIVIDING)
    assert "still failing · 2 runs" in _scenario_html(second.html, WRONG)
    assert _index(second.html)[DIVIDING]["kind"] == "expectation"
    # run 3: passes again -> it flipped twice: flaky; the trend shows the three runs as dots
    index = _index(third.html)
    assert index[DIVIDING]["flaky"] is True and index[WRONG]["flaky"] is False
    dividing = _scenario_html(third.html, DIVIDING)
    assert "flaky" in dividing and "fixed" in dividing
    assert dividing.count('<i class="t-') == 3 and '<i class="t-failed">' in dividing
    assert "still failing · 3 runs" in _scenario_html(third.html, WRONG)
    assert "<h2>History" in third.text and "data-flaky" in third.text
    # the History card: one point per run on each trend, and what changed since the last run
    assert re.findall(r'<svg class="spark[^"]*"[^>]*><polyline points="([^"]*)"', third.text)[0].count(",") == 3
    facts = dict(
        (label, int(n))
        for n, label in re.findall(r'<div class="fact-n">(\d+)</div><div class="fact-l">([^<]+)</div>', third.text)
    )
    assert facts["new failures"] == 0 and facts["still failing"] == 4, facts  # the total, hook and outline failures
    assert facts["flaky (pass and fail with no change)"] == 2 == facts["fixed since the last run"], facts
    assert facts["slower than usual (2× their median)"] == 2, facts  # the passing scenarios that call "add"
    # durations have a trend too: the scenario that now takes 1 s more is marked, and listed
    traced = next(sid for sid in _index(third.html) if sid.endswith("adding-is-traced"))
    adding = _scenario_html(third.html, traced)
    assert re.search(r"slower · 1\.\d\d s, usually 0\.\d\d s", adding), adding
    assert re.search(r'title="Last 3 runs, oldest first: passed 0\.\d\d s, passed 0\.\d\d s, passed 1\.\d\d s"', adding)
    assert "<h3>Slower than usual</h3>" in third.text and f'<a href="#{traced}">Adding is traced</a>' in third.text
    assert "slower ·" not in _scenario_html(third.html, DIVIDING)
    assert 'data-kind="expectation"' in third.text  # categories stay filters
    for report in (first, second, third):  # requirement tags are links in every run
        assert '<a class="tag req" href="https://jira.example.com/browse/JIRA-7"' in report.text


def test_history_keeps_the_newest_runs_per_label(tmp_path: Path) -> None:
    for n in range(5):
        record_run(tmp_path, run(feature("f", scenario("f--s")), label="stdio", started_at=1000.0 + n), keep=3)
    record_run(tmp_path, run(feature("f", scenario("f--s")), label="http", started_at=999.0), keep=3)
    assert [e.started_at for e in read_history(tmp_path, "stdio")] == [1002.0, 1003.0, 1004.0]
    assert [e.label for e in read_history(tmp_path, "http")] == ["http"]
    (tmp_path / "run-broken.json").write_text("{not json", encoding="utf-8")  # skipped, not fatal
    assert len(read_history(tmp_path)) == 4


def test_merge_marks_legs_that_disagree_as_flaky_and_keeps_a_history(tmp_path: Path) -> None:
    ok = run(feature("f", scenario("f--s"), scenario("f--t")), label="stdio", started_at=1.0)
    bad = run(feature("f", scenario("f--s", "failed", error="no"), scenario("f--t")), label="http")
    files = []
    for r in (ok, bad):
        path = tmp_path / f"{r.label}.json"
        path.write_text(json.dumps(dump_run(r)), encoding="utf-8")
        files.append(str(path))
    out = tmp_path / "merged.html"
    assert merge_main([*files, "-o", str(out)]) == 0  # no history: works as before
    index = {e["id"]: e for e in unpack(out.read_text(encoding="utf-8"))["index"]}
    assert index["f--s"]["flaky"] is True and index["f--t"]["flaky"] is False
    history = ["-o", str(out), "--history", str(tmp_path / "h")]
    for _ in range(2):  # merging the same runs again replaces their entry
        assert merge_main([*files, *history]) == 0
    assert [e.label for e in read_history(tmp_path / "h")] == ["stdio+http"]
    later = tmp_path / "stdio-later.json"
    later.write_text(json.dumps(dump_run(replace(ok, started_at=2.0))), encoding="utf-8")
    assert merge_main([str(later), files[1], *history]) == 0
    assert [e.label for e in read_history(tmp_path / "h")] == ["stdio+http", "stdio+http"]
    assert "<h2>History" in out.read_text(encoding="utf-8")


def test_mcp_bdd_run_keeps_one_history_entry_per_run_and_shows_it_in_the_merged_report(tmp_path: Path) -> None:
    """Legs and jobs are workers of one run: the merged page (the one people open) shows the
    history, and two jobs of a leg do not read as two runs."""
    from test_cli import cli

    assert cli(tmp_path, "init").returncode == 0
    features = sorted((tmp_path / "features").glob("*.feature"))
    copy = features[0].read_text(encoding="utf-8").replace("Feature:", "Feature: Copy of", 1)
    (tmp_path / "features" / "copy.feature").write_text(copy, encoding="utf-8")  # two files: two jobs
    config = tmp_path / "mcp-bdd.toml"  # `history` from the configuration, relative to its file
    config.write_text('history = ".mcp-bdd/history"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    history = tmp_path / ".mcp-bdd" / "history"
    argv = ("run", "--transport", "in-memory,stdio", "--jobs", "2")
    for n in (1, 2):  # the second run adds an entry, read beside the first
        ran = cli(tmp_path, *argv, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        entries = read_history(history)
        assert [e.label for e in entries] == ["in-memory+stdio"] * n, [e.label for e in entries]
    page = (tmp_path / "reports" / "living-doc.html").read_text(encoding="utf-8")
    assert '<h2>History <span class="count">2 runs</span></h2>' in page
    assert page.count('<i class="t-passed">') >= 2


def test_slower_compares_passed_runs_only() -> None:
    """A run that was skipped (no time) or failed (stopped early) is no baseline for "usually"."""
    from mcp_bdd.report.history import Entry
    from mcp_bdd.report.views import build_report

    def history(*runs: tuple[str, float]) -> list[Entry]:
        return [Entry("stdio", float(n), d, {}, {"f--s": (o, d, None)}) for n, (o, d) in enumerate(runs)]  # type: ignore[dict-item]

    now = run(feature("f", scenario("f--s", duration=0.5)), label="stdio", started_at=99.0)
    fixed = build_report([now], history=history(("skipped", 0.0), ("failed", 0.01), ("failed", 0.02)))
    assert fixed.scenarios[0].slowdown is None
    slower = build_report([now], history=history(("passed", 0.1), ("skipped", 0.0), ("passed", 0.12)))
    assert slower.scenarios[0].slowdown == "slower · 0.50 s, usually 0.11 s"
    steady = build_report([now], history=history(("passed", 0.4), ("passed", 0.45)))
    assert steady.scenarios[0].slowdown is None
