"""The client's side of the protocol that the demo servers do not exercise (issue 49 items 4 and 5).

One behave run of a temporary project against a small probe server: a client that declares
`sampling.tools`, a URL elicitation the server reports complete (notifications/elicitation/complete),
and the failures of the new phrases (what they say when the server did not do what they state).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import make_project, run_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

CONFIG = """\
server = "probe"

[servers.probe]
app = "probe:create_server"
protocol = "legacy"
"""

PROBE = """\
import json

from mcp.server.mcpserver import Context, MCPServer


def create_server() -> MCPServer:
    server = MCPServer("probe", version="0.1.0")

    @server.tool()
    def sampling_capability(ctx: Context) -> str:
        \"\"\"Report the sampling capability the client declared, as JSON.\"\"\"
        caps = ctx.client_capabilities
        sampling = caps.sampling if caps is not None else None
        return json.dumps(sampling.model_dump(by_alias=True, exclude_none=True) if sampling else None)

    @server.tool()
    async def connect_bank(ctx: Context) -> str:
        \"\"\"Send the user to the bank's consent page, then report the flow complete.\"\"\"
        answer = await ctx.elicit_url("Connect your bank", "https://bank.example/consent", "bank-7")
        if answer.action == "accept":
            await ctx.session.send_elicit_complete("bank-7")
        return f"answered {answer.action}"

    return server
"""

FEATURE = """\
Feature: the client's side

  Scenario: pass sampling with tools is declared
    Given the client supports tools in sampling
    And the MCP server "probe" is running
    When I call the tool "sampling_capability"
    Then the tool call succeeds
    And the result at "$.tools" is {}

  Scenario: pass plain sampling declares no tools
    Given the client answers sampling requests with "ok"
    And the MCP server "probe" is running
    When I call the tool "sampling_capability"
    Then the result is:
      \"\"\"
      {}
      \"\"\"

  Scenario: pass a completed URL elicitation is reported complete
    Given the client completes URL elicitations
    And the MCP server "probe" is running
    When I call the tool "connect_bank"
    Then the result text is "answered accept"
    And the server requested a URL elicitation of "https://bank.example/consent"
    And I receive the elicitation-complete notification within 5 seconds

  Scenario: fail a declined URL elicitation is never reported complete
    Given the client declines URL elicitations
    And the MCP server "probe" is running
    When I call the tool "connect_bank"
    Then the result text is "answered decline"
    And I receive the elicitation-complete notification within 0.2 seconds

  Scenario: fail no URL elicitation of another URL
    Given the client completes URL elicitations
    And the MCP server "probe" is running
    When I call the tool "connect_bank"
    Then the server requested a URL elicitation of "https://evil.example/"

  Scenario: fail no form elicitation to read a schema from
    Given the client completes URL elicitations
    And the MCP server "probe" is running
    When I call the tool "connect_bank"
    Then the elicitation field "name" is required
"""


def test_client_side_protocol_phrases(tmp_path: Path) -> None:
    project = make_project(tmp_path, CONFIG, {"client.feature": FEATURE})
    (project / "probe.py").write_text(PROBE)
    result = run_behave(project, "-f", "plain", "--no-capture")
    out = result.output
    assert result.counts()["passed"] == 3, out[-6000:]
    assert result.counts()["failed"] == 3, out[-6000:]
    assert "No elicitation-complete notification within 0.2 s" in out
    assert "requested no URL elicitation of https://evil.example/" in out
    assert "https://bank.example/consent" in out  # what it did ask for
    assert 'made no form elicitation request' in out
