"""Honest schemas, found by generated calls: does each tool do what its inputSchema says?

schemathesis for MCP. From each tool's inputSchema, hypothesis + hypothesis-jsonschema draw valid
calls (the seed is fixed and printed, so a finding replays with `--seed`), and the checks derive
bad ones: each required argument missing, each argument of the wrong type, an unknown extra
argument, values just past a declared boundary, very long strings, unicode. The invariants:
no crash, no JSON-RPC internal error (-32603), no hang past the timeout; a bad call gets -32602 or
an `isError` result whose text NAMES the offending argument (an assistant must be able to fix its
call from the message); an argument declared optional really is.

Only tools annotated `readOnlyHint: true` are called unless the user opted in (`--allow-writes`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import mcp_types as types
from pydantic import model_serializer

from mcp_bdd._schema import guarded
from mcp_bdd.check._context import CheckContext, ToolCall, error_text
from mcp_bdd.check._finding import Problem, call_of
from mcp_bdd.check._registry import Severity, check
from mcp_bdd.session import Outcome

if TYPE_CHECKING:
    from pydantic import SerializerFunctionWrapHandler

__all__ = ["draw_calls", "minimal_call"]

INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602
EXTRA_ARGUMENT = "mcp_bdd_unexpected_argument"
LONG_STRING = 10_000
UNICODE = "Zoë 世界 🚀 \u00e9\u0301 ﷽"
#: A value of the wrong type for each JSON type that no lenient parser turns into the right one.
WRONG: dict[str, object] = {
    "string": 12345,
    "integer": "not-a-number",
    "number": "not-a-number",
    "boolean": "not-a-boolean",
    "array": "not-an-array",
    "object": "not-an-object",
}


# ---------------------------------------------------------------------------------------------
# generation


def draw_calls(schema: dict[str, Any], count: int, seed: int) -> list[dict[str, object]]:
    """Up to `count` argument objects valid against `schema`, the same ones for the same seed (loosely typed:
    hypothesis-jsonschema takes a schema typed as JSON values, which a server's raw JSON is not to mypy)."""
    from hypothesis import HealthCheck, Phase, given, settings  # imported here: ~0.5 s, only when calling
    from hypothesis import seed as fixed_seed
    from hypothesis_jsonschema import from_schema

    drawn: list[dict[str, object]] = []
    try:
        strategy = guarded(schema, lambda: from_schema(schema))  # $ref loop / to nothing: input-valid says why

        @settings(
            max_examples=count,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @fixed_seed(seed)
        @given(strategy)
        def collect(value: object) -> None:
            if isinstance(value, dict) and value not in drawn:
                drawn.append(value)

        collect()
    except Exception:  # a schema hypothesis-jsonschema cannot generate from: the hand-made calls remain
        return drawn
    return drawn[:count]


def _input_schema(tool: dict[str, object]) -> dict[str, object]:
    schema = tool.get("inputSchema")
    return schema if isinstance(schema, dict) else {"type": "object"}


def _required(tool: dict[str, object]) -> list[str]:
    required = _input_schema(tool).get("required")
    return [str(r) for r in required] if isinstance(required, list) else []


def _properties(tool: dict[str, object]) -> dict[str, dict[str, object]]:
    props = _input_schema(tool).get("properties")
    return {str(k): v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}


def minimal_call(ctx: CheckContext, tool: dict[str, object]) -> dict[str, object] | None:
    """Only the required arguments, generated from the schema (None: the schema cannot be satisfied)."""
    cache = ctx.minimal_calls
    name = str(tool.get("name"))
    if name in cache:
        return cache[name]
    schema = copy.deepcopy(_input_schema(tool))
    required = _required(tool)
    props = _properties(tool)
    schema["properties"] = {k: v for k, v in props.items() if k in required}
    schema["additionalProperties"] = False
    schema.setdefault("type", "object")
    found = draw_calls(schema, 1, ctx.options.seed) if required else [{}]
    cache[name] = found[0] if found else None
    return cache[name]


# ---------------------------------------------------------------------------------------------
# judging an outcome


def _broke(outcome: Outcome) -> str | None:
    """Why an outcome breaks the invariants that hold for ANY call (None: it does not)."""
    if outcome.timed_out:
        return f"hung: no answer within {outcome.elapsed_ms / 1000:.1f} s"
    if outcome.exception is not None:  # the server went away, or sent what the client cannot read
        return f"failed: {outcome.exception}"
    if outcome.error is not None and outcome.error.code == INTERNAL_ERROR:
        return f"answered with an internal error (-32603): {outcome.error.message}"
    return None


def _rejected(outcome: Outcome) -> bool:
    return outcome.error is not None or outcome.is_error_result


def names_argument(text: str, argument: str) -> bool:
    """Does an error text name the argument? Whole words only; a name of one or two letters (`a`, `id`)
    must stand out: quoted, at the start of a line, or after argument/parameter/field/property."""
    name = re.escape(argument)
    if len(argument) > 2:
        return re.search(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", text) is not None
    patterns = (
        rf"[\"'`‘“]{name}[\"'`’”]",
        rf"(?m)^\s*{name}\s*$",
        rf"(?m)^\s*{name}\s*[:=]",
        rf"(?i)(argument|parameter|field|property|param|key|arg)s?:?\s+[\"'`]?{name}(?![A-Za-z0-9_])",
        rf"(?<![A-Za-z0-9_.])\.{name}(?![A-Za-z0-9_])|\[[\"']?{name}[\"']?\]",
        rf"(?m)\b(?:at|path:?)\s+{name}\s*$",  # zod: "... received undefined at a"
    )
    return any(re.search(p, text) for p in patterns)


class _Judge:
    """Runs the calls of one tool and turns broken invariants into problems."""

    def __init__(self, ctx: CheckContext, tool: dict[str, object]) -> None:
        self.ctx = ctx
        self.tool = tool
        self.name = str(tool.get("name"))
        self.target = f"tool {self.name}"
        self.dead = False

    def call(
        self, arguments: dict[str, object] | None, purpose: str, request: types.CallToolRequest | None = None
    ) -> Outcome | None:
        """The call, unless the tool hung or the server went away before; `request`: a tools/call
        request as built (the arguments are then its own)."""
        if self.dead or self.name in self.ctx.hung:
            return None
        if not self.ctx.session.alive:
            self.ctx.note_once("the server went away: the remaining generated calls were not made")
            self.dead = True
            return None
        if request is not None:
            outcome = self.ctx.send_call(self.name, request, purpose)
        else:
            outcome = self.ctx.call(self.name, arguments, purpose, generated=True)
        if outcome is None:  # refused (401/403): the check's credentials, noted; not a verdict
            self.dead = True
            return None
        if outcome.exception is not None and not self.ctx.session.alive:
            self.dead = True  # the server went away: more calls would only repeat it
        if outcome.timed_out:
            self.ctx.hung.add(self.name)  # each further call would cost a whole timeout again
            self.ctx.notes.append(f"tool {self.name}: not called again after it hung ({purpose})")
        return outcome

    def broken(self, outcome: Outcome, purpose: str) -> Problem | None:
        why = _broke(outcome)
        if why is None:
            return None
        if outcome.timed_out:
            progress = self.ctx.progress.get(id(outcome), 0)
            if progress:  # alive, but past the cap: said, so the reader raises the right limit
                why += (f"; it reported progress {progress} times, and was still running at the cap of "
                        f"{self.ctx.options.progress_cap:g} s")  # fmt: skip
            tip = (
                "answer within the timeout, or report progress while working (each progress notification "
                "extends the wait, up to --progress-cap); if the tool is slow by design, leave it out with "
                "--no-call, or raise --call-timeout / --progress-cap."
            )
        elif outcome.exception is not None:
            tip = (
                "the server went away on this call, or answered with a result the client cannot read "
                "(see protocol.result-shapes and the server's stderr)."
            )
        else:
            tip = "catch the failure in the tool and return -32602 or an isError text that says what to fix."
        return Problem(
            title=f"the tool {why.split(':')[0]} on a generated call",
            target=self.target,
            details=f"call: {purpose}\n{why}",
            call=call_of(outcome),
            tip=tip,
            severity=Severity.HIGH,
        )

    def must_reject(self, arguments: dict[str, object], purpose: str, argument: str) -> Iterator[Problem]:
        outcome = self.call(arguments, purpose)
        if outcome is None:
            return
        problem = self.broken(outcome, purpose)
        if problem is not None:
            yield problem
            return
        if not _rejected(outcome):
            yield Problem(
                title=f"a call with {purpose} was accepted",
                target=self.target,
                details=f"the inputSchema says this call is invalid, the tool answered as a success: "
                f"the schema does not tell the model what the tool accepts (argument {argument!r})",
                call=call_of(outcome),
                tip="validate arguments against the inputSchema, or make the schema say what the tool accepts.",
                severity=Severity.LOW,
            )
            return
        if not names_argument(error_text(outcome), argument):
            yield Problem(
                title=f"the error for {purpose} does not name the argument {argument!r}",
                target=self.target,
                details="an assistant fixes its call from the error text; this one does not say which argument "
                f"was wrong:\n{error_text(outcome)[:400]!r}",
                call=call_of(outcome),
                tip=f'say which argument is wrong and why, e.g. "{argument}: required" or '
                f"\"argument '{argument}' must be an integer\".",
                severity=Severity.MEDIUM,
            )

    def must_survive(self, arguments: dict[str, object], purpose: str) -> Iterator[Problem]:
        outcome = self.call(arguments, purpose)
        if outcome is None:
            return
        problem = self.broken(outcome, purpose)
        if problem is not None:
            yield problem


def _simple_type(prop: dict[str, object]) -> str | None:
    kind = prop.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return kinds[0] if len(kinds) == 1 else None
    return None


def _wrong_value(prop: dict[str, object]) -> object:
    kind = _simple_type(prop)
    if kind is None or kind not in WRONG:
        return None
    kinds = prop.get("type")
    if isinstance(kinds, list) and "string" in kinds and kind != "string":
        return None
    return WRONG[kind]


def _boundary_values(prop: dict[str, object]) -> list[tuple[object, str]]:
    """Values just outside what the property declares (each must be rejected)."""
    out: list[tuple[object, str]] = []
    kind = _simple_type(prop)
    if kind in ("integer", "number"):
        step = 1 if kind == "integer" else 0.5
        minimum, low = prop.get("minimum"), prop.get("exclusiveMinimum")
        maximum, high = prop.get("maximum"), prop.get("exclusiveMaximum")
        if isinstance(minimum, int | float):
            out.append((minimum - step, f"below its minimum {minimum}"))
        if isinstance(low, int | float):
            out.append((low, f"at its exclusiveMinimum {low}"))
        if isinstance(maximum, int | float):
            out.append((maximum + step, f"above its maximum {maximum}"))
        if isinstance(high, int | float):
            out.append((high, f"at its exclusiveMaximum {high}"))
    if kind == "string":
        longest, shortest = prop.get("maxLength"), prop.get("minLength")
        if isinstance(longest, int):
            out.append(("x" * (longest + 1), f"longer than its maxLength {longest}"))
        if isinstance(shortest, int) and shortest > 0:
            out.append(("x" * (shortest - 1), f"shorter than its minLength {shortest}"))
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(e, str) for e in enum):
        out.append(("mcp-bdd-not-in-enum", "a value outside its enum"))
    return out


# ---------------------------------------------------------------------------------------------
# the checks


def _tools_to_call(ctx: CheckContext) -> list[dict[str, object]]:
    seed = ctx.options.seed
    ctx.note_once(f"generated calls use seed {seed} (replay them with --seed {seed})")
    return ctx.callable_tools()


@check(
    "honest.valid-calls",
    severity="high",
    group="honest-schemas",
    rationale="A call valid by the inputSchema must never crash, hang or come back as an internal error.",
    calls_tools=True,
)
def valid_calls(ctx: CheckContext) -> Iterator[Problem]:
    """For each callable tool: a minimal call (required arguments only) and `examples` calls drawn from the
    inputSchema with the run's seed. None may crash the server, hang past the timeout or get -32603;
    none may be rejected as invalid params (-32602: the schema said it was valid); and a minimal call
    rejected with an error that names an optional argument means that argument is not really optional."""
    for tool in _tools_to_call(ctx):
        judge = _Judge(ctx, tool)
        required = set(_required(tool))
        optional = [p for p in _properties(tool) if p not in required]
        minimal = minimal_call(ctx, tool)
        if minimal is None:
            ctx.notes.append(f"tool {judge.name}: no valid call could be generated from its inputSchema")
            continue
        calls = [(minimal, "minimal valid call (required arguments only)")]
        for i, args in enumerate(draw_calls(_input_schema(tool), ctx.options.examples, ctx.options.seed + 1)):
            if args != minimal:
                calls.append((args, f"generated valid call #{i + 1}"))
        for args, purpose in calls:
            outcome = judge.call(args, purpose)
            if outcome is None:
                break
            problem = judge.broken(outcome, purpose)
            if problem is not None:
                yield problem
                continue
            text = error_text(outcome) if _rejected(outcome) else ""
            named = [o for o in optional if names_argument(text, o)]
            if purpose.startswith("minimal") and _rejected(outcome) and named:
                yield Problem(
                    title=f"an optional argument is in fact required: {', '.join(named)}",
                    target=judge.target,
                    details=f"a call with only the required arguments was rejected naming {named}:\n{text[:300]!r}",
                    call=call_of(outcome),
                    tip="add the argument to `required`, or give it a default.",
                    severity=Severity.MEDIUM,
                )
            elif outcome.error is not None and outcome.error.code == INVALID_PARAMS:
                yield Problem(
                    title="a call valid by the inputSchema was rejected as invalid params (-32602)",
                    target=judge.target,
                    details=f"call: {purpose}\n{error_text(outcome)[:300]!r}",
                    call=call_of(outcome),
                    tip="the schema must say everything the tool requires (types, formats, enums, ranges).",
                    severity=Severity.MEDIUM,
                )


@check(
    "honest.missing-argument",
    severity="medium",
    group="honest-schemas",
    rationale="An assistant fixes its call from the error text: a missing argument must be named in the error.",
    calls_tools=True,
)
def missing_argument(ctx: CheckContext) -> Iterator[Problem]:
    """For each callable tool and each required argument: the minimal call without it is rejected
    (-32602 or isError) with a text that names the argument; never a crash, hang or -32603."""
    for tool in _tools_to_call(ctx):
        minimal = minimal_call(ctx, tool)
        if minimal is None:
            continue
        judge = _Judge(ctx, tool)
        for arg in _required(tool):
            args = {k: v for k, v in minimal.items() if k != arg}
            yield from judge.must_reject(args, f"the required argument {arg!r} missing", arg)


@check(
    "honest.wrong-type",
    severity="medium",
    group="honest-schemas",
    rationale="A wrong-typed argument must be rejected by name, or the model keeps sending it.",
    calls_tools=True,
)
def wrong_type(ctx: CheckContext) -> Iterator[Problem]:
    """For each callable tool and each argument with one declared JSON type: the minimal call with that
    argument set to a value of another type is rejected naming the argument; values just outside a
    declared boundary (minimum / maximum / maxLength / minLength / enum) likewise."""
    for tool in _tools_to_call(ctx):
        minimal = minimal_call(ctx, tool)
        if minimal is None:
            continue
        judge = _Judge(ctx, tool)
        for arg, prop in _properties(tool).items():
            wrong = _wrong_value(prop)
            if wrong is not None:
                kind = _simple_type(prop)
                yield from judge.must_reject({**minimal, arg: wrong}, f"{arg!r} of the wrong type (not {kind})", arg)
            for value, how in _boundary_values(prop):
                yield from judge.must_reject({**minimal, arg: value}, f"{arg!r} {how}", arg)


@check(
    "honest.robust",
    severity="high",
    group="honest-schemas",
    rationale="Long strings, unicode and unknown extra arguments arrive from models every day; none may crash a tool.",
    calls_tools=True,
)
def robust(ctx: CheckContext) -> Iterator[Problem]:
    """For each callable tool: the minimal call plus an unknown extra argument, and each free-text string
    argument set to 10,000 characters and to mixed unicode (combining marks, emoji, CJK, Arabic) —
    no crash, no hang, no -32603 (rejecting them cleanly is fine)."""
    for tool in _tools_to_call(ctx):
        minimal = minimal_call(ctx, tool)
        if minimal is None:
            continue
        judge = _Judge(ctx, tool)
        yield from judge.must_survive({**minimal, EXTRA_ARGUMENT: "x"}, f"an unknown extra argument {EXTRA_ARGUMENT!r}")
        for arg, prop in _properties(tool).items():
            if _simple_type(prop) != "string" or "enum" in prop or "format" in prop or "pattern" in prop:
                continue
            yield from judge.must_survive({**minimal, arg: "a" * LONG_STRING}, f"{arg!r} {LONG_STRING} characters long")
            yield from judge.must_survive({**minimal, arg: UNICODE}, f"{arg!r} in mixed unicode")


def calls_of(ctx: CheckContext, tool: str) -> list[ToolCall]:
    return [c for c in ctx.calls if c.tool == tool]


class _NullArguments(types.CallToolRequestParams):
    """Params that say `"arguments": null` on the wire (the SDK leaves a None out): what some
    clients send for a tool without arguments."""

    @model_serializer(mode="wrap")
    def _with_null(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        data["arguments"] = None
        return data


class _NullArgumentsCall(types.CallToolRequest):
    params: _NullArguments


def _no_arguments_problem(outcome: Outcome, null: bool, judge: _Judge) -> Problem | None:
    """The verdict on a call with no arguments object (`null`: `arguments: null`), by the spec:
    `arguments` is optional, so a call without it is a valid call for a tool with no required
    argument; `null` is not an object, so it may be rejected (-32602 or isError), or read as none;
    a crash, a hang or an internal error is a defect either way (low for null: the client was wrong)."""
    sent = '"arguments": null' if null else "no arguments object"
    why = _broke(outcome)
    if why is not None:
        problem = judge.broken(outcome, f"a call with {sent}")
        if problem is None:
            return None
        # a title of its own: the runner keeps one finding per (check, target, title)
        problem = replace(problem, title=f"a call with {sent}: {why.split(':')[0]}")
        if null:
            return replace(problem, severity=Severity.LOW, tip="reject a null `arguments` with -32602 (it is not "
                           "an object), or read it as no arguments; never an internal error.")  # fmt: skip
        return problem
    if not null and _rejected(outcome):
        return Problem(
            title="a call with no arguments object was rejected",
            target=judge.target,
            details="`arguments` is optional in tools/call (spec: CallToolRequestParams), and this tool requires "
            f"none:\n{error_text(outcome)[:300]!r}",
            call=call_of(outcome),
            tip="read a missing `arguments` as an empty object.",
            severity=Severity.MEDIUM,
        )
    return None


@check(
    "honest.no-arguments",
    severity="high",
    group="honest-schemas",
    rationale="`arguments` is optional in tools/call: a tool without required arguments must take a call without it.",
    calls_tools=True,
)
def no_arguments(ctx: CheckContext) -> Iterator[Problem]:
    """For each callable tool that requires no argument: a call with no `arguments` (valid by the spec)
    is answered like one with `{}` — a crash, hang or -32603 is high, a rejection medium; and a call with
    `"arguments": null` (not an object, so not valid) is rejected cleanly or read as none — a crash,
    hang or -32603 is low. Only for a tool that answers `{}` as a success: one that fails with `{}` too
    fails for another reason (a missing client capability, a crash the other checks report)."""
    for tool in _tools_to_call(ctx):
        if _required(tool):
            continue
        judge = _Judge(ctx, tool)
        found: list[Problem] = []
        outcome = judge.call(None, "a call with no arguments object")
        if outcome is not None and (problem := _no_arguments_problem(outcome, False, judge)) is not None:
            found.append(problem)
        request = _NullArgumentsCall(params=_NullArguments(name=judge.name))
        outcome = judge.call(None, 'a call with "arguments": null', request)
        if outcome is not None and (problem := _no_arguments_problem(outcome, True, judge)) is not None:
            found.append(problem)
        if found and _fine_with_empty(ctx, judge):  # else it is not about `arguments`: other checks say what
            yield from found


def _fine_with_empty(ctx: CheckContext, judge: _Judge) -> bool:
    """Whether the tool answers a call with `arguments: {}` as a success (the one made before, or a new one)."""
    made = next((c.outcome for c in ctx.calls if c.tool == judge.name and c.arguments == {}
                 and not c.purpose.startswith("a call with")), None)  # fmt: skip
    outcome = made if made is not None else judge.call({}, "a call with an empty arguments object")
    return outcome is not None and _broke(outcome) is None and not _rejected(outcome)
