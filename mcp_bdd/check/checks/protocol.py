"""Protocol checks: the server does what it declares, in the era it negotiated."""

from __future__ import annotations

from collections.abc import Iterator

import mcp_types as types
from pydantic import BaseModel, ValidationError

from mcp_bdd.check._context import UNKNOWN_NAME, CheckContext, error_text, json_array
from mcp_bdd.check._finding import Problem, call_of
from mcp_bdd.check._registry import Severity, check
from mcp_bdd.session import Outcome

KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


def _failed(outcome: Outcome) -> bool:
    return not outcome.ok


@check(
    "protocol.identity",
    severity="medium",
    group="protocol",
    rationale="Clients and logs identify a server by serverInfo name and version, on a spec-defined protocol version.",
)
def identity(ctx: CheckContext) -> Iterator[Problem]:
    """serverInfo has a non-empty `name` and `version`; the negotiated protocol version is one the spec defines."""
    info = ctx.server_info
    for key in ("name", "version"):
        if not str(info.get(key) or "").strip():
            yield Problem(
                title=f"serverInfo has no {key}",
                details=f"serverInfo: {info}",
                tip=f"set the server's {key} (e.g. MCPServer(name, version=...)).",
            )
    if ctx.protocol not in KNOWN_VERSIONS:
        yield Problem(
            title=f'the negotiated protocol version "{ctx.protocol}" is not one the spec defines',
            details=f"known versions: {', '.join(KNOWN_VERSIONS)}",
            tip="answer with one of the versions the client offered.",
        )


@check(
    "protocol.listings",
    severity="high",
    group="protocol",
    rationale="A declared capability that does not answer breaks every client that trusts the declaration.",
)
def listings(ctx: CheckContext) -> Iterator[Problem]:
    """tools/list, resources/list, resources/templates/list and prompts/list answer (cursor followed to
    the end, no repeated cursor) when the matching capability is declared. One refused with HTTP
    401/403 is a finding too, of the credentials: nothing of that kind could be checked."""
    for kind, why in ctx.listing_errors.items():
        yield Problem(
            title=f"listing {kind} failed although the server declares the capability",
            details=why,
            tip=f"implement {kind}/list (following nextCursor to the end), or stop declaring the capability.",
        )
    for kind, refused in ctx.refused_listings.items():  # a gate that checked none of them must not pass
        yield Problem(
            title=f"the server refused to list {kind} with the check's credentials, so none was checked",
            details=f"{refused.title}: {refused.actual}",
            tip=refused.tip or "",
        )


@check(
    "protocol.pagination",
    severity="medium",
    group="protocol",
    rationale="A listing that repeats items across pages makes a client show or call the same thing twice.",
)
def pagination(ctx: CheckContext) -> Iterator[Problem]:
    """Listed tools, prompts, resources and templates are unique by name / URI across all pages."""
    for kind, key, items in (
        ("tools", "name", ctx.tools),
        ("prompts", "name", ctx.prompts),
        ("resources", "uri", ctx.resources),
        ("templates", "uriTemplate", ctx.templates),
    ):
        seen: set[str] = set()
        repeated: list[str] = []
        for item in items:
            name = str(item.get(key))
            if name in seen:
                repeated.append(name)
            seen.add(name)
        if repeated:
            pages = ctx.session.pages.get(kind, 1)
            yield Problem(
                title=f"{kind}/list returned {len(repeated)} item(s) more than once ({pages} page(s))",
                details="repeated: " + ", ".join(sorted(set(repeated))[:20]),
                tip="each nextCursor must lead to the items after the last page, never back.",
            )


@check(
    "protocol.resources-read",
    severity="high",
    group="protocol",
    rationale="Every resource a server lists must be readable: clients show the list to users and models.",
)
def resources_read(ctx: CheckContext) -> Iterator[Problem]:
    """resources/read answers for each listed resource (up to `max_items`), with non-empty `contents`."""
    for resource in ctx.resources[: ctx.options.max_items]:
        uri = str(resource.get("uri"))
        outcome = ctx.read_resource(uri)
        if outcome is None:  # refused (401/403): noted by the context, not judged
            continue
        if _failed(outcome):
            yield Problem(
                title="a listed resource cannot be read",
                target=f"resource {uri}",
                details=outcome.describe(),
                call=call_of(outcome),
                tip="list only resources that resources/read can serve.",
            )
        elif not (outcome.raw or {}).get("contents"):
            yield Problem(
                title="a listed resource reads as empty contents",
                target=f"resource {uri}",
                call=call_of(outcome),
                tip="return at least one content item (text or blob) for a listed resource.",
                severity=None,
            )


