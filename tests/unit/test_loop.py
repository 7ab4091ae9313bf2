"""The run's event loop contains exits (mcp_bdd._loop) and nothing else."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import pytest

from mcp_bdd._loop import contain_exits


def test_a_pending_task_collected_while_another_runs_is_closed_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    """GeneratorExit thrown into a task's coroutine by close() is the loop's control flow, not the
    code's exit, even while another task runs (the garbage collector closes it from there): taken
    for an exit, it became a ServerExited raised out of close(), an unraisable error on stderr."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    async def wait_forever() -> None:
        await asyncio.get_running_loop().create_future()  # nobody else holds it: a cycle with its task

    async def main() -> None:
        contain_exits()
        task = asyncio.get_running_loop().create_task(wait_forever())
        await asyncio.sleep(0)  # it starts, and waits
        del task
        gc.collect()  # its coroutine is closed while this task runs

    asyncio.run(main())
    assert not [u for u in unraisable if "ServerExited" in repr(u.exc_value)], [repr(u.exc_value) for u in unraisable]


def test_a_tasks_own_exit_is_still_contained() -> None:
    """The other side of the same test: code in the task that raises GeneratorExit or SystemExit."""

    async def exits(exc: BaseException) -> None:
        raise exc

    async def main() -> list[str]:
        contain_exits()
        seen = []
        for exc in (GeneratorExit(), SystemExit(3)):
            try:
                await asyncio.get_running_loop().create_task(exits(exc))
            except Exception as caught:  # ServerExited is an Exception
                seen.append(f"{type(caught).__name__}: {caught}")
        return seen

    assert asyncio.run(main()) == [
        "ServerExited: its code raised GeneratorExit",
        "ServerExited: its code called sys.exit(3)",
    ]
