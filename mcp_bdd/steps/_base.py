"""The one base of every step module: typed decorators, parse types, scenario state, tables, doc strings.

Every step module (built-in or a user's) writes steps the same way:

    from mcp_bdd.steps._base import given, state, text, then, when

    @then('the order "{order:Q}" is paid')
    def step_paid(context, order): ...

The decorators are behave's own, typed (behave ships no type information); the parse types are
registered once, here, so a quoted parameter means the same in every phrase.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Protocol, TypeVar

import parse  # type: ignore[import-untyped, unused-ignore]
from behave import given as _given  # type: ignore[import-untyped, unused-ignore]
from behave import step as _step  # type: ignore[import-untyped, unused-ignore]
from behave import then as _then  # type: ignore[import-untyped, unused-ignore]
from behave import when as _when  # type: ignore[import-untyped, unused-ignore]
from behave.matchers import ParseMatcher, get_step_matcher_factory  # type: ignore[import-untyped, unused-ignore]

from mcp_bdd._text import did_you_mean
from mcp_bdd.errors import UsageError
from mcp_bdd.runtime import LastResult, ScenarioState
from mcp_bdd.session import Outcome, Session, coerce_value, result_text

__all__ = [
    "PARSE_TYPES",
    "HeadedMatcher",
    "argument_table",
    "at_least",
    "coerce_arguments",
    "column",
    "content_kinds",
    "current_session",
    "docstring",
    "docstring_json",
    "ensure_server",
    "expected_text",
    "given",
    "json_held",
    "json_items",
    "json_object",
    "keep_call",
    "keep_result",
    "objects",
    "result_value",
    "state",
    "step",
    "table_rows",
    "text",
    "then",
    "unquote_value",
    "when",
    "where",
]

_F = TypeVar("_F", bound=Callable[..., object])
_T = TypeVar("_T")


class HeadedMatcher(ParseMatcher):  # type: ignore[misc]
    """behave's parse matcher that first compares the pattern's literal head (the text before its
    first field) with the step, and only then runs the parser.

    Why: behave finds a step's definition by trying every definition of its keyword in order until
    one matches. With this vocabulary a Then step is tried against about a hundred, each one a
    full `parse` call; checking the head first turns almost all of them into one `startswith`.
    Measured on the benchmark scenario (4 steps): 73 -> 50 µs of matching idle, 205 -> 134 µs under load.
    The answer is the same: parse patterns match their literal text exactly (no whitespace
    folding), so a step that does not start with the head cannot match. (A project that made
    parse case-insensitive, `ParseMatcher.CASE_SENSITIVE = False`, gets no head check.)
    """

    NAME = "mcp-bdd"

    def __init__(
        self,
        func: Callable[..., object],
        pattern: str,
        step_type: str | None = None,
        custom_types: dict[str, Callable[[str], object]] | None = None,
    ) -> None:
        super().__init__(func, pattern, step_type, custom_types)
        # `{{` (a literal brace) only shortens the head; `}}` is one brace in the text
        self.head = pattern.split("{", 1)[0].replace("}}", "}") if self.CASE_SENSITIVE else ""

    def match(self, step_text: str) -> object:  # behave's Match, or None
        return super().match(step_text) if step_text.startswith(self.head) else None


get_step_matcher_factory().register_step_matcher_class(HeadedMatcher.NAME, HeadedMatcher, override=True)


@contextmanager
def _headed() -> Iterator[None]:
    """Register with `HeadedMatcher`, then give back whichever matcher the importing module had
    chosen: the vocabulary is written in parse patterns even when a user's steps module called
    `use_step_matcher("re")` before `from mcp_bdd.steps import *`."""
    factory = get_step_matcher_factory()
    before = factory.current_matcher
    mapping = factory.step_matcher_class_mapping
    name = next((key for key, cls in mapping.items() if cls is before), factory.default_matcher_name)
    factory.use_step_matcher(HeadedMatcher.NAME)
    try:
        yield
    finally:
        factory.use_step_matcher(name)


def _headed_decorator(decorator: Callable[[str], Callable[[_F], _F]]) -> Callable[[str], Callable[[_F], _F]]:
    def with_pattern(pattern: str, **kwargs: object) -> Callable[[_F], _F]:
        def register(func: _F) -> _F:
            with _headed():
                return decorator(pattern, **kwargs)(func)

        return register

    return with_pattern


given = _headed_decorator(_given)
when = _headed_decorator(_when)
then = _headed_decorator(_then)
step = _headed_decorator(_step)


def _parse_type(pattern: str, convert: Callable[[str], _T]) -> Callable[[str], _T]:
    """A parse type: `convert` applied to the text the regex `pattern` selects."""

    def parse_type(value: str) -> _T:
        return convert(value)

    typed: Callable[[str], _T] = parse.with_pattern(pattern)(parse_type)
    return typed


def _same(value: str) -> str:
    return value


def unquote_value(value: str) -> str:
    """A quoted parameter as written in the feature, with `\\"` turned into `"`.

    Only `\\"` is an escape: every other backslash is kept as written, so a regular expression
    such as `"^Result: \\d+$"` means what it says.
    """
    return value.replace('\\"', '"')


#: name -> (regex, conversion): every parse type of the vocabulary, registered once with behave.
PARSE_TYPES: dict[str, tuple[str, Callable[[str], object]]] = {
    # Q: a quoted parameter's inside — never a bare double quote, so `"a" on "b"` is two parameters;
    # a double quote inside the value is written \" (see unquote_value).
    "Q": (r'(?:[^"\\]|\\.)*', unquote_value),
    "Num": (r"-?\d+(?:\.\d+)?", float),
    "Int": (r"-?\d+", int),
    "Literal": (r'[^"\s].*', _same),
    "Transport": (r"in-memory|stdio|streamable HTTP|streamable-http|SSE|sse", _same),
    # Any word: validated in the step, so a typo gets a did-you-mean instead of "undefined step".
    "Method": (r"[A-Za-z]+", _same),
    "Seconds": (r"\d+(?:\.\d+)?", float),
    # Singular and plural are one phrase: "1 request" / "2 requests".
    "Requests": (r"requests?", _same),
    "Rows": (r"rows?", _same),
    "SecondWord": (r"seconds?", _same),
    "Times": (r"times?", _same),
    # the answers that carry caching hints, as a phrase names them (steps/caching.py)
    "Cacheable": (r"tool list|prompt list|resource list|resource template list|resource", _same),
    "Items": (r"items?", _same),
    "Messages": (r"messages?", _same),
    "Notifications": (r"notifications?", _same),
    # "a" / "an" ("an info message") and "receive" / "received": both read naturally, both work.
    "A": (r"an?", _same),
    "Receive": (r"received?", _same),
}

# On parse's own registry (HeadedMatcher shares it), whichever matcher is current: users' parse
# steps can use the vocabulary's types too.
ParseMatcher.register_type(**{name: _parse_type(pattern, convert) for name, (pattern, convert) in PARSE_TYPES.items()})


class Row(Protocol):
    """One row of a step's table, as behave gives it."""

    cells: list[str]


