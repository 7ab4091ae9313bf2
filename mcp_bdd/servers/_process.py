"""Every OS process mcp-bdd starts: one owner each, one way to start, one way to stop.

Why one teardown path: 0.1 had four stop paths, and the one that ran decided whether a server's
own helper (`sh -c`, `npx`, `uv run`) survived the run. Now every server process, cold-spawned
or forked by the zygote, stops the same way (`ServerProcess.stop`):

    close its stdin (EOF: the MCP spec's polite shutdown) → wait `eof_grace`
    → SIGTERM to its process group → wait `term_grace` → SIGKILL to the group → reap
    → SIGKILL every process still in its *session* (grandchildren included), whether or not
      the main process had already exited on its own
    → SIGKILL every process that carries its mark (SERVER_MARK in the environment, inherited by
      all it starts): a helper that left the session too (`setsid`, Node's `detached: true`, a
      daemon) survived a green run before
    → SIGKILL every descendant it had when its stop began: above every server is a child
      subreaper (PR_SET_CHILD_SUBREAPER: its keeper, or the zygote and the forked server), so a
      daemon that left its session *and* cleared its environment is still a descendant of the
      process we own, not init's child.

Every process is started in a session of its own (so its group and session id equal its pid)
with PR_SET_PDEATHSIG = SIGKILL (it dies with the thread that spawned it, even on `kill -9` of
the test process) — or, for a spawned server, under its keeper (`_keeper.py`: the server's
parent and a subreaper, so a daemon survives neither a server that died first nor a killed
run; PR_SET_PDEATHSIG = SIGTERM, on which it kills all below it; its exit is the server's),
and is registered with the run's lifeline (`_lifeline.py`), which kills the whole session of
every registered server when the test process dies. Waiting uses pidfds
(woken by the kernel when the process exits), not sleeps.

How a tree is found, signalled, waited for and killed is `mcp_bdd._process_tree`'s, shared with
the keeper, the lifeline and the zygote; what a stop does with it, and in what order, is here.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

import psutil

from mcp_bdd._net import accepts
from mcp_bdd._process_tree import (
    descendants,
    keeper_lifelines,
    kill_all,
    kill_marked,
    kill_sessions,
    parent_of,
    server_lifelines,
    signal_group,
    signal_pid,
    wait_exit,
)
from mcp_bdd.secrets import remember_argv
from mcp_bdd.servers._listeners import SPAWNED_BY, listens, spawned_by, stranger_on

__all__ = [
    "SERVER_MARK",
    "ChildProcess",
    "Listening",
    "ServerProcess",
    "lifeline",
    "new_mark",
    "reap_all",
    "spawn",
    "stop_together",
]

#: the environment variable that marks one server's processes, its helpers' included
SERVER_MARK = "MCP_BDD_SERVER"
_MARKS = itertools.count(1)


def new_mark() -> str:
    """A SERVER_MARK value no other server of any run carries: this run's and a count."""
    return f"{spawned_by()}-{next(_MARKS)}"


EOF_GRACE = 1.0
TERM_GRACE = 2.0


def _signal_server(pid: int, sig: signal.Signals) -> None:
    """`sig` to the server's group and to the server (it may have left its group)."""
    signal_group(pid, sig)
    signal_pid(pid, sig)


class Listening(NamedTuple):
    """What `ServerProcess.wait_listening` found: the process listens, a stranger does (`holder`
    describes it), the process exited (`holder`: a stranger on the port it may have failed to
    bind), or the time ran out."""

    state: Literal["listens", "stranger", "exited", "late"]
    holder: str | None = None


