"""The session's hops into the run's event loop (`mcp_bdd.session._hop`), on a real portal:
the guarantees anyio's BlockingPortal gave that the cheaper hops must keep."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from mcp_bdd.session import cancel_pending
from mcp_bdd.session._hop import hops


@pytest.fixture
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal() as running:
        yield running


async def _add(a: int, b: int) -> int:
    return a + b


async def _fail() -> None:
    raise LookupError("no such order")


def test_a_call_returns_its_value_and_raises_its_exception(portal: BlockingPortal) -> None:
    assert hops(portal).call(_add, 2, 3) == 5
    with pytest.raises(LookupError, match="no such order"):
        hops(portal).call(_fail)


def test_a_start_returns_what_the_task_reported_or_why_it_never_did(portal: BlockingPortal) -> None:
    async def ready(value: str, *, task_status: Any) -> str:
        task_status.started(value)
        return value * 2

    async def broken(*, task_status: Any) -> None:
        raise LookupError("no handshake")

    async def silent(*, task_status: Any) -> None:
        return None

    future, value = hops(portal).start(ready, "ab")
    assert value == "ab" and future.result(timeout=30) == "abab"
    with pytest.raises(LookupError, match="no handshake"):
        hops(portal).start(broken)
    with pytest.raises(RuntimeError, match=r"without calling task_status\.started"):
        hops(portal).start(silent)


def test_a_hop_from_the_loop_thread_is_refused_not_a_deadlock(portal: BlockingPortal) -> None:
    async def hop_from_inside() -> None:
        hops(portal).call(_add, 1, 1)

    with pytest.raises(RuntimeError, match="event loop thread"):
        hops(portal).call(hop_from_inside)


def test_a_hop_after_the_loop_ended_is_refused_not_a_hang() -> None:
    with start_blocking_portal() as ended:
        found = hops(ended)
    with pytest.raises(RuntimeError, match="not running"):
        found.call(_add, 1, 1)


def test_the_end_of_a_run_cancels_a_left_over_task_at_every_await(portal: BlockingPortal) -> None:
    """A session interrupted mid-scenario leaves its lifetime task running; asyncio's shutdown would
    cancel it once, and a `finally` that awaits (closing a client) would then hold the run's end."""
    cleaned: list[str] = []

    async def stubborn(*, task_status: Any) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            try:
                await asyncio.sleep(3600)  # a cleanup that would wait for ever after one cancel
            finally:
                cleaned.append("done")

    future, _ = hops(portal).start(stubborn)
    assert cancel_pending(portal, grace=30) == 0
    assert future.cancelled() and cleaned == ["done"]
    assert cancel_pending(portal) == 0  # nothing left: a no-op


def test_a_ctrl_c_the_loop_thread_took_ends_a_wait_for_the_loop_at_once(portal: BlockingPortal) -> None:
    """The kernel hands a Ctrl-C to any thread that does not block it: the loop's thread, while
    the main thread blocks every signal around spawning a process. Python runs the handler only
    in the main thread, once that thread wakes: `mcp-bdd list` waited out its 300 s startup
    timeout after a Ctrl-C so received."""
    loop_thread: int = portal.call(threading.get_ident)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, signal.pthread_kill, (loop_thread, signal.SIGINT))
    started = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            hops(portal).call(anyio.sleep, 60, deadline=300)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
        cancel_pending(portal)
    assert time.monotonic() - started < 30, "the interrupt waited for the call to end"


@pytest.fixture
def counted_ctrl_c() -> Iterator[None]:
    """The `mcp-bdd` command's Ctrl-C handler (mcp_bdd._ctrl_c), installed for one test."""
    from mcp_bdd import _ctrl_c

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    _ctrl_c.install()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _ctrl_c._seen = _ctrl_c._received


def test_a_ctrl_c_a_library_swallowed_ends_the_next_wait_for_the_loop(
    portal: BlockingPortal, counted_ctrl_c: None
) -> None:
    """pydantic-core drops a KeyboardInterrupt raised in a callback of its own ("Exception ignored
    in: 'Path'"): `mcp-bdd list` then waited for its server until its startup timeout."""
    with contextlib.suppress(KeyboardInterrupt):  # what the library did
        signal.raise_signal(signal.SIGINT)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        hops(portal).call(anyio.sleep, 60, deadline=300)
    cancel_pending(portal)
    assert time.monotonic() - started < 30
    assert hops(portal).call(_add, 1, 2) == 3  # raised once, not at every wait after it


def test_a_cleanup_a_ctrl_c_runs_is_not_cut_short_by_it(portal: BlockingPortal, counted_ctrl_c: None) -> None:
    cleaned: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        try:
            signal.raise_signal(signal.SIGINT)
        finally:
            cleaned.append(hops(portal).call(_add, 1, 2))  # a session closing as the interrupt goes up
    assert cleaned == [3]
    assert hops(portal).call(_add, 2, 2) == 4