def _prompt_arguments(prompt: dict[str, object]) -> dict[str, str]:
    return {
        str(a.get("name")): "example"
        for a in json_array(prompt.get("arguments"))
        if isinstance(a, dict) and a.get("required")
    }


@check(
    "protocol.prompts-get",
    severity="high",
    group="protocol",
    rationale="Every listed prompt must be gettable with its required arguments: that is all the list promises.",
)
def prompts_get(ctx: CheckContext) -> Iterator[Problem]:
    """prompts/get answers for each listed prompt (up to `max_items`) given its required arguments
    (each set to "example"), with a `messages` list — or rejects the values cleanly with -32602
    (an internal error, a timeout or a crash is a finding)."""
    for prompt in ctx.prompts[: ctx.options.max_items]:
        name = str(prompt.get("name"))
        outcome = ctx.get_prompt(name, _prompt_arguments(prompt) or None)
        if outcome is None:
            continue
        if outcome.error is not None and outcome.error.code == -32602:
            # "example" may not be a value the prompt knows: a clean invalid-params answer is fine
            ctx.notes.append(f'prompt {name} rejected "example" arguments with -32602: {outcome.error.message[:100]!r}')
            continue
        if _failed(outcome):
            yield Problem(
                title="a listed prompt fails with its required arguments",
                target=f"prompt {name}",
                details=outcome.describe(),
                call=call_of(outcome),
                tip="a prompt must work with any value of its declared arguments, or declare what it accepts.",
            )
        elif not isinstance((outcome.raw or {}).get("messages"), list):
            yield Problem(
                title="prompts/get returned no messages list",
                target=f"prompt {name}",
                call=call_of(outcome),
                tip="return {messages: [...]}.",
            )


@check(
    "protocol.completions",
    severity="medium",
    group="protocol",
    rationale="A server that declares completions must answer completion/complete for its prompts' arguments.",
)
def completions(ctx: CheckContext) -> Iterator[Problem]:
    """With `completions` declared: completion/complete for the first argument of the first prompt that has
    one answers with `completion.values` (a list, possibly empty)."""
    if not ctx.declares("completions"):
        return
    for prompt in ctx.prompts:
        args = [a for a in json_array(prompt.get("arguments")) if isinstance(a, dict) and a.get("name")]
        if not args:
            continue
        name, arg = str(prompt.get("name")), str(args[0]["name"])
        outcome = ctx.complete_prompt(name, arg, "")
        if outcome is None:
            return
        values = ((outcome.raw or {}).get("completion") or {}).get("values")
        if _failed(outcome) or not isinstance(values, list):
            yield Problem(
                title="completion/complete fails although the server declares completions",
                target=f"prompt {name}",
                details=outcome.describe(),
                call=call_of(outcome),
                tip="answer {completion: {values: []}} when there is nothing to suggest.",
            )
        return


@check(
    "protocol.legacy-basics",
    severity="high",
    group="protocol",
    rationale="In the 2025-11-25 era ping must always answer and a server declaring logging must accept setLevel.",
)
def legacy_basics(ctx: CheckContext) -> Iterator[Problem]:
    """Legacy era only (2026-07-28 has neither): `ping` answers; with `logging` declared,
    `logging/setLevel` to "info" answers."""
    if not ctx.legacy:
        ctx.notes.append(f"ping and logging/setLevel not checked: {ctx.protocol} has neither")
        return
    outcome = ctx.ping()
    if outcome is not None and _failed(outcome):
        yield Problem(title="ping fails", details=outcome.describe(), call=call_of(outcome),
                      tip="answer ping with an empty result at any time.")  # fmt: skip
    if ctx.declares("logging"):
        outcome = ctx.set_level("info")
        if outcome is not None and _failed(outcome):
            yield Problem(
                title="logging/setLevel fails although the server declares logging",
                details=outcome.describe(),
                call=call_of(outcome),
                tip="accept logging/setLevel, or stop declaring the logging capability.",
            )


def _shape(outcome: Outcome) -> str:
    if outcome.error is not None:
        return f"JSON-RPC error {outcome.error.code}"
    if outcome.is_error_result:
        return "an isError result"
    return outcome.describe()