class ServerProcess:
    """One OS process we own: its pid is its process group and session id."""

    #: how long SIGTERM may take before SIGKILL (a server flushing its own data on exit needs time)
    term_grace = TERM_GRACE

    def __init__(self, pid: int, describe: str, mark: str | None = None) -> None:
        self.pid = pid
        self.server_pid = pid  # the server's own pid, which users see: its keeper's child, under one
        self.describe = describe
        self.mark = mark  # its SERVER_MARK value, when it (or its zygote) was told one
        self.stopped = False
        self._noted: list[psutil.Process] = []  # its descendants, noted before its stdin closed
        self._stopping = threading.RLock()  # a second stop waits for the first (reap_all at exit, a close)
        #: set by `stop` when it had to kill it: what it ignored, how long that took
        self.slow_stop: str | None = None
        lifeline().watch(pid)
        _register(self)

    @property
    def returncode(self) -> int | None:
        raise NotImplementedError

    def exited(self) -> bool:
        """Whether the server itself has ended (nothing is reaped). Its keeper, whose exit code
        `returncode` mirrors, ends a few milliseconds later: it kills the server's orphans first."""
        return wait_exit(self.pid, 0)

    def wait_listening(self, port: int, deadline: float) -> Listening:
        """Wait until it (or a process of its session) accepts connections on 127.0.0.1:`port`,
        another process answers there instead (`_listeners` says who counts as a stranger), it
        exits, or `deadline` (a `time.monotonic()` value) passes. One probe loop for servers and
        fakes' processes alike; each caller says what the outcome means in its own words."""
        while True:
            if self.exited():  # one that could not bind: a stranger may hold the port
                return Listening("exited", stranger_on(port, self.pid) if accepts(port) else None)
            if accepts(port):
                holder = None if listens(self.server_pid, port) else stranger_on(port, self.pid)
                if holder is not None:
                    return Listening("stranger", holder)
                if not self.exited():  # one that answered as it went to the background is gone
                    return Listening("listens")
                continue
            if time.monotonic() >= deadline:
                return Listening("late")
            wait_exit(self.pid, 0.02)  # wakes at once if it ends, else a short pause between probes

    def _reap(self, timeout: float) -> None:
        """Collect the exit status (a child of ours), or leave it to its parent (the zygote)."""

    def stop(self, close_stdin: Callable[[], None] | None = None) -> None:
        """The one teardown path (see the module doc). Idempotent, also across threads (a second
        caller returns once the first has finished); raises only what interrupted it (Ctrl-C),
        once the process is killed."""
        with self._stopping:
            if self.stopped:
                return
            self.stopped = True
            self._stop(close_stdin)

    def note_descendants(self) -> None:
        """Remember what it started, before it is told to end (its stdin closes as the session
        ends). Why: a server that exits at once on EOF is gone when its stop begins, and a daemon it
        had adopted as a subreaper goes up to init with it — a green run under load left one."""
        if not self.stopped:
            self._noted += descendants(self.pid)

    def _stop(self, close_stdin: Callable[[], None] | None) -> None:
        found = self._noted + descendants(self.pid)  # while it lives: its orphans are its own children
        try:
            try:
                found += self._ask_to_end(close_stdin)
            except BaseException:
                # Ctrl-C (or any error) may cut the grace periods short, never the kill: else the
                # server, no longer registered anywhere, would be left to die with the test process
                _signal_server(self.pid, signal.SIGKILL)
                raise
            finally:
                self._reap(TERM_GRACE)
                # the group outlives its leader: its helpers. Not the leader's pid itself: reaped,
                # it may be reused (a group id is not, while the group has a member)
                signal_group(self.pid, signal.SIGKILL)
                kill_sessions({self.pid})
                if self.mark is not None:
                    kill_marked(f"{SERVER_MARK}={self.mark}".encode())
                kill_all(found)
        finally:
            lifeline().forget(self.pid)
            _unregister(self)

    def _ask_to_end(self, close_stdin: Callable[[], None] | None) -> list[psutil.Process]:
        """EOF, then SIGTERM, then SIGKILL, each after the last one's grace; returns what it started
        meanwhile."""
        began = time.monotonic()
        if close_stdin is not None:
            close_stdin()
            if self.returncode is None:
                wait_exit(self.pid, EOF_GRACE)
        if self.returncode is not None or wait_exit(self.pid, 0):
            return []
        found = descendants(self.pid)  # what it started on EOF, too
        _signal_server(self.pid, signal.SIGTERM)
        if not wait_exit(self.pid, self.term_grace):
            _signal_server(self.pid, signal.SIGKILL)
            wait_exit(self.pid, TERM_GRACE)
            # it ignored all a server is asked to stop by: said (a merely slow exit is not)
            eof = f"within {EOF_GRACE:g} s of its stdin closing nor " if close_stdin is not None else ""
            self.slow_stop = (
                f"did not exit {eof}within {self.term_grace:g} s of SIGTERM: it was killed (SIGKILL), "
                f"{time.monotonic() - began:.1f} s after its stop began"
            )
        return found


