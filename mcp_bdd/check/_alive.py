"""A generated tool call that is alive while it reports progress.

A tool that is slow by design (a long job that reports progress, as the reference server's
`trigger-long-running-operation` does for 10 s) is no hung tool: every call carries a progress
token (the session sends one with each tools/call), and each progress notification restarts the
wait of `call_timeout` seconds, up to `progress_cap` seconds in all. A tool silent for
`call_timeout` seconds is hung, as before; one still reporting progress at the cap is hung too,
and the outcome says progress came, so the finding can say so.

The session's `call_tool` waits a fixed time; the restartable wait lives here, on the session's
own request machinery, until the session offers it (`Session.call_tool(..., idle_timeout=...)`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio
import mcp_types as types

from mcp_bdd.session import Outcome, Session

__all__ = ["AliveCall", "call_while_alive"]

#: how often the wait looks at the progress count (a fraction of the idle time, at most this)
_TICK = 0.05


@dataclass
class AliveCall:
    """What the wait saw besides the outcome: progress notifications, and whether they extended it."""

    outcome: Outcome
    progress: int = 0  # progress notifications received during the call
    extended: bool = False  # the call took longer than the idle time: progress kept it alive
    capped: bool = False  # still reporting progress when the cap was reached


def call_while_alive(
    session: Session, name: str, arguments: dict[str, object] | None, idle: float, cap: float
) -> AliveCall:
    """Call `name`, waiting `idle` seconds after the call or its last progress notification, at
    most `cap` seconds in all. The check makes one call at a time, so every progress notification
    the session counts meanwhile is this call's."""
    if cap <= idle:  # no room to extend: the plain wait, as the session does it
        return AliveCall(session.call_tool(name, arguments, timeout=idle))
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    seen = AliveCall(Outcome("tools/call", {}))
    started = time.monotonic()
    before = session.progress_received

    async def watched() -> Outcome | None:
        result: list[Outcome] = []
        async with anyio.create_task_group() as group:

            async def send() -> None:
                # the session's own send: recorded in its transcript, stdout evidence and all
                result.append(await session._send(request, timeout=cap, progress=True))
                group.cancel_scope.cancel()

            group.start_soon(send)
            await _watch(session, idle, before, seen, group.cancel_scope)
        return result[0] if result else None

    outcome = session._run(watched, cap)
    seen.progress = session.progress_received - before
    seen.extended = time.monotonic() - started > idle
    seen.outcome = outcome if outcome is not None else _silent(session, request, started)
    seen.capped = seen.outcome.timed_out and outcome is not None and seen.progress > 0
    return seen


async def _watch(session: Session, idle: float, before: int, seen: AliveCall, scope: anyio.CancelScope) -> None:
    """Return (cancelling `scope`) once `idle` seconds pass with no new progress notification."""
    count, since = before, anyio.current_time()
    while True:
        await anyio.sleep(min(_TICK, idle / 10))
        now = anyio.current_time()
        if session.progress_received != count:
            count, since = session.progress_received, now
        elif now - since >= idle:
            scope.cancel()
            return


def _silent(session: Session, request: types.CallToolRequest, started: float) -> Outcome:
    """The outcome of a call the wait gave up on: timed out, as the session's own timeout says it."""
    params = request.model_dump(by_alias=True, mode="json", exclude_none=True).get("params") or {}
    elapsed = time.monotonic() - started
    outcome = Outcome("tools/call", params, timed_out=True, elapsed_ms=elapsed * 1000, server=session.name)
    outcome.stdout_evidence = session.server.stdout_evidence()
    said = {"message": f"no answer: silent for the check's call timeout ({elapsed:.1f} s in all)"}
    session.transcript.record("error", session.name, "tools/call", said)
    return outcome