@check(
    "protocol.unknown-names",
    severity="medium",
    group="protocol",
    rationale="A call to a tool, prompt or resource that does not exist must be rejected, never answered as success.",
)
def unknown_names(ctx: CheckContext) -> Iterator[Problem]:
    """tools/call, prompts/get and resources/read with a name no server has are rejected: a JSON-RPC error
    or an `isError` result both count (the notes say which shape the server uses)."""
    probes: list[tuple[str, str, Outcome | None]] = []
    if ctx.declares("tools"):
        probes.append(("tool", UNKNOWN_NAME, ctx.call(UNKNOWN_NAME, {}, "unknown tool")))
    if ctx.declares("prompts"):
        probes.append(("prompt", UNKNOWN_NAME, ctx.get_prompt(UNKNOWN_NAME, None)))
    if ctx.declares("resources"):
        uri = f"mcp-bdd-check://{UNKNOWN_NAME}"
        probes.append(("resource", uri, ctx.read_resource(uri)))
    for kind, name, outcome in probes:
        if outcome is None:  # refused (401/403): noted by the context, not judged
            continue
        if outcome.timed_out or outcome.exception:
            yield Problem(
                title=f"an unknown {kind} made the server hang or fail",
                target=f"{kind} {name}",
                details=outcome.describe(),
                call=call_of(outcome),
                tip=f"reject an unknown {kind} at once with a JSON-RPC error (-32602) or an error result.",
                severity=Severity.HIGH,
            )
            continue
        rejected = outcome.error is not None or (kind == "tool" and outcome.is_error_result)
        if not rejected:
            yield Problem(
                title=f"an unknown {kind} was answered as a success",
                target=f"{kind} {name}",
                call=call_of(outcome),
                tip=f"reject an unknown {kind} (JSON-RPC -32602, or isError: true for tools).",
            )
        else:
            said = error_text(outcome)
            ctx.notes.append(f"unknown {kind} rejected with {_shape(outcome)}: {said[:120]!r}")


#: The SDK's models of the results the checks receive (mcp_types: the spec's schema as pydantic models).
RESULT_MODELS: dict[str, type[BaseModel]] = {
    "tools/call": types.CallToolResult,
    "resources/read": types.ReadResourceResult,
    "prompts/get": types.GetPromptResult,
    "completion/complete": types.CompleteResult,
}


@check(
    "protocol.result-shapes",
    severity="high",
    group="protocol",
    rationale="A result that does not fit the spec's schema is rejected or misread by every strict client.",
    late=True,
)
def result_shapes(ctx: CheckContext) -> Iterator[Problem]:
    """Every tools/call, resources/read, prompts/get and completion/complete result any check received fits
    the spec's schema, as the SDK's own models (mcp_types) define it; a result the SDK's client refused to
    read on a live connection counts too. (Listings are parsed by the SDK's client itself: a listing that
    does not fit fails `protocol.listings`.)"""
    seen: set[tuple[str, str]] = set()
    outcomes = [c.outcome for c in ctx.calls] + ctx.answers
    alive = ctx.session.alive  # a failure on a live connection is an answer the client could not read
    tip = "send results exactly as the spec's schema defines them (content items need a known `type`)."
    for outcome in outcomes:
        model = RESULT_MODELS.get(outcome.method)
        if model is None:
            continue
        target = _target_of(outcome)
        if outcome.raw is None:
            if outcome.exception is not None and alive and (target, "") not in seen:
                seen.add((target, ""))  # the SDK's client refused the result itself (it validates some)
                yield Problem(
                    title=f"a {outcome.method} result could not be read by the SDK's client",
                    target=target,
                    details=outcome.exception[:1500],
                    call=call_of(outcome),
                    tip=tip,
                )
            continue
        try:
            model.model_validate(outcome.raw, by_name=False)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            if (target, where) in seen:
                continue
            seen.add((target, where))
            yield Problem(
                title=f"a {outcome.method} result does not fit the MCP schema",
                target=target,
                details=f"at {where or '(root)'}: {first.get('msg')} ({exc.error_count()} error(s) in all)",
                call=call_of(outcome),
                tip=tip,
            )


def _target_of(outcome: Outcome) -> str:
    params = outcome.params or {}
    if outcome.method == "tools/call":
        return f"tool {params.get('name')}"
    if outcome.method == "prompts/get":
        return f"prompt {params.get('name')}"
    if outcome.method == "resources/read":
        return f"resource {params.get('uri')}"
    return "server"
