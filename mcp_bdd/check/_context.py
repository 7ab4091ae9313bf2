"""What every check sees: the server's declared surface, read once, and one way to call it.

Checks never talk to the SDK: they use the `Session` API (`request`, `list_all`, `call_tool`)
through this context, which records every tool call so the late checks (structuredContent
against outputSchema, leaks in error texts) judge every call any check made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from mcp_bdd.errors import McpBddError, RequestRefused
from mcp_bdd.session import Outcome, Session
from mcp_bdd.transcript import GATE_PROBE_NAME

__all__ = ["CheckContext", "CheckOptions", "ToolCall", "json_array", "json_object", "why_not_called"]

#: A tool name no server has: calling it must be rejected.
UNKNOWN_NAME = GATE_PROBE_NAME  # the report leaves its requests out of the coverage map


@dataclass
class CheckOptions:
    """How a check run behaves (the `mcp-bdd check` flags, or a step's defaults)."""

    allow_writes: bool = False  # call tools not annotated readOnlyHint: true
    write_tools: tuple[str, ...] = ()  # ... or only these
    no_call: tuple[str, ...] = ()  # never call these (slow by design, costly, ...)
    only_tools: tuple[str, ...] = ()  # call only these (the per-tool step); empty: every callable tool
    seed: int = 0  # the generator's seed: the same seed replays the same calls
    examples: int = 4  # generated valid calls per tool (beyond the minimal one)
    min_description: int = 20  # shortest acceptable description, in characters
    max_items: int = 25  # resources read / prompts got at most, per listing
    call_timeout: float = 5.0  # per generated tool call: silent this long (no answer, no progress) counts as hung
    progress_cap: float = 30.0  # ... and a call still reporting progress is waited for this long in all
    max_result_bytes: int = 1_000_000  # a result larger than this (as JSON) floods the model's context
    max_tool_tokens: int = 1_000  # one tool's definition, estimated in tokens (characters / 4)
    max_catalog_tokens: int = 20_000  # every tool's definition together, estimated likewise
    max_findings: int = 25  # of one check at one severity; the rest folded into one that counts them (0: all)


@dataclass
class ToolCall:
    tool: str
    arguments: dict[str, object]
    outcome: Outcome
    purpose: str  # "minimal valid call", "missing required argument 'x'", ...


@dataclass
class CheckContext:
    session: Session
    options: CheckOptions
    tools: list[dict[str, object]] = field(default_factory=list)
    resources: list[dict[str, object]] = field(default_factory=list)
    templates: list[dict[str, object]] = field(default_factory=list)
    prompts: list[dict[str, object]] = field(default_factory=list)
    listing_errors: dict[str, str] = field(default_factory=dict)  # kind -> why listing it failed
    calls: list[ToolCall] = field(default_factory=list)
    answers: list[Outcome] = field(default_factory=list)  # every other request the checks made
    notes: list[str] = field(default_factory=list)  # informational lines (error shapes, skipped tools)
    skipped: dict[str, str] = field(default_factory=dict)  # tool -> why it was not called
    minimal_calls: dict[str, dict[str, object] | None] = field(default_factory=dict)  # tool -> its minimal call
    hung: set[str] = field(default_factory=set)  # tools that hung once: never called again (each costs a timeout)
    progress: dict[int, int] = field(default_factory=dict)  # id(outcome) -> progress notifications during the call
    refused: set[str] = field(default_factory=set)  # targets refused with HTTP 401/403: never judged, not asked again
    refused_listings: dict[str, RequestRefused] = field(default_factory=dict)  # kind -> its listing's refusal
    shared: dict[str, Any] = field(default_factory=dict)  # what a group's checks learn once and share (auth)
    _noted: set[str] = field(default_factory=set, repr=False)
    _by_name: tuple[tuple[int, int], dict[str, dict[str, object]]] = field(default=((0, 0), {}), repr=False)

    def note_once(self, note: str) -> None:
        if note not in self._noted:  # a set: a check notes once per tool, and a catalog may have thousands
            self._noted.add(note)
            self.notes.append(note)

    # -- the server's identity and declarations ------------------------------------------------
    @property
    def capabilities(self) -> dict[str, object]:
        caps = self.session.client.server_capabilities if self.session.client else None
        return caps.model_dump(by_alias=True, exclude_none=True, mode="json") if caps is not None else {}

    @property
    def server_info(self) -> dict[str, object]:
        info = self.session.client.server_info if self.session.client else None
        return info.model_dump(by_alias=True, exclude_none=True, mode="json") if info is not None else {}

    @property
    def protocol(self) -> str:
        return self.session.protocol_version

    @property
    def legacy(self) -> bool:
        return self.session.is_legacy

    def declares(self, capability: str) -> bool:
        return capability in self.capabilities

    def read_surface(self) -> None:
        """List everything the server declares, once; a listing that fails is kept as its reason."""
        for kind, capability in (("tools", "tools"), ("resources", "resources"), ("templates", "resources"),
                                 ("prompts", "prompts")):  # fmt: skip
            if not self.declares(capability):
                continue
            try:
                setattr(self, kind, self.session.list_all(kind))
            except RequestRefused as exc:  # the credentials, not the server: protocol.listings says so
                self.refused_listings[kind] = exc
            except (McpBddError, AssertionError) as exc:
                if kind == "templates" and self._not_implemented(types.ListResourceTemplatesRequest(params=None)):
                    continue  # resource templates are optional within the `resources` capability
                self.listing_errors[kind] = str(exc)

    def _not_implemented(self, request: types.ClientRequest) -> bool:
        outcome = self.session.request(request)
        return outcome.error is not None and outcome.error.code == types.METHOD_NOT_FOUND

    # -- calling tools ---------------------------------------------------------------------------
    def tool(self, name: str) -> dict[str, object] | None:
        """The first listed tool of that name: looked up, as every call any check made is (scanning
        the list for each made the late checks quadratic). Rebuilt when `tools` is another list."""
        built_for, index = self._by_name
        if built_for != (id(self.tools), len(self.tools)):
            index = {}
            for tool in self.tools:
                index.setdefault(str(tool.get("name")), tool)
            self._by_name = ((id(self.tools), len(self.tools)), index)
        return index.get(name)

    def may_call(self, tool: dict[str, object]) -> bool:
        """Only read-only tools, unless the user opted in: a check must never change the world."""
        name = str(tool.get("name"))
        annotations = json_object(tool.get("annotations"))
        if self.options.only_tools and name not in self.options.only_tools:
            return False
        if name in self.options.no_call:
            self.skipped.setdefault(name, "left out with --no-call")
            return False
        if annotations.get("readOnlyHint") is True:
            return True
        if self.options.allow_writes or name in self.options.write_tools:
            return True
        self.skipped.setdefault(name, why_not_called(name, annotations))
        return False

    def callable_tools(self) -> list[dict[str, object]]:
        return [t for t in self.tools if self.may_call(t)]

    # Every request goes through `_asked`: an outcome is None when the server refused it with
    # HTTP 401/403. That is the credentials the check was given, not the server's behaviour: it
    # is noted once per target and never judged (a missing scope is no broken tool), and the
    # Optional makes every check say what it does without an answer.
    def call(
        self, name: str, arguments: dict[str, object] | None, purpose: str, *, generated: bool = False
    ) -> Outcome | None:
        if generated:
            outcome = self._asked(f"tool {name}", lambda: self._call_while_alive(name, arguments))
        else:
            outcome = self._asked(f"tool {name}", lambda: self.session.call_tool(name, arguments))
        if outcome is not None:
            self.calls.append(ToolCall(name, dict(arguments or {}), outcome, purpose))
        return outcome

    def send_call(self, name: str, request: types.CallToolRequest, purpose: str) -> Outcome | None:
        """A tools/call request as built (one the SDK's models would not send: `arguments: null`),
        within the generated calls' timeout, recorded like every other call."""
        timeout = min(self.options.call_timeout, self.session.timeout)
        outcome = self._asked(f"tool {name}", lambda: self.session.request(request, timeout=timeout))
        if outcome is not None:
            self.calls.append(ToolCall(name, {}, outcome, purpose))
        return outcome

    def _call_while_alive(self, name: str, arguments: dict[str, object] | None) -> Outcome:
        """A generated call: hung when silent for `call_timeout`, alive while it reports progress (up to
        `progress_cap`). A tool that needed the longer wait is slow by design: it is not called again,
        since each further call would cost as long (a note says so)."""
        from mcp_bdd.check._alive import call_while_alive

        idle = min(self.options.call_timeout, self.session.timeout)
        seen = call_while_alive(self.session, name, arguments, idle, max(idle, self.options.progress_cap))
        if seen.progress:
            self.progress[id(seen.outcome)] = seen.progress
        if seen.extended and not seen.outcome.timed_out and name not in self.hung:
            self.hung.add(name)
            self.notes.append(
                f"tool {name}: answered after {seen.outcome.elapsed_ms / 1000:.1f} s, kept alive by "
                f"{seen.progress} progress notifications: slow by design, not called again"
            )
        return seen.outcome

    def request(self, request: types.ClientRequest, target: str | None = None) -> Outcome | None:
        """`target`: what a refusal names in the notes (default: the request's method)."""
        target = target or str(getattr(request, "method", type(request).__name__))
        return self.answered(target, lambda: self.session.request(request))

    def ping(self) -> Outcome | None:
        return self.answered("ping", self.session.ping)

    def answered(self, target: str, send: Callable[[], Outcome]) -> Outcome | None:
        """`send()`'s outcome, recorded with the other answers, under the refusal rule of `_asked`."""
        outcome = self._asked(target, send)
        if outcome is not None:
            self.answers.append(outcome)
        return outcome

    def _asked(self, target: str, send: Callable[[], Outcome]) -> Outcome | None:
        """`send()`'s outcome, or None without sending when `target` was refused before."""
        if target in self.refused:
            return None
        outcome = send()
        if outcome.refusal is None:
            return outcome
        self.refused.add(target)
        self.notes.append(f"{target}: not checked: the server refused the {outcome.method} request with "
                          f"{outcome.refusal.said()}")  # fmt: skip
        self.note_once(f"refused requests: {outcome.refusal.tip}")  # the tip once, however many were
        return None

    def read_resource(self, uri: str) -> Outcome | None:
        request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
        return self.request(request, f"resource {uri}")

    def get_prompt(self, name: str, arguments: dict[str, str] | None) -> Outcome | None:
        params = types.GetPromptRequestParams(name=name, arguments=arguments)
        return self.request(types.GetPromptRequest(params=params), f"prompt {name}")

    def complete_prompt(self, prompt: str, argument: str, value: str) -> Outcome | None:
        params = types.CompleteRequestParams(
            ref=types.PromptReference(type="ref/prompt", name=prompt),
            argument=types.CompletionArgument(name=argument, value=value),
        )
        return self.request(types.CompleteRequest(params=params), f"completion of prompt {prompt}")

    def set_level(self, level: str) -> Outcome | None:
        request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))  # type: ignore[arg-type]
        return self.request(request, "logging/setLevel")


