"""Tools: discovery, calls in every form, and the outcome of a call."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mcp_types as types

from mcp_bdd._text import did_you_mean, produced_by, some_of
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.failures import FailureKind
from mcp_bdd.session import Outcome, Session, schema_types
from mcp_bdd.steps._base import (
    StepContext,
    argument_table,
    at_least,
    coerce_arguments,
    column,
    current_session,
    docstring_json,
    expected_text,
    json_items,
    json_object,
    keep_call,
    keep_result,
    state,
    text,
    then,
    when,
)

# ---------------------------------------------------------------------------------------------
# discovery


@when("I list the tools")
def step_list_tools(context: StepContext) -> None:
    """Fetch the server's tool list (following every page).

    Example: When I list the tools
    """
    current_session(context).list_all("tools")


@when('I list the tools on "{server:Q}"')
def step_list_tools_on(context: StepContext, server: str) -> None:
    """Fetch the tool list of a named server (following every page).

    Example: When I list the tools on "analytics"
    """
    current_session(context, server).list_all("tools")


def _names(session: Session) -> list[str]:
    return [str(t.get("name")) for t in session.tool_list()]


def _tool(context: StepContext, name: str, server: str | None = None) -> tuple[Session, dict[str, object]]:
    session = current_session(context, server)
    name = text(context, name)
    tool = session.tool_named(name)
    if tool is None:
        raise ExpectationFailed(
            f'The server "{session.name}" has no tool "{name}"',
            details="  " + did_you_mean(name, _names(session), "tool"),
        )
    return session, tool


@then("the tools are:")
def step_tools_are(context: StepContext) -> None:
    """Check the exact set of tool names (one-column table `name`).

    Example:
        Then the tools are:
          | name |
          | add  |
    """
    session = current_session(context)
    expected = set(column(context))
    actual = set(_names(session))
    if expected != actual:
        missing, unexpected = sorted(expected - actual), sorted(actual - expected)
        raise ExpectationFailed(
            "The tool list differs",
            expected=sorted(expected),
            actual=sorted(actual),
            details="\n".join(
                f"  {label}: {some_of(names)}"
                for label, names in (("Missing", missing), ("Unexpected", unexpected))
                if names
            ),
        )


@then("the tools include:")
def step_tools_include(context: StepContext) -> None:
    """Check that the tool list includes these names (others may exist).

    Example:
        Then the tools include:
          | name |
          | add  |
    """
    session = current_session(context)
    missing = [n for n in column(context, expectations=True) if n not in _names(session)]
    if missing:
        raise ExpectationFailed(
            f"The tool list lacks {missing}", actual=sorted(_names(session)), expected=f"to include {missing}"
        )


@then('the tool list includes "{name:Q}"')
def step_tool_list_includes(context: StepContext, name: str) -> None:
    """Check that one tool is offered.

    Example: Then the tool list includes "add"
    """
    _tool(context, name)


@then('the tool list includes "{name:Q}" on "{server:Q}"')
def step_tool_list_includes_on(context: StepContext, name: str, server: str) -> None:
    """Check that a named server offers one tool.

    Example: Then the tool list includes "stock_value" on "analytics"
    """
    _tool(context, name, server)


def _lacks_tool(context: StepContext, name: str, server: str | None) -> None:
    session = current_session(context, server)
    if text(context, name) in _names(session):
        raise ExpectationFailed(
            f'The server "{session.name}" offers the tool "{text(context, name)}"', actual=sorted(_names(session))
        )


@then('the tool list does not include "{name:Q}"')
def step_tool_list_excludes(context: StepContext, name: str) -> None:
    """Check that a tool is NOT offered.

    Example: Then the tool list does not include "drop_database"
    """
    _lacks_tool(context, name, None)


@then('the tool list does not include "{name:Q}" on "{server:Q}"')
def step_tool_list_excludes_on(context: StepContext, name: str, server: str) -> None:
    """Check that a named server does NOT offer a tool.

    Example: Then the tool list does not include "add" on "analytics"
    """
    _lacks_tool(context, name, server)


@then('the tool "{name:Q}" requires the arguments:')
def step_tool_requires(context: StepContext, name: str) -> None:
    """Check the exact set of required arguments (one-column table `name`).

    Example:
        Then the tool "add" requires the arguments:
          | name |
          | a    |
    """
    _, tool = _tool(context, name)
    actual = sorted(str(r) for r in json_items(json_object(tool.get("inputSchema")).get("required")))
    expected = sorted(column(context))
    if actual != expected:
        raise ExpectationFailed(f'The tool "{tool["name"]}" requires other arguments', expected=expected, actual=actual)


@then('the tool "{name:Q}" argument "{arg:Q}" is of type "{kind:Q}"')
def step_tool_arg_type(context: StepContext, name: str, arg: str, kind: str) -> None:
    """Check the JSON type of one input argument.

    Example: Then the tool "add" argument "a" is of type "integer"
    """
    _, tool = _tool(context, name)
    props = json_object(json_object(tool.get("inputSchema")).get("properties"))
    arg = text(context, arg)
    if arg not in props:
        raise ExpectationFailed(
            f'The tool "{tool["name"]}" has no argument "{arg}"',
            details="  " + did_you_mean(arg, props, "argument"),
        )
    kinds = schema_types(props[arg])
    if text(context, kind) not in kinds:
        raise ExpectationFailed(
            f'The argument "{arg}" of "{tool["name"]}" has another type'
            if kinds
            else f'The argument "{arg}" of "{tool["name"]}" names no JSON type in its schema',
            expected=text(context, kind),
            actual=props[arg],
        )


@then('the tool "{name:Q}" has an output schema')
def step_tool_output_schema(context: StepContext, name: str) -> None:
    """Check that a tool declares an outputSchema (structured results).

    Example: Then the tool "add" has an output schema
    """
    _, tool = _tool(context, name)
    if not tool.get("outputSchema"):
        raise ExpectationFailed(f'The tool "{tool["name"]}" has no output schema', actual=tool)


@then('the tool "{name:Q}" description mentions "{needle:Q}"')
def step_tool_description(context: StepContext, name: str, needle: str) -> None:
    """Check a tool's description (case-insensitive).

    Example: Then the tool "delete_user" description mentions "cannot be undone"
    """
    wanted = expected_text(context, needle)
    _, tool = _tool(context, name)
    description = str(tool.get("description") or "")
    if wanted.lower() not in description.lower():
        raise ExpectationFailed(
            f'The description of "{tool["name"]}" does not mention "{wanted}"',
            actual=description,
        )


@then("every tool has a description of at least {n:Int} characters")
def step_every_description(context: StepContext, n: int) -> None:
    """Check that every tool is described well enough for an LLM to choose it.

    Example: Then every tool has a description of at least 20 characters
    """
    n = at_least(context, n, "every tool has a description of at least 20 characters")
    session = current_session(context)
    described = {t["name"]: t.get("description") for t in session.tool_list()}
    short = {name: said or "" for name, said in described.items() if len(said if isinstance(said, str) else "") < n}
    if short:
        raise ExpectationFailed(
            f"{len(short)} tool(s) have a description shorter than {n} characters",
            actual=short,
            tip="LLMs pick tools by their descriptions: say what the tool does and when to use it.",
        )


def _hint(context: StepContext, name: str, hint: str, label: str) -> None:
    _, tool = _tool(context, name)
    annotations = json_object(tool.get("annotations"))
    if annotations.get(hint) is not True:
        raise ExpectationFailed(
            f'The tool "{tool["name"]}" is not marked {label}',
            expected=f"annotations.{hint} = true",
            actual=annotations or "(no annotations)",
            # an absent hint has a default in the spec, but only a written one tells a host what the author meant
            tip=f'set it where the tool is defined: annotations {{"{hint}": true}} '
            f"(MCPServer: ToolAnnotations({_snake(hint)}=True)); hosts read it to decide what to ask the user.",
        )


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


@then('the tool "{name:Q}" is marked read-only')
def step_read_only(context: StepContext, name: str) -> None:
    """Check annotations.readOnlyHint.

    Example: Then the tool "add" is marked read-only
    """
    _hint(context, name, "readOnlyHint", "read-only")


@then('the tool "{name:Q}" is marked destructive')
def step_destructive(context: StepContext, name: str) -> None:
    """Check annotations.destructiveHint.

    Example: Then the tool "delete_user" is marked destructive
    """
    _hint(context, name, "destructiveHint", "destructive")


@then('the tool "{name:Q}" is marked idempotent')
def step_idempotent(context: StepContext, name: str) -> None:
    """Check annotations.idempotentHint: calling the tool again with the same arguments changes nothing more.

    Example: Then the tool "add" is marked idempotent
    """
    _hint(context, name, "idempotentHint", "idempotent")


@then('the tool "{name:Q}" is marked open-world')
def step_open_world(context: StepContext, name: str) -> None:
    """Check annotations.openWorldHint: the tool reaches beyond the server (the web, a payment provider).

    Example: Then the tool "pay_order" is marked open-world
    """
    _hint(context, name, "openWorldHint", "open-world")


def _title(tool: dict[str, object]) -> str | None:
    """The title a host shows: the tool's own `title`, else the older `annotations.title`."""
    title = tool.get("title") or json_object(tool.get("annotations")).get("title")
    return title if isinstance(title, str) else None


