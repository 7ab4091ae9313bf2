"""Start and stop the servers under test: one `ServerHandle` per (server, transport) start.

- `in-memory`: an `app` object (MCPServer / low-level Server, or a factory returning one) is
  loaded in the test process; the SDK client talks to it directly.
- `stdio`: we spawn the process ourselves (not `stdio_client`) so we own its exit code and its
  stderr file, can quote both when it fails to start, and can spawn it ahead of time.
- `streamable-http` / `sse`: the process is spawned on a free loopback port (`${port}`) and we
  wait until the port accepts connections (or the process dies, or `startup_timeout` passes).
- `url`: nothing is started.

Every child runs in its own process group and is killed with its group; `reap_all()` kills
whatever is still registered (used on SIGINT/SIGTERM and at exit), so no server outlives a run.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import inspect
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.text import TextReceiveStream
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from mcp_bdd.config import AppServer, CommandServer, Config, ServerConfig, UrlServer, mask_secrets
from mcp_bdd.errors import ServerStartError, UsageError

__all__ = ["ServerHandle", "free_port", "load_app", "reap_all", "start_server"]

_LIVE: set[ServerHandle] = set()
_LIVE_LOCK = threading.Lock()


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the OS picks it; the small race is accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
            from mcp_bdd.errors import did_you_mean

            raise ServerStartError(
                f'"{module_name}" has no attribute "{attr}". {did_you_mean(attr, names, "name")}'
            )
        obj = getattr(obj, part)
    return obj


def _is_server(obj: Any) -> bool:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    return isinstance(obj, MCPServer | Server)


@contextlib.contextmanager
def _patched_environ(env: dict[str, str]) -> Iterator[None]:
    """In-memory factories read their configuration from os.environ like a subprocess would."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass(eq=False)
class ServerHandle:
    """One started (or reachable) server, ready for a client to connect."""

    name: str
    transport: str
    target: Any  # what mcp.Client is given: a server object, a Transport, or a URL
    display: str  # the command / app / url, secrets masked, for messages
    stderr_path: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    aprocess: anyio.abc.Process | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    portal: Any = None
    started_at: float = field(default_factory=time.monotonic)

    @property
    def returncode(self) -> int | None:
        if self.process is not None:
            return self.process.poll()
        if self.aprocess is not None:
            return self.aprocess.returncode
        return None

    @property
    def pid(self) -> int | None:
        if self.process is not None:
            return self.process.pid
        if self.aprocess is not None:
            return self.aprocess.pid
        return None

    def stderr_tail(self, lines: int = 20) -> str:
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        try:
            data = self.stderr_path.read_bytes()[-16384:].decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(data.splitlines()[-lines:])

    def describe_death(self) -> str:
        """Command, exit code and stderr tail: what a user needs when a server fails."""
        parts = [f"  Server:    {self.name} over {self.transport}", f"  Started:   {self.display}"]
        code = self.returncode
        if code is not None:
            parts.append(f"  Exit code: {code}")
        tail = self.stderr_tail()
        if tail:
            parts.append("  Last lines of its stderr:")
            parts.extend("    " + line for line in tail.splitlines())
        elif self.stderr_path is not None:
            parts.append("  Its stderr was empty.")
        return "\n".join(parts)

    def stop(self) -> None:
        """Kill the process group (if we started one). Idempotent, never raises."""
        pid = self.pid
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if pid is None or self.returncode is not None:
            self._reap()
            return
        _kill_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and self.returncode is None:
            self._reap()
            time.sleep(0.01)
        if self.returncode is None:
            _kill_group(pid, signal.SIGKILL)
        self._reap()

    def _reap(self) -> None:
        if self.process is not None:
            with contextlib.suppress(Exception):
                self.process.wait(timeout=0.5 if self.process.returncode is None else 0)
        # anyio processes are reaped by the stdio transport's own shutdown (in the portal loop)


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def reap_all() -> None:
    """Kill every server still alive (SIGINT/SIGTERM handler, atexit)."""
    with _LIVE_LOCK:
        handles = list(_LIVE)
    for handle in handles:
        handle.stop()


atexit.register(reap_all)


def _register(handle: ServerHandle) -> ServerHandle:
    with _LIVE_LOCK:
        _LIVE.add(handle)
    return handle


