"""Notifications, logging and progress, read from the session's timeline.

Every notification is collected from the moment the session opens (on 2026-07-28 through the
listen streams of mcp_bdd.listen). "within <s> seconds" passes as soon as a matching
notification has arrived, even before the step; on timeout the failure lists what arrived
instead. Steps without "within" still allow a short grace period, because over stdio and HTTP a
notification may be processed just after the response it preceded.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from mcp_bdd._text import did_you_mean, size_text
from mcp_bdd.errors import ExpectationFailed, RequestRefused, UsageError
from mcp_bdd.session import KEEP, KEEP_BYTES, Session, Timeline
from mcp_bdd.steps._base import StepContext, at_least, current_session, expected_text, given, state, text, then

__all__ = ["KINDS", "LOG_LEVELS"]

#: `<kind>` of "I receive a "<kind>" notification" -> the notification's method.
KINDS = {
    "tools list changed": "notifications/tools/list_changed",
    "resources list changed": "notifications/resources/list_changed",
    "prompts list changed": "notifications/prompts/list_changed",
    "resource updated": "notifications/resources/updated",
    "log message": "notifications/message",
    "progress": "notifications/progress",
}
_NAMES = {method: kind for kind, method in KINDS.items()}
#: The listen-stream kind that delivers each list-changed method on 2026-07-28.
_STREAM_KIND = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: How long steps without "within" wait for a notification that may still be in flight.
GRACE_SECONDS = 1.0


def _arrived(view: Timeline) -> str:
    """What the session received, as "2 × log message, 5 × progress" (for failure messages)."""
    counts = view.counts()
    if not counts:
        return "no notifications at all"
    listed = ", ".join(f"{n} × {_NAMES.get(method, method)}" for method, n in sorted(counts.items()))
    unseen = view.unseen()
    if unseen:  # a flood: the steps read the first KEEP, the counts are exact
        listed += (
            f" (the last {unseen} were counted, not kept: a scenario keeps its first {KEEP}, "
            f"{size_text(KEEP_BYTES)} of them at most)"
        )
    return listed


def _listen_note(session: Session, method: str) -> str | None:
    """On 2026-07-28, make sure a listen stream delivers `method`; say what was missing if not.
    Raises ListenFailed when the server refused the stream with HTTP 401/403 (its `refusal`)."""
    if session.is_legacy or method not in _STREAM_KIND:
        return None
    from mcp_bdd.session import ListenFailed, covers, listening, open_stream

    kind = _STREAM_KIND[method]
    if covers(session, kind):
        return None
    why = listening(session).failure
    try:
        open_stream(session, kinds=[kind])
    except ListenFailed as exc:
        if exc.refusal is not None:
            raise
        return (
            f"protocol {session.protocol_version} delivers list changes only on a subscriptions/listen stream, "
            f"and none could be opened ({exc})."
        )
    if why:
        return f"the listen stream opened at connect time failed ({why}); one was opened by this step."
    return (
        f"the server did not advertise {kind}.listChanged, so no listen stream was opened at connect time; "
        "this step opened one, and changes made before it were not delivered."
    )


def _wait(
    context: StepContext,
    session: Session,
    method: str,
    seconds: float,
    title: str,
    predicate: Callable[[dict[str, object]], bool] | None = None,
    tip: str | None = None,
) -> None:
    if seconds < 0:
        raise UsageError(f"{state(context).location}: a wait cannot be negative (got {seconds:g} s).")
    from mcp_bdd.session import ListenFailed

    def wanted(m: str, p: dict[str, object]) -> bool:
        return m == method and (predicate is None or predicate(p))

    view = session.timeline
    try:
        note = _listen_note(session, method)
    except ListenFailed as exc:  # refused: nothing more can come, only what already did
        refusal = exc.refusal
        if refusal is None:
            raise
        if view.wait_for(wanted, 0):
            return
        raise RequestRefused(
            f"{title}: the server refused the subscriptions/listen stream that would deliver it",
            actual=refusal.said(),
            exchange=session.transcript.tail(5, session.name),
            tip=refusal.tip,
        ) from None
    if view.wait_for(wanted, seconds):
        return
    raise ExpectationFailed(
        title,
        expected=f"a {_NAMES.get(method, method)} notification ({method}) within {seconds:g} s",
        actual=f"arrived instead: {_arrived(view)}",
        exchange=session.transcript.tail(5, session.name),
        tip=" ".join(part for part in (note, tip) if part) or None,
    )


def _log_tip(session: Session) -> str | None:
    if session.is_legacy or session.log_level is not None:
        return None
    return (
        f"on protocol {session.protocol_version} a server sends log messages only to requests that ask for them: "
        'add "Given the log level is "debug"" (before or after the server step).'
    )


@then('I {tense:Receive} a "{kind:Q}" notification within {seconds:Num} {unit:SecondWord}')
def step_receive(context: StepContext, tense: str, kind: str, seconds: float, unit: str) -> None:
    """Wait until a notification of a kind has arrived (passes at once if it already has; "received" works too).

    Example: Then I receive a "tools list changed" notification within 2 seconds
    """
    _receive(context, kind, seconds, None)


@then('I {tense:Receive} a "{kind:Q}" notification on "{server:Q}" within {seconds:Num} {unit:SecondWord}')
def step_receive_on(context: StepContext, tense: str, kind: str, server: str, seconds: float, unit: str) -> None:
    """Wait until a named server has sent a notification of a kind (passes at once if it already has).

    Example: Then I receive a "progress" notification on "shop" within 1 second
    """
    _receive(context, kind, seconds, server)


def _receive(context: StepContext, kind: str, seconds: float, server: str | None) -> None:
    name = text(context, kind)
    if name not in KINDS:
        raise UsageError(
            f'{state(context).location}: unknown notification kind "{name}". {did_you_mean(name, KINDS, "kind")}.'
        )
    session = current_session(context, server)
    method = KINDS[name]
    tip = None
    if method == "notifications/message":
        tip = _log_tip(session)
    elif method == "notifications/resources/updated":
        tip = 'updates come only for subscribed resources ("When I subscribe to the resource "<uri>"").'
    _wait(
        context,
        session,
        method,
        seconds,
        f'No "{name}" notification from "{session.name}" within {seconds:g} s',
        tip=tip,
    )


@then('I {tense:Receive} an update for the resource "{uri:Q}" within {seconds:Num} {unit:SecondWord}')
def step_resource_update(context: StepContext, tense: str, uri: str, seconds: float, unit: str) -> None:
    """Wait until the server tells that a subscribed resource changed (passes at once if it already did).

    Example: Then I receive an update for the resource "shop://catalog" within 5 seconds
    """
    session = current_session(context)
    wanted = text(context, uri)
    method = KINDS["resource updated"]
    others = sorted({str(p.get("uri")) for p in session.timeline.of(method)} - {wanted})
    tip = (
        f"updates arrived for other resources: {others}."
        if others
        else (
            'updates come only for subscribed resources: add "When I subscribe to the resource '
            f'"{wanted}"" before the change.'
        )
    )
    _wait(
        context,
        session,
        method,
        seconds,
        f'No update for the resource "{wanted}" within {seconds:g} s',
        predicate=lambda p: p.get("uri") == wanted,
        tip=tip,
    )


@then('no update for the resource "{uri:Q}" arrived after unsubscribing')
def step_no_update_after_unsubscribe(context: StepContext, uri: str) -> None:
    """Check that the server sent no update of a resource since the scenario unsubscribed from it.

    Example: Then no update for the resource "shop://catalog" arrived after unsubscribing
    """
    from mcp_bdd.steps.resources import updates_since_unsubscribing

    st = state(context)
    session = current_session(context)
    wanted = text(context, uri)
    late = updates_since_unsubscribing(session, wanted)
    if late is None:
        raise UsageError(
            f'{st.location}: the scenario did not unsubscribe from "{wanted}" '
            f'(add "When I unsubscribe from the resource "{wanted}"" before the change).'
        )
    if late:
        raise ExpectationFailed(
            f'The server "{session.name}" sent {late} update(s) of "{wanted}" after the client unsubscribed',
            expected="no notifications/resources/updated for it",
            actual=f"{late} update(s)",
            tip="a server must stop sending updates for a resource once the client unsubscribes "
            "(resources/unsubscribe, or the listen stream ended).",
        )


# ---------------------------------------------------------------------------------------------
# logging


@given('the log level is "{level:Q}"')
def step_log_level(context: StepContext, level: str) -> None:
    """Ask servers for log messages of this level and above (before the server step, or after it).

    Example: Given the log level is "debug"
    """
    st = state(context)
    wanted = text(context, level).lower()
    if wanted not in LOG_LEVELS:
        raise UsageError(f'{st.location}: unknown log level "{wanted}". {did_you_mean(wanted, LOG_LEVELS, "level")}.')
    st.log_level = wanted
    for session in st.sessions.values():
        if session.connected:
            session.set_log_level(wanted)


def _log_text(params: dict[str, object]) -> str:
    data = params.get("data")
    return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)


@then('the server logged {article:A} "{level:Q}" message containing "{needle:Q}"')
def step_logged(context: StepContext, article: str, level: str, needle: str) -> None:
    """Check that the server sent a log message of exactly this level whose data contains a text.

    Example: Then the server logged an "info" message containing "Order"
    """
    _logged(context, level, needle, None)


@then('the server logged {article:A} "{level:Q}" message containing "{needle:Q}" on "{server:Q}"')
def step_logged_on(context: StepContext, article: str, level: str, needle: str, server: str) -> None:
    """Check that a named server sent a log message of exactly this level whose data contains a text.

    Example: Then the server logged an "info" message containing "Order" on "shop"
    """
    _logged(context, level, needle, server)


def _logged(context: StepContext, level: str, needle: str, server: str | None) -> None:
    wanted = expected_text(context, needle)
    session = current_session(context, server)
    wanted_level = text(context, level).lower()
    if wanted_level not in LOG_LEVELS:
        raise UsageError(
            f'{state(context).location}: unknown log level "{wanted_level}". '
            f"{did_you_mean(wanted_level, LOG_LEVELS, 'level')}."
        )
    method = KINDS["log message"]

    def matches(m: str, p: dict[str, object]) -> bool:
        return m == method and p.get("level") == wanted_level and wanted in _log_text(p)

    view = session.timeline
    if view.wait_for(matches, GRACE_SECONDS):
        return
    logged = [f"[{p.get('level')}] {_log_text(p)[:200]}" for p in view.of(method)]
    raise ExpectationFailed(
        f'The server "{session.name}" logged no "{wanted_level}" message containing "{wanted}"',
        expected=f'a "{wanted_level}" log message containing "{wanted}"',
        actual=logged[-20:] or "no log messages at all",
        tip=_log_tip(session)
        or (
            f'messages below the log level "{session.log_level}" are not sent.'
            if session.log_level is not None and LOG_LEVELS.index(wanted_level) < LOG_LEVELS.index(session.log_level)
            else None
        ),
    )


# ---------------------------------------------------------------------------------------------
# progress


def _describe_progress(params: dict[str, object]) -> str:
    total = params.get("total")
    done = f"{params.get('progress')}/{total}" if total is not None else f"{params.get('progress')}"
    message = f" {params['message']!r}" if params.get("message") else ""
    return f"request #{params.get('request')}: {done}{message}"


@then("I {tense:Receive} at least {n:Int} progress {unit:Notifications}")
def step_progress_count(context: StepContext, tense: str, n: int, unit: str) -> None:
    """Check how many progress notifications arrived in this session (for all requests together).

    Example: Then I received at least 3 progress notifications
    """
    n = at_least(context, n, "I received at least 1 progress notification")
    session = current_session(context)
    method = KINDS["progress"]
    view = session.timeline
    # Counting inside the condition is fine: the timeline's condition holds a re-entrant lock.
    if view.wait_until(lambda: view.count(method) >= n, GRACE_SECONDS):
        return
    got = view.of(method)
    tip = "every tool call carries a progress token; the server reports progress with ctx.report_progress()."
    if not got and session.progress_received:  # they came, none on a token a request of this session gave
        tip = (
            f"{session.progress_received} progress notification(s) came, none with the progressToken of a "
            f"request of this session (the first: {json.dumps(session.progress_first[0], default=str)[:200]}): "
            "the server must send the token from the request's _meta.progressToken, unchanged, while it runs."
        )
    raise ExpectationFailed(
        f"Only {view.count(method)} progress notification(s) arrived",
        expected=f"at least {n}",
        actual=[_describe_progress(p) for p in got] or "no progress notifications",
        tip=tip,
    )


@then("the progress never decreased")
def step_progress_monotonic(context: StepContext) -> None:
    """Check that, for every request, each progress value was at least the one before it.

    Example: Then the progress never decreased
    """
    session = current_session(context)
    view = session.timeline
    got = view.of(KINDS["progress"])
    if not got:
        raise ExpectationFailed(
            f'No progress notifications arrived from "{session.name}", so there is no progress to check',
            actual=f"arrived instead: {_arrived(view)}",
            tip='call a tool that reports progress first (and check "I received at least <n> progress notifications").',
        )
    by_request: dict[object, list[float]] = {}
    for p in got:  # recorded by the request's progress callback: its number, and the request's seq
        progress = p.get("progress", 0)
        by_request.setdefault(p.get("request"), []).append(
            float(progress) if isinstance(progress, int | float) else 0.0
        )
    for request, values in by_request.items():
        for i in range(1, len(values)):
            if values[i] < values[i - 1]:
                raise ExpectationFailed(
                    f"The progress went down from {values[i - 1]:g} to {values[i]:g} "
                    f"(notification {i + 1} of request #{request})",
                    expected="progress values that never decrease",
                    actual=values,
                )
