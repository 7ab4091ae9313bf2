"""`start_server`: from a server's configuration to a `RunningServer`, in one straight path.

    resolve (interpolate env, argv, cwd, url; remember secrets)
    → bring the server to life (an object in-process | fork from the zygote | a pre-started
      process | spawn) → wait until it can be connected to (HTTP: the port accepts)

Nothing here talks MCP: connecting is the session's job.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard
from urllib.parse import urlsplit

from mcp_bdd._net import free_port
from mcp_bdd._text import raised_at
from mcp_bdd.apps import as_server, describe, is_server, load_app
from mcp_bdd.config import AppServer, CommandServer, Config, ServerConfig, UrlServer
from mcp_bdd.errors import ServerStartError, TransportNotServed, raised
from mcp_bdd.secrets import mask_mapping, remember_environment, remember_mapping
from mcp_bdd.servers._base import HttpServer, InMemoryServer, RemoteServer, RunningServer, StdioServer
from mcp_bdd.servers._listeners import listening_instead
from mcp_bdd.servers._process import (
    SERVER_MARK,
    ChildProcess,
    ServerProcess,
    new_mark,
    on_reap,
    spawn,
    stop_together,
)
from mcp_bdd.servers._zygote import ForkedProcess, zygote_for

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

__all__ = ["discard_prestarted", "exit_0_tip", "prestart", "start_server"]

Interpolate = Callable[[str, dict[str, str]], str]
_HTTP = ("streamable-http", "sse")


@dataclass(frozen=True)
class _Launch:
    """A resolved process start: what to run, where, with what, and where to reach it."""

    argv: list[str]
    env: dict[str, str]  # the server's own variables (not the inherited environment)
    cwd: str
    url: str | None
    display: str
    headers: dict[str, str]  # what the client sends an HTTP server (the `http`/`sse` section's `headers`)


def start_server(
    name: str,
    cfg: ServerConfig,
    config: Config,
    transport: str,
    *,
    interpolate: Interpolate,
    inject: Callable[[Callable[..., object]], dict[str, object]],
    logdir: Path,
) -> RunningServer:
    """Start `name` for `transport` (or point at it, for url servers)."""
    if transport not in cfg.transports():
        raise TransportNotServed(
            f'The server "{name}" cannot be run over {transport}: it can serve {", ".join(cfg.transports())}. '
            + _how_to_add(cfg, transport)
        )
    if isinstance(cfg, UrlServer):
        headers = {k: interpolate(v, {}) for k, v in cfg.headers.items()}
        remember_mapping(headers, all_values=True)
        return RemoteServer(name, transport, interpolate(cfg.url, {}), headers)
    if isinstance(cfg, AppServer) and transport == "in-memory":
        _working_dir(name, cfg, config, transport, interpolate, {"port": "0"})  # as the stdio leg would
        env = _env(cfg, 0, interpolate)
        limit = float(config.setting(name, "startup_timeout"))
        return InMemoryServer(
            name, _in_memory(name, cfg, config.root, env, inject, limit), f"app {cfg.app} (in-memory)"
        )
    if transport == "stdio":
        return _launch(name, cfg, config, transport, 0, interpolate, logdir)
    return _launch_http(name, cfg, config, transport, interpolate, logdir)


#: ports tried for one HTTP server before its start fails (each lost only to a process that bound
#: the port between `free_port()` and the server's own bind)
PORT_ATTEMPTS = 3


def _launch_http(
    name: str, cfg: AppServer | CommandServer, config: Config, transport: str, interpolate: Interpolate, logdir: Path
) -> HttpServer:
    """Launch an HTTP server on a free port; on another one if a stranger took it first (a fixed
    port in the server's `url` is not retried: the same stranger would hold it)."""
    # Resolve the launch once before the port is picked, for its side effect: the fakes it names
    # start and bind their ports. Else the OS may hand a fake the port free_port() just released
    # (seen under load). Interpolating is idempotent: a fake starts once per scenario.
    _resolve(name, cfg, config, transport, 0, _env(cfg, 0, interpolate), interpolate)
    startup_timeout = float(config.setting(name, "startup_timeout"))
    taken: list[str] = []
    for _ in range(PORT_ATTEMPTS):
        picked = free_port()
        server = _launch(name, cfg, config, transport, picked, interpolate, logdir)
        assert isinstance(server, HttpServer)
        assert server.url is not None
        try:
            port = _url_port(name, server.url)
            holder = _wait_for_port(server, port, startup_timeout)
        except BaseException:
            server.stop()  # Ctrl-C mid-wait included (stop is idempotent)
            raise
        if holder is None:
            return server
        if port != picked:
            raise ServerStartError(
                f'The server "{name}" could not listen on port {port}, fixed in its url {server.url}: another '
                f"process holds it ({holder}).\n  Tip: stop that process, or let mcp-bdd pick a free port: "
                'url = "http://127.0.0.1:${port}/..." with the port passed to the server.'
            )
        taken.append(f"{port} ({holder})")
    raise ServerStartError(
        f'The server "{name}" could not get a port: {PORT_ATTEMPTS} ports picked for it in turn were each '
        f"taken by another process before the server bound them: {', '.join(taken)}.\n"
        "  Tip: something on this machine binds free loopback ports as fast as they are released "
        "(another test run?); run fewer at once."
    )


def _launch(
    name: str,
    cfg: AppServer | CommandServer,
    config: Config,
    transport: str,
    port: int,
    interpolate: Interpolate,
    logdir: Path,
) -> RunningServer:
    """Bring a process to life for `transport` (stdio, or HTTP on `port`); no readiness wait."""
    env = _env(cfg, port, interpolate)
    launch = _resolve(name, cfg, config, transport, port, env, interpolate)
    logdir.mkdir(parents=True, exist_ok=True)
    stderr_path = logdir / f"{name}-{transport}-{time.monotonic_ns()}.stderr.log"
    max_line = int(config.setting(name, "max_message_bytes"))
    startup_timeout = float(config.setting(name, "startup_timeout"))
    display = launch.display
    if isinstance(cfg, AppServer) and config.pool:
        # Fork from a pre-imported process: the same code path as `python -m mcp_bdd.serve`, minus imports.
        base = {**os.environ, "PYTHONPATH": launch.env["PYTHONPATH"]}
        zygote = zygote_for(cfg.app, launch.cwd, base, logdir)
        scenario_env = {k: v for k, v in launch.env.items() if k != "PYTHONPATH"}
        mark = new_mark()  # the zygote's child passes it on to what it starts (see _process)
        pid, stdin_fd, stdout_fd = zygote.fork(
            {**scenario_env, SERVER_MARK: mark}, transport, port, stderr_path, startup_timeout
        )
        display += "  (forked from a pre-imported process; pool = false to start cold)"
        process: ServerProcess = ForkedProcess(zygote, pid, display, mark)
        pipes = (stdin_fd, stdout_fd)
    elif transport == "stdio":
        process, pipes, stderr_path = _stdio_process(name, cfg, config, launch, stderr_path, logdir)
    else:
        process, pipes = _spawn(name, launch, stderr_path, stdio=False), (-1, -1)
    if transport == "stdio":
        return StdioServer(name, process, pipes, display, stderr_path, max_line)
    assert launch.url is not None
    server = HttpServer(name, transport, process, launch.url, display, stderr_path)
    server.headers.update(launch.headers)  # sent by the session's HTTP client, as a url server's are
    return server


def _in_memory(
    name: str,
    cfg: AppServer,
    root: str,
    env: dict[str, str],
    inject: Callable[[Callable[..., object]], dict[str, object]],
    startup_timeout: float,
) -> MCPServer | Server:
    with _no_exit(name, cfg.app, "importing it"):
        obj = load_app(cfg.app, root)
    if is_server(obj):
        return as_server(obj, cfg.app)
    if not callable(obj):
        raise ServerStartError(
            f'app = "{cfg.app}" is neither an MCP server object nor a factory returning one (it is a {describe(obj)}).'
        )
    kwargs = inject(obj)  # a fake that cannot be made fails as itself, not as the factory
    started = time.monotonic()
    with _patched_environ(env), _no_exit(name, cfg.app, "its factory"):
        try:
            obj = obj(**kwargs)
        except Exception as exc:
            raise ServerStartError(
                f'The factory of app = "{cfg.app}" raised {raised(exc)}.\n'
                "  Tip: fix the factory where named (it runs in the test process, with the server's env); "
                "run with -D transport=stdio to see the whole traceback on the server's stderr."
            ) from exc
    took = time.monotonic() - started
    if took > startup_timeout:  # in-process, nothing can interrupt it: it is not let pass as a start either
        raise ServerStartError(
            f'The factory of app = "{cfg.app}" took {took:.1f} s, past startup_timeout = {startup_timeout:g} s '
            "(in-process, mcp-bdd cannot interrupt it, so the step waited).\n  Tip: make the factory return at "
            "once (connect in the lifespan, with a time limit), or run the server over stdio (-D "
            "transport=stdio), where a start past startup_timeout is stopped."
        )
    if inspect.isawaitable(obj):
        raise ServerStartError(f'app = "{cfg.app}": the factory must be synchronous.')
    if not is_server(obj):
        raise ServerStartError(
            f'app = "{cfg.app}": the factory returned a {describe(obj)}, not an MCP server '
            "(MCPServer, Server, or a framework object wrapping one such as fastmcp's FastMCP)."
        )
    return as_server(obj, cfg.app)


@contextlib.contextmanager
def _no_exit(name: str, spec: str, what: str) -> Iterator[None]:
    """An in-process server that exits as it starts (`sys.exit("API_KEY is not set")`, a habit of
    scripts) fails its start; it must not end behave, which it did without a word (behave's
    capture swallowed the message). Over stdio the same exit ends only the server's process."""
    try:
        yield
    except SystemExit as exc:
        code = exc.code
        said = f": {code}" if isinstance(code, str) else f" with status {code}" if code is not None else ""
        raise ServerStartError(
            f'The in-process server "{name}" (app = "{spec}") exited as it started: {what} called sys.exit()'
            f"{said}{raised_at(exc)}.\n  Tip: {exit_at_start_tip(name)}"
        ) from None


def exit_at_start_tip(name: str) -> str:
    """What to do about an in-process server `name` that exited as it started (its module, factory or lifespan)."""
    return (
        "a server that exits at start usually misses a setting: give it what it needs in `env` of "
        f"[servers.{name}] (a check at import time sees only the environment behave runs in), or run it "
        "over stdio (-D transport=stdio) to see all it prints."
    )


class _patched_environ:
    """In-memory factories read their configuration from os.environ like a subprocess would."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> None:
        self.saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _env(cfg: AppServer | CommandServer, port: int, interpolate: Interpolate) -> dict[str, str]:
    env = {k: interpolate(v, {"port": str(port)}) for k, v in cfg.env.items()}
    remember_mapping(env)
    remember_environment(os.environ)  # inherited by a spawned server, read by an in-process one
    return env


def _resolve(
    name: str,
    cfg: AppServer | CommandServer,
    config: Config,
    transport: str,
    port: int,
    env: dict[str, str],
    interp: Interpolate,
) -> _Launch:
    extra = {"port": str(port)}
    root = config.root
    url: str | None = None
    headers: dict[str, str] = {}
    cwd = _working_dir(name, cfg, config, transport, interp, extra)
    if isinstance(cfg, AppServer):
        argv = [sys.executable, "-m", "mcp_bdd.serve", cfg.app, "--transport", transport]
        argv += ["--port", str(port)] if port else []
        pythonpath = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        env = {"PYTHONPATH": pythonpath, **env}
        path = {"streamable-http": "/mcp", "sse": "/sse"}.get(transport)
        url = f"http://127.0.0.1:{port}{path}" if path else None
    else:
        endpoint = cfg.http if transport == "streamable-http" else cfg.sse if transport == "sse" else None
        if endpoint is not None:
            argv = [interp(a, extra) for a in endpoint.command]
            own = {k: interp(v, extra) for k, v in endpoint.env.items()}
            remember_mapping(own)
            env = {**env, **own}
            url = interp(endpoint.url, extra)
            headers = {k: interp(v, extra) for k, v in endpoint.headers.items()}
            remember_mapping(headers, all_values=True)  # every header value is a secret
        else:
            argv = [interp(a, extra) for a in cfg.command]
    shown = mask_mapping(env)
    display = " ".join(argv) + ("  (env: " + ", ".join(f"{k}={v}" for k, v in shown.items()) + ")" if env else "")
    return _Launch(argv, env, cwd, url, display, headers)


def _working_dir(
    name: str,
    cfg: AppServer | CommandServer,
    config: Config,
    transport: str,
    interp: Interpolate,
    extra: dict[str, str],
) -> str:
    """The folder the server runs in, checked before anything is started there (every start goes
    through here: spawn, pre-started, forked from the zygote, HTTP, and in-memory for the same
    configuration). Else Popen's "No such file or directory" would blame the command."""
    endpoint = None
    if isinstance(cfg, CommandServer):
        endpoint = cfg.http if transport == "streamable-http" else cfg.sse if transport == "sse" else None
    key, raw = ("cwd", cfg.cwd)
    if endpoint is not None and endpoint.cwd:
        key, raw = ("http.cwd" if transport == "streamable-http" else "sse.cwd", endpoint.cwd)
    if not raw:
        return config.root
    cwd = str(Path(config.root, interp(raw, extra)))
    if not os.path.isdir(cwd):
        what = "is not a folder" if os.path.exists(cwd) else "does not exist"
        raise ServerStartError(
            f'The server "{name}" could not be started: its working directory {cwd} {what}.\n'
            f'  Configured: {key} = "{raw}" (in {config.source})\n'
            f'  Tip: fix `{key}` of the server "{name}" in the configuration: a folder that exists, absolute '
            f"or relative to {config.root}."
        )
    return cwd


def _spawn(name: str, launch: _Launch, stderr_path: Path, *, stdio: bool) -> ChildProcess:
    try:
        return spawn(
            launch.argv,
            env={**os.environ, **launch.env},
            cwd=launch.cwd,
            stderr_path=stderr_path,
            describe=launch.display,
            stdio=stdio,
        )
    except OSError as exc:
        raise ServerStartError(
            f'The server "{name}" could not be started: {exc.strerror or exc}.\n  Command: {launch.display}\n'
            "  Tip: check the `command` in your configuration (is the program installed and on PATH?)."
        ) from exc


def _pipes_of(process: ChildProcess) -> tuple[int, int]:
    """Our ends of its stdin/stdout as raw fds (the Popen file objects let go of them)."""
    stdin, stdout = process.popen.stdin, process.popen.stdout
    assert stdin is not None and stdout is not None
    fds = (os.dup(stdin.fileno()), os.dup(stdout.fileno()))
    stdin.close()
    stdout.close()
    return fds


# ---------------------------------------------------------------------------------------------
# pre-started stdio processes (`prestart = N`, and `prestart`)

_Warm = tuple[ChildProcess, tuple[int, int], Path]
#: a launch as its processes started ahead are kept by: name, argv, env, cwd
_WarmKey = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], str]
_WARM: dict[_WarmKey, list[_Warm]] = {}
_WARM_LOCK = threading.Lock()


