"""Input-required rounds (2026-07-28): what the server asked mid-request, round by round.

How often the server asked for the client's help in the middle of a request, what it asked, and
how it treats a client that gets the rounds wrong.

A server that needs sampling, elicitation or roots during `tools/call`, `prompts/get` or
`resources/read` answers "input required" with its questions and an opaque request state; the
client answers them (as the "Given the client ..." steps say) and resends the request with the
state echoed unchanged. The Then steps read the rounds of the last request. The Given steps make
the client get the rounds wrong on purpose, before the server step like every persona step.
"""

from __future__ import annotations

import re

from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.session import DEVIATIONS, Deviation, InputRound, Outcome
from mcp_bdd.steps._base import StepContext, given, state, text, then
from mcp_bdd.steps.client import before_connecting

__all__: list[str] = []

#: what a product owner calls each kind of request, and the method on the wire
KINDS = {"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}


def _deviate(context: StepContext, deviation: Deviation) -> None:
    before_connecting(context, f"a client that {DEVIATIONS[deviation]}")
    state(context).persona.input_deviation = deviation


@given("the client tampers with the request state")
def step_tamper_state(context: StepContext) -> None:
    """Make the client change one character of each request state it echoes (a server must reject it).

    Example: Given the client tampers with the request state
    """
    _deviate(context, "tamper-state")


@given("the client resends without its input responses")
def step_omit_responses(context: StepContext) -> None:
    """Make the client resend the first round without answering it (the server should ask again).

    Example: Given the client resends without its input responses
    """
    _deviate(context, "omit-responses")


@given("the client adds an input response nobody asked for")
def step_extra_response(context: StepContext) -> None:
    """Make the client add an answer under a key the server never asked (the server should ignore it).

    Example: Given the client adds an input response nobody asked for
    """
    _deviate(context, "extra-response")


@given("the client sends malformed input responses")
def step_malformed_responses(context: StepContext) -> None:
    """Make the client answer the first round with values that are not responses (the server must
    refuse them: an error, or the same questions again).

    Example: Given the client sends malformed input responses
    """
    _deviate(context, "malformed-responses")


def _last(context: StepContext) -> Outcome:
    outcome = state(context).last_request
    if outcome is None:
        raise UsageError(
            f"{state(context).location}: no request was sent yet. Call a tool, get a prompt or read a "
            'resource first, e.g. When I call the tool "<tool>".'
        )
    return outcome


def _described(rounds: list[InputRound]) -> list[str]:
    return [r.describe() for r in rounds] or ["no round: the server answered at once"]


def _round(context: StepContext, number: int) -> InputRound:
    outcome = _last(context)
    if not 1 <= number <= len(outcome.rounds):
        raise ExpectationFailed(
            f'The {outcome.method} request on "{outcome.server}" had no input round {number}',
            expected=f"at least {number} round(s)",
            actual=_described(outcome.rounds),
        )
    return outcome.rounds[number - 1]


def _method(context: StepContext, kind: str) -> str:
    wanted = text(context, kind)
    if wanted not in KINDS:
        raise UsageError(
            f"{state(context).location}: {wanted!r} is no kind of input request. Use one of: " + ", ".join(KINDS) + "."
        )
    return KINDS[wanted]


def _same_key(asked: str, wanted: str) -> bool:
    """A request key as the server sent it, or its last name: a Python MCPServer keys a resolver's
    question by its qualified name (`app.server:create.<locals>.gift_recipient#1`)."""
    return asked == wanted or re.split(r"[:.]", asked.split("#")[0])[-1] == wanted


@then("the server asked for input {n:Int} {unit:Times}")
def step_round_count(context: StepContext, n: int, unit: str) -> None:
    """Check how many input-required rounds the last request took (0: it was answered at once).

    Example: Then the server asked for input 2 times
    """
    outcome = _last(context)
    if len(outcome.rounds) != n:
        raise ExpectationFailed(
            f'The server "{outcome.server}" asked for input {len(outcome.rounds)} time(s) during '
            f"{outcome.method}, not {n}",
            expected=n,
            actual=_described(outcome.rounds),
        )


@then('input round {n:Int} asked for "{key:Q}" by {kind:Method}')
def step_round_asked(context: StepContext, n: int, key: str, kind: str) -> None:
    """Check that an input round asked, under a key, for one kind of help: elicitation, sampling or roots.
    The key is the one the server sent, or its last name (a Python server's resolver name).

    Example: Then input round 1 asked for "recipient" by elicitation
    """
    found, wanted_key, wanted = _round(context, n), text(context, key), _method(context, kind)
    if not any(_same_key(asked, wanted_key) and method == wanted for asked, method in found.asked.items()):
        raise ExpectationFailed(
            f'Input round {n} did not ask for "{wanted_key}" by {kind}',
            expected={wanted_key: wanted},
            actual=found.asked or "nothing (state only)",
        )


@then('input round {n:Int} asked with a message containing "{expected:Q}"')
def step_round_message(context: StepContext, n: int, expected: str) -> None:
    """Check what an input round asked in words (an elicitation's message, a sampling request's text).

    Example: Then input round 2 asked with a message containing "card"
    """
    found, wanted = _round(context, n), text(context, expected)
    if not any(wanted in message for message in found.messages.values()):
        raise ExpectationFailed(
            f'Input round {n} asked nothing containing "{wanted}"', expected=wanted, actual=found.messages
        )


@then("input round {n:Int} carried a request state")
def step_round_state(context: StepContext, n: int) -> None:
    """Check that an input round came with a request state (which the client echoes unchanged).

    Example: Then input round 1 carried a request state
    """
    found = _round(context, n)
    if not found.request_state:
        raise ExpectationFailed(f"Input round {n} carried no request state", actual=found.describe())


@then("no input round asked by {kind:Method}")
def step_round_never(context: StepContext, kind: str) -> None:
    """Check that no round of the last request asked for a kind of help (e.g. one the client lacks).

    Example: Then no input round asked by elicitation
    """
    outcome, wanted = _last(context), _method(context, kind)
    asking = [r.describe() for r in outcome.rounds if wanted in r.asked.values()]
    if asking:
        raise ExpectationFailed(
            f'The server "{outcome.server}" asked by {kind} during {outcome.method}',
            expected=f"no request by {wanted}",
            actual=asking,
            tip="a server asks only for what the client declared (the capabilities in the request's _meta).",
        )


@then("the server refused the input responses")
def step_responses_refused(context: StepContext) -> None:
    """Check that the server did not accept the client's input responses: it answered with an
    error, or asked the same questions again.

    Example: Then the server refused the input responses
    """
    outcome = _last(context)
    if outcome.error is not None:
        return
    first, again = [*outcome.rounds, None, None][:2]
    if first is not None and again is not None and set(first.asked) & set(again.asked):
        return
    raise ExpectationFailed(
        f'The server "{outcome.server}" accepted the input responses of {outcome.method}',
        expected="an error, or the same questions again in round 2",
        actual=_described(outcome.rounds),
    )
