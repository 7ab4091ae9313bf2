"""The client's side: how the test client answers server-to-client requests, and what it was asked.

The "Given the client ..." steps shape the capabilities the client declares when it connects
(sampling, elicitation, roots), so they must come before the server step of the scenario; the
client declares exactly what the scenario asks for, and nothing more. A scripted elicitation
answer that does not fit the schema the server sends fails the scenario at that request, naming
the field and the type it expects.
"""

from __future__ import annotations

import json

from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.matchers import coerce_literal
from mcp_bdd.session import ELICITATION, SAMPLING, Outcome, Session
from mcp_bdd.steps._base import (
    StepContext,
    column,
    current_session,
    expected_text,
    given,
    json_items,
    state,
    table_rows,
    text,
    then,
    when,
)

__all__: list[str] = []


def before_connecting(context: StepContext, what: str) -> None:
    st = state(context)
    if st.sessions:
        names = ", ".join(f'"{n}"' for n in st.sessions)
        raise UsageError(
            f"{st.location}: {what} shapes the capabilities the client declares when it connects, but the "
            f"session with {names} is already open. Move this step above the server step "
            '("Given the MCP server "<name>" is running"), or into the Background before it.'
        )


@given('the client answers sampling requests with "{reply:Q}"')
def step_sampling(context: StepContext, reply: str) -> None:
    """Declare sampling and answer every sampling/createMessage request with a fixed text.

    Example: Given the client answers sampling requests with "A short summary."
    """
    before_connecting(context, "answering sampling requests")
    state(context).persona.sampling_text = text(context, reply)


@given("the client accepts elicitation requests with:")
def step_elicitation_accept(context: StepContext) -> None:
    """Declare elicitation and accept every request with these values (coerced by the request's schema).

    Example:
        Given the client accepts elicitation requests with:
          | confirm | reason          |
          | true    | customer asked  |
    """
    st = state(context)
    before_connecting(context, "accepting elicitation requests")
    headings, rows = table_rows(context)
    if len(rows) != 1:
        raise UsageError(
            f"{st.location}: the elicitation table needs one row of values under its heading row of field names "
            f"(got {len(rows)}). Example:\n      | confirm | reason         |\n      | true    | customer asked |"
        )
    st.persona.elicitation = "accept"
    st.persona.elicitation_values = {h: v for h, v in zip(headings, rows[0], strict=True) if v != ""}


@given("the client declines elicitation requests")
def step_elicitation_decline(context: StepContext) -> None:
    """Declare elicitation and decline every request (the user said no).

    Example: Given the client declines elicitation requests
    """
    before_connecting(context, "declining elicitation requests")
    state(context).persona.elicitation = "decline"


@given("the client cancels elicitation requests")
def step_elicitation_cancel(context: StepContext) -> None:
    """Declare elicitation and cancel every request (the user dismissed it).

    Example: Given the client cancels elicitation requests
    """
    before_connecting(context, "cancelling elicitation requests")
    state(context).persona.elicitation = "cancel"


@given("the client completes URL elicitations")
def step_url_elicitation_accept(context: StepContext) -> None:
    """Declare elicitation and answer every URL-mode request as completed (accept, without content).

    Example: Given the client completes URL elicitations
    """
    before_connecting(context, "completing URL elicitations")
    state(context).persona.url_elicitation = "accept"


@given("the client declines URL elicitations")
def step_url_elicitation_decline(context: StepContext) -> None:
    """Declare elicitation and decline every URL-mode request (the user would not open the link).

    Example: Given the client declines URL elicitations
    """
    before_connecting(context, "declining URL elicitations")
    state(context).persona.url_elicitation = "decline"


@given("the client supports tools in sampling")
def step_sampling_tools(context: StepContext) -> None:
    """Declare sampling with tools (`sampling.tools`): the server may offer tools to the client's model.

    Combine it with "Given the client answers sampling requests with" for the reply; alone, the reply is empty.

    Example: Given the client supports tools in sampling
    """
    before_connecting(context, "supporting tools in sampling")
    persona = state(context).persona
    persona.sampling_tools = True
    if persona.sampling_text is None:
        persona.sampling_text = ""


@given("the client exposes the roots:")
def step_roots(context: StepContext) -> None:
    """Declare roots and answer roots/list with these folders (table headings `uri` and `name`, name optional).

    Example:
        Given the client exposes the roots:
          | uri             | name |
          | file:///srv/app | app  |
    """
    st = state(context)
    before_connecting(context, "exposing roots")
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
        "elicitation": persona.elicits(),
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
def step_sampling_count(context: StepContext, n: int, unit: str) -> None:
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