@then('the tool "{name:Q}" has the title "{expected:Q}"')
def step_title(context: StepContext, name: str, expected: str) -> None:
    """Check the title a host shows for a tool instead of its name: its `title`, else `annotations.title`.

    Example: Then the tool "add" has the title "Add two numbers"
    """
    wanted = text(context, expected)
    _, tool = _tool(context, name)
    actual = _title(tool)
    if actual != wanted:
        raise ExpectationFailed(
            f'The tool "{tool["name"]}" has another title' if actual else f'The tool "{tool["name"]}" has no title',
            expected=wanted,
            actual={"title": tool.get("title"), "annotations": tool.get("annotations")},
            tip="hosts show the title instead of the name: set `title` where the tool is defined "
            '(MCPServer: @server.tool(title="...")).',
        )


def _tool_at(context: StepContext, name: str, path: str) -> tuple[dict[str, object], str, object]:
    from mcp_bdd.matchers import query_one

    _, tool = _tool(context, name)
    p = text(context, path)
    return tool, p, query_one(tool, p, what=f'definition of the tool "{tool["name"]}"')


def _tool_differs(
    tool: dict[str, object], p: str, wanted: object, value: object, why: list[str] | None = None
) -> ExpectationFailed:
    from mcp_bdd._text import pretty

    listed = "  The tool as the server lists it:\n" + "\n".join(f"    {line}" for line in pretty(tool).splitlines())
    quoting = (
        "numbers, booleans and null are written without quotes."
        if isinstance(value, str)
        else 'text is written in quotes: at "<path>" is "<text>".'
    )
    return ExpectationFailed(
        f'Unexpected value at {p} in the tool "{tool["name"]}"',  # names the path itself: no `path=`
        expected=wanted,
        actual=value,
        details="\n".join([*(f"  {line}" for line in why or []), listed]),
        tip="the path reads the tool as tools/list sent it, with its wire names "
        f'("$.annotations.readOnlyHint", "$._meta", "$.outputSchema"); {quoting}',
    )


