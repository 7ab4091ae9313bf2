"""Servers written with the frameworks people use, as `app`: in-memory and over every transport.

- PrefectHQ's fastmcp 4 (`fastmcp.FastMCP`, from PyPI in the dev extra): an object and a factory.
  mcp-bdd never imports fastmcp (it monkeypatches the SDK's types); apps.py recognises the SDK
  low-level server its objects wrap, and the zygote / `python -m mcp_bdd.serve` serve that.
- The SDK's low-level `Server`, now served over streamable HTTP and SSE too.
- Objects that are not servers get an error naming what they are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import make_project, run_behave

pytest.importorskip("fastmcp", reason="fastmcp is in the dev extra")

pytestmark = pytest.mark.slow

FASTMCP_SERVER = '''\
import os

from fastmcp import Context, FastMCP

mcp = FastMCP("fm-shop")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool
async def shout(text: str, ctx: Context) -> str:
    """Shout, and log that it did."""
    await ctx.info(f"shouting {text}")
    return text.upper()


@mcp.tool
def pid() -> int:
    """The server's process id (which process answered)."""
    return os.getpid()


@mcp.resource("fm://greeting")
def greeting() -> str:
    """A greeting."""
    return "hello from fastmcp"


@mcp.prompt
def ask(topic: str) -> str:
    """Ask about a topic."""
    return f"Tell me about {topic}"


def create_server() -> FastMCP:
    """A factory: a fresh FastMCP per scenario, configured from the environment."""
    server = FastMCP("fm-factory")
    started_with = os.environ["MOTTO"]

    @server.tool
    def motto() -> str:
        """The motto this server was started with."""
        return started_with

    return server
'''

FEATURE = """\
Feature: A fastmcp 4 server as an app
  Scenario: Tools, with structured output
    Given the MCP server "fm" is running
    When I call the tool "add" with:
      | a | b |
      | 2 | 3 |
    Then the tool call succeeds
    And the result at "$.result" is 5

  Scenario: A tool that logs through its Context
    Given the log level is "info"
    And the MCP server "fm" is running
    When I call the tool "shout" with:
      | text |
      | hi   |
    Then the result text is "HI"

  Scenario: Resources and prompts
    Given the MCP server "fm" is running
    When I read the resource "fm://greeting"
    Then the resource text contains "hello from fastmcp"
    When I get the prompt "ask" with:
      | topic |
      | bees  |
    Then prompt message 1 is from the "user" and contains "bees"

  Scenario: A factory gets the scenario's environment
    Given the MCP server "factory" is running
    When I call the tool "motto"
    Then the result text is "carpe diem"
"""

CONFIG = """\
server = "fm"

[servers.fm]
app = "fm_server:mcp"

[servers.factory]
app = "fm_server:create_server"
env = { MOTTO = "carpe diem" }
"""


@pytest.fixture(scope="module")
def fastmcp_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("fastmcp"), CONFIG, {"fastmcp.feature": FEATURE})
    (root / "fm_server.py").write_text(FASTMCP_SERVER)
    return root


@pytest.mark.parametrize("transport", ["in-memory", "stdio", "streamable-http", "sse"])
def test_a_fastmcp_server_is_an_app_on_every_transport(
    fastmcp_project: Path, transport: str, no_leftover_processes: None
) -> None:
    run = run_behave(fastmcp_project, "-D", f"transport={transport}")
    assert run.returncode == 0, run.output[-4000:]
    assert run.counts() == {"passed": 4, "failed": 0, "error": 0, "skipped": 0}, run.output[-4000:]


def test_a_fastmcp_server_starts_cold_too(fastmcp_project: Path, no_leftover_processes: None) -> None:
    """Without the zygote pool, `python -m mcp_bdd.serve fm_server:mcp` runs it in a fresh process."""
    run = run_behave(fastmcp_project, "-D", "transport=stdio", "-D", "pool=false")
    assert run.returncode == 0, run.output[-4000:]
    assert run.counts()["passed"] == 4, run.output[-4000:]


LOWLEVEL_SERVER = """\
import mcp_types as types
from mcp.server import Server, ServerRequestContext


async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[types.Tool(name="echo", description="Echo a text.", input_schema={
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})]
    )


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"echo: {text}")])


def create_server() -> Server:
    return Server("lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)
"""


@pytest.mark.parametrize("transport", ["in-memory", "stdio", "streamable-http", "sse"])
def test_a_low_level_server_is_an_app_on_every_transport(
    tmp_path: Path, transport: str, no_leftover_processes: None
) -> None:
    feature = """\
    Feature: A low-level Server
      Scenario: Echo
        Given the MCP server "low" is running
        When I call the tool "echo" with:
          | text  |
          | hello |
        Then the tool call succeeds
        And the result text is "echo: hello"
    """
    root = make_project(tmp_path, '[servers.low]\napp = "low_server:create_server"\n', {"low.feature": feature})
    (root / "low_server.py").write_text(LOWLEVEL_SERVER)
    run = run_behave(root, "-D", f"transport={transport}")
    assert run.returncode == 0, run.output[-4000:]
    assert run.counts()["passed"] == 1, run.output[-4000:]


def test_an_object_that_is_no_server_is_named_in_the_error(tmp_path: Path) -> None:
    feature = """\
    Feature: Not a server
      Scenario: Start it
        Given the MCP server "bad" is running
    """
    root = make_project(tmp_path, '[servers.bad]\napp = "bad_server:settings"\n', {"bad.feature": feature})
    (root / "bad_server.py").write_text("import fractions\n\nsettings = fractions.Fraction(1, 3)\n")
    run = run_behave(root)
    assert run.returncode != 0
    assert 'app = "bad_server:settings" is neither an MCP server object nor a factory' in run.output
    assert "Fraction (from fractions)" in run.output, run.output[-3000:]


def test_a_1x_sdk_server_as_an_app_says_to_run_it_as_a_command(tmp_path: Path) -> None:
    feature = """\
    Feature: A server on the 1.x SDK
      Scenario: Start it
        Given the MCP server "weather" is running
    """
    root = make_project(tmp_path, '[servers.weather]\napp = "weather:mcp"\n', {"weather.feature": feature})
    (root / "weather.py").write_text("from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP('weather')\n")
    run = run_behave(root)
    assert run.returncode != 0
    assert "written for the 1.x MCP SDK" in run.output, run.output[-3000:]
    assert 'command = [".venv/bin/python", "server.py"]' in run.output
