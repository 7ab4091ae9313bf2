"""Shared plumbing of the step library: parse types, the scenario state, tables and doc strings."""

from __future__ import annotations

import json
from typing import Any

import parse
from behave import register_type

from mcp_bdd.errors import UsageError, did_you_mean
from mcp_bdd.session import Outcome, Session, coerce_value, result_text
from mcp_bdd.state import LastResult, ScenarioState

__all__ = [
    "argument_table",
    "current_session",
    "docstring_json",
    "keep_result",
    "state",
    "table_rows",
    "text",
]


@parse.with_pattern(r'[^"]*')
def _quoted(text: str) -> str:
    return text


@parse.with_pattern(r"-?\d+(?:\.\d+)?")
def _number(text: str) -> float:
    return float(text)


@parse.with_pattern(r"-?\d+")
def _int(text: str) -> int:
    return int(text)


@parse.with_pattern(r'[^"\s].*')
def _literal(text: str) -> str:
    return text


@parse.with_pattern(r"in-memory|stdio|streamable HTTP|streamable-http|SSE|sse")
def _transport(text: str) -> str:
    return text


# Q: a quoted parameter's inside — never a double quote, so `"a" on "b"` is two parameters.
register_type(Q=_quoted, Num=_number, Int=_int, Literal=_literal, Transport=_transport)


def state(context: Any) -> ScenarioState:
    st = getattr(context, "mcp", None)
    if st is None:
        raise UsageError(
            "mcp-bdd's hooks are not installed: add `from mcp_bdd.environment import *` to the environment.py "
            "next to your features/ folder."
        )
    return st  # type: ignore[no-any-return]


def text(context: Any, value: str, extra: dict[str, str] | None = None) -> str:
    """Interpolate one quoted parameter."""
    return state(context).interpolate(value, extra)


def ensure_server(context: Any, name: str, *, transport: str | None = None, env: dict[str, str] | None = None) -> None:
    """Make `name` the scenario's current server, started and connected unless it already is."""
    st = state(context)
    st.current_server = name
    st.runtime.ensure_session(st, name, transport=transport, env_overrides=env)


def current_session(context: Any, server: str | None = None) -> Session:
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


def docstring(context: Any) -> str:
    if context.text is None:
        raise UsageError(f'{state(context).location}: this step needs a doc string (""" ... """) under it.')
    return text(context, context.text)


def docstring_json(context: Any) -> Any:
    from mcp_bdd.matchers import parse_json_docstring

    return parse_json_docstring(docstring(context), where=state(context).location)


def table_rows(context: Any, extra: dict[str, str] | None = None) -> tuple[list[str], list[list[str]]]:
    if context.table is None:
        raise UsageError(f"{state(context).location}: this step needs a table under it.")
    headings = [text(context, h, extra) for h in context.table.headings]
    rows = [[text(context, cell, extra) for cell in row.cells] for row in context.table.rows]
    return headings, rows


def column(context: Any, heading: str = "name") -> list[str]:
    headings, rows = table_rows(context)
    if headings != [heading]:
        raise UsageError(
            f"{state(context).location}: this step takes a one-column table with the heading `{heading}`, "
            f"got {headings}."
        )
    return [r[0] for r in rows]


def argument_table(
    context: Any,
    session: Session | None,
    tool: str,
    *,
    extra: dict[str, str] | None = None,
    kind: str = "tool",
) -> dict[str, Any]:
    """Heading row = argument names, one data row = values, coerced by the tool's inputSchema."""
    st = state(context)
    headings, rows = table_rows(context, extra)
    if len(rows) != 1:
        raise UsageError(
            f"{st.location}: the argument table needs exactly one row of values under its heading row "
            f"(got {len(rows)}). Example:\n      | product_id | quantity |\n      | PROD-123   | 2        |"
        )
    schema: dict[str, Any] = {}
    if session is not None and kind == "tool":
        found = session.tool_named(tool)
        schema = (found or {}).get("inputSchema") or {}
    props: dict[str, Any] = schema.get("properties") or {}
    args: dict[str, Any] = {}
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


def result_value(raw: dict[str, Any]) -> Any:
    """structuredContent when present, else the text content parsed as JSON when it parses, else text."""
    if raw.get("structuredContent") is not None:
        return raw["structuredContent"]
    content = result_text(raw)
    try:
        return json.loads(content)
    except ValueError:
        return content


def keep_result(context: Any, kind: str, outcome: Outcome, name: str) -> None:
    st = state(context)
    if outcome.raw is not None:
        st.last = LastResult(
            kind, outcome.server, outcome.raw, result_value(outcome.raw), result_text(outcome.raw), name
        )
    else:
        st.last = None