@then('the tool "{name:Q}" at "{path:Q}" is "{expected:Q}"')
def step_tool_at_text(context: StepContext, name: str, path: str, expected: str) -> None:
    """Check any text field of a tool's definition by JSONPath: its `_meta`, icons, title, schemas.

    Example: Then the tool "show_cart" at "$._meta.ui.resourceUri" is "ui://shop/cart.html"
    """
    tool, p, value = _tool_at(context, name, path)
    wanted = text(context, expected)
    if value != wanted:
        raise _tool_differs(tool, p, wanted, value)


@then('the tool "{name:Q}" at "{path:Q}" is {literal:Literal}')
def step_tool_at_literal(context: StepContext, name: str, path: str, literal: str) -> None:
    """Check any field of a tool's definition by JSONPath against a JSON literal (number, true/false, null,
    array, object; fuzzy markers allowed).

    Example: Then the tool "add" at "$.annotations.readOnlyHint" is true
    """
    from mcp_bdd.matchers import coerce_literal, compare

    tool, p, value = _tool_at(context, name, path)
    wanted = coerce_literal(text(context, literal))
    mismatches = compare(wanted, value, subset=False)
    if mismatches:
        raise _tool_differs(tool, p, wanted, value, [f"{m.path}: {m.reason}" for m in mismatches])