class ChildProcess(ServerProcess):
    """A process we spawned ourselves (`spawn`): the server, or its keeper (`_keeper.py`)."""

    def __init__(self, popen: subprocess.Popen[bytes], describe: str, mark: str | None = None) -> None:
        self.popen = popen
        self._server = -1  # a pidfd of the server under its keeper
        self._server_gone = False
        self._watch = threading.Lock()
        super().__init__(popen.pid, describe, mark)

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def watch_server(self, pid: int) -> None:
        """The server's own pid, under its keeper: `exited` then tells when it ended."""
        self.server_pid = pid
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            self._server_gone = True  # it ended (and its keeper reaped it) before we looked
            return
        except (OSError, AttributeError):
            return
        if parent_of(pid) in (0, self.pid):  # 0: /proc unreadable, the pidfd alone then tells
            self._server = fd
        else:  # reaped before we looked, and the pid already someone else's
            os.close(fd)
            self._server_gone = True

    def exited(self) -> bool:
        with self._watch:  # the stop, in another thread, closes the pidfd
            if self._server_gone:
                return True
            if self._server < 0:
                return super().exited()
            poll = select.poll()  # not select: an fd past 1024 in a long run
            poll.register(self._server, select.POLLIN)
            return bool(poll.poll(0))

    def _reap(self, timeout: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=timeout)
        with self._watch:
            fd, self._server = self._server, -1
            if fd >= 0:
                os.close(fd)
                self._server_gone = True  # what it says from now on: its keeper ends only after it


def spawn(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str,
    stderr_path: Path,
    describe: str,
    stdio: bool,
    pass_fds: tuple[int, ...] = (),
    keep: bool = True,
) -> ChildProcess:
    """Start a server process (the only place mcp-bdd calls Popen for one). Raises OSError.

    With `keep` (Linux), under a keeper (`_keeper.py`) that stays its parent and kills what it
    orphans; the zygote, a subreaper that does so itself, is started without one.
    Called from the thread that runs the scenarios (PR_SET_PDEATHSIG follows the spawning
    thread, which must live as long as the process should).
    """
    remember_argv(argv, cwd)  # `--password pw`: masked wherever its command line, or its own echo, is quoted
    mark = new_mark()
    program, report = argv[0], -1
    if keep and sys.platform == "linux":
        report, theirs = os.pipe()
        argv = [sys.executable, "-I", "-S", str(_KEEPER), str(os.getpid()), str(theirs), *argv]
        pass_fds = (*pass_fds, theirs)
    try:
        with stderr_path.open("wb") as err:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
                stdout=subprocess.PIPE if stdio else err,
                stderr=err,
                cwd=cwd,
                # SPAWNED_BY tells another run's server from a stranger; SERVER_MARK finds its helpers
                env={**env, SPAWNED_BY: spawned_by(), SERVER_MARK: mark},
                pass_fds=pass_fds,
                start_new_session=True,
                preexec_fn=keeper_lifelines if report >= 0 else server_lifelines,
            )
    except BaseException:
        if report >= 0:
            os.close(report)
        raise
    finally:
        if report >= 0:
            os.close(theirs)
    process = ChildProcess(popen, describe, mark)
    if report >= 0:
        _executed(process, report, program)
    return process


#: run as a script, like the lifeline: it must start in milliseconds (see its module doc)
_KEEPER = Path(__file__).with_name("_keeper.py")
#: how long the keeper may take to start and exec the server (a Python start-up, on a loaded machine)
KEEPER_DEADLINE = 60.0


