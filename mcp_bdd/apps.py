"""Load a Python server object from `module:attr`, recognise what it is, and run it on a transport.

One place decides what counts as an MCP server object and how it is served, so the in-process
runner, the `python -m mcp_bdd.serve` launcher and the zygote's children agree on it:

- the SDK's `MCPServer` and low-level `Server`: used as they are;
- a framework object that *wraps* an SDK low-level `Server` — PrefectHQ's `fastmcp.FastMCP`
  (2.x-4.x keep it in `_mcp_server`), or anything else holding one in `_lowlevel_server` /
  `_mcp_server`: its low-level server is what the SDK client and transports talk to. The
  framework's own lifespan still runs, because its low-level server's lifespan drives it.

Why duck typing and not `isinstance(obj, fastmcp.FastMCP)`: importing fastmcp monkeypatches the
SDK's types for the whole process, so mcp-bdd never imports it; a user's module that
builds a FastMCP has imported it already, and then only its objects are looked at.

A factory (any other callable) is called by the caller, with the scenario's environment and
fakes; what it returns goes through `as_server` like an object would.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from typing import TYPE_CHECKING

from mcp_bdd._text import did_you_mean
from mcp_bdd.errors import ServerStartError, raised

if TYPE_CHECKING:
    import socket
    from types import FrameType

    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer
    from starlette.applications import Starlette

__all__ = ["as_server", "describe", "http_app", "is_server", "load_app", "serve_object", "warm_up"]

#: Where frameworks keep the SDK low-level server they wrap (fastmcp: `_mcp_server`).
_WRAPPED_SERVER_ATTRIBUTES = ("_mcp_server", "_lowlevel_server")


def load_app(spec: str, root: str) -> object:
    """Import `module:attr` with the project root on sys.path."""
    module_name, _, attr = spec.partition(":")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ServerStartError(_import_failure(module_name, spec, root, exc)) from exc
    except Exception as exc:  # the module's own code failed at import (a missing setting, a typo)
        raise ServerStartError(
            f'Importing "{module_name}" (from app = "{spec}") raised {raised(exc)}.\n'
            "  Tip: fix the module's top-level code where named."
        ) from exc
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise ServerStartError(f'"{module_name}" has no attribute "{attr}". {did_you_mean(attr, names, "name")}')
        obj = getattr(obj, part)
    return obj


def _import_failure(module_name: str, spec: str, root: str, exc: ImportError) -> str:
    """Why `module_name` could not be imported: the module itself was not found, or it was, and an
    import in its own code failed — then where (`desk.py:3`), since the module name alone sent
    people looking for a module that is there."""
    parts = module_name.split(".")
    missing = getattr(exc, "name", None)
    if isinstance(exc, ModuleNotFoundError) and missing in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}:
        return (
            f'Cannot import "{module_name}" (from app = "{spec}"): {exc}. '
            f"The module must be importable from the project root {root}."
        )
    place = _import_place(exc, root)
    at = f" at {place}" if place else ""
    tip = _v1_tip(exc)
    if not tip and isinstance(exc, ModuleNotFoundError) and missing:
        tip = (
            f"\n  Tip: install {missing.split('.')[0]} in the environment mcp-bdd runs in ({sys.executable}), "
            "or fix the import."
        )
    return f'Importing "{module_name}" (from app = "{spec}") failed{at}: {exc}.{tip}'


def _import_place(exc: BaseException, root: str) -> str:
    """The innermost frame of the project's own code in the import's traceback, as `pkg/desk.py:3`."""
    import traceback
    from pathlib import Path

    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    base = Path(root).resolve()
    for frame in reversed(frames):
        path = Path(frame.filename)
        if path.is_absolute() and path.resolve().is_relative_to(base) and "site-packages" not in path.parts:
            return f"{path.resolve().relative_to(base).as_posix()}:{frame.lineno}"
    return ""


def _v1_tip(exc: ImportError) -> str:
    """The import error of a server written for the 1.x SDK, with mcp-bdd's 2.x installed."""
    if getattr(exc, "name", None) == "mcp.server.fastmcp":
        return (
            "\nTip: this server is written for the 1.x MCP SDK (`mcp.server.fastmcp`), and mcp-bdd runs on 2.x."
            " Run the server as a `command` with its own interpreter instead of `app`, e.g."
            ' command = [".venv/bin/python", "server.py"]  (`mcp-bdd init` does this for you).'
        )
    return ""


def as_server(obj: object, spec: str = "") -> MCPServer | Server:
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