@then('the server instructions mention "{needle:Q}"')
def step_instructions(context: StepContext, needle: str) -> None:
    """Check the instructions the server gave when the client connected (case-insensitive): what a host
    puts before the model to say how the server's tools fit together.

    Example: Then the server instructions mention "orders"
    """
    wanted = expected_text(context, needle)
    session = current_session(context)
    assert session.client is not None  # current_session connects, or raises
    instructions = session.client.instructions or ""
    if wanted.lower() not in instructions.lower():
        raise ExpectationFailed(
            f'The instructions of the server "{session.name}" do not mention "{wanted}"'
            if instructions
            else f'The server "{session.name}" gave no instructions',
            expected=f'instructions mentioning "{wanted}"',
            actual=instructions or "(no instructions)",
            tip="a server gives its instructions when the client connects (the initialize or server/discover "
            'result): MCPServer("name", instructions="...").',
        )


# ---------------------------------------------------------------------------------------------
# calls


def _call(
    context: StepContext,
    tool: str,
    server: str | None,
    args: dict[str, object] | Callable[[dict[str, object] | None], dict[str, object]] | None,
    *,
    timeout: float | None = None,
    cancel_after: float | None = None,
) -> Outcome:
    session = current_session(context, server)
    outcome = session.call_tool(text(context, tool), args, timeout=timeout, cancel_after=cancel_after)
    keep_call(context, outcome, text(context, tool))
    session.raise_problems()
    return outcome


@when('I call the tool "{tool:Q}"')
def step_call(context: StepContext, tool: str) -> None:
    """Call a tool without arguments.

    Example: When I call the tool "ping_db"
    """
    _call(context, tool, None, {})


@when('I call the tool "{tool:Q}" on "{server:Q}"')
def step_call_on(context: StepContext, tool: str, server: str) -> None:
    """Call a tool of a named server without arguments.

    Example: When I call the tool "ping_db" on "shop"
    """
    _call(context, tool, server, {})


def _table_call(
    context: StepContext,
    tool: str,
    server: str | None,
    *,
    timeout: float | None = None,
    cancel_after: float | None = None,
) -> None:
    name = text(context, tool)
    coerced = functools.partial(coerce_arguments, context, name)
    _call(context, tool, server, coerced, timeout=timeout, cancel_after=cancel_after)


@when('I call the tool "{tool:Q}" with:')
def step_call_with(context: StepContext, tool: str) -> None:
    """Call a tool with an argument table: heading row = names, one row of values (coerced by the schema).

    Example:
        When I call the tool "add" with:
          | a | b |
          | 1 | 2 |
    """
    _table_call(context, tool, None)


@when('I call the tool "{tool:Q}" on "{server:Q}" with:')
def step_call_on_with(context: StepContext, tool: str, server: str) -> None:
    """Call a tool of a named server with an argument table.

    Example:
        When I call the tool "add" on "calc" with:
          | a | b |
          | 1 | 2 |
    """
    _table_call(context, tool, server)


