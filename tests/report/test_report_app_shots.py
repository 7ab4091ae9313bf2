"""An MCP App's screenshots in the living documentation, read in real headless Chromium as a
product owner reads them: on a phone (400 px) and a desktop (1400 px), each picture drawn, inside
the screen, and the page never scrolling sideways."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from behave_project import REPO, Run, run_captured
from report_helpers import open_page

pytestmark = pytest.mark.slow

_SHOTS = """
document.querySelectorAll('details[data-ev]').forEach(d => { d.open = true; d.dispatchEvent(new Event('toggle')); });
const shots = [...document.querySelectorAll('figure.shot img')].filter(i => i.src.startsWith('data:image/png'));
return {
  viewport: document.documentElement.clientWidth,
  scroll: document.documentElement.scrollWidth,
  shots: shots.map(i => { i.scrollIntoView(); const r = i.getBoundingClientRect();
    return {drawn: i.complete && i.naturalWidth > 0, left: r.left, right: r.right, width: r.width}; }),
};
"""


@pytest.fixture(scope="module")
def app_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """features/apps run with the living doc (the demo cart App, opened, typed in, clicked)."""
    report = tmp_path_factory.mktemp("apps") / "living-doc.html"
    argv = [sys.executable, "-m", "behave", "--no-color", "-f", "plain", "-D", f"mcp_bdd.report={report}",
            "-f", "living-doc", "features/apps"]  # fmt: skip
    proc = run_captured(argv, cwd=REPO, timeout=240)
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert run.counts()["passed"] >= 1 and run.counts()["failed"] == 0, run.failures()
    return report


@pytest.mark.parametrize("width", [400, 1400])
def test_the_apps_screenshots_are_drawn_inside_the_screen(browser: Any, app_report: Path, width: int) -> None:
    metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": False}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        open_page(browser, app_report.as_uri())
        seen = browser.execute_script(_SHOTS)
        assert len(seen["shots"]) >= 3, seen  # opening, typing, clicking
        assert all(shot["drawn"] for shot in seen["shots"]), seen
        viewport = seen["viewport"]
        assert seen["scroll"] <= viewport, seen  # no sideways scroll, pictures included
        assert all(s["left"] >= 0 and s["right"] <= viewport and s["width"] > 100 for s in seen["shots"]), seen
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