# ---------------------------------------------------------------------------------------------
# starting


def start_server(
    name: str,
    cfg: ServerConfig,
    config: Config,
    transport: str,
    *,
    interpolate: Callable[[str, dict[str, str]], str],
    inject: Callable[[Callable[..., Any]], dict[str, Any]],
    logdir: Path,
    portal: Any,
) -> ServerHandle:
    """Start `name` for `transport` (or point at it, for url servers)."""
    if transport not in cfg.transports():
        raise UsageError(
            f'The server "{name}" cannot be run over {transport}: it can serve {", ".join(cfg.transports())}. '
            + _how_to_add(cfg, transport)
        )
    startup_timeout = float(config.setting(name, "startup_timeout"))
    if isinstance(cfg, UrlServer):
        remote = interpolate(cfg.url, {})
        headers = {k: interpolate(v, {}) for k, v in cfg.headers.items()}
        return ServerHandle(name, transport, None, f"{remote} (already running)", url=remote, headers=headers)
    port = free_port() if transport in ("streamable-http", "sse") else 0
    url: str | None
    extra = {"port": str(port)}
    env = {k: interpolate(v, extra) for k, v in cfg.env.items()}
    root = config.root
    logdir.mkdir(parents=True, exist_ok=True)
    stderr_path = logdir / f"{name}-{transport}-{time.monotonic_ns()}.stderr.log"
    if isinstance(cfg, AppServer):
        if transport == "in-memory":
            obj = load_app(cfg.app, root)
            if not _is_server(obj):
                if not callable(obj):
                    raise ServerStartError(
                        f'app = "{cfg.app}" is neither an MCP server object nor a factory returning one '
                        f"(it is a {type(obj).__name__})."
                    )
                with _patched_environ(env):
                    obj = obj(**inject(obj))
                if inspect.isawaitable(obj):
                    raise ServerStartError(f'app = "{cfg.app}": the factory must be synchronous.')
                if not _is_server(obj):
                    raise ServerStartError(
                        f'app = "{cfg.app}": the factory returned a {type(obj).__name__}, not an MCPServer or Server.'
                    )
            return ServerHandle(name, transport, obj, f"app {cfg.app} (in-memory)")
        argv = [sys.executable, "-m", "mcp_bdd.serve", cfg.app, "--transport", transport]
        if port:
            argv += ["--port", str(port)]
        cwd = str(Path(root, interpolate(cfg.cwd, extra))) if cfg.cwd else root
        pythonpath = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        env = {"PYTHONPATH": pythonpath, **env}
        url = None
        if transport == "streamable-http":
            url = f"http://127.0.0.1:{port}/mcp"
        elif transport == "sse":
            url = f"http://127.0.0.1:{port}/sse"
    else:
        assert isinstance(cfg, CommandServer)
        endpoint = cfg.http if transport == "streamable-http" else cfg.sse if transport == "sse" else None
        if endpoint is not None:
            argv = [interpolate(a, extra) for a in endpoint.command]
            env = {**env, **{k: interpolate(v, extra) for k, v in endpoint.env.items()}}
            url = interpolate(endpoint.url, extra)
            cwd_raw = endpoint.cwd or cfg.cwd
        else:
            argv = [interpolate(a, extra) for a in cfg.command]
            url = None
            cwd_raw = cfg.cwd
        cwd = str(Path(root, interpolate(cwd_raw, extra))) if cwd_raw else root
    shown_env = mask_secrets(env)
    display = " ".join(argv) + (
        "  (env: " + ", ".join(f"{k}={v}" for k, v in shown_env.items()) + ")" if env else ""
    )
    full_env = {**os.environ, **env}
    if transport == "stdio":
        aprocess = _spawn_async(portal, argv, full_env, cwd, stderr_path, name, display)
        handle = _register(
            ServerHandle(
                name, transport, None, display, stderr_path=stderr_path, aprocess=aprocess, portal=portal
            )
        )
        handle.target = ProcessTransport(aprocess)
        return handle
    assert url is not None
    process = _spawn(argv, full_env, cwd, stderr_path, name, display)
    handle = _register(
        ServerHandle(name, transport, None, display, stderr_path=stderr_path, process=process, url=url)
    )
    _wait_for_port(handle, port or _port_of(url), startup_timeout)
    return handle