def _json_args(context: StepContext) -> dict[str, object]:
    value = docstring_json(context)
    if not isinstance(value, dict):
        raise UsageError(
            f"{state(context).location}: tool arguments must be a JSON object, got {type(value).__name__}."
        )
    return value


@when('I call the tool "{tool:Q}" with arguments:')
def step_call_json(context: StepContext, tool: str) -> None:
    """Call a tool with arguments given as a JSON doc string (sent as written, not coerced).

    Example:
        When I call the tool "add" with arguments:
          \"\"\"json
          {"a": 1, "b": 2}
          \"\"\"
    """
    _call(context, tool, None, _json_args(context))


@when('I call the tool "{tool:Q}" on "{server:Q}" with arguments:')
def step_call_on_json(context: StepContext, tool: str, server: str) -> None:
    """Call a tool of a named server with a JSON doc string of arguments.

    Example:
        When I call the tool "add" on "calc" with arguments:
          \"\"\"json
          {"a": 1, "b": 2}
          \"\"\"
    """
    _call(context, tool, server, _json_args(context))


@when('I call the tool "{tool:Q}" with a timeout of {seconds:Num} {unit:SecondWord} with:')
def step_call_timeout(context: StepContext, tool: str, seconds: float, unit: str) -> None:
    """Call a tool and give up after a number of seconds (then check "the tool call times out").

    Example:
        When I call the tool "slow" with a timeout of 0.5 seconds with:
          | seconds |
          | 3       |
    """
    _table_call(context, tool, None, timeout=seconds)


@when('I call the tool "{tool:Q}" on "{server:Q}" with a timeout of {seconds:Num} {unit:SecondWord} with:')
def step_call_on_timeout(context: StepContext, tool: str, server: str, seconds: float, unit: str) -> None:
    """Call a tool of a named server and give up after a number of seconds.

    Example:
        When I call the tool "slow" on "shop" with a timeout of 1 second with:
          | seconds |
          | 3       |
    """
    _table_call(context, tool, server, timeout=seconds)


def _call_concurrently(context: StepContext, tool: str, server: str | None, n: int) -> None:
    st = state(context)
    if n < 1:
        raise UsageError(f"{st.location}: call at least once (got {n}).")
    session = current_session(context, server)
    name = text(context, tool)
    argsets = [argument_table(context, session, name, extra={"i": str(i)}) for i in range(1, n + 1)]
    outcomes = session.call_tool_many(name, argsets)
    st.last_calls = outcomes
    st.last_call = outcomes[-1]
    st.calls_by_server[outcomes[-1].server] = outcomes[-1]
    st.last_request = outcomes[-1]
    keep_result(context, "tool", outcomes[-1], name)


@when('I call the tool "{tool:Q}" {n:Int} {unit:Times} concurrently with:')
def step_call_concurrently(context: StepContext, tool: str, n: int, unit: str) -> None:
    """Call a tool n times at once; `${i}` in the table is the call index 1..n.

    Example:
        When I call the tool "add" 10 times concurrently with:
          | a    | b |
          | ${i} | 1 |
    """
    _call_concurrently(context, tool, None, n)


@when('I call the tool "{tool:Q}" on "{server:Q}" {n:Int} {unit:Times} concurrently with:')
def step_call_on_concurrently(context: StepContext, tool: str, server: str, n: int, unit: str) -> None:
    """Call a tool of a named server n times at once; `${i}` in the table is the call index 1..n.

    Example:
        When I call the tool "add" on "shop" 10 times concurrently with:
          | a    | b |
          | ${i} | 1 |
    """
    _call_concurrently(context, tool, server, n)


@when('I call the tool "{tool:Q}" and cancel it after {seconds:Num} {unit:SecondWord} with:')
def step_call_cancel(context: StepContext, tool: str, seconds: float, unit: str) -> None:
    """Call a tool and cancel the request after a number of seconds (the server is told).

    Example:
        When I call the tool "slow" and cancel it after 0.2 seconds with:
          | seconds |
          | 3       |
    """
    _table_call(context, tool, None, cancel_after=seconds)


