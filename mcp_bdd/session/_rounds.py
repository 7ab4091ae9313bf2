"""Input-required rounds (protocol 2026-07-28, SEP-2322): what the server asked, round by round,
and the client's deliberate deviations from the protocol.

On 2026-07-28 a server that needs the client's help (sampling, elicitation, roots) in the middle
of `tools/call`, `prompts/get` or `resources/read` answers with `resultType: "input_required"`,
its `inputRequests` and an opaque `requestState`; the client answers them and resends the request
with `inputResponses` and the state, echoed unchanged, until a final result comes. `InputRounds`
notes each such answer (`InputRound`) and, when the scenario asks for it, resends something a
correct client never would, to test that the server refuses it: a tampered state, no answers,
an extra answer, malformed answers.

What it does not cover: the rounds of a task (`tasks/result`) are the task's own business; the
answers themselves come from the persona (`_persona.ClientSide`), as for server-to-client requests
on 2025-11-25.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from mcp_types.methods import INPUT_REQUIRED_METHODS

__all__ = ["DEVIATIONS", "ROUND_METHODS", "Deviation", "InputRound", "InputRounds", "rounds_allowed"]

#: the requests whose answer may be input-required (SEP-2322): the SDK's three, and a task's result
#: (which the SDK's set leaves out); any other answered so is a violation
ROUND_METHODS = INPUT_REQUIRED_METHODS | {"tasks/result"}

Deviation = Literal["tamper-state", "omit-responses", "extra-response", "malformed-responses"]
#: what each deviation does, for messages and docs
DEVIATIONS: dict[str, str] = {
    "tamper-state": "alters the request state it echoes (every round)",
    "omit-responses": "resends without its input responses (the first round)",
    "extra-response": "adds an input response nobody asked for (every round)",
    "malformed-responses": "sends input responses that are not responses (the first round)",
}
EXTRA_KEY = "mcp-bdd-unrequested"
_MAX_KEYS = 50  # a round's requests kept for assertions: the keys a scenario can name, bounded
_MAX_TEXT = 500  # of each request's message, for failure messages


def rounds_allowed(method: str) -> bool:
    return method in ROUND_METHODS


@dataclass(frozen=True)
class InputRound:
    """One input-required answer: each request key with its method and (trimmed) message, and
    whether a request state came with it."""

    number: int
    asked: dict[str, str]
    messages: dict[str, str]
    request_state: bool

    def describe(self) -> str:
        asked = ", ".join(f'"{key}" by {method}' for key, method in self.asked.items()) or "nothing (state only)"
        state = "with a request state" if self.request_state else "without a request state"
        return f"round {self.number}: {asked}, {state}"


def _message(params: object) -> str:
    """What a request asked, in words: an elicitation's message, a sampling request's last text."""
    if not isinstance(params, dict):
        return ""
    if isinstance(said := params.get("message"), str):
        return said[:_MAX_TEXT]
    messages = params.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    content = last.get("content") if isinstance(last, dict) else None
    return str(content.get("text", ""))[:_MAX_TEXT] if isinstance(content, dict) else ""


@dataclass
class InputRounds:
    """The rounds of one request, noted as they come, and the deviation the client applies."""

    deviation: Deviation | None = None
    rounds: list[InputRound] = field(default_factory=list)

    def note(self, raw: Mapping[str, object]) -> InputRound:
        requests = raw.get("inputRequests")
        items = list(requests.items())[:_MAX_KEYS] if isinstance(requests, dict) else []
        asked = {str(k)[:200]: str(r.get("method", "?"))[:100] if isinstance(r, dict) else "?" for k, r in items}
        messages = {str(k)[:200]: _message(r.get("params")) if isinstance(r, dict) else "" for k, r in items}
        state = raw.get("requestState")
        found = InputRound(len(self.rounds) + 1, asked, messages, isinstance(state, str) and state != "")
        self.rounds.append(found)
        return found

    def resend(
        self, responses: dict[str, object] | None, state: str | None
    ) -> tuple[dict[str, object] | None, str | None]:
        """The input responses and request state to resend, after this round's deviation."""
        first = len(self.rounds) == 1
        if self.deviation == "tamper-state" and state:
            return responses, _tampered(state)
        if self.deviation == "omit-responses" and first:
            return None, state
        if self.deviation == "extra-response":
            return {**(responses or {}), EXTRA_KEY: {"action": "cancel"}}, state
        if self.deviation == "malformed-responses" and first:
            return {key: "not an input response" for key in responses or {EXTRA_KEY: None}}, state
        return responses, state


def _tampered(state: str) -> str:
    """The state with one character changed in its middle: same length and alphabet, so only an
    integrity check (not a shape check) can tell."""
    middle = len(state) // 2
    swap = "B" if state[middle] == "A" else "A"
    return state[:middle] + swap + state[middle + 1 :]
