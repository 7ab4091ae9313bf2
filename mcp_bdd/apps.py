"""Load a Python server object from `module:attr`, recognise what it is, and run it on a transport.

One place decides what counts as an MCP server object (the SDK's `MCPServer` and low-level
`Server`, or a factory returning one) and how it is served, so the in-process runner, the
`python -m mcp_bdd.serve` launcher and the zygote's children agree on it.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from mcp_bdd.errors import ServerStartError, did_you_mean

__all__ = ["is_server", "load_app", "serve_object"]


def load_app(spec: str, root: str) -> Any:
    """Import `module:attr` with the project root on sys.path."""
    module_name, _, attr = spec.partition(":")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ServerStartError(
            f'Cannot import "{module_name}" (from app = "{spec}"): {exc}. '
            f"The module must be importable from the project root {root}."
        ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise ServerStartError(f'"{module_name}" has no attribute "{attr}". {did_you_mean(attr, names, "name")}')
        obj = getattr(obj, part)
    return obj


def is_server(obj: Any) -> bool:
    """An SDK server object the client can talk to directly (not a factory)."""
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    return isinstance(obj, MCPServer | Server)


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