class Table(Protocol):
    """A step's table as behave gives it: headings, then rows of cells."""

    headings: list[str]
    rows: list[Row]


class BehaveConfig(Protocol):
    """behave's Configuration, as the steps read it: the `-D name=value` pairs only."""

    userdata: Mapping[str, str]


class StepContext(Protocol):
    """What the steps read of behave's context (behave ships no types): the step's doc string and
    table, the run's configuration, attachments, and mcp-bdd's scenario state (`state`)."""

    text: str | None
    table: Table | None
    config: BehaveConfig

    def attach(self, mime_type: str, data: bytes) -> None: ...


def state(context: StepContext) -> ScenarioState:
    st: ScenarioState | None = getattr(context, "mcp", None)
    if st is None:
        raise UsageError(
            "mcp-bdd's hooks are not installed: add `from mcp_bdd.environment import *` to the environment.py "
            "next to your features/ folder."
        )
    return st


def text(context: StepContext, value: str, extra: dict[str, str] | None = None) -> str:
    """Interpolate one quoted parameter."""
    return state(context).interpolate(value, extra)


def ensure_server(
    context: StepContext, name: str, *, transport: str | None = None, env: dict[str, str] | None = None
) -> None:
    """Make `name` the scenario's current server, started and connected unless it already is."""
    st = state(context)
    st.current_server = name
    st.runtime.ensure_session(st, name, transport=transport, env_overrides=env)