def _stdio_process(
    name: str, cfg: AppServer | CommandServer, config: Config, launch: _Launch, stderr_path: Path, logdir: Path
) -> tuple[ServerProcess, tuple[int, int], Path]:
    """One started ahead for the same launch (`prestart`, or `prestart = N` while an earlier
    scenario ran), else a cold-spawned stdio process."""
    key = _warm_key(name, launch)
    ready = _take_warm(key)
    if ready is None:
        process = _spawn(name, launch, stderr_path, stdio=True)
        ready = (process, _pipes_of(process), stderr_path)
    depth = int(config.setting(name, "prestart") or 0)
    if _startable_ahead(cfg, "stdio") and depth > 0 and config.setting(name, "scope") == "scenario":
        # A command server (any executable) cannot be forked from a zygote; instead the next ones
        # are started while the current scenario runs, so their start-up overlaps the run.
        with _WARM_LOCK:
            queue = _WARM.setdefault(key, [])
        while len(queue) < depth:
            queue.append(_start_ahead(name, launch, logdir))
    return ready


def _take_warm(key: _WarmKey) -> _Warm | None:
    """The oldest process started ahead for `key` that still runs (the others are ended), or None."""
    with _WARM_LOCK:
        queue = _WARM.get(key, [])
    while queue:
        candidate = queue.pop(0)
        if candidate[0].returncode is None:
            return candidate
        _discard(candidate)
    return None