def _sampling_text(request: dict[str, object]) -> str:
    parts: list[str] = []
    if request.get("systemPrompt"):
        parts.append(str(request["systemPrompt"]))
    for message in json_items(request.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
    return "\n".join(parts)


@then('the last sampling request contains "{needle:Q}"')
def step_sampling_contains(context: StepContext, needle: str) -> None:
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
def step_elicitation_message(context: StepContext, needle: str) -> None:
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


# ---------------------------------------------------------------------------------------------
# URL-mode elicitation and the requested schema


def _url_elicitations(session: Session) -> list[dict[str, object]]:
    return [r for r in session.elicitation_asked.of(ELICITATION) if r.get("mode") == "url"]


def _no_url_elicitation(session: Session, wanted: str) -> ExpectationFailed:
    forms = [str(r.get("message", ""))[:200] for r in session.elicitation_asked.of(ELICITATION)]
    return ExpectationFailed(
        f'The server "{session.name}" requested no URL elicitation' + (f" of {wanted}" if wanted else ""),
        expected=f"elicitation/create with mode url{f' and url {wanted}' if wanted else ''}",
        actual=[str(r.get("url"))[:300] for r in _url_elicitations(session)] or forms or "no elicitation requests",
        tip=_declared(session, "elicitation")
        or "a server that needs a URL elicitation before it can go on may answer -32042 instead: "
        'check that with "Then the request is rejected with error code -32042".',
    )


@then('the server requested a URL elicitation of "{url:Q}"')
def step_url_elicitation(context: StepContext, url: str) -> None:
    """Check that the server asked the client to open a URL (a URL-mode elicitation with an elicitation id).

    Example: Then the server requested a URL elicitation of "https://pay.example.com/checkout"
    """
    wanted = text(context, url)
    session = current_session(context)
    session.raise_problems()
    found = [r for r in _url_elicitations(session) if r.get("url") == wanted]
    if not found:
        raise _no_url_elicitation(session, wanted)
    ident = found[-1].get("elicitationId")
    if not isinstance(ident, str) or not ident:
        raise ExpectationFailed(
            f"The URL elicitation of {wanted} has no elicitation id",
            expected="a non-empty elicitationId (the client matches the completion notification with it)",
            actual=found[-1],
        )


@when('I remember the elicitation id as "{var:Q}"')
def step_remember_elicitation_id(context: StepContext, var: str) -> None:
    """Save the elicitation id of the last URL elicitation as a variable, for `${var}` in later steps.

    Example: When I remember the elicitation id as "flow"
    """
    session = current_session(context)
    asked = _url_elicitations(session)
    ident = asked[-1].get("elicitationId") if asked else None
    if not isinstance(ident, str) or not ident:
        raise _no_url_elicitation(session, "")
    state(context).set_variable(text(context, var), ident)


ELICITATION_COMPLETE = "notifications/elicitation/complete"


@then("I receive the elicitation-complete notification within {seconds:Num} {unit:SecondWord}")
def step_elicitation_complete(context: StepContext, seconds: float, unit: str) -> None:
    """Wait until the server says a URL elicitation it asked for is complete (its elicitation id).

    Example: Then I receive the elicitation-complete notification within 5 seconds
    """
    session = current_session(context)
    asked = {str(r.get("elicitationId")) for r in _url_elicitations(session)}
    asked |= _required_ids(state(context).last_request)
    if not asked:
        raise _no_url_elicitation(session, "")

    def done(method: str, params: dict[str, object]) -> bool:
        return method == ELICITATION_COMPLETE and str(params.get("elicitationId")) in asked

    if not session.timeline.wait_for(done, seconds):
        got = [str(p.get("elicitationId"))[:80] for p in session.timeline.of(ELICITATION_COMPLETE)]
        raise ExpectationFailed(
            f"No elicitation-complete notification within {seconds:g} s",
            expected=f"{ELICITATION_COMPLETE} with an elicitationId among {sorted(asked)[:5]}",
            actual=got or "no elicitation-complete notifications",
            tip="a server sends it when the out-of-band flow (the page the URL opened) finishes; "
            "it is optional, so a server may also just answer the original request.",
        )


def _required_elicitations(outcome: Outcome | None) -> list[dict[str, object]]:
    """The elicitations a -32042 error's data asks for (untrusted: only well-formed entries)."""
    error = getattr(outcome, "error", None)
    if error is None or error.code != -32042 or not isinstance(error.data, dict):
        return []
    items = error.data.get("elicitations")
    return [e for e in items[:50] if isinstance(e, dict)] if isinstance(items, list) else []


def _required_ids(outcome: Outcome | None) -> set[str]:
    return {str(e.get("elicitationId")) for e in _required_elicitations(outcome) if e.get("elicitationId")}


@then('the error asks for a URL elicitation of "{url:Q}"')
def step_required_elicitation(context: StepContext, url: str) -> None:
    """Check the data of a -32042 error (URL elicitation required): it names this URL, with an elicitation id.

    Example: Then the error asks for a URL elicitation of "https://auth.example.com/consent"
    """
    wanted = text(context, url)
    outcome = state(context).last_request
    if outcome is None:
        raise UsageError(f"{state(context).location}: no request was made yet in this scenario.")
    needed = _required_elicitations(outcome)
    match = [e for e in needed if e.get("url") == wanted and e.get("mode", "url") == "url"]
    if not match or not match[0].get("elicitationId"):
        error = outcome.error
        raise ExpectationFailed(
            f"The {outcome.method} request did not ask for a URL elicitation of {wanted}",
            expected=f'error -32042 with data.elicitations including {{"mode": "url", "url": "{wanted}", '
            '"elicitationId": "..."}',
            actual=(
                f"error {error.code}: {str(error.message)[:300]}; data: {str(error.data)[:500]}"
                if error
                else outcome.describe()
            ),
        )


def _requested_field(context: StepContext, name: str) -> tuple[str, dict[str, object], dict[str, object]]:
    """The field `name` of the last form elicitation's requestedSchema: (name, its schema, the whole schema)."""
    session = current_session(context)
    session.raise_problems()
    forms = [r for r in session.elicitation_asked.of(ELICITATION) if r.get("mode", "form") == "form"]
    if not forms:
        raise ExpectationFailed(
            f'The server "{session.name}" made no form elicitation request',
            expected="elicitation/create with a requestedSchema",
            tip=_declared(session, "elicitation"),
        )
    schema = forms[-1].get("requestedSchema")
    schema = schema if isinstance(schema, dict) else {}
    found = schema.get("properties")
    props: dict[str, object] = found if isinstance(found, dict) else {}
    wanted = text(context, name)
    prop = props.get(wanted)
    if not isinstance(prop, dict):
        raise ExpectationFailed(
            f'The last elicitation asked for no field "{wanted}"',
            expected=wanted,
            actual=sorted(str(k)[:80] for k in props)[:50],
        )
    return wanted, prop, schema


@then('the elicitation asked for the field "{name:Q}" of type "{kind:Q}"')
def step_elicitation_field(context: StepContext, name: str, kind: str) -> None:
    """Check a field of the last form elicitation's requested schema and its JSON type.

    Example: Then the elicitation asked for the field "email" of type "string"
    """
    field, prop, _ = _requested_field(context, name)
    wanted = text(context, kind)
    if prop.get("type") != wanted:
        raise ExpectationFailed(
            f'The elicitation field "{field}" is not of type "{wanted}"', expected=wanted, actual=prop
        )


@then('the elicitation field "{name:Q}" is required')
def step_elicitation_required(context: StepContext, name: str) -> None:
    """Check that a field of the last form elicitation's requested schema is required.

    Example: Then the elicitation field "confirm" is required
    """
    field, _, schema = _requested_field(context, name)
    listed = schema.get("required")
    required: list[object] = listed if isinstance(listed, list) else []
    if field not in required:
        raise ExpectationFailed(
            f'The elicitation field "{field}" is not required', expected=field, actual=required or "no required fields"
        )


@then('the elicitation field "{name:Q}" defaults to "{value:Q}"')
def step_elicitation_default_text(context: StepContext, name: str, value: str) -> None:
    """Check the default text a field of the last form elicitation's requested schema proposes.

    Example: Then the elicitation field "size" defaults to "M"
    """
    field, prop, _ = _requested_field(context, name)
    wanted = text(context, value)
    if prop.get("default") != wanted:
        raise ExpectationFailed(
            f'The elicitation field "{field}" does not default to "{wanted}"',
            expected=wanted,
            actual=prop.get("default", "no default"),
        )


@then('the elicitation field "{name:Q}" defaults to {literal:Literal}')
def step_elicitation_default(context: StepContext, name: str, literal: str) -> None:
    """Check the default value a field of the last form elicitation's requested schema proposes.

    Example: Then the elicitation field "quantity" defaults to 1
    """
    field, prop, _ = _requested_field(context, name)
    wanted = coerce_literal(text(context, literal))
    if "default" not in prop or prop["default"] != wanted or type(prop["default"]) is not type(wanted):
        raise ExpectationFailed(
            f'The elicitation field "{field}" does not default to {literal}',
            expected=wanted,
            actual=prop.get("default", "no default"),
        )


def _choices(prop: dict[str, object]) -> list[object]:
    """A field's choices, in every form the spec allows: enum, oneOf/anyOf consts, and array items."""
    items = prop.get("items")
    source = items if prop.get("type") == "array" and isinstance(items, dict) else prop
    found: list[object] = list(json_items(source.get("enum")))
    for key in ("oneOf", "anyOf"):
        branches = source.get(key)
        for branch in branches if isinstance(branches, list) else []:
            if isinstance(branch, dict) and "const" in branch:
                found.append(branch["const"])
    return found[:200]


@then('the elicitation field "{name:Q}" offers the choices:')
def step_elicitation_choices(context: StepContext, name: str) -> None:
    """Check the choices a field of the last form elicitation offers (enum, titled oneOf, or a multi-select's items).

    Example:
        Then the elicitation field "size" offers the choices:
          | value |
          | S     |
          | M     |
    """
    wanted = column(context, "value", expectations=True)
    field, prop, _ = _requested_field(context, name)
    offered = [str(c) for c in _choices(prop)]
    missing = [w for w in wanted if w not in offered]
    if missing:
        raise ExpectationFailed(
            f'The elicitation field "{field}" does not offer {missing}', expected=wanted, actual=offered or prop
        )
