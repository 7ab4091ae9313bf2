"""Resources: listings, reads, and subscriptions to resource updates.

A read (like getting a prompt or asking for completions) that the server rejects fails its own
step, with what the server offers instead, unless a later step of the scenario checks the
rejection ("Then the request is rejected with error code <code>"): then the step only records it.

Subscriptions work in both protocol eras: `resources/subscribe` on 2025-11-25, and a
`subscriptions/listen` stream for the URI on 2026-07-28 (see mcp_bdd.listen).
"""

from __future__ import annotations

import base64
import binascii
import weakref

import mcp_types as types

from mcp_bdd._text import did_you_mean, produced_by
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.runtime import LastResult
from mcp_bdd.session import Outcome, Session
from mcp_bdd.steps._base import (
    StepContext,
    current_session,
    expected_text,
    keep_result,
    objects,
    state,
    text,
    then,
    when,
)

__all__ = ["advertised", "capability", "rejection_checked_later", "resource_uris"]


# ---------------------------------------------------------------------------------------------
# shared with prompts.py and notifications.py


#: the steps that check a rejection or a refusal (HTTP 401/403) of the request before them
_CHECKS_REJECTION = (
    "the request is rejected with error code",
    "the request is refused for insufficient scope",
    "the last HTTP response has",
    "the server answers 401",
)


def rejection_checked_later(context: StepContext) -> bool:
    """Whether a later step of the running scenario checks a rejection ("the request is rejected
    ...") or a refusal ("the request is refused for insufficient scope", "the last HTTP response
    has status 403"): the step that made the request leaves its failure to that one."""
    st = state(context)
    scenario = getattr(context, "scenario", None)
    steps = list(getattr(scenario, "all_steps", None) or getattr(scenario, "steps", None) or [])
    here = next((i for i, s in enumerate(steps) if str(getattr(s, "location", "")) == st.location), None)
    later = steps[here + 1 :] if here is not None else steps
    return any(str(getattr(s, "name", "")).startswith(_CHECKS_REJECTION) for s in later)


def capability(session: Session, name: str, flag: str | None = None) -> bool:
    """Whether the server advertised a capability (`resources`) or one of its flags (`resources`, `subscribe`)."""
    assert session.client is not None
    caps = session.client.server_capabilities
    found = getattr(caps, name, None) if caps is not None else None
    if found is None:
        return False
    return flag is None or bool(getattr(found, flag, None))


def advertised(session: Session) -> str:
    """The server's capabilities as it sent them, for failure messages."""
    assert session.client is not None
    caps = session.client.server_capabilities
    if caps is None:
        return "(none)"
    return str(caps.model_dump(by_alias=True, mode="json", exclude_none=True))


def resource_uris(session: Session) -> tuple[list[str], list[str]]:
    """The resource URIs and URI templates the server lists (never raises: failures give empty lists)."""
    uris: list[str] = []
    templates: list[str] = []
    try:
        uris = [str(r.get("uri")) for r in session.listing("resources")]
        templates = [str(t.get("uriTemplate")) for t in session.listing("templates")]
    except Exception:  # only a hint for a failure message
        pass
    return uris, templates


# ---------------------------------------------------------------------------------------------
# listings


@when("I list the resources")
def step_list_resources(context: StepContext) -> None:
    """Fetch the server's resource list (following every page).

    Example: When I list the resources
    """
    current_session(context).list_all("resources")


@when('I list the resources on "{server:Q}"')
def step_list_resources_on(context: StepContext, server: str) -> None:
    """Fetch the resource list of a named server (following every page).

    Example: When I list the resources on "shop"
    """
    current_session(context, server).list_all("resources")


@then('the resources include "{uri:Q}"')
def step_resources_include(context: StepContext, uri: str) -> None:
    """Check that the resource list includes a URI (fetched if no list was taken yet).

    Example: Then the resources include "shop://catalog"
    """
    _resources_include(context, uri, None)


@then('the resources include "{uri:Q}" on "{server:Q}"')
def step_resources_include_on(context: StepContext, uri: str, server: str) -> None:
    """Check that a named server lists a resource URI.

    Example: Then the resources include "shop://catalog" on "shop"
    """
    _resources_include(context, uri, server)


