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
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from mcp_bdd.config import AppServer, CommandServer, Config, ServerConfig, UrlServer, mask_secrets
from mcp_bdd.errors import ServerStartError, TransportNotServed

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

            raise ServerStartError(f'"{module_name}" has no attribute "{attr}". {did_you_mean(attr, names, "name")}')
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
    zygote: Zygote | None = None
    zpid: int | None = None  # a child forked by the zygote (not ours to wait for: the zygote reaps it)

    @property
    def returncode(self) -> int | None:
        if self.zygote is not None and self.zpid is not None:
            return self.zygote.status(self.zpid)
        if self.process is not None:
            return self.process.poll()
        if self.aprocess is not None:
            return self.aprocess.returncode
        return None

    @property
    def pid(self) -> int | None:
        if self.zpid is not None:
            return self.zpid
        if self.process is not None:
            return self.process.pid
        if self.aprocess is not None:
            return self.aprocess.pid
        return None

    def stderr_tail(self, lines: int = 20) -> str:
        return "" if self.stderr_path is None else _tail(self.stderr_path, lines)

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
        deadline = time.monotonic() + (0.5 if self.zygote is not None else 2.0)
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


def _die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL if the thread that spawned it dies (even `kill -9` of behave).

    Runs between fork and exec; only async-signal-safe work (one prctl call) is done here.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def reap_all() -> None:
    """Kill every server still alive (SIGINT/SIGTERM handler, atexit), then the zygotes."""
    with _LIVE_LOCK:
        handles = list(_LIVE)
        zygotes = list(_ZYGOTES)
        _ZYGOTES.clear()
        _ZYGOTE_BY_KEY.clear()
        _WARM.clear()
    for handle in handles:
        handle.stop()
    for zygote in zygotes:
        zygote.close()


atexit.register(reap_all)


def _register(handle: ServerHandle) -> ServerHandle:
    with _LIVE_LOCK:
        _LIVE.add(handle)
    return handle


# ---------------------------------------------------------------------------------------------
# the zygote: fork a fresh server per scenario instead of paying Python's start-up each time


class Zygote:
    """Client side of `mcp_bdd.zygote`: one pre-imported process per (app, cwd, environment)."""

    def __init__(self, spec: str, cwd: str, env: dict[str, str], logdir: Path) -> None:
        ours, theirs = socket.socketpair()
        self.spec = spec
        self.stderr_path = logdir / f"zygote-{time.monotonic_ns()}.stderr.log"
        self._lock = threading.Lock()
        self._buffer = b""
        self.sock = ours
        argv = [sys.executable, "-m", "mcp_bdd.serve", spec, "--zygote", str(theirs.fileno())]
        try:
            with self.stderr_path.open("wb") as err:
                self.process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=err,
                    stderr=err,
                    cwd=cwd,
                    env=env,
                    pass_fds=[theirs.fileno()],
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
        except OSError as exc:
            ours.close()
            raise ServerStartError(
                f"Could not start the pre-imported server process for {spec} (cwd {cwd}): {exc.strerror or exc}.\n"
                "  Tip: check `cwd` in the server's configuration, or set pool = false."
            ) from exc
        finally:
            theirs.close()
        with _LIVE_LOCK:
            _ZYGOTES.append(self)

    def _ask(self, request: dict[str, Any], fds: list[int] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """One request/answer over the control socket (length-prefixed JSON; fds ride along)."""
        with self._lock:
            data = json.dumps(request).encode()
            frame = len(data).to_bytes(4, "big") + data
            try:
                self.sock.settimeout(timeout)
                if fds:
                    socket.send_fds(self.sock, [frame], fds)
                else:
                    self.sock.sendall(frame)
                while b"\n" not in self._buffer:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        raise ConnectionResetError("the pre-imported process closed its control socket")
                    self._buffer += chunk
            except TimeoutError:
                self.close()
                raise ServerStartError(
                    f"The pre-imported server process for {self.spec} did not answer within {timeout:g} s "
                    "(importing the app takes too long, or it hangs at import).\n"
                    + _indent(_tail(self.stderr_path))
                    + "\n  Tip: raise `startup_timeout`, or set pool = false to start the server cold."
                ) from None
            except OSError as exc:
                code = self.process.poll()
                raise ServerStartError(
                    f"The pre-imported server process for {self.spec} failed ({type(exc).__name__}); "
                    f"exit code {code}. The app probably cannot be imported. Last lines of its stderr:\n"
                    + _indent(_tail(self.stderr_path))
                    + "\n  Tip: run `python -m mcp_bdd.serve "
                    + self.spec
                    + "` by hand in the server's cwd to see the error."
                ) from None
            line, _, self._buffer = self._buffer.partition(b"\n")
            answer: dict[str, Any] = json.loads(line)
            if "error" in answer:
                raise ServerStartError(f"The pre-imported server process for {self.spec}: {answer['error']}")
            return answer

    def fork(
        self, env: dict[str, str], transport: str, port: int, stderr_path: Path, timeout: float = 30.0
    ) -> tuple[int, int, int]:
        """A forked server: (pid, fd to write its stdin, fd to read its stdout); -1 fds for HTTP."""
        err = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            if transport == "stdio":
                child_in, our_in = os.pipe()
                our_out, child_out = os.pipe()
                try:
                    answer = self._ask(
                        {"op": "spawn", "env": env, "transport": transport, "port": port},
                        [child_in, child_out, err],
                        timeout,
                    )
                except BaseException:
                    os.close(our_in)
                    os.close(our_out)
                    raise
                finally:
                    os.close(child_in)
                    os.close(child_out)
                return int(answer["pid"]), our_in, our_out
            null = os.open(os.devnull, os.O_RDWR)
            try:
                answer = self._ask(
                    {"op": "spawn", "env": env, "transport": transport, "port": port}, [null, err, err], timeout
                )
            finally:
                os.close(null)
            return int(answer["pid"]), -1, -1
        finally:
            os.close(err)

    def status(self, pid: int) -> int | None:
        if self.process.poll() is not None:
            return -1
        try:
            code = self._ask({"op": "status", "pid": pid}).get("returncode")
        except (OSError, ServerStartError):
            return -1
        return None if code is None else int(code)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()  # EOF: the zygote kills its children and exits
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=3)
        if self.process.poll() is None:
            _kill_group(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=3)


