"""The @realworld suite: features against servers nobody here wrote, over stdio and Streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from behave_project import REPO, Run, behave_env

SUITE = REPO / "tests" / "realworld"
EVERYTHING = REPO / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

pytestmark = [pytest.mark.realworld, pytest.mark.usefixtures("no_leftover_processes")]


def run(*args: str) -> Run:
    env = behave_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "behave", "--no-color", "features/", *args],
        cwd=SUITE,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(autouse=True)
def _node_server_installed() -> None:
    if not EVERYTHING.exists():
        pytest.fail("node_modules is missing: `make test` installs it with `npm ci` from package-lock.json")


def test_realworld_over_stdio() -> None:
    result = run()
    counts = result.counts()
    assert counts["failed"] == 0 and counts["error"] == 0, result.output[-6000:]
    assert counts["passed"] >= 17


def test_realworld_everything_over_streamable_http() -> None:
    result = run("-D", "transport=streamable-http", "--include", "everything")
    counts = result.counts()
    assert counts["failed"] == 0 and counts["error"] == 0, result.output[-6000:]
    assert counts["passed"] >= 15


# ---------------------------------------------------------------------------------------------
# MCP Apps: @modelcontextprotocol/server-pdf's viewer and the ext-apps vanilla JS example, opened in
# Chromium as a host opens them (apps_*.feature), and passed by `mcp-bdd check`'s Apps group

APP_SERVERS = {
    "pdf": ["server-pdf/dist/index.js", "--stdio", "tests/realworld/data/report.pdf"],
    "clock": ["server-basic-vanillajs/dist/index.js", "--stdio"],
}


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_real_apps_open_and_work(transport: str) -> None:
    result = run("-D", f"transport={transport}", "--include", "apps_")
    counts = result.counts()
    assert counts["failed"] == 0 and counts["error"] == 0, result.output[-6000:]
    assert counts["passed"] == 5, result.output[-3000:]
    for shown in ('the app called the tool "read_pdf_bytes"', 'the app sent the message "This is message text."'):
        assert shown in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("server", sorted(APP_SERVERS))
def test_real_apps_have_no_apps_finding(server: str) -> None:
    import json

    script, *args = APP_SERVERS[server]
    command = ["node", str(REPO / "node_modules" / "@modelcontextprotocol" / script), *args]
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "mcp-bdd"), "check", "--json", "--", *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        env=behave_env(),
    )
    report = json.loads(proc.stdout)
    assert report["status"] not in ("unreachable", "usage"), proc.stderr[-3000:]
    assert {c for c in report["checks"] if c.startswith("apps.")} >= {"apps.binding", "apps.csp", "apps.visibility"}
    found = [f for f in report["findings"] if f["check"].startswith("apps.")]
    assert found == [], found
    # the app-only tools are listed (SEP-1865: the host keeps them from the model), and not read-only: never called
    if server == "pdf":
        assert {"read_pdf_bytes", "save_pdf", "display_pdf"} <= set(report["skipped"])
