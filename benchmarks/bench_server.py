"""The tiny server both sides of the overhead benchmark call (so only the harness differs)."""

from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("bench", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> dict[str, int]:
        """Add two integers."""
        return {"result": a + b}

    return server


if __name__ == "__main__":
    create_server().run()