def is_server(obj: object) -> bool:
    """An MCP server object (not a factory): the SDK's own, or a framework object wrapping one."""
    return _unwrap(obj) is not None


def _unwrap(obj: object) -> MCPServer | Server | None:
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


def describe(obj: object) -> str:
    """How an object that is not a server shows in an error: its type, and its module."""
    kind = type(obj)
    module = kind.__module__
    return kind.__name__ if module in ("builtins", None) else f"{kind.__name__} (from {module})"


def serve_object(obj: object, transport: str, host: str, port: int, spec: str = "") -> int:
    """Run a server object (or call a factory first) on one transport until it is stopped."""
    from mcp.server.mcpserver import MCPServer

    if not is_server(obj) and callable(obj):
        obj = obj()
    try:
        server = as_server(obj, spec)
    except ServerStartError as exc:
        print(f"mcp_bdd.serve: {exc}", file=sys.stderr)
        return 2
    if transport == "stdio":
        if isinstance(server, MCPServer):
            server.run("stdio")
        else:
            _stdio_lowlevel(server)
        return 0
    settings = getattr(server, "settings", None)
    level = str(getattr(settings, "log_level", "warning")).lower()  # MCPServer's own run() does the same
    _run_uvicorn(http_app(server, transport, host), host, port, level)
    return 0


def http_app(server: MCPServer | Server, transport: str, host: str) -> Starlette:
    """The ASGI app serving `server` over streamable HTTP (at /mcp) or SSE (at /sse + /messages/).

    `MCPServer` builds both itself; a low-level `Server` (hand-written, or the one a framework
    such as fastmcp wraps) has streamable HTTP built in, and SSE mounted here the way
    `MCPServer.sse_app` mounts it, so an `app` is served the same way whichever kind it is.
    """
    if transport == "streamable-http":
        return server.streamable_http_app(host=host)
    if hasattr(server, "sse_app"):
        return server.sse_app(host=host)
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
    return Starlette(routes=routes)


def _stdio_lowlevel(server: Server) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async def run_stdio() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run_stdio)


def _run_uvicorn(app: Starlette, host: str, port: int, log_level: str) -> None:
    """uvicorn, stopping as soon as SIGTERM / SIGINT arrives.

    Why not `uvicorn.Server` as it is: its main loop looks at `should_exit` every 0.1 s and its
    shutdown pauses 0.1 s before looking at open connections, so each stop of a per-scenario HTTP
    server cost ~150 ms (or, forked, the SIGKILL after the grace period, skipping the app's own
    shutdown). Here the signal wakes the loop at once; with connections or tasks still open the
    graceful shutdown is uvicorn's own, else it goes straight to the app's lifespan shutdown.
    """
    import asyncio

    import uvicorn

    class PromptServer(uvicorn.Server):
        exit_requested: asyncio.Event | None = None
        loop: asyncio.AbstractEventLoop | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            if self.loop is not None and self.exit_requested is not None:
                # the handler may run while the loop sits in epoll_wait (retried after EINTR):
                # call_soon_threadsafe writes the loop's self-pipe, which wakes it
                self.loop.call_soon_threadsafe(self.exit_requested.set)

        async def main_loop(self) -> None:
            self.exit_requested = asyncio.Event()
            self.loop = asyncio.get_running_loop()
            counter = 0
            while not await self.on_tick(counter):
                counter = (counter + 1) % 864000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.exit_requested.wait(), 0.1)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if self.server_state.connections or self.server_state.tasks:
                await super().shutdown(sockets)  # something in flight: uvicorn's own graceful path
                return
            # nothing in flight (the client closed its connections first): skip its fixed 0.1 s pause
            for listener in self.servers:
                listener.close()
            for sock in sockets or []:
                sock.close()
            for listener in self.servers:
                await listener.wait_closed()
            if not self.force_exit:
                await self.lifespan.shutdown()

    PromptServer(uvicorn.Config(app, host=host, port=port, log_level=log_level)).run()


def warm_up() -> None:
    """Import and build, once, what every child of the zygote would otherwise pay for on its own.

    Only SDK objects are built (never the user's app): a throwaway `MCPServer` — its logging
    setup imports `rich` — its HTTP apps, and uvicorn's protocol modules, which uvicorn imports
    lazily when a server starts. Measured: a forked HTTP server listened 40-60 ms sooner.
    """
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("mcp-bdd warm-up")
    for transport in ("streamable-http", "sse"):
        uvicorn.Config(http_app(server, transport, "127.0.0.1"), log_level="warning").load()