_ZYGOTES: list[Zygote] = []
_ZYGOTE_BY_KEY: dict[tuple[str, str, str], Zygote] = {}


def _zygote_for(spec: str, cwd: str, env: dict[str, str], logdir: Path) -> Zygote:
    key = (spec, cwd, json.dumps(env, sort_keys=True))
    zygote = _ZYGOTE_BY_KEY.get(key)
    if zygote is None or zygote.process.poll() is not None:
        zygote = _ZYGOTE_BY_KEY[key] = Zygote(spec, cwd, env, logdir)
    return zygote


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines()) or "    (empty)"


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_bytes()[-16384:].decode("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return ""


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
        raise TransportNotServed(
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
    display = " ".join(argv) + ("  (env: " + ", ".join(f"{k}={v}" for k, v in shown_env.items()) + ")" if env else "")
    full_env = {**os.environ, **env}
    if isinstance(cfg, AppServer) and config.pool:
        # Fork from a pre-imported process: same code path as `python -m mcp_bdd.serve`, minus the imports.
        base = {**os.environ, "PYTHONPATH": env["PYTHONPATH"]}
        zygote = _zygote_for(cfg.app, cwd, base, logdir)
        scenario_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
        zpid, stdin_fd, stdout_fd = zygote.fork(scenario_env, transport, port, stderr_path, startup_timeout)
        handle = _register(
            ServerHandle(
                name,
                transport,
                None,
                display + "  (forked from a pre-imported process; pool = false to start cold)",
                stderr_path=stderr_path,
                url=url,
                zygote=zygote,
                zpid=zpid,
            )
        )
        if transport == "stdio":
            handle.target = FdTransport(stdin_fd, stdout_fd, handle)
        else:
            assert url is not None
            _wait_for_port(handle, port, startup_timeout)
        return handle
    if transport == "stdio":
        depth = int(config.setting(name, "prestart") or 0)
        if not (
            isinstance(cfg, CommandServer)
            and depth > 0
            and config.setting(name, "scope") == "scenario"
            and not _varies_per_start(cfg)
        ):
            return _spawn_stdio(portal, argv, full_env, cwd, stderr_path, name, display)
        # A command server (any executable) cannot be forked from a zygote; instead the next ones
        # are started while the current scenario runs, so their start-up overlaps the run.
        key = (name, tuple(argv), tuple(sorted(env.items())), cwd)
        with _LIVE_LOCK:
            queue = _WARM.setdefault(key, [])
        ready: ServerHandle | None = None
        while queue and ready is None:
            candidate = queue.pop(0)
            if candidate.returncode is None:
                ready = candidate
            else:
                _discard(candidate, portal)
        if ready is None:
            ready = _spawn_stdio(portal, argv, full_env, cwd, stderr_path, name, display)
        while len(queue) < depth:
            warm_path = logdir / f"{name}-{transport}-{time.monotonic_ns()}.stderr.log"
            queue.append(_spawn_stdio(portal, argv, full_env, cwd, warm_path, name, display))
        return ready
    assert url is not None
    process = _spawn(argv, full_env, cwd, stderr_path, name, display)
    handle = _register(ServerHandle(name, transport, None, display, stderr_path=stderr_path, process=process, url=url))
    _wait_for_port(handle, _port_of(url), startup_timeout)
    return handle


#: command-server processes started ahead of the scenarios that will use them (`prestart = N`)
_WARM: dict[tuple[Any, ...], list[ServerHandle]] = {}


def _discard(handle: ServerHandle, portal: Any) -> None:
    """Stop a process we started but never connected to, closing its pipes in the event loop."""
    with _LIVE_LOCK:
        _LIVE.discard(handle)
    if handle.aprocess is not None:
        with contextlib.suppress(Exception):
            portal.call(_stop_process, handle.aprocess)
    handle.stop()


def discard_prestarted(portal: Any) -> None:
    """End every pre-started server (end of the run), while the portal's event loop still runs."""
    with _LIVE_LOCK:
        queues = list(_WARM.values())
        _WARM.clear()
    for queue in queues:
        for handle in queue:
            _discard(handle, portal)


def _varies_per_start(cfg: CommandServer) -> bool:
    """Whether a start depends on the scenario (fakes, variables, ${port}): then nothing is pre-started."""
    values = [*cfg.command, *cfg.env.values(), cfg.cwd or ""]
    return any("${" in v.replace("${env.", "") for v in values)


def _spawn_stdio(
    portal: Any, argv: list[str], env: dict[str, str], cwd: str, stderr_path: Path, name: str, display: str
) -> ServerHandle:
    aprocess = _spawn_async(portal, argv, env, cwd, stderr_path, name, display)
    handle = _register(
        ServerHandle(name, "stdio", None, display, stderr_path=stderr_path, aprocess=aprocess, portal=portal)
    )
    handle.target = ProcessTransport(aprocess)
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
                preexec_fn=_die_with_parent,
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
    start failure report the exit code, and what lets a server be forked ahead of time.
    Shutdown follows the MCP spec: close stdin, wait, then kill the process group.
    """

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._cm: contextlib.AbstractAsyncContextManager[TransportStreams] | None = None

    async def __aenter__(self) -> TransportStreams:
        process = self.process
        assert process.stdout is not None and process.stdin is not None
        stdout, stdin = process.stdout, process.stdin

        async def stop() -> None:
            await _stop_process(process)

        self._cm = _pipe_streams(stdout.receive, stdin.send, stop)
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(*exc)


class FdTransport(contextlib.AbstractAsyncContextManager[TransportStreams]):
    """The same over raw pipe fds, for a server forked by the zygote (not our child process)."""

    def __init__(self, stdin_fd: int, stdout_fd: int, handle: ServerHandle) -> None:
        self.stdin_fd, self.stdout_fd, self.handle = stdin_fd, stdout_fd, handle
        os.set_blocking(stdin_fd, False)
        os.set_blocking(stdout_fd, False)
        self._cm: contextlib.AbstractAsyncContextManager[TransportStreams] | None = None

    async def receive(self) -> bytes:
        while True:
            try:
                data = os.read(self.stdout_fd, 65536)
            except BlockingIOError:
                await anyio.wait_readable(self.stdout_fd)
                continue
            except OSError as exc:
                raise anyio.EndOfStream from exc
            if not data:
                raise anyio.EndOfStream
            return data

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.stdin_fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.stdin_fd)
            except OSError as exc:
                raise anyio.BrokenResourceError from exc

    async def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.stdin_fd)  # EOF on its stdin: the spec's polite shutdown
        handle = self.handle
        # Poll with a signal-0 probe, not handle.returncode: that asks the zygote over its socket,
        # which would block the event loop while another thread waits on a spawn.
        with anyio.move_on_after(1.0):
            while handle.zpid is not None and _pid_alive(handle.zpid):
                await anyio.sleep(0.01)
        await anyio.to_thread.run_sync(handle.stop)
        with contextlib.suppress(OSError):
            os.close(self.stdout_fd)

    async def __aenter__(self) -> TransportStreams:
        self._cm = _pipe_streams(self.receive, self.send, self.stop)
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(*exc)


@contextlib.asynccontextmanager
async def _pipe_streams(
    receive: Callable[[], Awaitable[bytes]],
    send: Callable[[bytes], Awaitable[None]],
    stop: Callable[[], Awaitable[None]],
) -> AsyncIterator[TransportStreams]:
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        buffer = b""
        async with read_writer:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                while True:
                    lines = (buffer + await receive()).split(b"\n")
                    buffer = lines.pop()
                    for raw in lines:
                        line = raw.decode("utf-8", "replace")
                        if not line.strip():
                            continue
                        try:
                            message: SessionMessage | Exception = SessionMessage(
                                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError as exc:
                            message = ValueError(f"the server wrote a non-JSON-RPC line: {line[:300]!r} ({exc})")
                        await read_writer.send(message)

    async def writer() -> None:
        async with write_reader:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for item in write_reader:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await send(data.encode())

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await stop()
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
