"""HTTP sessions (streamable HTTP, 2025-11-25): the server's session id, from first request to last.

On the 2025-11-25 protocol a streamable HTTP server may give the client an `Mcp-Session-Id` when
it initializes; the client then sends it with every request, and ends the session with an HTTP
DELETE. A server that gives one must refuse a request without it (400) and, once the session
ended, a request with it (404). The steps send those requests beside the client's own, and
record each answer, so "Then the last HTTP response has status ..." reads them too. (2026-07-28
is stateless: no session id.)
"""

from __future__ import annotations

from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.session import Session, send_raw
from mcp_bdd.steps._base import StepContext, current_session, state, then, when

__all__: list[str] = []


def _with_id(context: StepContext) -> tuple[Session, str]:
    session = current_session(context)
    if session.server.transport != "streamable-http":
        raise UsageError(
            f'{state(context).location}: "{session.name}" runs over {session.server.transport}; HTTP sessions '
            f'exist only over streamable HTTP: Given the MCP server "{session.name}" is running over streamable HTTP.'
        )
    if session.http_session_id is None:
        raise ExpectationFailed(
            f'The server "{session.name}" gave the client no session id (no Mcp-Session-Id header)',
            expected="an Mcp-Session-Id header on the answer to initialize",
            actual=f"none (protocol {session.protocol_version})",
            tip="a session id is given on 2025-11-25 only, and only by a stateful server "
            '(2026-07-28 is stateless): protocol = "legacy" for this server.',
        )
    return session, session.http_session_id


@then("the server gave the client a session id")
def step_session_id(context: StepContext) -> None:
    """Check that the server gave an Mcp-Session-Id when the client initialized, of visible ASCII only.

    Example: Then the server gave the client a session id
    """
    session, given = _with_id(context)
    if not given or any(not 0x21 <= ord(c) <= 0x7E for c in given):
        raise ExpectationFailed(
            f'The session id "{session.name}" gave is not visible ASCII', expected="characters 0x21-0x7E", actual=given
        )


@when("the client ends its HTTP session")
def step_end_session(context: StepContext) -> None:
    """Send the HTTP DELETE that ends the session (with its id); the answer is the last HTTP response.

    Example: When the client ends its HTTP session
    """
    session, given = _with_id(context)
    send_raw(session, "DELETE", given)


def _refused(context: StepContext, status: int, with_id: bool) -> None:
    session, given = _with_id(context)
    got = send_raw(session, "POST", given if with_id else None)
    if got != status:
        which = "with the session id" if with_id else "without the session id"
        raise ExpectationFailed(
            f'A request {which} got status {got} from "{session.name}", not {status}', expected=status, actual=got
        )


@then("a request with the session id is refused with status {status:d}")
def step_refused_with_id(context: StepContext, status: int) -> None:
    """Send a ping with the session's id and check the status it is refused with (404 once ended).

    Example: Then a request with the session id is refused with status 404
    """
    _refused(context, status, with_id=True)


@then("a request without the session id is refused with status {status:d}")
def step_refused_without_id(context: StepContext, status: int) -> None:
    """Send a ping without the session id and check the status it is refused with (400).

    Example: Then a request without the session id is refused with status 400
    """
    _refused(context, status, with_id=False)
