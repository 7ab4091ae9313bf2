"""A `command` server's `http` and `sse` sections take `headers`, as a `url` server does.

A bearer-protected server that mcp-bdd starts over HTTP (tests/servers/bearer.py: a real MCP
server behind a gate that answers 401 without the token) is reached with the token its section
names, over streamable HTTP and SSE; the token is interpolated (`${env.NAME}`) and, like every
`headers` value, masked wherever mcp-bdd shows it, whatever the variable holding it is called.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from behave_project import REPO, Run, behave_env, make_project, run_captured

from mcp_bdd.config import CommandServer, load_config

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

SERVER = REPO / "tests" / "servers" / "bearer.py"
TOKEN = "open-sesame-42"  # the one tests/servers/bearer.py lets in

CONFIG = f"""\
[servers.locked]
command = ["{sys.executable}", "{SERVER}", "stdio"]

[servers.locked.http]
command = ["{sys.executable}", "{SERVER}", "http", "${{port}}"]
url = "http://127.0.0.1:${{port}}/mcp"
headers = {{ Authorization = "Bearer ${{env.GATE_WORD}}" }}

[servers.locked.sse]
command = ["{sys.executable}", "{SERVER}", "sse", "${{port}}"]
url = "http://127.0.0.1:${{port}}/sse"
headers = {{ Authorization = "Bearer ${{env.GATE_WORD}}" }}

[servers.open]                    # the same server, started without the header
command = ["{sys.executable}", "{SERVER}", "stdio"]
transport = "streamable-http"

[servers.open.http]
command = ["{sys.executable}", "{SERVER}", "http", "${{port}}"]
url = "http://127.0.0.1:${{port}}/mcp"
"""

FEATURE = """\
Feature: a bearer-protected server mcp-bdd starts over HTTP

  Scenario: pass over streamable HTTP
    Given the MCP server "locked" is running over streamable HTTP
    When I call the tool "whoami"
    Then the tool call succeeds
    And the result text is "welcome ${env.GATE_WORD}"

  Scenario: pass over SSE
    Given the MCP server "locked" is running over SSE
    When I call the tool "whoami"
    Then the result text is "welcome ${env.GATE_WORD}"

  Scenario: pass without the header the gate refuses
    When I connect to the MCP server "open"
    Then the connection fails with an error mentioning "401"

  Scenario: fail the token shows masked
    Given the MCP server "locked" is running over streamable HTTP
    When I call the tool "whoami"
    Then the result text is "welcome nobody"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = make_project(tmp_path_factory.mktemp("bearer"), CONFIG, {"bearer.feature": FEATURE})
    argv = [sys.executable, "-m", "behave", "--no-color", "--format=plain", "--no-timings", "features/"]
    proc = run_captured(argv, cwd=root, env={**behave_env(), "GATE_WORD": TOKEN})
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.slow
def test_a_started_http_server_gets_the_headers_of_its_section(run: Run) -> None:
    assert run.counts() == {"passed": 3, "failed": 1, "error": 0, "skipped": 0}, run.failures()


@pytest.mark.slow
def test_the_headers_are_masked_as_secrets(run: Run) -> None:
    assert "welcome ****" in run.stdout, run.failures()
    assert TOKEN not in run.output, run.failures()


def test_the_http_and_sse_sections_take_headers(tmp_path: Path) -> None:
    endpoint = {"command": ["server", "--http"], "url": "http://127.0.0.1:${port}/mcp"}
    server = {
        "command": ["server"],
        "http": {**endpoint, "headers": {"Authorization": "Bearer ${env.T}"}},
        "sse": {**endpoint, "headers": {"X-Api-Key": "k"}},
    }
    config = load_config(tmp_path, data={"servers": {"s": server}}, source="test")
    cfg = config.server_named("s")
    assert isinstance(cfg, CommandServer) and cfg.http is not None and cfg.sse is not None
    assert cfg.http.headers == {"Authorization": "Bearer ${env.T}"}
    assert cfg.sse.headers == {"X-Api-Key": "k"}