def current_session(context: StepContext, server: str | None = None) -> Session:
    """The session a step targets: `on "<server>"`, else the scenario's current server."""
    st = state(context)
    name = text(context, server) if server else (st.current_server or st.config.default_server())
    if name is None:
        raise UsageError(
            f"{st.location}: which server? Several servers are configured ({', '.join(st.config.servers)}) "
            'and no server step ran yet. Start with "Given the MCP server "<name>" is running", or set '
            '`server = "<name>"` in [tool.mcp-bdd].'
        )
    if name not in st.sessions:
        if name not in st.config.servers:
            raise UsageError(
                f'{st.location}: unknown server "{name}". {did_you_mean(name, st.config.servers, "server")}.'
            )
        if st.connect_error is not None and name == st.current_server:
            raise UsageError(f'{st.location}: the connection to "{name}" failed earlier:\n{st.connect_error}')
        # Steps like "When I list the tools" may come first: start the server the scenario targets.
        # Naming a server with `on "<server>"` must not make it the current one.
        current = st.current_server
        ensure_server(context, name)
        if server:
            st.current_server = current
    return st.sessions[name]


def where(context: StepContext) -> str:
    """ "features/x.feature:12: " of the running step (empty outside a step), to start a message."""
    location = state(context).location
    return f"{location}: " if location else ""


def docstring(context: StepContext) -> str:
    if context.text is None:
        raise UsageError(f'{state(context).location}: this step needs a doc string (""" ... """) under it.')
    return text(context, context.text)


def docstring_json(context: StepContext) -> object:
    from mcp_bdd.matchers import parse_json_docstring

    return parse_json_docstring(docstring(context), where=state(context).location)


def _step_named(context: StepContext) -> str:
    """ "features/x.feature:12: Then the tools include:" of the running step, to start a message."""
    st = state(context)
    return f"{st.location}: {st.step_text}" if st.step_text else st.location


def table_rows(
    context: StepContext, extra: dict[str, str] | None = None, *, expectations: bool = False, heading: str | None = None
) -> tuple[list[str], list[list[str]]]:
    """The step's table: its headings and data rows, every cell interpolated.

    `heading`: the table must be one column with this heading. `expectations`: the rows are what
    a Then step looks for, each on its own (include, contain): a table with only its heading row
    would check nothing and pass whatever the server does, so it is a UsageError here, once for
    every such step.
    """
    if context.table is None:
        raise UsageError(f"{state(context).location}: this step needs a table under it.")
    headings = [text(context, h, extra) for h in context.table.headings]
    rows = [[text(context, cell, extra) for cell in row.cells] for row in context.table.rows]
    if heading is not None and headings != [heading]:
        raise UsageError(
            f"{state(context).location}: this step takes a one-column table with the heading `{heading}`, "
            f"got {headings}."
        )
    if expectations and not rows:
        heading_row = "| " + " | ".join(context.table.headings) + " |"
        raise UsageError(
            f"{_step_named(context)}\n  the table has only its heading row: nothing would be checked.\n"
            f"  Tip: add a row under {heading_row} for each value to look for."
        )
    return headings, rows


