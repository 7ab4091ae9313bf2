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
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from mcp_bdd._text import users_place

__all__ = ["Stalled", "held", "remaining", "within"]


class _Timer:
    """The limit now running (one at most: only the main thread arms one), for `remaining` and `held`."""

    until: float | None = None  # time.monotonic() when it fires
    holding = 0  # `held` blocks entered and not left
    pending: Stalled | None = None  # fired inside one: raised when it is left


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
            stalled = Stalled(seconds, _where(frame))
            if _Timer.holding:
                _Timer.pending = stalled  # raised when the held block is left
                return
            raise stalled

    previous = signal.signal(signal.SIGALRM, expired)
    _Timer.until = time.monotonic() + seconds
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _Timer.until, _Timer.pending = None, None


def remaining() -> float | None:
    """Seconds left of the limit running in this thread (None: none runs here; a project's own
    SIGALRM timer is not one)."""
    if _Timer.until is None or threading.current_thread() is not threading.main_thread():
        return None
    return max(0.0, _Timer.until - time.monotonic())


@contextmanager
def held() -> Iterator[None]:
    """A block the limit must not cut in two (a process spawned and recorded as the fake's, so
    that its stop is never lost): a limit that expires inside is raised as the block is left."""
    _Timer.holding += 1
    try:
        yield
    except BaseException:
        _Timer.pending = None  # the block's own failure is the news
        raise
    finally:
        _Timer.holding -= 1
    if not _Timer.holding and _Timer.pending is not None:
        stalled, _Timer.pending = _Timer.pending, None
        raise stalled


def _may_arm() -> bool:
    """The main thread (the only one signal handlers run in), and SIGALRM nobody else's."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return False
    return signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None) and signal.getitimer(signal.ITIMER_REAL)[0] == 0


def _where(frame: FrameType | None) -> str:
    """`file:line, in function` of the user's code the timer interrupted (its innermost frame that
    is not a library's: a fake waiting in a client library's `recv` is named at its own call)."""
    return (users_place(traceback.extract_stack(frame)) if frame is not None else "") or "an unknown line"