def json_object(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one: a field of another shape reads as absent.
    What a server declared is its raw JSON (the SDK's client has checked a listing's shape:
    `protocol.listings` fails one that does not fit)."""
    return value if isinstance(value, dict) else {}


def json_array(value: object) -> list[object]:
    """`value` when it is a JSON array, else an empty one (as `json_object`)."""
    return value if isinstance(value, list) else []


def why_not_called(name: str, annotations: dict[str, object]) -> str:
    """Why a tool that may change something was not called, by what it declares, and the way to
    call it anyway (the scoped way first: one tool, not every one)."""
    if annotations.get("destructiveHint") is True:
        why = "not annotated readOnlyHint: true, and annotated destructiveHint: true: it may destroy data"
    elif annotations.get("readOnlyHint") is False:
        why = "not annotated readOnlyHint: true (readOnlyHint: false): it writes"
    else:
        why = "not annotated readOnlyHint: true, so it may write"
    return f"{why} (--allow-writes={name} calls it)"


def error_text(outcome: Outcome) -> str:
    """What a rejected call said: the JSON-RPC error message (+ data), or an isError result's text."""
    from mcp_bdd.session import result_text

    if outcome.error is not None:
        data = outcome.error.data
        return outcome.error.message + (f" {data}" if data is not None else "")
    if outcome.raw is not None:
        return result_text(outcome.raw)
    return outcome.exception or ""
