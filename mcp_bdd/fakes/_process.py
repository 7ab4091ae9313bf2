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

import os
import re
import shlex
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_bdd._process_tree import wait_exit
from mcp_bdd._text import tail, users_place
from mcp_bdd.errors import ServerStartError, UsageError
from mcp_bdd.fakes._deadline import held, remaining
from mcp_bdd.secrets import remember_environment, remember_mapping
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from mcp_bdd.servers import ChildProcess

__all__ = ["FakeProcess", "SlowStop", "start", "stop_all"]

#: how long `wait_for_port` waits when no time is given and no fake's limit runs (outside a setup)
DEFAULT_WAIT = 30.0
#: what `wait_for_port` leaves of the setup's limit, so the port's message is the one said
_MARGIN = 0.5
#: how long a program that ended may take to be reaped by its keeper, for its exit code
_REAPED = 2.0
_BACKGROUND = (
    "it exited with code 0, as a program that puts itself in the background does (a daemonizing flag: "
    "`--daemonize yes`, `-d`, `--fork`; `&`, `nohup`). mcp-bdd owns the process it starts and stops what "
    "that process leaves behind: run the program in the foreground (a wrapper script should `exec` it)."
)


class SlowStop(Exception):
    """A fake's process ignored SIGTERM and was killed: said as a teardown problem (it slowed the scenario)."""


class FakeProcess:
    """A process started with `FakeContext.start_process`; mcp-bdd stops it when its fake ends.

    `pid` is the program's own pid; `log` the file its stdout and stderr go to, in the fake's
    directory (removed with the scenario's); `output()` its last lines, secrets masked."""

    def __init__(self, fake: str, argv: Sequence[str], process: ChildProcess, log: Path, cwd: str) -> None:
        self.fake = fake
        self.argv = list(argv)
        self.command = shlex.join(self.argv)
        self.log = log
        self.cwd = cwd
        self._process = process
        self._slow_said = False

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
        """Return once this process (or one it started) accepts connections on 127.0.0.1:`port`.
        Raise ServerStartError, with its exit code and last output, if it exits first, if another
        process holds the port, or if `timeout` seconds pass (default: the fake's setup limit less
        half a second, so that this is what is said; 30 s outside a setup)."""
        limit, where = _wait_limit(timeout), users_place(traceback.extract_stack()[:-1])
        found = self._process.wait_listening(port, time.monotonic() + limit)
        if found.state == "listens":
            return
        if found.state == "exited":
            raise ServerStartError(self._ended_before(f"it accepted connections on port {port}", where))
        if found.state == "stranger":
            raise ServerStartError(
                f"{self._who()} does not listen on port {port} (wait_for_port at {where}): another "
                f"process does ({found.holder}).{self._said()}\n  Tip: pick the port just before you start "
                "the process and pass it that port; never a fixed one."
            )
        raise ServerStartError(
            f"{self._who()} did not accept connections on 127.0.0.1:{port} within {limit:.1f} s "
            f"(wait_for_port at {where}).{self._said()}\n  Tip: check that it listens on 127.0.0.1 "
            "and on the port you passed it; if it is just slow to start, give wait_for_port a longer "
            "timeout (and raise startup_timeout)."
        )

    def wait_for_output(self, pattern: str | re.Pattern[str], timeout: float | None = None) -> str:
        """Return the first line it writes (stdout or stderr) that holds `pattern` (a text, or a
        compiled regular expression): for a program that says when it is ready and listens on no
        TCP port (a Unix socket, a worker). Raise ServerStartError, with its exit code and last
        output, if it exits first or `timeout` seconds pass (the default as `wait_for_port`'s)."""
        found = pattern.search if isinstance(pattern, re.Pattern) else lambda line: pattern in line
        shown = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
        limit, where = _wait_limit(timeout), users_place(traceback.extract_stack()[:-1])
        deadline = time.monotonic() + limit
        lines = _Lines(self.log)
        while True:
            ended = self._process.exited()  # before the last read: what it wrote as it ended is read
            for line in lines.new():
                if found(line):
                    return line
            if ended:
                raise ServerStartError(self._ended_before(f'it wrote "{shown}"', where, "wait_for_output"))
            if time.monotonic() >= deadline:
                raise ServerStartError(
                    f'{self._who()} did not write "{shown}" within {limit:.1f} s (wait_for_output at {where}).'
                    f"{self._said()}\n  Tip: check the text it writes when it is ready; if it is just slow to "
                    "start, give wait_for_output a longer timeout (and raise startup_timeout)."
                )
            wait_exit(self._process.pid, 0.02)  # wakes at once if it ends, else a short pause between reads

    def stop(self) -> None:
        """Stop it now (else it is stopped when its fake ends); idempotent. One that had to be
        killed is said in the fake's teardown."""
        self._process.stop()

    def _slow(self) -> str | None:
        """Once: how its stop went, if it had to be killed."""
        if self._process.slow_stop is None or self._slow_said:
            return None
        self._slow_said = True
        return f"{self._who()} {self._process.slow_stop}"

    def _ended_before(self, what: str, where: str, waited: str = "wait_for_port") -> str:
        wait_exit(self._process.pid, _REAPED)  # its keeper ends just after it, with its exit code
        code = self.returncode
        tip = _BACKGROUND if code == 0 else f"run the command by hand in {self.cwd} to see it fail."
        return f"{self._who()} exited with code {code} before {what} ({waited} at {where}).{self._said()}\n  Tip: {tip}"

    def _who(self) -> str:
        return f'The process `{self.command}` (pid {self.pid}) of the fake "{self.fake}"'

    def _said(self) -> str:
        text = self.output()
        indented = "\n".join(f"    {line}" for line in text.splitlines())
        return f"\n  Its output (last lines):\n{indented}" if text else "\n  It wrote nothing."

    def __repr__(self) -> str:
        return f"<FakeProcess {self.command!r} pid={self.pid} returncode={self.returncode}>"


