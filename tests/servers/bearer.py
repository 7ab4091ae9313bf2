"""A bearer-protected MCP server, as a user's own server that mcp-bdd starts over HTTP.

    python tests/servers/bearer.py stdio | http PORT | sse PORT

Over HTTP (streamable HTTP on /mcp, or SSE on /sse) every request must carry
`Authorization: Bearer open-sesame-42`, else it is answered 401 with a bearer challenge; stdio
has no headers and no gate. Its one tool, `whoami`, answers with the token the call carried,
so a test can see that the token reached the server and is masked wherever mcp-bdd shows it.
"""

# No `from __future__ import annotations`: MCPServer reads the tool's `ctx: Context` annotation at runtime.
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

TOKEN = "open-sesame-42"


def create_server() -> MCPServer:
    server = MCPServer("bearer", version="0.1.0")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Say which token the call carried (none over stdio)."""
        header = (ctx.headers or {}).get("authorization", "")
        return f"welcome {header.removeprefix('Bearer ') or 'stdio'}"

    return server


def gated(inner: Any) -> Any:
    """`inner` (an ASGI app) behind the bearer gate; lifespan passes (the MCP session manager)."""
    from starlette.responses import PlainTextResponse

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != f"Bearer {TOKEN}".encode():
            refusal = PlainTextResponse(
                "missing or wrong bearer token", status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
            await refusal(scope, receive, send)
            return
        await inner(scope, receive, send)

    return app


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        create_server().run("stdio")
    else:
        import uvicorn

        mcp = create_server()
        inner = mcp.streamable_http_app() if mode == "http" else mcp.sse_app()
        uvicorn.run(gated(inner), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
