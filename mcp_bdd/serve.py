"""`python -m mcp_bdd.serve module:attr --transport stdio|streamable-http|sse [--port N]`

The launcher that lets one `app = "module:attr"` definition serve the whole transport matrix:
it imports the server object (or calls the factory, which reads its configuration from the
environment it was given) and runs it on the requested transport, on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_bdd.serve", description=__doc__)
    parser.add_argument("app", help='the server object or factory, "module:attr"')
    parser.add_argument("--transport", default="stdio", choices=["stdio", "streamable-http", "sse"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--zygote", type=int, metavar="FD", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.zygote is not None:
        from mcp_bdd.zygote import run_zygote

        return run_zygote(args.app, args.zygote)

    sys.path.insert(0, os.getcwd())
    from mcp_bdd.servers import load_app

    return serve_object(load_app(args.app, os.getcwd()), args.transport, args.host, args.port, spec=args.app)


def serve_object(obj: Any, transport: str, host: str, port: int, spec: str = "") -> int:
    """Run a server object (or call a factory first) on one transport until it is stopped."""
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if not isinstance(obj, MCPServer | Server) and callable(obj):
        obj = obj()
    if isinstance(obj, MCPServer):
        if transport == "stdio":
            obj.run("stdio")
        elif transport == "streamable-http":
            obj.run("streamable-http", host=host, port=port)
        else:
            obj.run("sse", host=host, port=port)
        return 0
    if isinstance(obj, Server):
        if transport != "stdio":
            print(
                f"mcp_bdd.serve: a low-level Server runs over stdio only here; wrap it in MCPServer for {transport}.",
                file=sys.stderr,
            )
            return 2
        import anyio
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            async with stdio_server() as (read, write):
                await obj.run(read, write, obj.create_initialization_options())

        anyio.run(run)
        return 0
    print(f'mcp_bdd.serve: "{spec}" is not an MCP server object or factory.', file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