def expected_text(context: StepContext, value: str, extra: dict[str, str] | None = None) -> str:
    """The quoted text a step looks for inside another (contains, containing, mentions), interpolated.

    Never empty: every text contains "", so such a step would check nothing; that is a UsageError.
    """
    wanted = text(context, value, extra)
    if wanted == "":
        written = f' ("{value}" is empty once its variables are filled in)' if value else ""
        raise UsageError(
            f"{_step_named(context)}\n  the expected text is empty{written}: every text contains it, so nothing "
            'would be checked.\n  Tip: write the text to look for between the quotes, e.g. contains "order placed".'
        )
    return wanted


def at_least(context: StepContext, n: int, example: str) -> int:
    """The count of an "at least <n>" step, `n` itself.

    Never below 1: "at least 0" holds whatever the server does, so such a step would check
    nothing; that is a UsageError, once for every such step. `example`: the step's phrase with a
    count that checks something, for the tip.
    """
    if n < 1:
        raise UsageError(
            f'{_step_named(context)}\n  "at least {n}" holds whatever the server does: nothing would be checked.\n'
            f'  Tip: count from 1 up, e.g. "{example}".'
        )
    return n


def column(context: StepContext, heading: str = "name", *, expectations: bool = False) -> list[str]:
    """The cells of a one-column table with this heading (see table_rows for `expectations`)."""
    _, rows = table_rows(context, expectations=expectations, heading=heading)
    return [r[0] for r in rows]


def argument_table(
    context: StepContext,
    session: Session | None,
    tool: str,
    *,
    extra: dict[str, str] | None = None,
    kind: str = "tool",
) -> dict[str, object]:
    """Heading row = argument names, one data row = values, coerced by the tool's inputSchema."""
    listed = session.tool_named(tool) if session is not None and kind == "tool" else None
    return coerce_arguments(context, tool, listed, extra=extra, kind=kind)


def coerce_arguments(
    context: StepContext,
    tool: str,
    listed: Mapping[str, object] | None,
    *,
    extra: dict[str, str] | None = None,
    kind: str = "tool",
) -> dict[str, object]:
    """The step's argument table as arguments, coerced by the inputSchema of `listed` (the tool as
    the server lists it, or None: then every cell stays text)."""
    st = state(context)
    headings, rows = table_rows(context, extra)
    if len(rows) != 1:
        raise UsageError(
            f"{st.location}: the argument table needs exactly one row of values under its heading row "
            f"(got {len(rows)}). Example:\n      | product_id | quantity |\n      | PROD-123   | 2        |"
        )
    props = json_object(json_object((listed or {}).get("inputSchema")).get("properties"))
    args: dict[str, object] = {}
    for name in headings:
        if props and name not in props:
            raise UsageError(
                f'{st.location}: the {kind} "{tool}" has no argument "{name}". '
                f"{did_you_mean(name, props, 'argument')}. "
                'To send unexpected arguments on purpose, use "with arguments:" and a JSON doc string.'
            )
    for name, cell in zip(headings, rows[0], strict=True):
        if cell == "":
            continue  # an empty cell leaves the argument out
        if name in props:
            try:
                args[name] = coerce_value(cell, props[name], field_name=name)
            except UsageError as exc:
                raise UsageError(
                    f'{st.location}: {exc} To send a value of the wrong type on purpose, use "with arguments:" '
                    "and a JSON doc string."
                ) from None
        else:
            args[name] = cell
    return args


def result_value(raw: Mapping[str, object], listed: Mapping[str, object] | None = None) -> object:
    """ "The result": structuredContent when present, else the text content parsed as JSON when it
    parses, else the text. JSON a tool returned as text (`json_held`) is read as that JSON."""
    held = json_held(raw, listed)
    return held if held is not None else _plain_value(raw)


def _plain_value(raw: Mapping[str, object]) -> object:
    if raw.get("structuredContent") is not None:
        return raw["structuredContent"]
    content = result_text(raw)
    try:
        value: object = json.loads(content)
        return value
    except ValueError:
        return content