def prestart(
    name: str, cfg: ServerConfig, config: Config, transport: str, *, interpolate: Interpolate, logdir: Path
) -> None:
    """Start one process of server `name` now, for the next `start_server` of the same launch to
    take (`discard_prestarted` ends it if none does). Why: a one-shot command (`mcp-bdd call`,
    `list`, `probe`) that started its server only once the MCP SDK was imported paid both starts
    one after the other (0.55 s + 0.8 s for a Python server); started first, the server boots
    while the command imports. Only what a later start would start the same way: a command
    server over stdio whose start does not depend on the scenario; anything else starts as usual."""
    if not _startable_ahead(cfg, transport):
        return
    launch = _resolve(name, cfg, config, transport, 0, _env(cfg, 0, interpolate), interpolate)
    logdir.mkdir(parents=True, exist_ok=True)
    warm = _start_ahead(name, launch, logdir)
    with _WARM_LOCK:
        _WARM.setdefault(_warm_key(name, launch), []).append(warm)


def _startable_ahead(cfg: ServerConfig, transport: str) -> TypeGuard[CommandServer]:
    """Whether a start of `cfg` over `transport` can be made before its scenario asks for it."""
    return transport == "stdio" and isinstance(cfg, CommandServer) and not _varies_per_start(cfg)


