"""How a session's steps reach the run's event loop, with a deadline that holds when the loop is blocked.

Why not `BlockingPortal.call`/`start_task_soon`: the portal hands each call to its loop with
`from_thread.run_sync`, which itself waits for the loop to pick it up. An in-process tool that
blocks the loop (`time.sleep` in an async function, a synchronous tool spinning in a worker the
SDK's in-memory transport waits on) would then hang the step before any deadline could start,
and the run with it. A hop schedules with `run_coroutine_threadsafe`, which never waits, so every
wait below has a deadline: past it the hop raises `Stalled` and cancels its task, and the step
fails in time. `stalled` remembers that, so the end of the run does not wait on that loop.

Same loop, same guarantees as the portal: the hops run on the portal's own event loop, so a
session's tasks share it with the fakes and with users' `ctx.portal` code; exceptions reach the
caller unchanged; a hop from the loop's own thread, or into a loop that no longer runs, is
refused (it would wait forever). The tasks are not children of the portal's task group, so the
portal's stop would not reach them: `cancel_pending` (called before it at the end of a run)
cancels the ones an interrupted run left, again at every await as anyio does, not once as
asyncio's shutdown would (a `finally` that awaits would otherwise hold the run's end). A start
whose wait is interrupted (Ctrl-C) cancels its task. Fakes and `probe` use the portal: their
calls do not wait on a server's code.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple

from mcp_bdd._ctrl_c import raise_lost

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

__all__ = ["STALL_GRACE", "Hops", "Stalled", "cancel_pending", "hops", "stalled"]

#: The longest the end of an interrupted run waits for its cancelled hops to finish.
CANCEL_GRACE = 5.0
#: How long past its own timeout a request's hop waits for the loop: a cancelled request ends in
#: milliseconds, so this only ever runs out on a blocked loop; roomy for a loaded machine.
STALL_GRACE = 10.0

#: The longest a wait for the loop sleeps at once. The kernel may hand a Ctrl-C to the loop's
#: thread (any thread that does not block the signal at that moment), and Python raises the
#: KeyboardInterrupt only in this thread, once it wakes: one wait until the deadline would hold
#: it off for as long as that (300 s for `mcp-bdd list --timeout 300`).
WAKE = 0.25

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class Stalled(Exception):
    """A hop's deadline passed while its work was still running in the event loop."""


class _Status:
    """The `task_status` a started task reports readiness through (anyio's `TaskStatus` shape)."""

    def __init__(self, ready: Future[object]) -> None:
        self._ready = ready

    def started(self, value: object = None) -> None:
        if not self._ready.done():
            self._ready.set_result(value)


