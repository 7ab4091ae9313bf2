"""MCP Apps end to end: real behave runs, real App servers (demo/cart_app.py, tests/servers/hostile_apps.py),
the real browser (Playwright driving the Chromium on PATH).

The cart's feature passes and its report carries the screenshots; each hostile app fails the step that
meets it within the timeout, naming the app, the tool and what the app did; a missing browser or a
missing Playwright is a failure that names what to install. No process is left behind (census).

Skipped with a reason when Playwright or a Chromium is missing, as the report's browser tests are;
under CI (the CI variable set) that is a failure instead: CI installs both (.ci/run, the dev extra).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest
from behave_project import REPO, Run, make_project, run_behave, run_captured

from mcp_bdd.ui_apps import find_chromium

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]


def require_browser() -> None:
    """Skip (fail under CI) when the browser the MCP Apps steps need is not installed."""
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append("Playwright for Python (pip install 'mcp-bdd[apps]')")
    if find_chromium() is None:
        missing.append("a Chromium on PATH (apt-get install chromium)")
    if missing:
        message = "MCP Apps tests need " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message + ": CI installs them", pytrace=False)
        pytest.skip(message)


@pytest.fixture(autouse=True)
def _browser() -> None:
    require_browser()


HOSTILE_CONFIG = """
server = "hostile"
timeout = 8
[servers.hostile]
app = "tests.servers.hostile_apps:create_server"
"""

#: scenario -> (its failing step, what the failure must say)
HOSTILE = {
    "throws": ("Then the app has no errors", ['the app of the tool "throws"', "uncaught Error: the cart exploded"]),
    "throws_early": (
        'When I open the app of the tool "throws_early"',
        ["did not finish its handshake within 8 s", "it never sent ui/initialize", "cannot read the cart"],
    ),
    "wrong_id": ("Then the app has no errors", ["answered a request the host never sent (id 999)"]),
    "silent": ('When I open the app of the tool "silent"', ["did not finish its handshake", "Silent app"]),
    "flood": ("Then the app has no errors", ["flooded the host", "the host stopped it"]),
    "peeker": ("Then the app has no errors", ['called the tool "secret_report"', "visibility"]),
    "outsider": ("Then the app has no errors", ["Content-Security-Policy", "cdn.example.com"]),
    "forger": ("Then the app has no errors", ["bypassing postMessage"]),
}


def _hostile_feature() -> str:
    parts = ["Feature: Hostile apps\n"]
    for tool, (failing, _) in HOSTILE.items():
        parts.append(f"  Scenario: {tool}\n    Given the client supports MCP Apps\n")
        parts.append('    And the MCP server "hostile" is running\n')
        parts.append(f'    When I open the app of the tool "{tool}"\n')
        if tool == "peeker":
            parts.append('    And I click "Peek" in the app\n    Then the app shows "refused"\n')
        if failing.startswith("Then"):
            parts.append(f"    {failing}\n")
    return "".join(parts)


def _failed_step(block: str) -> tuple[str, float] | None:
    """The failed step of one scenario's plain output: (its text with its keyword, seconds)."""
    match = re.search(r"^\s+(.+?) \.\.\. (?:failed|error) in ([\d.]+)s", block, re.M)
    return (match.group(1), float(match.group(2))) if match else None