def _executed(process: ChildProcess, report: int, program: str) -> None:
    """Wait until the keeper has executed the server (EOF on `report`) and learn the server's pid;
    raise the OSError Popen would have raised when the program cannot be run."""
    try:
        said = b""
        deadline = time.monotonic() + KEEPER_DEADLINE
        while ready := select.select([report], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunk = os.read(ready[0], 4096)
            if not chunk:
                break
            said += chunk
        else:
            said += f"!{errno.ETIMEDOUT} no process started within {KEEPER_DEADLINE:g} s\n".encode()
    finally:
        os.close(report)
    lines = said.decode(errors="replace").splitlines()
    failed = [line[1:] for line in lines if line.startswith("!")]
    pid = next((int(line) for line in lines if line.isdigit()), 0)
    if not failed and not pid:  # killed while it started, or the test process was dying
        failed = [f"{errno.ECHILD} the server's keeper ended before it started the server"]
    if failed:
        process.stop()
        for pipe in (process.popen.stdin, process.popen.stdout):
            if pipe is not None:
                pipe.close()
        code, _, message = failed[0].partition(" ")
        raise OSError(int(code) if code.isdigit() else 0, message, program)
    process.watch_server(pid)


# ---------------------------------------------------------------------------------------------
# the lifeline


class _Lifeline:
    """Client side of `_lifeline.py`, started on first use; one per test process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._popen: subprocess.Popen[bytes] | None = None
        self._pid = 0

    def _send(self, line: str) -> None:
        with self._lock:
            if self._popen is None or self._pid != os.getpid():  # a forked child needs its own
                self._pid = os.getpid()
                self._popen = subprocess.Popen(
                    [sys.executable, "-I", str(Path(__file__).with_name("_lifeline.py"))],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    close_fds=True,
                )
                # first, the mark every process this one spawns carries
                line = f"m{SPAWNED_BY}={spawned_by()}\n{line}"
            assert self._popen.stdin is not None
            with contextlib.suppress(OSError, ValueError):
                self._popen.stdin.write(os.fsencode(line) + b"\n")
                self._popen.stdin.flush()

    def watch(self, sid: int) -> None:
        self._send(f"+{sid}")

    def sweep(self, directory: Path) -> None:
        """Remove `directory` (the run's temporary files) when the run ends, even by `kill -9`."""
        path = str(directory.resolve())  # absolute: the lifeline runs in another working directory
        if "\n" not in path:  # one path per line
            self._send(f"d{path}")

    def forget(self, sid: int) -> None:
        if self._popen is not None:
            self._send(f"-{sid}")

    def close(self) -> None:
        """End of the run: EOF, so the lifeline sweeps whatever is still registered, and exits."""
        with self._lock:
            popen, self._popen = self._popen, None
        if popen is None or self._pid != os.getpid():
            return
        with contextlib.suppress(Exception):
            assert popen.stdin is not None
            popen.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=10)


_LIFELINE = _Lifeline()


def lifeline() -> _Lifeline:
    return _LIFELINE


# ---------------------------------------------------------------------------------------------
# the registry of live processes (signals, atexit)

_LIVE: dict[int, ServerProcess] = {}
_LIVE_LOCK = threading.Lock()
_ON_REAP: list[Callable[[], object]] = []  # the zygote pool and the pre-started queue empty themselves


def _register(proc: ServerProcess) -> None:
    with _LIVE_LOCK:
        _LIVE[id(proc)] = proc


def _unregister(proc: ServerProcess) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(id(proc), None)


def on_reap(callback: Callable[[], object]) -> None:
    _ON_REAP.append(callback)


def reap_all() -> None:
    """Stop every server process still alive (end of run, SIGINT/SIGTERM, atexit), then the lifeline."""
    for callback in _ON_REAP:
        with contextlib.suppress(Exception):
            callback()
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    stop_together([proc.stop for proc in procs])
    _LIFELINE.close()


def stop_together(stops: list[Callable[[], None]]) -> None:
    """Run each stop in a thread of its own and wait for all. Why: a stop waits (up to the EOF
    and SIGTERM grace periods, 3 s, for a server that ignores both), and the end of a run stopped
    its pre-started spares and leftovers one after another: 3 s each. Stops only wait on pidfds
    and send signals, so they overlap whole; nothing is spawned from these threads (a child
    would die with its thread: PR_SET_PDEATHSIG)."""
    if len(stops) <= 1:
        for stop in stops:
            stop()
        return
    threads = []
    for stop in stops:
        thread = threading.Thread(target=stop, name="mcp-bdd-stop", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # at interpreter shutdown (an atexit close on 3.12): no new threads
            stop()
        else:
            threads.append(thread)
    for thread in threads:
        thread.join()


atexit.register(reap_all)
