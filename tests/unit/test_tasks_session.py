"""Tasks through the session (`mcp_bdd.session._tasks`), against the demo reports server in-process.

A task-augmented `tools/call` is answered with a CreateTaskResult, not a tool result: the session
must take it as the task it is (validated as a CreateTaskResult), on both protocol revisions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import start_blocking_portal

from demo.reports import create_server
from mcp_bdd.servers import InMemoryServer
from mcp_bdd.session import Session
from mcp_bdd.session._tasks import call_as_task, created, task_result, wait_for_status
from mcp_bdd.transcript import Transcript


@pytest.fixture(params=["legacy", "auto"])
def session(request: pytest.FixtureRequest) -> Iterator[Session]:
    """A session with the reports server, on 2025-11-25 (legacy) and 2026-07-28 (auto)."""
    server = InMemoryServer("reports", create_server(), "demo.reports")
    with start_blocking_portal() as portal:
        session = Session(
            "reports",
            server,
            portal=portal,
            transcript=Transcript(),
            timeout=10,
            startup_timeout=10,
            protocol=request.param,
        )
        session.open()
        try:
            yield session
        finally:
            session.close()


def test_a_task_augmented_call_sent_through_the_session_is_no_protocol_violation() -> None:
    """The bug: the CreateTaskResult was validated as a tool result (no `content`) and recorded as a
    protocol violation, although the server had created the task."""
    server = InMemoryServer("reports", create_server(), "demo.reports")
    with start_blocking_portal() as portal:
        session = Session(
            "reports", server, portal=portal, transcript=Transcript(), timeout=10, startup_timeout=10, protocol="legacy"
        )
        session.open()
        try:
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name="report", arguments={"title": "Q1", "pages": 1}, task=types.TaskMetadata(ttl=5000)
                )
            )
            outcome = session.request(request)
        finally:
            session.close()
    assert not outcome.protocol_violation, outcome.exception
    assert outcome.ok and outcome.raw is not None
    assert outcome.raw["task"]["status"] in ("working", "completed")


def test_a_task_is_followed_to_its_tool_result_on_both_revisions(session: Session) -> None:
    """call_as_task -> the task -> tasks/get until completed -> the CallToolResult, recorded."""
    call = call_as_task(session, "report", lambda tool: {"title": "Q2", "pages": 2})
    task = created(call.raw, session.protocol_version)
    assert call.ok and task is not None and task.poll_s == 0.05, call.describe()
    seen, failed = wait_for_status(session, task, lambda t: t.terminal, session.timeout)
    assert failed is None and seen.status == "completed", seen
    result = task_result(session, seen, call)
    assert result.method == "tools/call" and result.raw is not None, result.describe()
    assert result.raw["structuredContent"] == {"title": "Q2", "pages": 2, "status": "ready"}
    methods = [i.method for i in session.transcript.items if i.kind == "request"]
    assert methods[-1] == ("tasks/get" if session.protocol_version == "2026-07-28" else "tasks/result"), methods


class _BrokenTasks:
    """Answers every tools/call with a 'task' that lacks what a Task must have."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/call":
            return {"task": {"taskId": 7}}
        return await call_next(ctx)


def test_a_task_answer_that_is_no_task_is_a_protocol_violation() -> None:
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("broken", middleware=[_BrokenTasks()])

    @app.tool()
    def work() -> str:
        return "done"

    server = InMemoryServer("broken", app, "broken")
    with start_blocking_portal() as portal:
        session = Session(
            "broken", server, portal=portal, transcript=Transcript(), timeout=10, startup_timeout=10, protocol="legacy"
        )
        session.open()
        try:
            outcome = call_as_task(session, "work", lambda tool: {})
        finally:
            session.close()
    assert outcome.protocol_violation and "CreateTaskResult" in (outcome.exception or ""), outcome.describe()