def test_the_cart_app_feature_passes_and_its_report_shows_the_screenshots(tmp_path: Path) -> None:
    report = tmp_path / "living-doc.html"
    proc = run_captured(
        [
            sys.executable,
            "-m",
            "behave",
            "--no-color",
            "-f",
            "plain",
            "-D",
            f"mcp_bdd.report={report}",
            "-f",
            "living-doc",
            "features/apps",
        ],
        cwd=REPO,
        timeout=240,
    )
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert run.counts() == {"passed": 2, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert report.stat().st_size < 600_000
    # the report packs its data (gzip); the JSON beside it says what it holds
    data = (tmp_path / "living-doc.json").read_text(encoding="utf-8")
    assert data.count('"image/png"') >= 3, "a screenshot for opening, typing and clicking"
    assert "application/vnd.mcp-bdd.app-bridge+json" in data
    assert "ui/notifications/tool-result" in data and "Order placed" in data


def test_each_hostile_app_fails_its_step_in_time_saying_what_it_did(tmp_path: Path) -> None:
    root = make_project(tmp_path, HOSTILE_CONFIG, {"hostile.feature": _hostile_feature()})
    run = run_behave(root, "-f", "plain", timeout=280)
    assert run.counts() == {"passed": 0, "failed": len(HOSTILE), "error": 0, "skipped": 0}, run.output[-4000:]
    blocks = re.split(r"^  Scenario: ", run.stdout, flags=re.M)[1:]
    assert len(blocks) == len(HOSTILE)
    for block in blocks:
        tool = block.split("\n", 1)[0].strip()
        failing, said = HOSTILE[tool]
        failed = _failed_step(block)
        assert failed is not None and failed[0] == failing, f"{tool}: expected {failing!r} to fail:\n{block}"
        # within the request timeout (8 s: roomy for a loaded machine, where a good app's handshake must
        # still fit), then the evidence (a screenshot: at most 3 s, and the failure's quote of the app's
        # text: 2 s), and some slack
        assert failed[1] < 8 + 3 + 2 + 3, f"{tool}: {failing} took {failed[1]} s"
        for text in [f'The app of the tool "{tool}" (ui://hostile/{tool}.html)', *said]:
            assert text in block, f"{tool}: {text!r} not in\n{block}"


def test_a_missing_browser_is_a_failure_that_says_what_to_install(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        'server = "cart"\n[servers.cart]\napp = "demo.cart_app:create_server"\n',
        {
            "open.feature": "Feature: f\n  Scenario: s\n    Given the client supports MCP Apps\n"
            '    When I open the app of the tool "show_cart"\n'
        },
    )
    env = dict(os.environ, PYTHONPATH=str(REPO), MCP_BDD_CHROMIUM=str(tmp_path / "no-such-chrome"))
    env.pop("CI", None)
    proc = run_captured([sys.executable, "-m", "behave", "--no-color", "features/"], cwd=root, env=env, timeout=120)
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert proc.returncode != 0 and run.counts()["skipped"] == 0
    assert "MCP_BDD_CHROMIUM=" in run.output and "names no executable" in run.output, run.output[-3000:]

    # nothing on PATH, no Playwright Chromium either: the tip names the extra and the browser
    env.pop("MCP_BDD_CHROMIUM")
    env["PATH"] = str(tmp_path / "empty-bin")
    env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "no-browsers")
    proc = run_captured([sys.executable, "-m", "behave", "--no-color", "features/"], cwd=root, env=env, timeout=120)
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert proc.returncode != 0 and run.counts()["failed"] + run.counts()["error"] == 1
    assert "No Chromium to open MCP Apps in" in run.output, run.output[-3000:]
    assert "mcp-bdd[apps]" in run.output and "apt-get install chromium" in run.output


def test_without_playwright_the_failure_names_the_apps_extra(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        'server = "cart"\n[servers.cart]\napp = "demo.cart_app:create_server"\n',
        {
            "open.feature": "Feature: f\n  Scenario: s\n    Given the client supports MCP Apps\n"
            '    When I open the app of the tool "show_cart"\n'
        },
    )
    # as if the extra were not installed: the import of Playwright fails
    (root / "steps" / "no_playwright.py").write_text("import sys\n\nsys.modules['playwright'] = None\n")
    run = run_behave(root, timeout=120)
    assert run.returncode != 0 and run.counts()["skipped"] == 0
    assert "Playwright for Python, which is not installed" in run.output, run.output[-3000:]
    assert "pip install 'mcp-bdd[apps]'" in run.output
