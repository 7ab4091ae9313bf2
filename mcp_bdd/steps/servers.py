"""Servers and sessions: start the server under test, connect, check who answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mcp_types as types

    from mcp_bdd.session import Session

from mcp_bdd.errors import ExpectationFailed, ServerStartError, UsageError
from mcp_bdd.session import tasks_offered
from mcp_bdd.steps._base import (
    StepContext,
    current_session,
    ensure_server,
    expected_text,
    given,
    state,
    table_rows,
    text,
    then,
    when,
)

_CAPABILITIES = {
    "tools": ("tools", None),
    "resources": ("resources", None),
    "resource subscriptions": ("resources", "subscribe"),
    "prompts": ("prompts", None),
    "logging": ("logging", None),
    "completions": ("completions", None),
    "tools list changes": ("tools", "listChanged"),
    "resources list changes": ("resources", "listChanged"),
    "prompts list changes": ("prompts", "listChanged"),
    # Tasks: `capabilities.tasks` on 2025-11-25, the io.modelcontextprotocol/tasks extension on 2026-07-28
    "tasks": ("tasks", None),
}


@given('the MCP server "{server:Q}" is running')
def step_server_running(context: StepContext, server: str) -> None:
    """Start the named server (with its configured transport) and open a session with it.

    Example: Given the MCP server "shop" is running
    """
    ensure_server(context, text(context, server))


@given('the MCP server "{server:Q}" is running over {transport:Transport}')
def step_server_running_over(context: StepContext, server: str, transport: str) -> None:
    """Start the named server over a given transport: in-memory, stdio, streamable HTTP or SSE.

    Example: Given the MCP server "shop" is running over stdio
    """
    ensure_server(context, text(context, server), transport=transport)


@given('the MCP server "{server:Q}" is running with the environment:')
def step_server_running_env(context: StepContext, server: str) -> None:
    """Start the named server with extra environment variables (a table with the headings `name` and `value`).

    Example:
        Given the MCP server "shop" is running with the environment:
          | name  | value |
          | DEBUG | 1     |
    """
    headings, rows = table_rows(context)
    if headings != ["name", "value"]:
        raise UsageError(f"{state(context).location}: the environment table needs the headings | name | value |.")
    ensure_server(context, text(context, server), env={r[0]: r[1] for r in rows})


@when('I connect to the MCP server "{server:Q}"')
def step_connect(context: StepContext, server: str) -> None:
    """Try to connect; a failure is recorded for a later Then step, not raised.

    Example: When I connect to the MCP server "broken"
    """
    st = state(context)
    name = text(context, server)
    st.connect_error = None
    try:
        ensure_server(context, name)
    except ServerStartError as exc:
        st.connect_error = str(exc)


@then('the connection fails with an error mentioning "{needle:Q}"')
def step_connection_fails(context: StepContext, needle: str) -> None:
    """Check that the last connection attempt failed, and why (case-insensitive).

    Example: Then the connection fails with an error mentioning "boom"
    """
    wanted = expected_text(context, needle)
    st = state(context)
    if st.connect_error is None:
        raise ExpectationFailed(
            "The connection did not fail",
            expected=f'a failed connection mentioning "{wanted}"',
            actual=f'connected to "{st.current_server}"',
        )
    if wanted.lower() not in st.connect_error.lower():
        raise ExpectationFailed(
            "The connection failed, but not as expected",
            expected=f'an error mentioning "{wanted}"',
            actual=st.connect_error,
        )


def _info(context: StepContext) -> tuple[Session, types.Implementation | None]:
    session = current_session(context)
    assert session.client is not None
    return session, session.client.server_info


@then('the server name is "{expected:Q}"')
def step_server_name(context: StepContext, expected: str) -> None:
    """Check the name the server reports about itself.

    Example: Then the server name is "shop"
    """
    _session, info = _info(context)
    actual = info.name if info else None
    if actual != text(context, expected):
        raise ExpectationFailed("Wrong server name", expected=text(context, expected), actual=actual)


@then('the server version is "{expected:Q}"')
def step_server_version(context: StepContext, expected: str) -> None:
    """Check the version the server reports about itself.

    Example: Then the server version is "1.0.0"
    """
    _session, info = _info(context)
    actual = info.version if info else None
    if actual != text(context, expected):
        raise ExpectationFailed("Wrong server version", expected=text(context, expected), actual=actual)


def _capability(context: StepContext, capability: str) -> tuple[bool, dict[str, object]]:
    key = capability.strip()
    if key not in _CAPABILITIES:
        from mcp_bdd._text import did_you_mean

        raise UsageError(
            f'{state(context).location}: unknown capability "{key}". {did_you_mean(key, _CAPABILITIES, "capability")}.'
        )
    session = current_session(context)
    assert session.client is not None
    caps = session.client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
    if key == "tasks":
        return tasks_offered(session.client).offered, caps
    top, sub = _CAPABILITIES[key]
    present = top in caps and (sub is None or bool((caps[top] or {}).get(sub)))
    return present, caps


@then("the server supports {capability}")
def step_supports(context: StepContext, capability: str) -> None:
    """Check a capability the server declares: tools, resources, resource subscriptions, prompts, logging,
    completions, tools list changes, resources list changes, prompts list changes, tasks (the core
    capability on 2025-11-25, the io.modelcontextprotocol/tasks extension on 2026-07-28).

    Example: Then the server supports tools
    """
    present, caps = _capability(context, capability)
    if not present:
        raise ExpectationFailed(f"The server does not declare {capability}", actual=caps, expected=capability)


@then("the server does not support {capability}")
def step_not_supports(context: StepContext, capability: str) -> None:
    """Check that the server does not declare a capability.

    Example: Then the server does not support prompts
    """
    present, caps = _capability(context, capability)
    if present:
        raise ExpectationFailed(f"The server declares {capability}", actual=caps)


@then('the protocol version is "{version:Q}"')
def step_protocol(context: StepContext, version: str) -> None:
    """Check the negotiated protocol version.

    Example: Then the protocol version is "2025-11-25"
    """
    session = current_session(context)
    if session.protocol_version != text(context, version):
        raise ExpectationFailed(
            "Unexpected protocol version",
            expected=text(context, version),
            actual=session.protocol_version,
            tip='set protocol = "legacy" (2025-11-25 handshake) or "2026-07-28" in [tool.mcp-bdd] to pin the era.',
        )


@when("I ping the server")
def step_ping(context: StepContext) -> None:
    """Send a ping (2025-11-25 era only) and require an answer.

    Example: When I ping the server
    """
    session = current_session(context)
    session.require_legacy("ping")
    outcome = session.ping()
    state(context).last_request = outcome
    session.check(outcome)