@when('I call the tool "{tool:Q}" on "{server:Q}" and cancel it after {seconds:Num} {unit:SecondWord} with:')
def step_call_on_cancel(context: StepContext, tool: str, server: str, seconds: float, unit: str) -> None:
    """Call a tool of a named server and cancel the request after a number of seconds.

    Example:
        When I call the tool "slow" on "shop" and cancel it after 1 second with:
          | seconds |
          | 3       |
    """
    _table_call(context, tool, server, cancel_after=seconds)


# ---------------------------------------------------------------------------------------------
# outcomes


def _last_call(context: StepContext, server: str | None = None) -> Outcome:
    """The last tool call of the scenario, or with `on "<server>"` the last one on that server."""
    st = state(context)
    if server is not None:
        name = text(context, server)
        if name not in st.calls_by_server:
            called = ", ".join(f'"{s}"' for s in st.calls_by_server) or "none"
            raise UsageError(
                f'{st.location}: no tool was called on "{name}" yet in this scenario (servers called: {called}).'
            )
        return st.calls_by_server[name]
    if st.last_call is None:
        raise UsageError(f'{st.location}: no tool was called yet in this scenario ("When I call the tool ...").')
    return st.last_call


def _unknown_tool_hint(context: StepContext, outcome: Outcome) -> str | None:
    name = outcome.params.get("name")
    session = state(context).sessions.get(outcome.server)
    if outcome.method != "tools/call" or session is None or not isinstance(name, str):
        return None
    if session.tools is None and not outcome.ok:
        return None  # never send more requests to a server that just failed (it may be gone or hung)
    try:
        names = [str(t.get("name")) for t in session.tool_list()]
    except Exception:
        return None
    if name in names:
        return None
    return f'the server has no tool "{name}". {did_you_mean(name, names, "tool")}'


def _fail(
    context: StepContext,
    title: str,
    outcome: Outcome,
    expected: str,
    tip: str | None = None,
    kind: FailureKind | None = None,
) -> None:
    session = state(context).sessions.get(outcome.server)
    exchange = produced_by(session.transcript.items, outcome.server) if session else None  # before the hint's listing
    # a tool a token may not see is refused, not missing: the refusal's tip says what to do
    hint = _unknown_tool_hint(context, outcome) if outcome.refusal is None else None
    raise ExpectationFailed(
        title,
        expected=expected,
        actual=outcome.describe(),
        exchange=exchange,
        tip=hint or tip,
        kind=kind,
    )


_SUCCESS_TIPS = {
    "expectation": "read the error text: a good server says what went wrong and what to do.",
    "timeout": "raise `timeout` in [tool.mcp-bdd] (or -D timeout=30) if the server is just slow; "
    "otherwise find what the tool waits for (a lock, a dependency that never answers).",
    "protocol": "the exchange broke the protocol (quoted above: what the server sent, or why a request "
    "could not reach it): fix the server.",
    "server-error": "the server rejected the call or went away: read the error above and the server's stderr.",
}


@then("the tool call succeeds")
@then('the tool call on "{server:Q}" succeeds')
def step_call_succeeds(context: StepContext, server: str | None = None) -> None:
    """Check that the last call returned a result with isError false and no protocol error.

    Example:
        Then the tool call succeeds
        Then the tool call on "shop" succeeds
    """
    outcome = _last_call(context, server)
    if not outcome.ok or outcome.is_error_result:
        tip = _SUCCESS_TIPS.get(outcome.failure_kind or "", _SUCCESS_TIPS["expectation"])
        if outcome.refusal is not None:
            tip = outcome.refusal.tip
        session = state(context).sessions.get(outcome.server)
        if outcome.timed_out and session is not None:
            tip = session.timeout_tip(outcome, tip)
        _fail(
            context,
            f'The tool call "{outcome.params.get("name")}" did not succeed',
            outcome,
            "a successful result",
            tip=tip,
            kind=outcome.failure_kind,  # a timeout or a broken answer is named as such, not as a wrong value
        )


