"""The session's hops into the run's event loop (`mcp_bdd.session._hop`), on a real portal:
the guarantees anyio's BlockingPortal gave that the cheaper hops must keep."""

from __future__ import annotations

import asyncio
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
