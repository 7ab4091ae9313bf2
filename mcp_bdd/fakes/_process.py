"""Processes a fake starts (`FakeContext.start_process`): owned, watched and stopped as a server's are.

Why: a fake is often a process — a mock service binary, a broker, a stub written in Node.
Started by hand (`subprocess.Popen` in the fake's setup), it was the fake's alone to stop: a
cleanup that raised or never ran (the setup failed after the start) left it running, and a
`kill -9` of behave left it for good, because the run's lifeline knew only mcp-bdd's own
processes. Started through the fake's context, it is spawned exactly as a server is
(`servers.spawn`: a session of its own, under a keeper that kills what it orphans, registered
with the run's lifeline, marked in its environment) and stopped by the same one teardown path
(SIGTERM to its group → grace → SIGKILL → reap → what is left of its session, its mark and its
descendants) right after the fake's own cleanup, whatever that cleanup did.
"""

from __future__ import annotations

import functools
import os
import shlex
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_bdd._net import accepts
from mcp_bdd.errors import ServerStartError, UsageError, tail
from mcp_bdd.secrets import remember_mapping
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from mcp_bdd.servers import ChildProcess

__all__ = ["FakeProcess", "SlowStop", "start", "stop_all"]

#: how long `wait_for_port` waits when no time is given and no fake's limit runs (outside a setup)
DEFAULT_WAIT = 30.0
#: what `wait_for_port` leaves of the setup's limit, so the port's message is the one said
_MARGIN = 0.5


class SlowStop(Exception):
    """A fake's process ignored SIGTERM and was killed: said as a teardown problem (it slowed the scenario)."""


class FakeProcess:
    """A process started with `FakeContext.start_process`; mcp-bdd stops it when its fake ends.

    `pid` is the program's own pid; `log` the file its stdout and stderr go to, in the fake's
    directory (removed with the scenario's); `output()` its last lines, secrets masked."""

    def __init__(self, fake: str, argv: Sequence[str], process: ChildProcess, log: Path) -> None:
        self.fake = fake
        self.argv = list(argv)
        self.command = shlex.join(self.argv)
        self.log = log
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.server_pid

    @property
    def returncode(self) -> int | None:
        """None while it runs; then its exit code (negative: the signal that ended it)."""
        return self._process.returncode

    def output(self, lines: int = 20) -> str:
        """The last `lines` lines it wrote (stdout and stderr), secrets masked."""
        return tail(self.log, lines)

    def wait_for_port(self, port: int, timeout: float | None = None) -> None:
        """Return once something accepts connections on 127.0.0.1:`port`; raise ServerStartError,
        with the process's last output, if it exits first or `timeout` seconds pass (default: the
        fake's setup limit, less half a second, so this says why; else 30 s)."""
        limit = _wait_limit(timeout)
        deadline = time.monotonic() + limit
        while not accepts(port):
            if self.returncode is not None:
                raise ServerStartError(
                    f"{self._who()} exited with code {self.returncode} before it accepted connections on port {port}."
                    f"{self._said()}\n  Tip: run the command by hand to see it fail."
                )
            if time.monotonic() >= deadline:
                raise ServerStartError(
                    f"{self._who()} did not accept connections on 127.0.0.1:{port} within {limit:g} s.{self._said()}"
                    f"\n  Tip: check that it listens on 127.0.0.1 and on the port you passed it; if it is just "
                    "slow to start, give wait_for_port a longer timeout (and raise startup_timeout)."
                )
            _pause(self._process.pid)

    def stop(self) -> None:
        """Stop it now (it is stopped when its fake ends anyway); raises SlowStop if it had to be killed."""
        self._process.stop()
        if self._process.slow_stop is not None:
            raise SlowStop(f"{self._who()} {self._process.slow_stop}")

    def _who(self) -> str:
        return f'The process `{self.command}` (pid {self.pid}) of the fake "{self.fake}"'

    def _said(self) -> str:
        text = self.output()
        indented = "\n".join(f"    {line}" for line in text.splitlines())
        return f"\n  Its output (last lines):\n{indented}" if text else "\n  It wrote nothing."

    def __repr__(self) -> str:
        return f"<FakeProcess {self.command!r} pid={self.pid} returncode={self.returncode}>"


def start(
    fake: str,
    argv: Sequence[str],
    *,
    directory: Path,
    transcript: Transcript,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> FakeProcess:
    """Spawn `argv` for the fake `fake` as a server is spawned (see the module doc)."""
    if isinstance(argv, str | bytes) or not argv or not all(isinstance(arg, str) for arg in argv):
        raise UsageError(
            f'The fake "{fake}": start_process takes the command as a list of strings, e.g. '
            f'["redis-server", "--port", str(port)] (got {argv!r}).'
        )
    from mcp_bdd.servers import spawn  # late: importing the fakes must not import the servers (and mcp)

    own = {str(k): str(v) for k, v in (env or {}).items()}
    remember_mapping(own)  # a secret-named value given to the process is masked wherever it is quoted
    log = _log_path(directory, argv[0])
    try:
        process = spawn(
            list(argv),
            env={**os.environ, **own},
            cwd=str(cwd or directory),
            stderr_path=log,
            describe=shlex.join(argv),
            stdio=False,
        )
    except OSError as exc:
        raise ServerStartError(
            f'The fake "{fake}" could not start `{shlex.join(argv)}`: {exc.strerror or exc}.\n'
            "  Tip: is the program installed and on PATH (or give its full path)?"
        ) from None
    started = FakeProcess(fake, argv, process, log)
    transcript.record("fake", fake, "process started", {"command": started.command, "pid": started.pid})
    return started


def stop_all(processes: list[FakeProcess], transcript: Transcript) -> None:
    """Stop a fake's processes (together: each may wait out its grace period), newest first in the
    record; raise SlowStop naming those that had to be killed."""
    from mcp_bdd.servers import stop_together

    slow: list[str] = []
    lock = threading.Lock()

    def stop(process: FakeProcess) -> None:
        try:
            process.stop()
        except SlowStop as exc:
            with lock:
                slow.append(str(exc))

    stop_together([functools.partial(stop, process) for process in reversed(processes)])
    for process in reversed(processes):
        transcript.record(
            "fake", process.fake, "process stopped", {"pid": process.pid, "exit code": process.returncode}
        )
    processes.clear()
    if slow:
        raise SlowStop("; ".join(slow) + ". Tip: make it exit on SIGTERM, or it slows every scenario by seconds.")


def _log_path(directory: Path, program: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(program).name) or "process"
    path = directory / f"{stem}.log"
    n = 1
    while path.exists():  # a second process of the same program keeps its own log
        n += 1
        path = directory / f"{stem}-{n}.log"
    return path


def _wait_limit(timeout: float | None) -> float:
    if timeout is not None:
        return timeout
    left = _alarm_left()
    return max(0.1, left - _MARGIN) if left is not None else DEFAULT_WAIT


def _alarm_left() -> float | None:
    """Seconds before the fake's setup limit fires (fakes/_deadline: an ITIMER_REAL timer in the
    main thread), or None when none runs."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "getitimer"):
        return None
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    return left if left > 0 else None


def _pause(pid: int) -> None:
    from mcp_bdd.servers import wait_exit

    wait_exit(pid, 0.02)  # wakes at once if it dies, else a short pause between probes