def _failed(outcome: Outcome) -> bool:
    """An error result, a JSON-RPC error, a refusal (HTTP 401/403) or a connection that broke."""
    failed = outcome.error is not None or outcome.exception is not None or outcome.refusal is not None
    return failed or outcome.is_error_result


@then("the tool call fails")
@then('the tool call on "{server:Q}" fails')
def step_call_fails(context: StepContext, server: str | None = None) -> None:
    """Check that the last call failed: an error result (isError), a JSON-RPC error, or a refusal
    (HTTP 401/403: the credentials, not the tool).

    Example:
        Then the tool call fails
        Then the tool call on "shop" fails
    """
    outcome = _last_call(context, server)
    if not _failed(outcome):
        _fail(
            context,
            f'The tool call "{outcome.params.get("name")}" did not fail',
            outcome,
            "isError or an error",
        )


def _error_text(outcome: Outcome) -> str:
    from mcp_bdd.session import result_text

    if outcome.error is not None:
        return f"{outcome.error.message} {json.dumps(outcome.error.data, default=str) if outcome.error.data else ''}"
    if outcome.raw is not None:
        return result_text(outcome.raw)
    if outcome.refusal is not None:  # what the server sent, never mcp-bdd's own words about it
        return outcome.refusal.matched()
    return outcome.exception or ""


@then('the tool call fails with an error mentioning "{needle:Q}"')
@then('the tool call on "{server:Q}" fails with an error mentioning "{needle:Q}"')
def step_call_fails_with(context: StepContext, needle: str, server: str | None = None) -> None:
    """Check that the last call failed and its error mentions a text (case-insensitive).

    Example:
        Then the tool call fails with an error mentioning "not found"
        Then the tool call on "shop" fails with an error mentioning "not found"
    """
    wanted = expected_text(context, needle)
    outcome = _last_call(context, server)
    if not _failed(outcome):
        _fail(
            context,
            f'The tool call "{outcome.params.get("name")}" did not fail',
            outcome,
            f'an error mentioning "{wanted}"',
        )
    if wanted.lower() not in _error_text(outcome).lower():
        _fail(
            context,
            "The tool call failed, but the error does not mention the expected text",
            outcome,
            f'an error mentioning "{wanted}"',
        )


@then("the tool call returns an error result")
@then('the tool call on "{server:Q}" returns an error result')
def step_call_error_result(context: StepContext, server: str | None = None) -> None:
    """Check for an error result specifically (isError true, not a JSON-RPC error).

    Example:
        Then the tool call returns an error result
        Then the tool call on "shop" returns an error result
    """
    outcome = _last_call(context, server)
    if not outcome.is_error_result:
        _fail(
            context,
            "The tool call did not return an error result",
            outcome,
            "a result with isError: true",
            tip='a JSON-RPC error is checked with "Then the request is rejected with error code <code>".',
        )


@then("the request is rejected with error code {code:Int}")
def step_rejected(context: StepContext, code: int) -> None:
    """Check that the last request (of any kind) got a JSON-RPC error with this code.

    Example: Then the request is rejected with error code -32602
    """
    st = state(context)
    outcome = st.last_request
    if outcome is None:
        raise UsageError(f"{st.location}: no request was made yet in this scenario.")
    if outcome.error is None or outcome.error.code != code:
        tip = 'some servers report failures as isError results instead; "Then the tool call fails" accepts both.'
        if outcome.refusal is not None:
            tip = "the server sent no JSON-RPC error: it refused the request at the HTTP level. " + outcome.refusal.tip
        _fail(context, f"The {outcome.method} request was not rejected with error code {code}", outcome,
              f"JSON-RPC error {code}", tip=tip)  # fmt: skip


