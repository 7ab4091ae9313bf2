"""A time limit for a user fake's setup and cleanup, which are the user's synchronous code.

Why: a `@fake` whose setup waits on a broker that never answers (`sock.recv()`, `time.sleep`, a
`while not ready()` loop) hung the whole behave run, with no word of where. Such code cannot be
cancelled from outside, and moving it to another thread to abandon it would change what it may
do: a SQLite connection made in setup is refused in the steps' thread (`check_same_thread`), and
only the main thread may install signal handlers.

So the code stays in its thread, and a SIGALRM timer interrupts it there: Python runs the handler
between bytecodes, and a blocking call (sleep, recv, select, a lock's acquire) returns EINTR to run
it (PEP 475), so the handler's exception lands at the line that waits. It is a BaseException,
so a fake's own `except Exception: retry` cannot swallow it; `Stalled` records that line.

Only where it is safe: behave's main thread, with no SIGALRM handler or timer of someone else's
(a project that uses `signal.alarm` itself keeps it, and its fakes get no limit, as before).
"""

from __future__ import annotations

import signal
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from mcp_bdd.errors import users_place

__all__ = ["Stalled", "within"]


class Stalled(BaseException):
    """A fake's code did not finish within its time limit; `where` is the line it was at."""

    def __init__(self, seconds: float, where: str) -> None:
        super().__init__(f"did not finish within {seconds:g} s (it was at {where})")
        self.seconds = seconds
        self.where = where


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Raise `Stalled` in the code run inside if it takes longer than `seconds` (None: no limit)."""
    if seconds is None or not _may_arm():
        yield
        return
    armed = True

    def expired(_signum: int, frame: FrameType | None) -> None:
        if armed:  # else the body finished as the timer fired: it is not stalled
            raise Stalled(seconds, _where(frame))

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _may_arm() -> bool:
    """The main thread (the only one signal handlers run in), and SIGALRM nobody else's."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return False
    return signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None) and signal.getitimer(signal.ITIMER_REAL)[0] == 0


def _where(frame: FrameType | None) -> str:
    """`file:line, in function` of the user's code the timer interrupted (its innermost frame that
    is not a library's: a fake waiting in a client library's `recv` is named at its own call)."""
    return (users_place(traceback.extract_stack(frame)) if frame is not None else "") or "an unknown line"
