"""A pre-imported Python process that forks one fresh server process per scenario.

Why: a Python stdio server costs ~1.5 s to start here, nearly all of it `import mcp` and the
app's own imports. Per-scenario isolation at that price makes a 100-scenario stdio suite take
minutes. The zygote imports once; each scenario gets a *forked* child — a real separate
process with fresh state, speaking real JSON-RPC bytes over real pipes (stdio) or a real port
(HTTP/SSE) — for a few milliseconds. The factory runs in the child, after the scenario's
environment (fakes, ${port}) is applied, exactly as in a cold start.

The zygote imports the app with behave's environment, not the server's `env` (which may differ
per scenario): a module that needs a setting from it at import (`os.environ["API_KEY"]`, a
`sys.exit` when it is missing) fails here. That is no failure of the app: the imports done before
it are paid for, and each child imports the project's modules again with its own environment,
where a module that cannot be imported fails that server's start as a cold start would. What
that import takes that only one process can hold (a listening socket on a fixed port, a file
lock) the zygote lets go of (`_let_go`): each child takes its own, one server at a time.

Protocol (over a socketpair; requests are 4-byte length-prefixed JSON, fds travel with
SCM_RIGHTS; answers are JSON lines):
    → {"op": "spawn", "env": {...}, "transport": "stdio", "port": 0} + fds [stdin, stdout, stderr]
    ← {"pid": 1234}            or {"error": "..."}
    → {"op": "status", "pid": 1234}
    ← {"returncode": 0|null}
EOF is the end: the zygote kills its children and exits, so nothing outlives the run.

Orphans: every forked server is a child subreaper (it keeps what its helpers orphan, and its
stop kills them). A server that *crashes* first leaves them to the nearest subreaper above it —
the zygote, which is one too: a daemon that left its session and cleared its environment (no
group, session or mark finds it) would otherwise go to init and outlive the run. The zygote
forks only servers, so any other child of its is such an orphan: it is killed, with what it
started, as soon as a server's exit is reaped (by then the kernel has moved its orphans here).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import stat
import sys
from collections.abc import Callable, Iterator
from types import FrameType, ModuleType
from typing import TypedDict

from mcp_bdd._process_tree import adopt_orphans, children, kill_orphans, server_lifelines, signal_group

__all__ = ["run_zygote"]


def run_zygote(spec: str, control_fd: int) -> int:
    _prepare(spec)
    adopt_orphans()  # see the module doc: what a crashed server orphans comes here, not to init
    zygote = _Zygote(spec, socket.socket(fileno=control_fd), own=set(children(os.getpid())))
    try:
        zygote.serve()
    finally:
        zygote.close()
    return 0


def _prepare(spec: str) -> None:
    """Import everything a child will need before forking (that is the whole point), then let go
    of what the app's import holds alone (a socket, a lock file)."""
    sys.path.insert(0, os.getcwd())
    import anyio  # noqa: F401
    from mcp.server import Server  # noqa: F401
    from mcp.server.mcpserver import MCPServer  # noqa: F401

    from mcp_bdd.apps import load_app, warm_up
    from mcp_bdd.errors import raised

    opened = _open_fds()
    try:
        with _project_exit_handlers_dropped():
            load_app(spec, os.getcwd())
    except (Exception, SystemExit) as exc:  # see the module doc: each server imports it again, with its env
        print(f"mcp_bdd zygote: importing {spec} here failed: {raised(exc)}", file=sys.stderr, flush=True)
    _let_go({fd: what for fd, what in _open_fds().items() if opened.get(fd) != what})
    with contextlib.suppress(Exception):  # only an optimisation: a child imports what is missing
        warm_up()


class _Request(TypedDict, total=False):
    """A request over the control socket (module doc): a spawn, or a status."""

    op: str  # "spawn" | "status"
    env: dict[str, str]  # a spawn's: the server's own variables
    transport: str
    port: int
    pid: int  # a status's: the server asked about