def _warm_key(name: str, launch: _Launch) -> _WarmKey:
    return (name, tuple(launch.argv), tuple(sorted(launch.env.items())), launch.cwd)


def _start_ahead(name: str, launch: _Launch, logdir: Path) -> _Warm:
    path = logdir / f"{name}-stdio-{time.monotonic_ns()}.stderr.log"
    process = _spawn(name, launch, path, stdio=True)
    return process, _pipes_of(process), path


def _discard(warm: _Warm) -> None:
    process, (stdin_fd, stdout_fd), _ = warm
    process.stop(close_stdin=lambda: os.close(stdin_fd))
    os.close(stdout_fd)


def discard_prestarted() -> None:
    """End every pre-started server (end of the run)."""
    with _WARM_LOCK:
        queues = list(_WARM.values())
        _WARM.clear()
    stop_together([functools.partial(_discard, warm) for queue in queues for warm in queue])


on_reap(discard_prestarted)


def _varies_per_start(cfg: CommandServer) -> bool:
    """Whether a start depends on the scenario (fakes, variables, ${port}): then nothing is pre-started."""
    values = [*cfg.command, *cfg.env.values(), cfg.cwd or ""]
    return any("${" in v.replace("${env.", "") for v in values)


# ---------------------------------------------------------------------------------------------


