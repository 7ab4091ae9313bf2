"""The client's persona: how it answers server-to-client requests (sampling, elicitation, roots).

Declared by Given steps before the server step (`Persona`); the session advertises exactly those
capabilities, answers scripted requests with `ClientSide`'s handlers, refuses and records the
rest, and coerces scripted elicitation answers by the schema the server sent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import mcp_types as types

from mcp_bdd._sdk import ClientRequestContext, Dispatch, intercept_input_requests
from mcp_bdd.errors import UsageError
from mcp_bdd.session._outcome import dump
from mcp_bdd.session._rounds import Deviation
from mcp_bdd.session._timeline import Timeline
from mcp_bdd.transcript import Transcript, Weight

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["ELICITATION", "SAMPLING", "ClientSide", "HeaderDeviation", "Persona", "coerce_elicitation", "coerce_value"]

SAMPLING = "sampling/createMessage"
ELICITATION = "elicitation/create"


#: the routing header a client gets wrong on purpose (`_session.HEADER_DEVIATIONS` says each in words)
HeaderDeviation = Literal["wrong-method", "wrong-name", "no-name", "wrong-param", "wrong-task-name"]


@dataclass
class Persona:
    """How the client answers server-to-client requests, declared before the server step."""

    sampling_text: str | None = None
    elicitation: str | None = None  # "accept" | "decline" | "cancel"
    elicitation_values: dict[str, str] = field(default_factory=dict)
    roots: list[tuple[str, str | None]] | None = None
    #: the client advertises the MCP Apps extension (`io.modelcontextprotocol/ui`): a server may then
    #: bind UIs to its tools and answer with less text ("Given the client supports MCP Apps")
    apps: bool = False
    #: how URL-mode elicitations are answered ("accept" | "decline" | "cancel"): without `content`,
    #: which the spec says a URL-mode answer omits ("Given the client completes URL elicitations")
    url_elicitation: str | None = None
    #: sampling declares `sampling.tools`: the server may send tools and toolChoice with its requests
    sampling_tools: bool = False
    #: what the client does wrong on purpose in input-required rounds (`_rounds.DEVIATIONS`), to test
    #: that the server refuses it ("Given the client tampers with the request state")
    input_deviation: Deviation | None = None
    #: which routing header the client gets wrong on a call, a prompt or a read over streamable HTTP
    #: (`_session.HEADER_DEVIATIONS`), to test that the server checks it ("Given the client sends
    #: a wrong Mcp-Name header")
    header_deviation: HeaderDeviation | None = None

    def empty(self) -> bool:
        return (
            self.sampling_text is None
            and self.elicitation is None
            and self.url_elicitation is None
            and self.roots is None
            and not self.apps
        )

    def elicits(self) -> bool:
        """Whether the client declares elicitation (form mode, URL mode, or both)."""
        return self.elicitation is not None or self.url_elicitation is not None

    def sampling_capabilities(self) -> types.SamplingCapability | None:
        """The sampling sub-capabilities declared beside the sampling callback (`sampling.tools`)."""
        return types.SamplingCapability(tools=types.SamplingToolsCapability()) if self.sampling_tools else None


class ClientSide:
    """The server-to-client request handlers of a session (a part of `Session`)."""

    client: Client | None
    name: str
    persona: Persona
    transcript: Transcript
    #: the sampling and the elicitation requests the scenario scripted answers for, each kind on its
    #: own (a flood of one leaves room for the other): counted exactly, kept as bounded as
    #: notifications are (a server that asks in a loop must not take the run's memory)
    sampling_asked: Timeline
    elicitation_asked: Timeline
    roots_requests: int
    problems: list[str]

    @property
    def sampling_requests(self) -> list[dict[str, object]]:
        """The sampling requests kept (`sampling_asked` counts them all); a copy."""
        return self.sampling_asked.of(SAMPLING)

    @property
    def elicitation_requests(self) -> list[dict[str, object]]:
        """The elicitation requests kept (`elicitation_asked` counts them all); a copy."""
        return self.elicitation_asked.of(ELICITATION)

    def _record_unscripted_requests(self) -> None:
        """A server request the scenario did not script gets a clear error back, and is recorded.

        The SDK answers undeclared sampling / elicitation / roots with a terse default; we answer
        instead with what the scenario should declare, and the exchange shows in the transcript.
        """
        assert self.client is not None
        declared = {
            "sampling/createMessage": (
                "sampling",
                self.persona.sampling_text is not None,
                'Given the client answers sampling requests with "<text>"',
            ),
            "elicitation/create": (
                "elicitation",
                self.persona.elicits(),
                "Given the client accepts elicitation requests with:",
            ),
            "roots/list": ("roots", self.persona.roots is not None, "Given the client exposes the roots:"),
        }

        def wrap(original: Dispatch) -> Dispatch:
            async def dispatch(
                ctx: ClientRequestContext, request: types.InputRequest
            ) -> types.InputResponse | types.ErrorData:
                return await self._answer(ctx, request, original, declared)

            return dispatch

        intercept_input_requests(self.client.session, wrap)

    async def _answer(
        self,
        ctx: ClientRequestContext,
        request: types.InputRequest,
        original: Dispatch,
        declared: dict[str, tuple[str, bool, str]],
    ) -> types.InputResponse | types.ErrorData:
        """A scripted request goes to its handler; any other is refused with the phrase that would script it."""
        method = request.method
        what, scripted, phrase = declared.get(method, (method, False, ""))
        if scripted:
            return await original(ctx, request)
        req = self.transcript.record("server_request", self.name, method, dump(request.params))
        error = types.ErrorData(
            code=types.METHOD_NOT_FOUND,
            message=f"The test client does not offer {what}: the scenario did not declare it"
            + (f' ("{phrase}" before the server step).' if phrase else "."),
        )
        self.transcript.record("client_response", self.name, method, dump(error), related=req.seq)
        return error

    async def _on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        payload = dump(params)
        weight = Weight(payload)  # weighed once for both bounds
        self.sampling_asked.add(SAMPLING, payload, weight=weight)
        req = self.transcript.record("server_request", self.name, SAMPLING, payload, weight=weight)
        result = types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=self.persona.sampling_text or ""),
            model="mcp-bdd-scripted",
            stop_reason="endTurn",
        )
        self.transcript.record("client_response", self.name, "sampling/createMessage", dump(result), related=req.seq)
        return result

    async def _on_elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        payload = dump(params)
        weight = Weight(payload)  # weighed once for both bounds
        self.elicitation_asked.add(ELICITATION, payload, weight=weight)
        req = self.transcript.record("server_request", self.name, ELICITATION, payload, weight=weight)
        if payload.get("mode") == "url":  # answered without content, which URL mode omits
            url_result = types.ElicitResult(action=self.persona.url_elicitation or "decline")  # type: ignore[arg-type]
            self.transcript.record("client_response", self.name, ELICITATION, dump(url_result), related=req.seq)
            return url_result
        action = self.persona.elicitation or "decline"
        if action == "accept":
            schema = payload.get("requestedSchema")  # an object: the SDK validated the request
            schema = schema if isinstance(schema, dict) else {}
            try:
                content = coerce_elicitation(self.persona.elicitation_values, schema)
            except UsageError as exc:
                self.problems.append(str(exc))
                error = types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
                self.transcript.record("client_response", self.name, "elicitation/create", dump(error), related=req.seq)
                return error
            result = types.ElicitResult.model_validate({"action": "accept", "content": content})  # JSON values
        else:
            result = types.ElicitResult(action=action)  # type: ignore[arg-type]
        self.transcript.record("client_response", self.name, "elicitation/create", dump(result), related=req.seq)
        return result

    async def _on_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.roots_requests += 1
        req = self.transcript.record("server_request", self.name, "roots/list", {})
        roots = [types.Root(uri=uri, name=name) for uri, name in (self.persona.roots or [])]  # type: ignore[arg-type]
        result = types.ListRootsResult(roots=roots)
        self.transcript.record("client_response", self.name, "roots/list", dump(result), related=req.seq)
        return result


def coerce_elicitation(values: dict[str, str], schema: Mapping[str, object]) -> dict[str, object]:
    """Coerce scripted answers by the schema the server sent; a misfit names field and expectation."""
    found = schema.get("properties")
    props: dict[str, object] = found if isinstance(found, dict) else {}
    out: dict[str, object] = {}
    for key, text in values.items():
        if key not in props:
            from mcp_bdd._text import did_you_mean

            raise UsageError(
                f'The server asked for elicitation fields it names {sorted(props)}, but the scenario answers "{key}". '
                f"{did_you_mean(key, props, 'field')}."
            )
        out[key] = coerce_value(text, props[key], field_name=key, what="elicitation field")
    required = schema.get("required")
    missing = [k for k in required if k not in out] if isinstance(required, list) else []
    if missing:
        raise UsageError(
            f"The server's elicitation requires {missing}, which the scenario does not answer. "
            'Add them to the table of "Given the client accepts elicitation requests with:".'
        )
    return out


#: the types a JSON Schema `type` may name
JSON_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})


def schema_types(prop: object) -> list[str]:
    """The JSON types a schema property (as the server sent it) names: its `type`, or those of its
    `anyOf` branches. A server's schema is not trusted: a boolean schema (`true`: anything, valid
    JSON Schema) or a malformed `type` (`42`, `{"oops": 1}`, an unknown name) names none."""
    if not isinstance(prop, dict):
        return []
    kinds = prop.get("type")
    if kinds is None and isinstance(branches := prop.get("anyOf"), list):
        named = [branch.get("type") for branch in branches if isinstance(branch, dict)]
        kinds = [kind for branch in named for kind in (branch if isinstance(branch, list) else [branch])]
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, list):
        return []
    return [kind for kind in kinds if isinstance(kind, str) and kind in JSON_TYPES]


def coerce_value(text: str, prop: object, *, field_name: str, what: str = "argument") -> object:
    """Turn a table cell into the JSON type a schema property asks for (the text itself when it
    names none: `true`, `{}`, a malformed `type`)."""
    kinds = schema_types(prop)  # none unless `prop` is an object
    schema: dict[str, object] = prop if isinstance(prop, dict) else {}
    stripped = text.strip()
    if "null" in kinds and stripped == "null":
        return None
    for kind in kinds:
        if kind == "integer":
            with contextlib.suppress(ValueError):
                return int(stripped)
        elif kind == "number":
            with contextlib.suppress(ValueError):
                number = float(stripped)
                return (
                    int(number)
                    if number.is_integer() and "." not in stripped and "e" not in stripped.lower()
                    else number
                )
        elif kind == "boolean":
            if stripped.lower() in ("true", "false", "yes", "no"):
                return stripped.lower() in ("true", "yes")
        elif kind in ("array", "object"):
            try:
                value = json.loads(stripped)
            except ValueError:
                if kind == "array" and schema_types(schema.get("items")) == ["string"]:
                    return [part.strip() for part in stripped.split(",") if part.strip()]
                continue
            if isinstance(value, list if kind == "array" else dict):
                return value
        elif kind == "string":
            return text
    if not kinds or "string" in kinds:
        return text
    raise UsageError(
        f'The {what} "{field_name}" expects {" or ".join(kinds)}'
        + (f" ({said})" if isinstance(said := schema.get("description"), str) and said else "")
        + f", but the table says {text!r}. Write a value of that type"
        + (" (JSON for arrays and objects)." if {"array", "object"} & set(kinds) else ".")
    )