class _Lines:
    """The lines a log gains, read as they come (whole lines only; at most `_LINE` bytes each, a
    longer one is read in pieces): no re-reading of what was read."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._offset = 0
        self._partial = b""

    def new(self) -> list[str]:
        try:
            with self._path.open("rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read(_READ)
        except OSError:
            return []
        self._offset += len(chunk)
        data = self._partial + chunk
        *whole, self._partial = data.split(b"\n")
        if len(self._partial) > _LINE:
            whole.append(self._partial)
            self._partial = b""
        return [line.decode("utf-8", "replace").rstrip("\r") for line in whole]


#: how much of a log one read takes, and the longest line kept whole
_READ = 1 << 20
_LINE = 64 << 10


def start(
    fake: str,
    argv: Sequence[str | os.PathLike[str]],
    *,
    directory: Path,
    root: Path,
    transcript: Transcript,
    processes: list[FakeProcess],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> FakeProcess:
    """Spawn `argv` for the fake `fake` as a server is spawned (see the module doc), and add it to
    `processes` (the fake's, stopped with it) before the setup's limit may interrupt."""
    args = _argv(fake, argv)
    where = Path(root, cwd) if cwd is not None else root  # as a server's: relative to the configuration's folder
    if not where.is_dir():
        raise UsageError(
            f'The fake "{fake}": the cwd of `{shlex.join(args)}` does not exist: {where}.\n  Tip: give start_process '
            "an existing directory (a relative one is read from the folder of the mcp-bdd configuration)."
        )
    if threading.current_thread() is not threading.main_thread():
        raise UsageError(
            f'The fake "{fake}": start_process was called from the thread "{threading.current_thread().name}". '
            "A process mcp-bdd owns dies with the thread that starts it (that is how it dies with a killed "
            "run), and this thread may end before the run does.\n  Tip: start it from behave's thread: the "
            "fake's setup, or a step."
        )
    from mcp_bdd.servers import spawn  # late: importing the fakes must not import the servers (and mcp)

    own = {str(k): str(v) for k, v in (env or {}).items()}
    remember_mapping(own)  # a secret-named value given to the process is masked wherever it is quoted
    remember_environment(os.environ)  # and so is one it inherits (CI's tokens), as a server's are
    log = _log_path(directory, args[0])
    with held():  # spawned and recorded as the fake's, or neither: its stop must not be lost
        try:
            process = spawn(
                args, env={**os.environ, **own}, cwd=str(where), stderr_path=log, describe=shlex.join(args), stdio=False
            )
        except OSError as exc:
            raise ServerStartError(
                f'The fake "{fake}" could not start `{shlex.join(args)}` (in {where}): {exc.strerror or exc}.\n'
                "  Tip: is the program installed and on PATH? A relative path is read from that folder."
            ) from None
        started = FakeProcess(fake, args, process, log, str(where))
        processes.append(started)
    transcript.record("fake", fake, "process started", {"command": started.command, "pid": started.pid})
    return started


def stop_all(processes: list[FakeProcess], transcript: Transcript | None) -> None:
    """Stop a fake's processes (together: each may wait out its grace period), recorded in
    `transcript` (None at the end of the run: no scenario's); raise SlowStop naming those that
    had to be killed."""
    if not processes:
        return
    from mcp_bdd.servers import stop_together

    stop_together([process.stop for process in reversed(processes)])
    if transcript is not None:
        for process in reversed(processes):
            said = {"pid": process.pid, "exit code": process.returncode}
            transcript.record("fake", process.fake, "process stopped", said)
    slow = [said for said in (process._slow() for process in processes) if said is not None]
    processes.clear()
    if slow:
        raise SlowStop("; ".join(slow) + ". Tip: make it exit on SIGTERM, or it slows every scenario by seconds.")


def _argv(fake: str, argv: object) -> list[str]:
    if isinstance(argv, Sequence) and not isinstance(argv, str | bytes) and argv:
        try:
            return [os.fspath(arg) if isinstance(arg, os.PathLike) else _text(arg) for arg in argv]
        except TypeError:
            pass
    raise UsageError(
        f'The fake "{fake}": start_process takes the command as a list of strings, e.g. '
        f'["redis-server", "--port", str(port)] (got {argv!r}).'
    )


def _text(arg: object) -> str:
    if not isinstance(arg, str):
        raise TypeError(arg)
    return arg


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
    left = remaining()
    return max(0.1, left - _MARGIN) if left is not None else DEFAULT_WAIT
