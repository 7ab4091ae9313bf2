"""The metadata hosts show and models read, as phrases: a tool's title, its idempotent and
open-world hints, any field of its definition by JSONPath, and the server's instructions.

One behave run of a temporary project against a small MCPServer (in-memory): "pass ..."
scenarios must pass, "fail ..." scenarios must fail with the words in EXPECTED_FAILURES (what
was expected, what the tool or server had, and a tip).
"""

from __future__ import annotations

import pytest
from behave_project import Run, make_project, run_behave

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]

CONFIG = """\
server = "meta"

[servers.meta]
app = "meta:create_server"

[servers.plain]
app = "meta:create_plain"
"""

SERVER = """\
from mcp.server.mcpserver import MCPServer
from mcp_types import Icon, ToolAnnotations


def create_server() -> MCPServer:
    server = MCPServer("meta", version="1.0.0", instructions="Tracks ORDERS.\\nAsk before refunding.")

    @server.tool(
        title="Add two numbers",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        icons=[Icon(src="https://example.com/add.svg", mime_type="image/svg+xml")],
        meta={"ui": {"resourceUri": "ui://meta/add.html"}},
    )
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    # the older place for a title: annotations.title, read when the tool has no title of its own
    @server.tool(annotations=ToolAnnotations(title="Fetch a page", open_world_hint=True))
    def fetch(url: str) -> str:
        \"\"\"Fetch a web page.\"\"\"
        return url

    return server


def create_plain() -> MCPServer:
    server = MCPServer("plain", version="1.0.0")

    @server.tool()
    def noop() -> str:
        \"\"\"Do nothing.\"\"\"
        return ""

    return server
"""

FEATURE = """\
Feature: metadata

  Scenario: pass the title, the hints and any field by path
    When I list the tools
    Then the tool "add" has the title "Add two numbers"
    And the tool "fetch" has the title "Fetch a page"
    And the tool "add" is marked idempotent
    And the tool "fetch" is marked open-world
    And the tool "add" at "$._meta.ui.resourceUri" is "ui://meta/add.html"
    And the tool "add" at "$.icons[0].src" is "https://example.com/add.svg"
    And the tool "add" at "$.annotations.openWorldHint" is false
    And the tool "add" at "$.inputSchema.required" is ["a", "b"]
    And the tool "add" at "$.icons[0]" is {"src": "#string", "mimeType": "image/svg+xml"}

  Scenario: pass the discovery steps list the tools themselves
    Then the tool "fetch" is marked open-world

  Scenario: pass the instructions, case-insensitive
    Then the server instructions mention "orders"
    And the server instructions mention "ask before REFUNDING"

  Scenario: fail not idempotent
    Then the tool "fetch" is marked idempotent

  Scenario: fail not open-world
    Then the tool "add" is marked open-world

  Scenario: fail another title
    Then the tool "add" has the title "Addition"

  Scenario: fail no title
    Given the MCP server "plain" is running
    Then the tool "noop" has the title "No-op"

  Scenario: fail wrong value at a path
    Then the tool "add" at "$._meta.ui.resourceUri" is "ui://meta/sum.html"

  Scenario: fail wrong literal at a path
    Then the tool "add" at "$.icons[0]" is {"src": "#string", "mimeType": "image/png"}

  Scenario: fail nothing at the path
    Then the tool "add" at "$._meta.ui.resourceUrl" is "ui://meta/add.html"

  Scenario: fail instructions do not mention
    Then the server instructions mention "invoices"

  Scenario: fail no instructions
    Given the MCP server "plain" is running
    Then the server instructions mention "orders"
"""

EXPECTED_FAILURES = {
    "fail not idempotent": [
        'The tool "fetch" is not marked idempotent',
        "annotations.idempotentHint = true",
        '"openWorldHint": true',  # what the tool had
        "Tip: set it where the tool is defined",
        "ToolAnnotations(idempotent_hint=True)",
    ],
    "fail not open-world": [
        'The tool "add" is not marked open-world',
        "annotations.openWorldHint = true",
        '"openWorldHint": false',
        "ToolAnnotations(open_world_hint=True)",
    ],
    "fail another title": ['The tool "add" has another title', "Addition", "Add two numbers", "Tip: hosts show"],
    "fail no title": ['The tool "noop" has no title', "No-op", "Tip: hosts show the title"],
    "fail wrong value at a path": [
        'Unexpected value at $._meta.ui.resourceUri in the tool "add"',
        "ui://meta/sum.html",
        "ui://meta/add.html",
        "The tool as the server lists it:",
        "Tip: the path reads the tool as tools/list sent it",
    ],
    "fail wrong literal at a path": [
        'Unexpected value at $.icons[0] in the tool "add"',
        "$.mimeType",  # which part differs
        "image/svg+xml",
    ],
    "fail nothing at the path": [
        'Nothing at path $._meta.ui.resourceUrl in the definition of the tool "add"',
        'Did you mean "resourceUri"?',
    ],
    "fail instructions do not mention": [
        'The instructions of the server "meta" do not mention "invoices"',
        "Tracks ORDERS.",
        "Tip: a server gives its instructions when the client connects",
    ],
    "fail no instructions": ['The server "plain" gave no instructions', "(no instructions)"],
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = make_project(tmp_path_factory.mktemp("metadata"), CONFIG, {"metadata.feature": FEATURE})
    (root / "meta.py").write_text(SERVER)
    return run_behave(root, "--format=plain", "--no-timings")


def _scenario_output(run: Run, name: str) -> str:
    """What behave printed for one scenario (plain format: from its heading to the next)."""
    text = run.stdout
    start = text.index(f"Scenario: {name}")
    following = text.find("\n  Scenario: ", start + 1)
    return text[start : following if following != -1 else len(text)]


def test_metadata_phrases_pass_on_a_server_that_has_the_metadata(run: Run) -> None:
    assert run.counts() == {"passed": 3, "failed": len(EXPECTED_FAILURES), "error": 0, "skipped": 0}, run.failures()


@pytest.mark.parametrize("scenario", list(EXPECTED_FAILURES))
def test_metadata_failures_say_what_was_expected_what_was_there_and_what_to_do(run: Run, scenario: str) -> None:
    shown = _scenario_output(run, scenario)
    assert "failed" in shown, shown
    missing = [words for words in EXPECTED_FAILURES[scenario] if words not in shown]
    assert not missing, f"{missing} not in:\n{shown}"