def _how_to_add(cfg: ServerConfig, transport: str) -> str:
    if isinstance(cfg, CommandServer) and transport in _HTTP:
        key = "http" if transport == "streamable-http" else "sse"
        return (
            f"Add [servers.<name>.{key}] with `command` and `url` (use ${{port}}) to say how to start it over "
            f"{transport}."
        )
    if transport == "in-memory":
        return "Only `app` servers (Python server objects) run in-memory."
    if isinstance(cfg, UrlServer):
        return "A `url` server is reached over HTTP: its URL decides streamable HTTP or SSE (a path ending /sse)."
    return ""


def _url_port(name: str, url: str) -> int:
    try:
        parts = urlsplit(url)
        return parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ServerStartError(
            f'The server "{name}" has no usable port in its url {url}: {exc}.\n'
            '  Tip: write it as url = "http://127.0.0.1:${port}/mcp" (mcp-bdd picks the port) or a fixed number.'
        ) from exc


#: a server command that exited with code 0 before it served: it returned as if done, as one that
#: starts the server in the background does (over stdio too: what it leaves behind dies with it)
_BACKGROUND_TIP = (
    "it exited with code 0, as a command that starts the server in the background and returns "
    "does (`docker run -d`, `&`, `nohup`, a daemonizing flag). mcp-bdd owns the process it starts and "
    "stops it after the scenario, with all it started: run the server in the foreground (a wrapper "
    "script should `exec` it). For a server that runs on its own, configure its `url` only (mcp-bdd "
    "then connects and never starts it)."
)
#: the same over stdio, where it may also be an entry point that never serves, and no `url` helps
_STDIO_EXIT_0_TIP = (
    "it exited with code 0 before it answered: it never started serving (an entry point that does not "
    "call the server's run()), or it is a wrapper that starts the server in the background and returns "
    "(`sh -c 'server &'`, `nohup`, a daemonizing flag), whose server mcp-bdd stops with it. Run the "
    "server in the foreground (a wrapper script should `exec` it); check its stderr above."
)


