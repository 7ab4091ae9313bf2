"""The client's side: how the test client answers server-to-client requests, and what it was asked.

The "Given the client ..." steps shape the capabilities the client declares when it connects
(sampling, elicitation, roots), so they must come before the server step of the scenario; the
client declares exactly what the scenario asks for, and nothing more. A scripted elicitation
answer that does not fit the schema the server sends fails the scenario at that request, naming
the field and the type it expects.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.session import ELICITATION, SAMPLING, Session
from mcp_bdd.steps._base import current_session, expected_text, given, state, table_rows, text, then

__all__: list[str] = []


def _before_connecting(context: Any, what: str) -> None:
    st = state(context)
    if st.sessions:
        names = ", ".join(f'"{n}"' for n in st.sessions)
        raise UsageError(
            f"{st.location}: {what} shapes the capabilities the client declares when it connects, but the "
            f"session with {names} is already open. Move this step above the server step "
            '("Given the MCP server "<name>" is running"), or into the Background before it.'
        )


@given('the client answers sampling requests with "{reply:Q}"')
def step_sampling(context: Any, reply: str) -> None:
    """Declare sampling and answer every sampling/createMessage request with a fixed text.

    Example: Given the client answers sampling requests with "A short summary."
    """
    _before_connecting(context, "answering sampling requests")
    state(context).persona.sampling_text = text(context, reply)


@given("the client accepts elicitation requests with:")
def step_elicitation_accept(context: Any) -> None:
    """Declare elicitation and accept every request with these values (coerced by the request's schema).

    Example:
        Given the client accepts elicitation requests with:
          | confirm | reason          |
          | true    | customer asked  |
    """
    st = state(context)
    _before_connecting(context, "accepting elicitation requests")
    headings, rows = table_rows(context)
    if len(rows) != 1:
        raise UsageError(
            f"{st.location}: the elicitation table needs one row of values under its heading row of field names "
            f"(got {len(rows)}). Example:\n      | confirm | reason         |\n      | true    | customer asked |"
        )
    st.persona.elicitation = "accept"
    st.persona.elicitation_values = {h: v for h, v in zip(headings, rows[0], strict=True) if v != ""}


@given("the client declines elicitation requests")
def step_elicitation_decline(context: Any) -> None:
    """Declare elicitation and decline every request (the user said no).

    Example: Given the client declines elicitation requests
    """
    _before_connecting(context, "declining elicitation requests")
    state(context).persona.elicitation = "decline"


@given("the client cancels elicitation requests")
def step_elicitation_cancel(context: Any) -> None:
    """Declare elicitation and cancel every request (the user dismissed it).

    Example: Given the client cancels elicitation requests
    """
    _before_connecting(context, "cancelling elicitation requests")
    state(context).persona.elicitation = "cancel"


@given("the client exposes the roots:")
def step_roots(context: Any) -> None:
    """Declare roots and answer roots/list with these folders (table headings `uri` and `name`, name optional).

    Example:
        Given the client exposes the roots:
          | uri             | name |
          | file:///srv/app | app  |
    """
    st = state(context)
    _before_connecting(context, "exposing roots")
    headings, rows = table_rows(context)
    if headings not in (["uri", "name"], ["uri"]):
        raise UsageError(
            f"{st.location}: the roots table has the headings | uri | name | (name optional), got {headings}."
        )
    roots: list[tuple[str, str | None]] = []
    for row in rows:
        uri = row[0]
        if "://" not in uri:
            raise UsageError(f'{st.location}: the root "{uri}" is not a URI; write it as file:///path/to/folder.')
        name = row[1] if len(row) > 1 and row[1] != "" else None
        roots.append((uri, name))
    st.persona.roots = roots


# ---------------------------------------------------------------------------------------------
# what the server asked


def _declared(session: Session, what: str) -> str | None:
    persona = session.persona
    declared = {
        "sampling": persona.sampling_text is not None,
        "elicitation": persona.elicitation is not None,
    }[what]
    if declared:
        return None
    step = (
        'Given the client answers sampling requests with "<text>"'
        if what == "sampling"
        else "Given the client accepts elicitation requests with:"
    )
    return f'the client did not declare {what}, so the server cannot ask for it: add "{step}" before the server step.'


@then("the server requested sampling {n:Int} {unit:Times}")
def step_sampling_count(context: Any, n: int, unit: str) -> None:
    """Check how many sampling requests the server sent in this session.

    Example: Then the server requested sampling 1 time
    """
    session = current_session(context)
    session.raise_problems()
    got = session.sampling_asked.count(SAMPLING)  # exact, however many were kept
    if got != n:
        raise ExpectationFailed(
            f'The server "{session.name}" requested sampling {got} time(s), not {n}',
            expected=n,
            actual=got,
            tip=_declared(session, "sampling"),
        )


def _sampling_text(request: dict[str, Any]) -> str:
    parts: list[str] = []
    if request.get("systemPrompt"):
        parts.append(str(request["systemPrompt"]))
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
    return "\n".join(parts)


@then('the last sampling request contains "{needle:Q}"')
def step_sampling_contains(context: Any, needle: str) -> None:
    """Check the text of the last sampling request (its messages and system prompt).

    Example: Then the last sampling request contains "Summarize order"
    """
    wanted = expected_text(context, needle)
    session = current_session(context)
    session.raise_problems()
    last = session.sampling_asked.last(SAMPLING)  # the last that came, kept or only counted
    if last is None:
        raise ExpectationFailed(
            f'The server "{session.name}" made no sampling request',
            expected=f'a sampling request containing "{wanted}"',
            tip=_declared(session, "sampling"),
        )
    body = _sampling_text(last)
    if wanted not in body and wanted not in json.dumps(last, ensure_ascii=False):
        raise ExpectationFailed(
            f'The last sampling request does not contain "{wanted}"',
            actual=body or last,
        )


@then('the server requested elicitation with a message containing "{needle:Q}"')
def step_elicitation_message(context: Any, needle: str) -> None:
    """Check that one of the server's elicitation requests had a message containing a text.

    Example: Then the server requested elicitation with a message containing "Delete the account"
    """
    wanted = expected_text(context, needle)
    session = current_session(context)
    session.raise_problems()
    messages = [str(r.get("message", "")) for r in session.elicitation_asked.of(ELICITATION)]
    if not any(wanted in m for m in messages):
        unseen = session.elicitation_asked.count(ELICITATION) - len(messages)
        raise ExpectationFailed(
            f'The server "{session.name}" requested no elicitation with a message containing "{wanted}"'
            + (f" (of the first {len(messages)}; {unseen} more were counted, not kept)" if unseen else ""),
            actual=messages or "no elicitation requests",
            tip=_declared(session, "elicitation"),
        )
