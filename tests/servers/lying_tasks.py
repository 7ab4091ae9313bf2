"""An MCP server whose tools say one thing about tasks and do another (planted defects for the
`tasks` checks of `mcp-bdd check`).

`python lying_tasks.py [--offer] [--odd]` serves over stdio (2025-11-25 or 2026-07-28). Every tool is
annotated read-only, so the checks call them. Their `execution.taskSupport` claims, added to the
tools/list answer by a middleware (MCPServer knows no Tasks):

- `archive`: "required", yet a plain call is answered with a result (and no task is ever made);
- `report`: "optional" (harmless alone: a plain result is allowed);
- `odd` (with --odd): "sometimes", a value no client understands (the 2025-11-25 SDK refuses the
  whole listing for it, so it is seen on 2026-07-28).

Without --offer the server offers no Tasks at all, so "required" and "optional" claim what it
cannot do; with --offer it advertises Tasks (capability and extension) but still makes none.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

CLAIMS = {"archive": "required", "report": "optional"}
EXTENSION = "io.modelcontextprotocol/tasks"


def create_server(offer: bool, odd: bool) -> MCPServer:
    claims = {**CLAIMS, "odd": "sometimes"} if odd else CLAIMS

    async def claim(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if not isinstance(result, dict):
            return result
        if ctx.method == "tools/list":
            for tool in result.get("tools") or []:
                if tool.get("name") in claims:
                    tool["execution"] = {"taskSupport": claims[tool["name"]]}
        elif offer and ctx.method == "initialize":
            result.setdefault("capabilities", {})["tasks"] = {"requests": {"tools": {"call": {}}}}
        elif offer and ctx.method == "server/discover":
            result.setdefault("capabilities", {}).setdefault("extensions", {})[EXTENSION] = {}
        return result

    server = MCPServer("lying-tasks", version="1.0.0", middleware=[claim])
    read_only = ToolAnnotations(readOnlyHint=True)

    @server.tool(annotations=read_only)
    def archive(year: int) -> str:
        """Archive a year's reports (says it runs only as a task)."""
        return f"archived {year}"

    @server.tool(annotations=read_only)
    def report(title: str) -> str:
        """Build a report (may run as a task)."""
        return f"report {title}"

    @server.tool(annotations=read_only)
    def odd() -> str:
        """Answer at once."""
        return "odd"

    return server


if __name__ == "__main__":
    create_server("--offer" in sys.argv, "--odd" in sys.argv).run()