def exit_0_tip(transport: str) -> str:
    """What to do about a server command that exited with code 0 before it served over `transport`."""
    return _STDIO_EXIT_0_TIP if transport == "stdio" else _BACKGROUND_TIP


def _exited_tip(code: int | None) -> str:
    if code == 0:  # it returned as if done: a command that starts the server in the background
        return f"\n  Tip: {_BACKGROUND_TIP}"
    return "\n  Tip: read its stderr above; run the command by hand to see it fail."


def _wait_for_port(server: HttpServer, port: int, timeout: float) -> str | None:
    """Until the server listens on `port` (None), or a stranger does (its description; the server
    is stopped, to be tried on another port: `_listeners` says who counts as a stranger), or the
    server dies or `timeout` passes (ServerStartError, the server stopped)."""
    assert server.process is not None
    found = server.process.wait_listening(port, time.monotonic() + timeout)
    if found.state == "listens":
        return None
    if found.state == "late":
        elsewhere = listening_instead(server.process.server_pid)
        said = server.describe_death()  # before the stop: it ran; an exit code now would be our SIGTERM
        server.stop()
        raise ServerStartError(
            f'The server "{server.name}" did not accept connections on port {port} within '
            f"startup_timeout = {timeout:g} s.\n" + said + _not_on_the_port_tip(port, elsewhere)
        )
    server.stop()
    if found.holder is not None:
        return found.holder  # it could not bind, or answered beside a stranger: someone else had the port
    raise ServerStartError(
        f'The server "{server.name}" exited before it accepted connections on port {port}.\n'
        + server.describe_death()
        + _exited_tip(server.process.returncode)
    )


_SLOW = "raise `startup_timeout` if it is slow to start"


def _not_on_the_port_tip(port: int, elsewhere: list[str]) -> str:
    """What to do about a server that never answered on `port`, by where it listens now."""
    reached = {f"127.0.0.1:{port}", f"0.0.0.0:{port}", f"[::]:{port}", f"[::ffff:127.0.0.1]:{port}"}
    if not elsewhere or reached & set(elsewhere):  # nowhere yet, or on the port now: it was late
        return f"\n  Tip: {_SLOW}, or check that it listens on the ${{port}} it is given."
    said = f"\n  It listens on {', '.join(elsewhere)}, not on 127.0.0.1:{port}."
    if any(address.endswith(f":{port}") for address in elsewhere):  # the port, on an address not reached
        return said + f"\n  Tip: bind 127.0.0.1 (or 0.0.0.0), not only another address; or {_SLOW}."
    return said + (
        "\n  Tip: if it chose its own port, pass it the ${port} mcp-bdd gives, in its command "
        f'(e.g. "--port", "${{port}}") or its env (PORT = "${{port}}"); if it is still starting, {_SLOW}.'
    )
