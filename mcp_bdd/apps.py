"""Load a Python server object from `module:attr`, recognise what it is, and run it on a transport.

One place decides what counts as an MCP server object and how it is served, so the in-process
runner, the `python -m mcp_bdd.serve` launcher and the zygote's children agree on it:

- the SDK's `MCPServer` and low-level `Server`: used as they are;
- a framework object that *wraps* an SDK low-level `Server` — PrefectHQ's `fastmcp.FastMCP`
  (2.x-4.x keep it in `_mcp_server`), or anything else holding one in `_lowlevel_server` /
  `_mcp_server`: its low-level server is what the SDK client and transports talk to. The
  framework's own lifespan still runs, because its low-level server's lifespan drives it.

Why duck typing and not `isinstance(obj, fastmcp.FastMCP)`: importing fastmcp monkeypatches the
SDK's types for the whole process (design.md), so mcp-bdd never imports it; a user's module that
builds a FastMCP has imported it already, and then only its objects are looked at.

A factory (any other callable) is called by the caller, with the scenario's environment and
fakes; what it returns goes through `as_server` like an object would.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from mcp_bdd.errors import ServerStartError, did_you_mean

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

__all__ = ["as_server", "describe", "is_server", "load_app", "serve_object"]

#: Where frameworks keep the SDK low-level server they wrap (fastmcp: `_mcp_server`).
_WRAPPED_SERVER_ATTRIBUTES = ("_mcp_server", "_lowlevel_server")


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
            f"The module must be importable from the project root {root}." + _v1_tip(exc)
        ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise ServerStartError(f'"{module_name}" has no attribute "{attr}". {did_you_mean(attr, names, "name")}')
        obj = getattr(obj, part)
    return obj


def _v1_tip(exc: ImportError) -> str:
    """The import error of a server written for the 1.x SDK, with mcp-bdd's 2.x installed."""
    if getattr(exc, "name", None) == "mcp.server.fastmcp":
        return (
            "\nTip: this server is written for the 1.x MCP SDK (`mcp.server.fastmcp`), and mcp-bdd runs on 2.x."
            " Run the server as a `command` with its own interpreter instead of `app`, e.g."
            ' command = [".venv/bin/python", "server.py"]  (`mcp-bdd init` does this for you).'
        )
    return ""


def as_server(obj: Any, spec: str = "") -> MCPServer | Server[Any]:
    """The SDK server object behind `obj`: itself, or the low-level server a framework object wraps.

    Raises ServerStartError, naming `spec` and what `obj` is, for anything else.
    """
    server = _unwrap(obj)
    if server is None:
        where = f'app = "{spec}"' if spec else "The app"
        raise ServerStartError(
            f"{where} gave a {describe(obj)}, which is not an MCP server: expected the SDK's MCPServer or "
            "low-level Server, or a framework object wrapping one (fastmcp's FastMCP).\n"
            'Tip: point `app` at the server object or at a function returning it, e.g. "server:mcp" or '
            '"server:create_server".'
        )
    return server


def is_server(obj: Any) -> bool:
    """An MCP server object (not a factory): the SDK's own, or a framework object wrapping one."""
    return _unwrap(obj) is not None


def _unwrap(obj: Any) -> MCPServer | Server[Any] | None:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if isinstance(obj, MCPServer | Server):
        return obj
    if isinstance(obj, type):
        return None  # a class is a factory, even if it has a class attribute of that name
    for attribute in _WRAPPED_SERVER_ATTRIBUTES:
        inner = getattr(obj, attribute, None)
        if isinstance(inner, Server):
            return inner
    return None


def describe(obj: Any) -> str:
    """How an object that is not a server shows in an error: its type, and its module."""
    kind = type(obj)
    module = kind.__module__
    return kind.__name__ if module in ("builtins", None) else f"{kind.__name__} (from {module})"


def serve_object(obj: Any, transport: str, host: str, port: int, spec: str = "") -> int:
    """Run a server object (or call a factory first) on one transport until it is stopped."""
    from mcp.server.mcpserver import MCPServer

    if not is_server(obj) and callable(obj):
        obj = obj()
    try:
        server = as_server(obj, spec)
    except ServerStartError as exc:
        print(f"mcp_bdd.serve: {exc}", file=sys.stderr)
        return 2
    if isinstance(server, MCPServer):
        if transport == "stdio":
            server.run("stdio")
        elif transport == "streamable-http":
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("sse", host=host, port=port)
        return 0
    _serve_lowlevel(server, transport, host, port)
    return 0


def _serve_lowlevel(server: Any, transport: str, host: str, port: int) -> None:
    """A low-level SDK `Server` (hand-written, or the one a framework such as fastmcp wraps) on a transport.

    Mirrors what `MCPServer.run` does for its own low-level server, so an `app` is served the same
    way whichever kind of object it is.
    """
    import anyio

    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def run_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    import uvicorn

    if transport == "streamable-http":
        app = server.streamable_http_app(host=host)
    else:
        from mcp.server.sse import SseServerTransport
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Mount, Route

        sse = SseServerTransport("/messages/")

        async def handle_sse(request: Request) -> Response:
            async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return Response()

        routes = [Route("/sse", endpoint=handle_sse, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)]
        app = Starlette(routes=routes)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