def json_held(
    raw: Mapping[str, object], listed: Mapping[str, object] | None = None
) -> dict[str, object] | list[object] | None:
    """The JSON object or array a tool returned as text, when its structuredContent only wraps that text.

    Why: a `-> str` tool returning `json.dumps(...)` is the most common shape in the wild, and its
    framework wraps the text as `{"result": "<json text>"}` (fastmcp marks the wrap, in the result's
    `_meta` and the output schema's `x-fastmcp-wrap-result`; the SDK's MCPServer does not, but then
    the only text content is that same string). `listed`: the tool as the server listed it, if known.
    """
    structured = raw.get("structuredContent")
    wrapped = structured.get("result") if isinstance(structured, dict) and list(structured) == ["result"] else None
    if not isinstance(wrapped, str):
        return None
    if not (_marked_wrap(raw, listed) or _text_blocks(raw) == [wrapped]):
        return None
    try:
        value: object = json.loads(wrapped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None  # "42" or "true" stays the text it is


def _marked_wrap(raw: Mapping[str, object], listed: Mapping[str, object] | None) -> bool:
    meta = raw.get("_meta")
    fastmcp = meta.get("fastmcp") if isinstance(meta, dict) else None
    schema = (listed or {}).get("outputSchema")
    return (isinstance(fastmcp, dict) and fastmcp.get("wrap_result") is True) or (
        isinstance(schema, dict) and schema.get("x-fastmcp-wrap-result") is True
    )


def _text_blocks(raw: Mapping[str, object]) -> list[object]:
    return [b.get("text") for b in objects(raw.get("content")) if b.get("type") == "text"]


def keep_call(context: StepContext, outcome: Outcome, tool: str) -> None:
    """A tool call's outcome becomes the scenario's call (what "the tool call succeeds" reads, also
    per server) and its result "the result": whether the call was plain, a task's, or an app's."""
    st = state(context)
    st.last_call = outcome
    st.calls_by_server[outcome.server] = outcome
    st.last_calls = [outcome]
    st.last_request = outcome
    keep_result(context, "tool", outcome, tool)


def keep_result(context: StepContext, kind: str, outcome: Outcome, name: str) -> None:
    st = state(context)
    if outcome.raw is None:
        st.last = None
        return
    held = json_held(outcome.raw, _listed_tool(st, outcome.server, name) if kind == "tool" else None)
    value = held if held is not None else _plain_value(outcome.raw)
    st.last = LastResult(
        kind, outcome.server, outcome.raw, value, result_text(outcome.raw), name, held_json=held is not None
    )


def _listed_tool(st: ScenarioState, server: str, name: str) -> dict[str, object] | None:
    """The tool as the listing already taken shows it, if one was: reading a result sends no request."""
    session = st.sessions.get(server)
    tools = session.tools if session is not None else None
    return next((t for t in tools or [] if t.get("name") == name), None)


def content_kinds(blocks: list[dict[str, object]]) -> list[dict[str, object]]:
    """What a failure shows of content blocks (a result's, a prompt message's): each one's type and
    MIME type or URI, never their data; the first 20."""
    shown: list[dict[str, object]] = []
    for b in blocks[:20]:
        resource = json_object(b.get("resource"))
        item = {"type": b.get("type"), "mimeType": b.get("mimeType"), "uri": b.get("uri") or resource.get("uri")}
        shown.append({k: v for k, v in item.items() if v is not None})
    return shown


def json_object(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one: a field missing, or of another shape,
    reads as absent (what a server sent is checked before it is used)."""
    return value if isinstance(value, dict) else {}


def json_items(value: object) -> list[object]:
    """A JSON array's items; none for anything else (as `json_object`)."""
    return value if isinstance(value, list) else []


def objects(value: object) -> list[dict[str, object]]:
    """The JSON objects among a JSON array's items (content blocks, messages, contents)."""
    return [item for item in json_items(value) if isinstance(item, dict)]
