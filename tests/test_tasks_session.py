"""Tasks through the session (`mcp_bdd.session._tasks`), against the demo reports server in-process.

A task-augmented `tools/call` is answered with a CreateTaskResult, not a tool result: the session
must take it as the task it is (validated as a CreateTaskResult), on both protocol revisions.
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types as types
import pytest
from anyio.from_thread import start_blocking_portal

from demo.reports import create_server
from mcp_bdd.servers import InMemoryServer
from mcp_bdd.session import Session
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