def _resources_include(context: StepContext, uri: str, server: str | None) -> None:
    session = current_session(context, server)
    wanted = text(context, uri)
    listed = session.listing("resources")
    uris = [str(r.get("uri")) for r in listed]
    if wanted not in uris:
        raise ExpectationFailed(
            f'The server "{session.name}" lists no resource "{wanted}"',
            expected=f"a resource with uri {wanted}",
            actual=uris or "(no resources)",
            details="  " + did_you_mean(wanted, uris, "resource"),
            tip="a URI the server serves from a template is not listed: check "
            '"Then the resource templates include" instead.',
        )


@when("I list the resource templates")
def step_list_templates(context: StepContext) -> None:
    """Fetch the server's resource templates (following every page).

    Example: When I list the resource templates
    """
    current_session(context).list_all("templates")


@then('the resource templates include "{template:Q}"')
def step_templates_include(context: StepContext, template: str) -> None:
    """Check that the resource templates include a URI template, written exactly as the server lists it.

    Example: Then the resource templates include "shop://docs/{topic}"
    """
    session = current_session(context)
    wanted = text(context, template)
    listed = session.listing("templates")
    templates = [str(t.get("uriTemplate")) for t in listed]
    if wanted not in templates:
        raise ExpectationFailed(
            f'The server "{session.name}" lists no resource template "{wanted}"',
            actual=templates or "(no resource templates)",
            details="  " + did_you_mean(wanted, templates, "resource template"),
        )


# ---------------------------------------------------------------------------------------------
# reading


def _read(context: StepContext, uri: str, server: str | None) -> None:
    st = state(context)
    session = current_session(context, server)
    wanted = text(context, uri)
    outcome = session.request(types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=wanted)))
    st.last_request = outcome
    keep_result(context, "resource", outcome, wanted)
    session.raise_problems()
    if not outcome.ok and not rejection_checked_later(context):
        raise _read_failure(session, wanted, outcome)


def failure_tip(session: Session, outcome: Outcome) -> str:
    """The tip of a read or a prompt that failed: how to check a rejection, or what to do about a timeout."""
    if outcome.timed_out:
        return session.timeout_tip(outcome)
    if outcome.refusal is not None:
        return outcome.refusal.tip
    return 'to check the rejection itself, follow with "Then the request is rejected with error code <code>".'


def _read_failure(session: Session, uri: str, outcome: Outcome) -> ExpectationFailed:
    exchange = produced_by(session.transcript.items, session.name)  # before the listings made for the hint
    uris, templates = resource_uris(session)
    known = uri in uris
    details = "" if known else "  " + did_you_mean(uri, uris, "resource")
    if templates and not known:
        details += "\n  Resource templates: " + ", ".join(f'"{t}"' for t in templates)
    return ExpectationFailed(
        f'Reading the resource "{uri}" from "{session.name}" failed',
        actual=outcome.describe(),
        details=details or None,
        kind=outcome.failure_kind,
        exchange=exchange,
        tip=failure_tip(session, outcome),
    )


@when('I read the resource "{uri:Q}"')
def step_read(context: StepContext, uri: str) -> None:
    """Read a resource; its contents become "the result" (a rejection fails the step, see the module doc).

    Example: When I read the resource "shop://catalog"
    """
    _read(context, uri, None)


@when('I read the resource "{uri:Q}" on "{server:Q}"')
def step_read_on(context: StepContext, uri: str, server: str) -> None:
    """Read a resource of a named server; its contents become "the result".

    Example: When I read the resource "shop://catalog" on "shop"
    """
    _read(context, uri, server)


def _last_read(context: StepContext) -> tuple[LastResult, list[dict[str, object]]]:
    st = state(context)
    last = st.last
    if last is None or last.kind != "resource":
        outcome = st.last_request
        if last is None and outcome is not None and outcome.method == "resources/read":
            session = st.sessions.get(outcome.server)
            if session is not None:
                raise _read_failure(session, str(outcome.params.get("uri")), outcome)
        raise UsageError(
            f'{st.location}: no resource was read yet in this scenario (use "When I read the resource "<uri>"" first).'
        )
    contents = objects(last.raw.get("contents"))
    return last, contents