def _how_to_add(cfg: ServerConfig, transport: str) -> str:
    if isinstance(cfg, CommandServer) and transport in ("streamable-http", "sse"):
        key = "http" if transport == "streamable-http" else "sse"
        return (
            f"Add [servers.<name>.{key}] with `command` and `url` (use ${{port}}) to say how to start it over "
            f"{transport}."
        )
    if transport == "in-memory":
        return "Only `app` servers (Python server objects) run in-memory."
    return ""


def _port_of(url: str) -> int:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def _spawn(
    argv: list[str], env: dict[str, str], cwd: str, stderr_path: Path, name: str, display: str
) -> subprocess.Popen[bytes]:
    with stderr_path.open("wb") as err:
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServerStartError(_spawn_failed(name, display, exc)) from exc


def _spawn_failed(name: str, display: str, exc: OSError) -> str:
    return (
        f'The server "{name}" could not be started: {exc.strerror or exc}.\n  Command: {display}\n'
        "  Tip: check the `command` in your configuration (is the program installed and on PATH?)."
    )


def _spawn_async(
    portal: Any, argv: list[str], env: dict[str, str], cwd: str, stderr_path: Path, name: str, display: str
) -> anyio.abc.Process:
    async def spawn() -> anyio.abc.Process:
        with stderr_path.open("wb") as err:
            return await anyio.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )

    try:
        process: anyio.abc.Process = portal.call(spawn)
    except OSError as exc:
        raise ServerStartError(_spawn_failed(name, display, exc)) from exc
    return process


def _wait_for_port(handle: ServerHandle, port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if handle.returncode is not None:
            handle.stop()
            raise ServerStartError(
                f'The server "{handle.name}" exited before it accepted connections on port {port}.\n'
                + handle.describe_death()
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            handle.stop()
            raise ServerStartError(
                f'The server "{handle.name}" did not accept connections on port {port} within '
                f"startup_timeout = {timeout:g} s.\n"
                + handle.describe_death()
                + "\n  Tip: raise `startup_timeout`, or check that the server listens on the ${port} it is given."
            )
        time.sleep(0.02)


class ProcessTransport(contextlib.AbstractAsyncContextManager[TransportStreams]):
    """Newline-delimited JSON-RPC over the pipes of a process we spawned ourselves.

    Unlike `stdio_client`, the process exists before the transport does: that is what lets a
    start failure report the exit code, and what lets the next server be spawned ahead of time.
    Shutdown follows the MCP spec: close stdin, wait, then kill the process group.
    """

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._cm: contextlib.AbstractAsyncContextManager[TransportStreams] | None = None

    async def __aenter__(self) -> TransportStreams:
        self._cm = _process_streams(self.process)
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(*exc)


@contextlib.asynccontextmanager
async def _process_streams(process: anyio.abc.Process) -> AsyncIterator[TransportStreams]:
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    assert process.stdout is not None and process.stdin is not None
    stdout, stdin = process.stdout, process.stdin

    async def reader() -> None:
        buffer = ""
        async with read_writer:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                async for chunk in TextReceiveStream(stdout, errors="replace"):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if not line.strip():
                            continue
                        try:
                            message: SessionMessage | Exception = SessionMessage(
                                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError as exc:
                            message = ValueError(
                                f"the server wrote a line that is not JSON-RPC: {line[:300]!r} ({exc})"
                            )
                        await read_writer.send(message)

    async def writer() -> None:
        async with write_reader:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for item in write_reader:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await stdin.send(data.encode())

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop_process(process)
            tg.cancel_scope.cancel()
            for stream in (read_stream, write_stream):
                await stream.aclose()


async def _stop_process(process: anyio.abc.Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    with anyio.move_on_after(1.0):
        while process.returncode is None:
            await anyio.sleep(0.01)
    if process.returncode is None:
        _kill_group(process.pid, signal.SIGTERM)
        with anyio.move_on_after(2.0):
            while process.returncode is None:
                await anyio.sleep(0.01)
    if process.returncode is None:
        _kill_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(Exception), anyio.move_on_after(1.0):
        await process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.aclose()
