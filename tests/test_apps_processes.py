"""No browser process outlives a run that opened an MCP App, even one killed with SIGKILL while the app was open.

Playwright's driver is a child of behave's process and ends when its pipe closes; the Chromium it
launched (and Chromium's own helpers: zygotes, renderers, the crash handler) go with it. The census
counts every process carrying the test's environment marker, which the browser inherits.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from behave_project import Census, behave_env, make_project
from test_apps_behave import require_browser

pytestmark = pytest.mark.slow

CONFIG = """
server = "hostile"
timeout = 60
[servers.hostile]
app = "tests.servers.hostile_apps:create_server"
"""

FEATURE = """
Feature: An app that never initialises keeps its step waiting
  Scenario: silent
    Given the client supports MCP Apps
    And the MCP server "hostile" is running
    When I open the app of the tool "silent"
"""


def _browsers(census: Census) -> list[str]:
    return [line for line in census.left() if "chrom" in line.lower()]


def _until(predicate: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return bool(predicate())  # type: ignore[operator]


def test_kill_9_of_behave_with_an_app_open_leaves_no_browser(tmp_path: Path, no_leftover_processes: Census) -> None:
    require_browser()
    root = make_project(tmp_path, CONFIG, {"silent.feature": FEATURE})
    behave = subprocess.Popen(
        [sys.executable, "-m", "behave", "--no-color", "features/"],
        cwd=root,
        env=behave_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _until(lambda: len(_browsers(no_leftover_processes)) >= 2, 60), "the browser never started"
        # the app is open, its step waiting on a handshake that never comes
        behave.send_signal(signal.SIGKILL)
        behave.wait(timeout=10)
    finally:
        if behave.poll() is None:
            behave.kill()
            behave.wait()
    assert _until(lambda: not _browsers(no_leftover_processes), 20), "browser processes left behind:\n" + "\n".join(
        _browsers(no_leftover_processes)
    )
    # and nothing else of the run (the server ran in-process; the lifeline sweeps what it watched)
    assert _until(lambda: not no_leftover_processes.left(), 20)


def test_a_finished_run_stops_its_browser(tmp_path: Path, no_leftover_processes: Census) -> None:
    require_browser()
    feature = FEATURE.replace('"silent"', '"good"') + '    Then the app shows "Good app"\n'
    root = make_project(tmp_path, CONFIG, {"good.feature": feature})
    proc = subprocess.run(
        [sys.executable, "-m", "behave", "--no-color", "features/"],
        cwd=root,
        env=behave_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not _browsers(no_leftover_processes)
    assert not [p for p in psutil.Process().children(recursive=True) if "chrom" in " ".join(p.cmdline()).lower()]
