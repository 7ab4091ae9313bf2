"""A protected HTTP server that gets OAuth wrong in every way the `auth` checks look for.

    python tests/servers/broken_auth.py PORT

A real MCP server (streamable HTTP on /mcp) behind a hand-written gate: the token "good-token"
passes; no token gets 401 *without* a WWW-Authenticate header; any other token crashes the gate,
which answers 500 with the Python traceback. Its protected resource metadata is only at the root
well-known URL and names another resource; the authorization server it lists (itself, under /as)
publishes metadata without a jwks_uri.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

GOOD_TOKEN = "good-token"


def create_app(port: int) -> Any:
    from mcp.server.mcpserver import MCPServer
    from starlette.responses import JSONResponse, PlainTextResponse

    server = MCPServer("broken-auth", version="0.1.0")

    @server.tool()
    def hello(name: str) -> str:
        """Greet someone by name: the one tool, read-only in spirit."""
        return f"hello {name}"

    inner = server.streamable_http_app()
    origin = f"http://127.0.0.1:{port}"
    documents = {
        "/.well-known/oauth-protected-resource": {
            "resource": "https://elsewhere.example/mcp",
            "authorization_servers": [f"{origin}/as"],
        },
        "/.well-known/oauth-authorization-server/as": {"issuer": f"{origin}/as", "token_endpoint": f"{origin}/token"},
    }

    def verify(header: bytes) -> bool:
        scheme, _, token = header.decode().partition(" ")
        if scheme != "Bearer" or token != GOOD_TOKEN:
            raise ValueError(f"cannot decode token {token[:8]!r}")  # the bug: a verifier that raises
        return True

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)  # lifespan: the MCP session manager
            return
        path = scope["path"]
        if path in documents:
            await JSONResponse(documents[path])(scope, receive, send)
            return
        if path.startswith("/.well-known/"):
            await PlainTextResponse("not found", status_code=404)(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"")
        if not header:
            await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
            return
        try:
            verify(header)
        except ValueError:
            await PlainTextResponse(traceback.format_exc(), status_code=500)(scope, receive, send)
            return
        await inner(scope, receive, send)

    return app


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[1])
    uvicorn.run(create_app(port), host="127.0.0.1", port=port, log_level="warning")