class _Zygote:
    """The control loop: a frame (4-byte length, JSON) per request, with the fds it passes; a fork
    per `start`, the exit code of one for `status`; the orphans of a server that ended, killed."""

    def __init__(self, spec: str, sock: socket.socket, own: set[int]) -> None:
        self.spec = spec
        self.sock = sock
        self.sock.settimeout(0.2)
        self.own = own  # what the app's imports started (a resource tracker): not orphans
        self.children: dict[int, int | None] = {}  # forked server -> its exit code once reaped
        self.buffer = b""
        self.pending_fds: list[int] = []

    def live(self) -> set[int]:
        return self.own | {pid for pid, code in self.children.items() if code is None}

    def reap(self) -> None:
        ended = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            self.own.discard(pid)  # its pid may be reused, by an orphan too
            if self.children.get(pid, 0) is None:  # a live server ended; an orphan's status is nobody's
                self.children[pid] = os.waitstatus_to_exitcode(status)
                ended = True
        if ended:  # what it orphaned came up here as it ended (module doc)
            kill_orphans(self.live(), timeout=ORPHANS_DEADLINE)

    def reply(self, data: dict[str, object]) -> None:
        self.sock.sendall(json.dumps(data).encode() + b"\n")

    def serve(self) -> None:
        """Answer requests until the control socket closes (EOF: the run is over)."""
        while True:
            self.reap()
            frame = self._next_frame()
            if frame is None:
                continue
            if isinstance(frame, _Closed):
                return
            request, fds = frame
            if request["op"] == "status":
                self.reap()
                self.reply({"returncode": self.children.get(request["pid"])})
            else:
                self._start(request, fds)

    def _next_frame(self) -> tuple[_Request, list[int]] | _Closed | None:
        """(request, fds) once a whole frame is in; None while one is still coming; `_CLOSED` at EOF."""
        if len(self.buffer) < 4 or len(self.buffer) < 4 + int.from_bytes(self.buffer[:4], "big"):
            try:
                msg, fds, _flags, _addr = socket.recv_fds(self.sock, 1 << 20, 3)
            except TimeoutError:
                return None
            if not msg:
                return _CLOSED
            self.buffer += msg
            self.pending_fds += fds
            return None
        size = int.from_bytes(self.buffer[:4], "big")
        request: _Request = json.loads(self.buffer[4 : 4 + size])
        self.buffer = self.buffer[4 + size :]
        fds, self.pending_fds = self.pending_fds, []
        return request, fds

    def _start(self, request: _Request, fds: list[int]) -> None:
        zygote = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: becomes the server
            _child(self.spec, request, fds, self.sock, zygote)
        for fd in fds:
            os.close(fd)
        self.children[pid] = None
        self.reply({"pid": pid})

    def close(self) -> None:
        """Kill every server still running (and what they orphan as they die), then the orphans left."""
        running = [pid for pid, code in self.children.items() if code is None]
        for pid in running:
            signal_group(pid, signal.SIGKILL)
        for pid in running:  # killed, it ends at once; its orphans come here as it does
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        kill_orphans(self.own, timeout=ORPHANS_DEADLINE)
        self.reap()


class _Closed:
    """What `_Zygote._next_frame` returns when the control socket has closed."""


_CLOSED = _Closed()
#: the longest the zygote spends killing and reaping orphans (a process stuck in the kernel)
ORPHANS_DEADLINE = 5.0


def _open_fds() -> dict[int, tuple[int, int, int]]:
    """Each open fd and what it is open on (device, inode, mode): a number the import closed and
    reused is something new."""
    try:
        listed = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: nothing is let go of
        return {}
    fds = {}
    for fd in listed:
        with contextlib.suppress(OSError):  # the listing's own, closed by now
            st = os.fstat(fd)
            fds[fd] = (st.st_dev, st.st_ino, st.st_mode)
    return fds


def _let_go(fds: dict[int, tuple[int, int, int]]) -> None:
    """Let go of what the app's import took that only one process at a time can hold: a socket
    bound to a port (a fixed one: a listener, a metrics endpoint, a UDP receiver) and a lock file.
    Why: each forked server imports the project's modules again and takes its own, as a cold start
    does; held here for the whole run, every one of them failed ("Address already in use"), or
    waited for the lock until its start timed out.

    The fd is not closed but replaced (the old object would close whatever reused the number): a
    socket's by one of its kind bound to a port no one knows (listening, if it listened: a thread
    the import started to serve it then waits there instead of spinning on an fd that is always
    ready, once the old socket's shutdown has woken it); a lock file's by /dev/null. Only a lock
    on a whole file is a lock file's: a database's byte-range locks (SQLite's) are its own
    bookkeeping, which a forked connection shares, and stay."""
    locked = _locked_files()
    for fd, (_, inode, mode) in sorted(fds.items()):  # as `_open_fds` saw them
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(mode):
                what = _let_go_of_socket(fd)
                if what is None:
                    continue
            elif inode in locked:
                with open(os.devnull, "r+b") as null:
                    os.dup2(null.fileno(), fd)
                what = "a file lock"
            else:
                continue
            print(f"mcp_bdd zygote: let go of {what} its import of the app took", file=sys.stderr, flush=True)


