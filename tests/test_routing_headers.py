"""The routing-header and HTTP-session steps outside streamable HTTP: a clear usage error, not a
scenario that passes or fails for a reason it does not state."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.behave_project import SHOP, make_project, run_behave

pytestmark = pytest.mark.slow

FEATURE = """
    Feature: headers where there are none
      Scenario: a wrong header over stdio
        Given the client sends a wrong Mcp-Name header
        And the MCP server "shop" is running over stdio

      Scenario: an HTTP session in-process
        Given the MCP server "shop" is running
        When the client ends its HTTP session
    """


def test_headers_and_http_sessions_need_streamable_http(tmp_path: Path) -> None:
    root = make_project(tmp_path, SHOP, {"h.feature": FEATURE})
    run = run_behave(root, "-f", "plain", timeout=240)
    assert run.counts()["passed"] == 0, run.failures()
    assert "routing headers exist only over streamable HTTP" in run.output, run.failures()
    assert "HTTP sessions exist only over streamable HTTP" in run.output, run.failures()
