"""An in-process MCP app whose tools block, the classic bugs of async servers (for tests/test_faults.py).

hog(seconds)  time.sleep in an async tool: the event loop stops for that long
spin          a synchronous tool that never returns (it runs in a worker thread)
freeze        an async tool that never awaits: the event loop stops for good
"""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("blocking")

    @server.tool()
    async def hog(seconds: float) -> str:
        """Block the event loop: a synchronous sleep inside an async tool."""
        time.sleep(seconds)
        return "done"

    @server.tool()
    def spin() -> str:
        """Never return, in a worker thread."""
        while True:
            time.sleep(0.01)

    @server.tool()
    async def freeze() -> str:
        """Hold the event loop for good."""
        while True:
            time.sleep(0.01)

    return server
