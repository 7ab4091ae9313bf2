"""A server whose `cwd` is missing is reported as that, on every way a server starts.

Before, Popen's "No such file or directory" was reported as a missing program ("is the program
installed and on PATH?") for a command that was there all along.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from behave_project import REPO, behave_env, make_project, run_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

PY = sys.executable
CONFIG = f"""
startup_timeout = 30
[servers.cmd]
command = ["{PY}", "-c", "pass"]
cwd = "no-such-folder"

[servers.mem]
app = "demo.shop:create_server"
cwd = "no-such-folder"

[servers.forked]
app = "demo.shop:create_server"
transport = "stdio"
cwd = "no-such-folder"

[servers.web]
command = ["{PY}", "-c", "pass"]
transport = "streamable-http"
[servers.web.http]
command = ["{PY}", "-c", "pass"]
url = "http://127.0.0.1:${{port}}/mcp"
cwd = "a-file.txt"

[servers.fine]
app = "demo.shop:create_server"
cwd = "{REPO}"
"""

FEATURE = """
Feature: working directories
  Scenario: a command server
    Given the MCP server "cmd" is running

  Scenario: an app in-memory
    Given the MCP server "mem" is running

  Scenario: an app forked from the pre-imported process
    Given the MCP server "forked" is running

  Scenario: a command server over HTTP, its own cwd a file
    Given the MCP server "web" is running

  Scenario: a cwd that exists
    Given the MCP server "fine" is running
"""


def test_a_missing_working_directory_is_named_with_the_server_and_a_tip(tmp_path: Path) -> None:
    root = make_project(tmp_path, CONFIG, {"cwd.feature": FEATURE})
    (root / "a-file.txt").write_text("not a folder\n")
    run = run_behave(root, "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 0, "error": 4, "skipped": 0}, run.failures()
    missing = root / "no-such-folder"
    for name in ("cmd", "mem", "forked"):
        assert (
            f'ServerStartError: The server "{name}" could not be started: its working directory {missing} '
            "does not exist.\n"
            f'  Configured: cwd = "no-such-folder" (in {root / "mcp-bdd.toml"})\n'
            f'  Tip: fix `cwd` of the server "{name}" in the configuration: a folder that exists, absolute or '
            f"relative to {root}." in run.output
        ), run.failures()
    assert (
        f'The server "web" could not be started: its working directory {root / "a-file.txt"} is not a folder.\n'
        f'  Configured: http.cwd = "a-file.txt"' in run.output
    ), run.failures()
    assert "is the program installed" not in run.output, run.failures()


def test_probe_names_a_missing_working_directory(tmp_path: Path) -> None:
    make_project(tmp_path, CONFIG, {})
    probe = subprocess.run(
        [PY, "-m", "mcp_bdd.cli", "probe", "--server", "cmd", "--transport", "stdio"],
        cwd=tmp_path,
        env=behave_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    shown = probe.stdout + probe.stderr
    assert probe.returncode == 3, shown
    assert f'The server "cmd" could not be started: its working directory {tmp_path / "no-such-folder"}' in shown
    assert "is the program installed" not in shown, shown
