"""A lifeline for a run-wide helper process (the fake PostgreSQL server): it dies with the run.

Run as a script (standard library only, so it starts in ~30 ms):

    python _lifeline.py [--uid N --gid N] [--log FILE] [--remove DIR]... [--signal INT] -- ARGV...

It starts ARGV (as another user when given: PostgreSQL refuses to run as root), prints the child's
PID on stdout, and then waits for its own stdin to reach end-of-file. The run holds the other end of
that pipe and never writes to it: when the run ends — normally, on a signal, or killed with
`kill -9`, which closes the pipe just the same — the lifeline stops the child with `--signal`
(SIGINT: PostgreSQL's fast shutdown), kills it if it lingers, and removes the `--remove`
directories (the server's data). SIGTERM to the lifeline does the same. If the lifeline itself is
killed, the child's parent-death signal (SIGQUIT: immediate shutdown) ends it.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import subprocess
import sys
import threading
from typing import Any

_GRACE = 10.0  # seconds a stopped child gets before SIGKILL


def _die_with_lifeline() -> None:
    """preexec_fn: SIGQUIT to the child when this (single-threaded) lifeline dies."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGQUIT)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="_lifeline")
    parser.add_argument("--uid", type=int)
    parser.add_argument("--gid", type=int)
    parser.add_argument("--log")
    parser.add_argument("--remove", action="append", default=[])
    parser.add_argument("--signal", default="INT")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    stop_signal = getattr(signal, "SIG" + args.signal.upper().removeprefix("SIG"))

    done = threading.Event()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop, not a terminal's Ctrl-C
    signal.signal(signal.SIGTERM, lambda *_: done.set())

    log: Any = open(args.log, "ab") if args.log else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the child
    extra: dict[str, Any] = {}
    if args.uid is not None:
        extra["user"] = args.uid
        extra["group"] = args.gid
        extra["extra_groups"] = []
    child = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        preexec_fn=_die_with_lifeline,  # the lifeline is single-threaded here
        **extra,
    )
    print(child.pid, flush=True)

    def watch_stdin() -> None:
        with contextlib.suppress(OSError):
            while sys.stdin.buffer.read(4096):
                pass
        done.set()

    def watch_child() -> None:
        child.wait()
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    threading.Thread(target=watch_child, daemon=True).start()
    while not done.wait(3600):
        pass
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(stop_signal)
        try:
            child.wait(_GRACE)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    for directory in args.remove:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
