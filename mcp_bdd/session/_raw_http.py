"""Raw HTTP requests on a session's streamable HTTP endpoint, beside the SDK's own.

Why: the session-id lifecycle of streamable HTTP (2025-11-25: the server gives an
`Mcp-Session-Id` at initialize, refuses a request without it with 400, ends the session on
DELETE, and refuses the ended id with 404) is stated about requests a correct client never
sends. The SDK's client sends only correct ones, so these are sent here, with the session's
URL, headers and protocol version, and recorded in its transcript like every HTTP answer (the
"last HTTP response" steps read them).

What it does not cover: SSE streams (a GET is answered with its status only) and the JSON-RPC
answer's content, which no step about the lifecycle reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_bdd.session._session import Session

__all__ = ["send_raw"]

_PING = {"jsonrpc": "2.0", "id": "mcp-bdd-lifecycle", "method": "ping"}
_TIMEOUT = 10.0


def send_raw(session: Session, verb: str, session_id: str | None) -> int:
    """Send `verb` (POST: a ping; DELETE: the end of the session) to the session's endpoint, with
    `session_id` as `Mcp-Session-Id` (None: without one); the status, also in the transcript."""
    import httpx2

    url = session.server.url
    assert url is not None  # the steps check the transport first
    headers = {
        **(session.server.headers or {}),
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": session.protocol_version,
    }
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    body: dict[str, str] | None = _PING if verb == "POST" else None
    with (
        httpx2.Client(timeout=_TIMEOUT) as client,
        client.stream(verb, url, headers=headers, json=body) as response,
    ):
        status = int(response.status_code)  # the status only: an SSE answer is not read to its end
    payload = {"method": verb, "url": url, "status": status, "sent": "by the step"}
    session.transcript.record("info", session.name, "http", payload)
    return status