def _summary(contents: list[dict[str, object]]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for item in contents:
        entry = {k: v for k, v in item.items() if k not in ("text", "blob")}
        if "text" in item:
            entry["text"] = str(item["text"])[:500]
        if "blob" in item:
            entry["blob"] = f"<{len(str(item['blob']))} base64 characters>"
        out.append(entry)
    return out


@then('the resource text contains "{needle:Q}"')
def step_resource_text(context: StepContext, needle: str) -> None:
    """Check that the text of the resource just read contains a text (case-sensitive).

    Example: Then the resource text contains "PROD-123"
    """
    wanted = expected_text(context, needle)
    last, contents = _last_read(context)
    if wanted in last.text:
        return
    binary = [c for c in contents if "blob" in c and "text" not in c]
    raise ExpectationFailed(
        f'The resource "{last.name}" does not contain "{wanted}"',
        actual=last.text if last.text else _summary(contents),
        tip='the resource is binary (blob contents): check it with "Then the resource is binary".'
        if binary and not last.text
        else None,
    )


@then('the resource MIME type is "{mime:Q}"')
def step_resource_mime(context: StepContext, mime: str) -> None:
    """Check the MIME type of the resource just read (every item of its contents).

    Example: Then the resource MIME type is "application/json"
    """
    last, contents = _last_read(context)
    wanted = text(context, mime)
    actual = [c.get("mimeType") for c in contents]
    if not contents or any(m != wanted for m in actual):
        raise ExpectationFailed(
            f'The resource "{last.name}" has another MIME type',
            expected=wanted,
            actual=(actual[0] if len(actual) == 1 else actual) if contents else "(no contents)",
            tip="a missing mimeType is shown as null: the server did not declare one." if None in actual else None,
        )


@then("the resource is binary")
def step_resource_binary(context: StepContext) -> None:
    """Check that the resource just read is binary: every item of its contents is a base64 blob.

    Example: Then the resource is binary
    """
    last, contents = _last_read(context)
    bad = [c for c in contents if "blob" not in c]
    if not contents or bad:
        raise ExpectationFailed(
            f'The resource "{last.name}" is not binary',
            expected="blob contents (base64)",
            actual=_summary(contents) if contents else "(no contents)",
        )
    for item in contents:
        try:
            base64.b64decode(str(item["blob"]), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ExpectationFailed(
                f'The resource "{last.name}" has a blob that is not valid base64',
                actual=f"{exc}: {str(item['blob'])[:80]}",
            ) from None


# ---------------------------------------------------------------------------------------------
# subscriptions


@when('I subscribe to the resource "{uri:Q}"')
def step_subscribe(context: StepContext, uri: str) -> None:
    """Ask for updates of one resource (resources/subscribe, or a listen stream on 2026-07-28).

    Example: When I subscribe to the resource "shop://catalog"
    """
    st = state(context)
    session = current_session(context)
    wanted = text(context, uri)
    if not capability(session, "resources", "subscribe"):
        raise ExpectationFailed(
            f'The server "{session.name}" does not support resource subscriptions',
            expected="the capability resources.subscribe = true",
            actual=advertised(session),
            tip='check it with "Then the server does not support resource subscriptions" instead.',
        )
    if session.is_legacy:
        outcome = session.request(types.SubscribeRequest(params=types.SubscribeRequestParams(uri=wanted)))
        st.last_request = outcome
        if outcome.ok or rejection_checked_later(context):
            return
        session.check(outcome)
        return
    _listen_for_updates(context, session, wanted)


def _listen_for_updates(context: StepContext, session: Session, wanted: str) -> None:
    """2026-07-28: a listen stream for `wanted`, its outcome kept as the last request (for "the
    request is rejected ..." and the refusal steps after it, as resources/subscribe's is)."""
    from mcp_bdd.session import ListenFailed, open_stream

    st = state(context)
    params: dict[str, object] = {"notifications": {"resourceSubscriptions": [wanted]}}
    failed: ListenFailed | None = None
    try:
        stream = open_stream(session, uris=[wanted])
    except ListenFailed as exc:
        failed = exc  # said below, outside the except: no "during handling of ..." chain
    if failed is not None:
        refusal = failed.refusal
        outcome = st.last_request = Outcome(
            "subscriptions/listen",
            params,
            server=session.name,
            exception=None if refusal else str(failed),
            refusal=refusal,
        )
        if refusal is not None:  # the credentials' scope, as for resources/subscribe
            if not rejection_checked_later(context):
                session.check(outcome)  # raises RequestRefused
            return
        raise ExpectationFailed(
            f'Subscribing to "{wanted}" on "{session.name}" failed: the subscriptions/listen stream did not open',
            actual=str(failed),
            exchange=produced_by(session.transcript.items, session.name),
            tip=f"protocol {session.protocol_version} delivers resource updates only on listen streams; "
            'with protocol = "legacy" the step sends resources/subscribe instead.',
        )
    st.last_request = Outcome("subscriptions/listen", params, raw={"acknowledged": stream.honored}, server=session.name)
    if not stream.honors_uri(wanted):
        raise ExpectationFailed(
            f'The server "{session.name}" did not accept a subscription to "{wanted}"',
            expected=f"resourceSubscriptions including {wanted}",
            actual=stream.honored,
        )


#: per session, how many resource updates had arrived when the scenario unsubscribed from a URI
#: (what "no update ... since unsubscribing" counts from)
_UNSUBSCRIBED: weakref.WeakKeyDictionary[Session, dict[str, int]] = weakref.WeakKeyDictionary()


def updates_since_unsubscribing(session: Session, uri: str) -> int | None:
    """Updates of `uri` kept since the scenario unsubscribed from it (None: it never did)."""
    mark = _UNSUBSCRIBED.get(session, {}).get(uri)
    if mark is None:
        return None
    updates = session.timeline.of("notifications/resources/updated")
    return sum(1 for p in updates[mark:] if p.get("uri") == uri)


@when('I unsubscribe from the resource "{uri:Q}"')
def step_unsubscribe(context: StepContext, uri: str) -> None:
    """Stop the updates of one resource (resources/unsubscribe, or its listen stream closed on 2026-07-28).

    Example: When I unsubscribe from the resource "shop://catalog"
    """
    st = state(context)
    session = current_session(context)
    wanted = text(context, uri)
    _UNSUBSCRIBED.setdefault(session, {})[wanted] = len(session.timeline.of("notifications/resources/updated"))
    if not session.is_legacy:
        _close_streams(session, wanted)
        return
    outcome = session.request(types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=wanted)))
    st.last_request = outcome
    if outcome.ok or rejection_checked_later(context):
        return
    raise ExpectationFailed(
        f'Unsubscribing from "{wanted}" on "{session.name}" failed',
        expected="an empty result",
        actual=outcome.describe(),
        exchange=produced_by(session.transcript.items, session.name),
        kind=outcome.failure_kind,
        tip="a server that supports subscriptions answers resources/unsubscribe, even for a URI it never updated.",
    )


def _close_streams(session: Session, uri: str) -> None:
    """2026-07-28: end the listen streams that carry `uri` (there is no unsubscribe request)."""
    from mcp_bdd.session._hop import hops
    from mcp_bdd.session._listen import listening

    streams = [s for s in listening(session).streams if uri in s.uris and s.scope is not None and s.running]
    if not streams:
        raise ExpectationFailed(
            f'There is no subscription to "{uri}" on "{session.name}" to end',
            expected=f"a listen stream carrying {uri}",
            actual=[list(s.uris) for s in listening(session).streams] or "no listen streams",
            tip=f'subscribe first: "When I subscribe to the resource "{uri}"".',
        )

    async def cancel() -> None:
        for stream in streams:
            assert stream.scope is not None
            stream.scope.cancel()

    hops(session.portal).call(cancel)
    session.transcript.record("info", session.name, "subscriptions/listen", {"ended": f"unsubscribed from {uri}"})
