"""JSON returned as text is read by path: a `-> str` tool returning `json.dumps(...)`.

fastmcp 4 sends such a result as structuredContent `{"result": "<json text>"}` and marks the wrap
(`x-fastmcp-wrap-result` in the output schema, `_meta.fastmcp.wrap_result` in the result); the
SDK's MCPServer wraps it the same way, unmarked, with that same text as the only text content.
Both real servers run in-memory in one behave run: "pass ..." scenarios must pass, "fail ..."
ones must fail with the words in EXPECTED_FAILURES.
"""

from __future__ import annotations

import pytest
from behave_project import Run, make_project, run_behave

pytest.importorskip("fastmcp", reason="fastmcp is in the dev extra")

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]

CONFIG = """\
[servers.fm]
app = "servers:fm"

[servers.sdk]
app = "servers:create_sdk"
"""

SERVERS = """\
import json

from fastmcp import FastMCP
from mcp.server.mcpserver import MCPServer

ROWS = {"columns": ["id", "name"], "rows": [[7, "Ada"], [8, "Grace"]], "id": "q-1"}

fm = FastMCP("fm")


@fm.tool
def query() -> str:
    \"\"\"Run the query; the rows as JSON text.\"\"\"
    return json.dumps(ROWS)


def create_sdk() -> MCPServer:
    server = MCPServer("sdk")

    @server.tool()
    def query() -> str:
        \"\"\"Run the query; the rows as JSON text.\"\"\"
        return json.dumps(ROWS)

    @server.tool(structured_output=False)
    def query_text() -> str:
        \"\"\"The rows as JSON text, without structured content.\"\"\"
        return json.dumps(ROWS)

    @server.tool()
    def greet() -> str:
        \"\"\"Plain text.\"\"\"
        return "hello"

    @server.tool()
    def answer() -> str:
        \"\"\"A number, as text: stays text.\"\"\"
        return "42"

    @server.tool()
    def envelope() -> dict[str, str]:
        \"\"\"A real field named result that holds JSON text: not a wrap, stays as it is.\"\"\"
        return {"result": json.dumps(ROWS)}

    return server
"""

READ_BY_PATH = """
    Then the tool call succeeds
    And the result at "$.rows[0][0]" is 7
    And the result at "$.rows[1][1]" is "Grace"
    And the result at "$.rows" has 2 items
    And the result at "$.columns" contains "name"
    And the result contains:
      \"\"\"json
      {"rows": [[8, "Grace"]]}
      \"\"\"
    And the result is:
      \"\"\"json
      {"columns": ["id", "name"], "rows": "#array", "id": "q-1"}
      \"\"\"
    And the result matches the schema:
      \"\"\"json
      {"type": "object", "required": ["rows"]}
      \"\"\"
    When I remember the result at "$.id" as "query"
    Then the result text contains "${query}"
"""

FEATURE = f"""\
Feature: JSON returned as text

  Scenario: pass a fastmcp 4 tool that returns JSON text
    Given the MCP server "fm" is running
    When I call the tool "query"
{READ_BY_PATH}
    And the result conforms to the tool's output schema

  Scenario: pass a fastmcp 4 tool, its output schema already listed
    Given the MCP server "fm" is running
    When I list the tools
    And I call the tool "query"
{READ_BY_PATH}

  Scenario: pass an MCPServer tool that returns JSON text
    Given the MCP server "sdk" is running
    When I call the tool "query"
{READ_BY_PATH}

  Scenario: pass JSON text without structured content
    Given the MCP server "sdk" is running
    When I call the tool "query_text"
{READ_BY_PATH}

  Scenario: pass text that is not a JSON document stays text
    Given the MCP server "sdk" is running
    When I call the tool "greet"
    Then the result at "$.result" is "hello"
    When I call the tool "answer"
    Then the result at "$.result" is "42"

  Scenario: pass a real field named result keeps its text
    Given the MCP server "sdk" is running
    When I call the tool "envelope"
    Then the result at "$.result" matches "^\\{{\\"columns\\""

  Scenario: fail a path written for the wrapper
    Given the MCP server "fm" is running
    When I call the tool "query"
    Then the result at "$.result.rows" has 2 items
"""

EXPECTED_FAILURES = [
    "Nothing at path $.result.rows in the result",
    'The object at $ has no key "result"',
    'the tool "query" returned JSON as text',
    'so "$.result.rows" is written "$.rows"',
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = make_project(tmp_path_factory.mktemp("json-text"), CONFIG, {"json_text.feature": FEATURE})
    (root / "servers.py").write_text(SERVERS)
    return run_behave(root, "--format=plain", "--no-timings")


def test_json_returned_as_text_is_read_by_path(run: Run) -> None:
    assert run.counts() == {"passed": 6, "failed": 1, "error": 0, "skipped": 0}, run.failures()


def test_a_path_written_for_the_wrapper_gets_a_tip(run: Run) -> None:
    missing = [words for words in EXPECTED_FAILURES if words not in run.stdout]
    assert not missing, f"{missing} not in:\n{run.failures()}"
