"""Hops from the behave thread into the run's event loop, on the session's hot path.

Why not `BlockingPortal.call`: anyio spawns every call as a task of the portal's task group, with
a cancel scope and a readiness handshake of its own. That costs 110-180 µs a hop on this 2-core
machine, against 80-110 µs for a plain asyncio task scheduled with `run_coroutine_threadsafe`.
An in-memory scenario hops at least three times (open, call, close), so sessions take the plain
path: about 0.2 ms a scenario (`benchmarks/steps_overhead.py`).

Same loop, same guarantees: the hops run on the portal's own event loop, so a session's tasks
share it with the fakes and with users' `ctx.portal` code; exceptions reach the caller unchanged;
a hop from the loop's own thread is refused (it would wait on itself forever), as the portal
does. What differs: the tasks are not children of the portal's task group, so an interrupted
run's sessions are cancelled when the loop shuts down (asyncio cancels every task left), not
when the portal stops; their servers are stopped by the runtime either way. Fakes and `probe`
keep the portal: their hops are per scenario at most, and `ctx.portal` is public API.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["Hops", "hops"]

T = TypeVar("T")


class _Status:
    """The `task_status` a started task reports readiness through (anyio's `TaskStatus` shape)."""

    def __init__(self, ready: Future[Any]) -> None:
        self._ready = ready

    def started(self, value: Any = None) -> None:
        if not self._ready.done():
            self._ready.set_result(value)


class Hops:
    """`call`, `start` and `soon` onto one running event loop, from any other thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: int) -> None:
        self.loop = loop
        self.thread = thread

    def _schedule(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> Future[T]:
        if threading.get_ident() == self.thread:
            raise RuntimeError("This method cannot be called from the event loop thread")
        return asyncio.run_coroutine_threadsafe(_run(fn, args, kwargs), self.loop)

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run `fn(*args)` in the loop and wait for its result (or its exception)."""
        return self._schedule(fn, *args).result()

    def soon(self, fn: Callable[..., Awaitable[T]], *args: Any) -> Future[T]:
        """Run `fn(*args)` in the loop without waiting: the future says when it is done."""
        return self._schedule(fn, *args)

    def start(self, fn: Callable[..., Awaitable[T]], *args: Any) -> tuple[Future[T], Any]:
        """Start `fn(*args, task_status=...)` and wait until it calls `task_status.started(value)`.

        Returns (the task's future, value). A task that ends first raises its exception here.
        """
        ready: Future[Any] = Future()
        done = self._schedule(fn, *args, task_status=_Status(ready))
        done.add_done_callback(lambda finished: _not_started(finished, ready))
        return done, ready.result()


def _not_started(finished: Future[Any], ready: Future[Any]) -> None:
    if ready.done():
        return
    if finished.cancelled():
        ready.cancel()
    elif (error := finished.exception()) is not None:
        ready.set_exception(error)
    else:
        ready.set_exception(RuntimeError("Task exited without calling task_status.started()"))


async def _run(fn: Callable[..., Awaitable[T]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    return await fn(*args, **kwargs)


_BY_PORTAL: weakref.WeakKeyDictionary[Any, Hops] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def hops(portal: Any) -> Hops:
    """The hops onto `portal`'s event loop (found once per portal, with two portal calls)."""
    with _LOCK:
        found = _BY_PORTAL.get(portal)
        if found is None:
            loop = portal.call(_running_loop)
            found = _BY_PORTAL[portal] = Hops(loop, portal.call(_loop_thread))
        return found


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


async def _loop_thread() -> int:
    return threading.get_ident()