class Hops:
    """`call`, `start` and `soon` onto one running event loop, from any other thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: int) -> None:
        self.loop = loop
        self.thread = thread
        self.running: set[asyncio.Task[object]] = set()  # touched in the loop's thread only
        self.stalled = False  # a hop outlived its deadline: the loop may never finish its work

    def _schedule(self, fn: Callable[..., Awaitable[T]], *args: object, **kwargs: object) -> Future[T]:
        if threading.get_ident() == self.thread:
            raise RuntimeError("This method cannot be called from the event loop thread")
        if self.loop.is_closed() or not self.loop.is_running():
            raise RuntimeError("The run's event loop is not running (the run is ending)")
        return asyncio.run_coroutine_threadsafe(self._run(fn, args, kwargs), self.loop)

    async def _run(self, fn: Callable[..., Awaitable[T]], args: tuple[object, ...], kwargs: dict[str, object]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self.running.add(task)
        try:
            return await fn(*args, **kwargs)
        finally:
            self.running.discard(task)

    async def cancel_running(self, grace: float) -> int:
        """Cancel every hop still running, again at every await until it ends (at most `grace` s)."""
        left = set(self.running)
        deadline = self.loop.time() + grace
        while left and self.loop.time() < deadline:
            for task in left:
                task.cancel()
            _done, pending = await asyncio.wait(left, timeout=min(0.05, deadline - self.loop.time()))
            left = pending
        return len(left)

    def call(
        self,
        fn: Callable[[*Ts], Awaitable[T]],
        *args: *Ts,
        deadline: float | None = None,
        last_answer: Callable[[], float] | None = None,
    ) -> T:
        """Run `fn(*args)` in the loop and wait for its result (or its exception), at most
        `deadline` seconds (then `Stalled`) — or, given `last_answer` (when the work last heard
        from its server, time.monotonic), at most `deadline` after that (a listing of many pages)."""
        return self._wait(self._schedule(fn, *args), deadline, last_answer)

    def _wait(self, future: Future[T], deadline: float | None, last_answer: Callable[[], float] | None = None) -> T:
        until = time.monotonic() + (deadline if deadline is not None else float("inf"))
        while True:
            raise_lost()  # a Ctrl-C a library swallowed (see mcp_bdd._ctrl_c)
            try:
                return future.result(timeout=max(0.0, min(WAKE, until - time.monotonic())))
            except TimeoutError:
                if future.done():
                    raise  # the work's own TimeoutError
            if deadline is None or time.monotonic() < until:
                continue
            if last_answer is not None and last_answer() + deadline > time.monotonic():
                until = last_answer() + deadline
                continue
            future.cancel()  # the loop cancels the task whenever it gets to run it
            self.stalled = True
            raise Stalled(f"the run's event loop did not finish this within {deadline:g} s")

    def soon(self, fn: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> Future[T]:
        """Run `fn(*args)` in the loop without waiting: the future says when it is done."""
        return self._schedule(fn, *args)

    def start(
        self, fn: Callable[..., Awaitable[T]], *args: object, deadline: float | None = None
    ) -> tuple[Future[T], object]:
        """Start `fn(*args, task_status=...)` and wait until it calls `task_status.started(value)`,
        at most `deadline` seconds (then `Stalled`).

        Returns (the task's future, value). A task that ends first raises its exception here.
        """
        ready: Future[object] = Future()
        done = self._schedule(fn, *args, task_status=_Status(ready))
        done.add_done_callback(lambda finished: _not_started(finished, ready))
        try:
            return done, self._wait(ready, deadline)
        except BaseException:
            done.cancel()  # interrupted (Ctrl-C) or failed: the task must not live on without an owner
            raise


def _not_started(finished: Future[T], ready: Future[object]) -> None:
    if ready.done():
        return
    if finished.cancelled():
        ready.cancel()
    elif (error := finished.exception()) is not None:
        ready.set_exception(error)
    else:
        ready.set_exception(RuntimeError("Task exited without calling task_status.started()"))


_BY_PORTAL: weakref.WeakKeyDictionary[BlockingPortal, Hops] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def hops(portal: BlockingPortal) -> Hops:
    """The hops onto `portal`'s event loop (found once per portal, with two portal calls)."""
    with _LOCK:
        found = _BY_PORTAL.get(portal)
        if found is None:
            loop = portal.call(_running_loop)
            found = _BY_PORTAL[portal] = Hops(loop, portal.call(_loop_thread))
        return found


def cancel_pending(portal: BlockingPortal, grace: float = CANCEL_GRACE) -> int:
    """At the end of a run, before the portal stops: cancel the session hops an interruption left
    running (a lifetime task, a call). Returns how many did not end within `grace` seconds."""
    with _LOCK:
        found = _BY_PORTAL.get(portal)
    if found is None or not found.running:
        return 0
    if found.stalled and not _answers(found):
        return len(found.running)  # the loop itself is blocked: nothing in it can end them
    # through the portal, not a hop: a hop would count itself among the ones to cancel
    try:
        left: int = portal.start_task_soon(found.cancel_running, grace).result(timeout=grace + STALL_GRACE)
    except TimeoutError:
        found.stalled = True
        return len(found.running)  # the loop itself is blocked: nothing in it can end them
    return left


def stalled(portal: BlockingPortal) -> bool:
    """After `cancel_pending`, at the end of a run: whether `portal`'s loop still holds work it
    cannot end (a cancelled hop that never finished: a tool spinning in a worker thread) or does
    not answer at all. Asked only when a hop once outlived its deadline; a loop that was blocked
    for a while (time.sleep in an async tool) and recovered is not stalled."""
    with _LOCK:
        found = _BY_PORTAL.get(portal)
    return found is not None and found.stalled and (bool(found.running) or not _answers(found))


def _answers(found: Hops) -> bool:
    """Whether the loop still runs a hop within `CANCEL_GRACE` (a blocked one never does; the
    portal's own calls would wait for it forever)."""
    try:
        found.call(_running_loop, deadline=CANCEL_GRACE)
    except Stalled:
        return False
    return True


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


async def _loop_thread() -> int:
    return threading.get_ident()
