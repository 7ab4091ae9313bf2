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
