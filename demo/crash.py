"""A server that dies mid-call: its ``crash`` tool ends the process without answering.

Used to check that a crash during a tool call fails the step clearly and leaves no process
behind. ``hello`` answers normally, so a scenario can show the server worked before the crash.
Run it over stdio only (``python -m demo.crash``): in-memory, ``crash`` would end the test process.
"""

import os
import sys

from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("crash", version="1.0.0")

    @server.tool()
    def hello(name: str = "world") -> str:
        """Say hello; proves the server is up before it is crashed."""
        return f"Hello, {name}!"

    @server.tool()
    def crash() -> str:
        """Kill the server process immediately (exit code 1) while the call is in flight."""
        print("crash: exiting mid-call", file=sys.stderr, flush=True)
        os._exit(1)

    return server


if __name__ == "__main__":
    create_server().run()