@then("the tool call times out")
@then('the tool call on "{server:Q}" times out')
def step_times_out(context: StepContext, server: str | None = None) -> None:
    """Check that the last call got no answer within its timeout.

    Example:
        Then the tool call times out
        Then the tool call on "shop" times out
    """
    outcome = _last_call(context, server)
    if not outcome.timed_out:
        _fail(context, "The tool call did not time out", outcome, "no answer within the timeout")


@then("the tool call is cancelled")
@then('the tool call on "{server:Q}" is cancelled')
def step_cancelled(context: StepContext, server: str | None = None) -> None:
    """Check that the last call was cancelled by the client before an answer came.

    Example:
        Then the tool call is cancelled
        Then the tool call on "shop" is cancelled
    """
    outcome = _last_call(context, server)
    if not outcome.cancelled:
        _fail(
            context,
            "The tool call was not cancelled",
            outcome,
            "cancelled before the server answered",
            tip="the server answered before the cancel point; cancel earlier or make the call slower.",
        )


@then("all {n:Int} calls succeed")
def step_all_succeed(context: StepContext, n: int) -> None:
    """Check the concurrent calls: there were n and each succeeded.

    Example: Then all 10 calls succeed
    """
    calls = state(context).last_calls
    if not calls:
        raise ExpectationFailed(
            f"No calls were made, so none can have succeeded (the step expects {n})",
            tip='make the calls first, e.g. "When I call the tool "<name>" 10 times concurrently with:"',
        )
    bad = [(i + 1, c.describe(stdout=False)) for i, c in enumerate(calls) if not c.ok or c.is_error_result]
    if len(calls) != n or bad:
        kinds = [c.failure_kind for c in calls if c.failure_kind]
        wrote = next((c.stdout_evidence for c in calls if c.stdout_evidence), "")  # once, not per call
        raise ExpectationFailed(
            f"Not all {n} calls succeeded ({len(calls) - len(bad)} of {len(calls)} did)",
            actual={f"call {i}": d for i, d in bad},
            details=wrote or None,
            kind=kinds[0] if kinds else None,
        )


@then('the results at "{path:Q}" are all different')
def step_results_different(context: StepContext, path: str) -> None:
    """Check that the value at a JSONPath differs between all the concurrent calls.

    Example: Then the results at "$.id" are all different
    """
    from mcp_bdd.matchers import all_different, query_one
    from mcp_bdd.steps._base import result_value

    calls = state(context).last_calls
    p = text(context, path)
    values = [query_one(result_value(c.raw or {}), p) for c in calls]
    duplicates = all_different(values)
    if duplicates:
        raise ExpectationFailed(
            f"Some results at {p} are equal", path=p, actual=values, details=f"  Repeated: {duplicates}"
        )


@then("the server still responds")
def step_still_responds(context: StepContext) -> None:
    """Check that a cheap request (ping, or listing tools) still succeeds afterwards.

    Example: Then the server still responds
    """
    _still_responds(context, None)


@then('the server still responds on "{server:Q}"')
def step_still_responds_on(context: StepContext, server: str) -> None:
    """Check that a named server still answers a cheap request (ping, or listing tools).

    Example: Then the server still responds on "shop"
    """
    _still_responds(context, server)


def _still_responds(context: StepContext, server: str | None) -> None:
    session = current_session(context, server)
    outcome = session.ping() if session.is_legacy else session.request(_list_tools_request())
    if not outcome.ok:
        raise ExpectationFailed(
            f'The server "{session.name}" refused the request'  # it answered: with 401/403
            if outcome.refusal is not None
            else f'The server "{session.name}" no longer responds',
            actual=outcome.describe(stdout=False),  # the server's description below quotes it
            details=session.server.describe_death(),
            kind=outcome.failure_kind,
            tip=outcome.refusal.tip if outcome.refusal is not None else None,
        )


def _list_tools_request() -> types.ListToolsRequest:
    import mcp_types as types

    return types.ListToolsRequest(params=None)
