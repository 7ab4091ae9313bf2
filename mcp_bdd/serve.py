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
    args = parser.parse_args(argv)

    sys.path.insert(0, os.getcwd())
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    from mcp_bdd.servers import load_app

    obj: Any = load_app(args.app, os.getcwd())
    if not isinstance(obj, MCPServer | Server) and callable(obj):
        obj = obj()
    if isinstance(obj, MCPServer):
        if args.transport == "stdio":
            obj.run("stdio")
        elif args.transport == "streamable-http":
            obj.run("streamable-http", host=args.host, port=args.port)
        else:
            obj.run("sse", host=args.host, port=args.port)
        return 0
    if isinstance(obj, Server):
        if args.transport != "stdio":
            print(
                f"mcp_bdd.serve: a low-level Server runs over stdio only here; wrap it in MCPServer for "
                f"{args.transport}.",
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
    print(f'mcp_bdd.serve: "{args.app}" is not an MCP server object or factory.', file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