def _let_go_of_socket(fd: int) -> str | None:
    """Swap an internet socket bound to a port and connected to no peer for a stand-in; what it was,
    or None (a client connection, a Unix socket, an unbound one: left alone)."""
    with socket.socket(fileno=os.dup(fd)) as held:
        if held.family not in (socket.AF_INET, socket.AF_INET6) or held.getsockname()[1] == 0:
            return None
        try:
            held.getpeername()
            return None  # a connection to someone (a database): nothing another process wants
        except OSError:
            pass
        listening = bool(held.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
        with socket.socket(held.family, held.type) as stand_in:
            stand_in.bind(("::1" if held.family == socket.AF_INET6 else "127.0.0.1", 0))
            if listening:
                stand_in.listen()
            os.dup2(stand_in.fileno(), fd)
        if listening:
            held.shutdown(socket.SHUT_RDWR)  # wakes what waits on it, which then lets go of it
        return "a listening socket" if listening else "a socket bound to a port"


def _locked_files() -> set[int]:
    """The inode of each file this process holds a whole-file lock on (flock; POSIX or OFD from 0
    to EOF: `lockf`, `fcntl.flock`). Not the device: an overlay file system's stat names another
    than the lock's."""
    files: set[int] = set()
    try:
        with open("/proc/locks") as listed:
            lines = listed.read().splitlines()
    except OSError:
        return files
    for line in lines:  # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2155822 0 EOF"; a waiter's has "->"
        fields = line.split()
        if len(fields) < 8 or fields[1] == "->" or fields[4] not in (str(os.getpid()), "-1"):
            continue
        if fields[1] != "FLOCK" and (fields[6], fields[7]) != ("0", "EOF"):
            continue  # a byte range: a database's own locking, not a lock file
        with contextlib.suppress(ValueError):
            files.add(int(fields[5].rsplit(":", 1)[1]))
    return files


def _child(spec: str, request: _Request, fds: list[int], sock: socket.socket, zygote: int) -> None:
    code = 1
    try:
        _forget_exit_handlers()
        os.setsid()  # its own process group, killed as a unit like a cold-started server
        server_lifelines()  # it dies with the zygote (even SIGKILL); its helpers' daemons stay its own
        if os.getppid() != zygote:
            return  # the zygote died before the lifeline was set: no one would ever end this server
        sock.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.environ.update(request.get("env") or {})
        _forget_project_modules()
        from mcp_bdd.apps import load_app, serve_object

        serve_object(load_app(spec, os.getcwd()), request["transport"], "127.0.0.1", int(request.get("port") or 0))
        code = 0
    except BaseException as exc:
        with contextlib.suppress(Exception):
            import traceback

            from mcp_bdd.errors import raised

            # the whole traceback, then one line naming the real cause (a failure quotes the tail)
            traceback.print_exception(exc, file=sys.stderr)
            print(f"mcp_bdd zygote child: {raised(exc)}", file=sys.stderr, flush=True)
    finally:
        _run_exit_handlers()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(code)


@contextlib.contextmanager
def _project_exit_handlers_dropped() -> Iterator[None]:
    """While the zygote imports the app: an `atexit` handler the project's own code registers is
    dropped. Why: that import is the zygote's, not a server's; each forked server imports the
    project's modules again and registers its own, which it runs as it ends (`_run_exit_handlers`),
    as a cold-started server does. Kept, the app's handler ran once, in the zygote, at the end of
    the run and without any server's env (over a server's saved data), and no server ran its own:
    an app that saves its data (or its coverage) at exit lost it. A library's own handlers stay
    the zygote's, run when it ends."""
    register = atexit.register

    def project_aware(func: Callable[..., object], *args: object, **kwargs: object) -> Callable[..., object]:
        if _registered_by_project_code(sys._getframe(1)):
            return func  # what atexit.register returns, so that it still works as a decorator
        return register(func, *args, **kwargs)

    atexit.register = project_aware  # type: ignore[assignment]
    try:
        yield
    finally:
        atexit.register = register


def _registered_by_project_code(caller: FrameType) -> bool:
    """Whether the code that called atexit.register is the project's: who registers a handler
    says whose it is (`atexit.register(STATE.close)` in an app module registers a library's
    method for the app's own state), not where the handler's function is defined."""
    name = caller.f_globals.get("__name__", "")
    module = sys.modules.get(name)
    return module is not None and _is_project_module(name, module)


def _forget_exit_handlers() -> None:
    """In a forked server, first: the zygote's `atexit` handlers are the zygote's (a library's
    temp dir, the workers of a pool made at import): run by each server as it ended, the first
    one removed what the others still used. The server runs only the ones registered in itself
    (its re-imported modules', what its libraries register as it runs)."""
    clear = getattr(atexit, "_clear", None)  # CPython's
    if clear is not None:
        clear()


def _run_exit_handlers() -> None:
    """What a cold-started server's interpreter runs as it ends, before `os._exit` skips it: the
    `atexit` handlers registered in it (`_forget_exit_handlers`). Never raises; a handler that
    hangs is the server's stop's to end, as it is for a cold-started one."""
    run = getattr(atexit, "_run_exitfuncs", None)  # CPython's; elsewhere a forked server runs none
    if run is not None:
        with contextlib.suppress(BaseException):
            run()


def _forget_project_modules() -> None:
    """Re-import the project's own modules in the child, after its environment is applied.

    The zygote imported the app to pay for `mcp` and the dependencies once; but a module that
    reads configuration at import time must see this scenario's environment, exactly as in a
    cold start. Third-party packages (site-packages) and mcp_bdd itself stay imported.
    """
    for name, module in list(sys.modules.items()):
        if _is_project_module(name, module):
            del sys.modules[name]


def _is_project_module(name: str, module: ModuleType) -> bool:
    """One of the project's own modules (under the working directory), not a package's nor mcp_bdd."""
    path = getattr(module, "__file__", None) or ""
    return path.startswith(os.getcwd() + os.sep) and "site-packages" not in path and not name.startswith("mcp_bdd")
