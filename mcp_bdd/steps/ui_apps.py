"""MCP Apps: a tool's interactive UI (the `io.modelcontextprotocol/ui` extension), opened and driven as a host does.

A tool names its app in `_meta.ui.resourceUri`: a `ui://` resource, an HTML document served as
`text/html;profile=mcp-app`. "When I open the app of the tool ..." renders it in a real headless
Chromium, in a sandboxed iframe with the Content-Security-Policy the resource declares, and speaks
the host's side of its JSON-RPC bridge: the app gets the tool's input and result once it has
initialised, and what it asks the host for — tool calls, resource reads, conversation messages,
links — is answered and recorded. Its tool calls go to the scenario's session (they appear in the
transcript), and a tool whose visibility keeps it from apps is refused, as a host refuses it.

Each app step attaches a screenshot of the app (when it changed) beside the bridge messages the
step saw, so the living documentation shows what the user sees. The browser needs the `apps`
extra (Playwright) and a Chromium: see docs/apps.md.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import mcp_types as types

from mcp_bdd._text import did_you_mean, some_of
from mcp_bdd._version import __version__
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.session import Outcome, Session
from mcp_bdd.steps._base import (
    StepContext,
    argument_table,
    current_session,
    expected_text,
    given,
    json_object,
    keep_call,
    objects,
    state,
    text,
    then,
    when,
)
from mcp_bdd.ui_apps import (
    APP_MIME_TYPE,
    AppCall,
    AppHost,
    AppResource,
    OpenedApp,
    app_uri,
    close_browsers,
    is_app_mime,
)

__all__: list[str] = []

#: each scenario's apps, by the id of its state (`context.mcp`); closed and forgotten when it ends
_HOSTS: dict[int, AppHost] = {}
#: the runs whose end already closes the browser (by the id of their runtime)
_RUNS: set[int] = set()
#: the longest a step's screenshot may take (after its own work: evidence, not the check)
SHOT_SECONDS = 3.0


class _Budget:
    """A step's time: its work shares the request timeout, so the step ends within it, whatever it waits on."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        """What is left of it (never less than a moment: a step that ran out still makes its last check)."""
        return max(0.2, self.end - time.monotonic())


def _host(context: StepContext, session: Session) -> AppHost:
    """The scenario's apps, made on first use (and closed with the scenario, the browser with the run)."""
    st = state(context)
    key = id(st)
    host = _HOSTS.get(key)
    if host is None:
        host = _HOSTS[key] = AppHost(
            portal=st.portal, hops=session.hops, startup_timeout=session.startup_timeout, version=__version__
        )

        def close() -> list[str]:
            _HOSTS.pop(key, None)
            return host.close()

        st.runtime.at_scenario_end(st, close)
        if id(st.runtime) not in _RUNS:
            _RUNS.add(id(st.runtime))
            portal = st.portal
            runtime_id = id(st.runtime)

            def close_run() -> list[str]:
                _RUNS.discard(runtime_id)
                return close_browsers(portal)

            st.runtime.at_run_end(close_run)
    return host


def _current(context: StepContext) -> tuple[AppHost, OpenedApp]:
    """The app the scenario opened last, or a usage error saying how to open one."""
    host = _HOSTS.get(id(state(context)))
    app = host.current if host is not None else None
    if host is None or app is None:
        raise UsageError(
            f"{state(context).location}: no app is open in this scenario.\n"
            '  Tip: open one first: When I open the app of the tool "<tool>".'
        )
    return host, app


@contextlib.contextmanager
def _evidence(context: StepContext, host: AppHost, app: OpenedApp) -> Iterator[None]:
    """Attach the app as the step leaves it (screenshot and bridge messages), passed or failed."""
    try:
        yield
    finally:
        for mime, data in host.evidence(app, min(SHOT_SECONDS, app.view.timeout)):
            context.attach(mime, data)


def _tool(context: StepContext, session: Session, name: str) -> dict[str, object]:
    """The tool as the server lists it, or a failure naming the tools it has."""
    listed = session.tool_named(name)
    if listed is None:
        names = [str(t.get("name")) for t in session.tool_list()]
        raise ExpectationFailed(
            f'The server "{session.name}" has no tool "{name}"',
            details="  " + did_you_mean(name, names, "tool"),
        )
    return listed


def _bound(context: StepContext, session: Session, name: str) -> tuple[dict[str, object], str]:
    """The tool and the `ui://` URI of its app, or a failure saying what the tool's `_meta` holds."""
    tool = _tool(context, session, name)
    uri = app_uri(tool)
    if uri is None:
        raise ExpectationFailed(
            f'The tool "{name}" of "{session.name}" has no app',
            expected='_meta.ui.resourceUri naming a "ui://" resource',
            actual=f"_meta: {json.dumps(tool.get('_meta'), default=str)[:600]}",
            tip='a server binds an app to a tool with `@apps.tool(resource_uri="ui://...")` (mcp.server.apps), '
            "which sets _meta.ui.resourceUri. A server may bind it only for clients that support MCP Apps: add "
            '"Given the client supports MCP Apps" before the server step.',
        )
    if not uri.startswith("ui://"):
        raise ExpectationFailed(
            f'The tool "{name}" of "{session.name}" binds its app to "{uri}", which is not a ui:// URI',
            expected='_meta.ui.resourceUri naming a "ui://" resource',
            actual=uri,
            tip="MCP Apps resources use the ui:// scheme (SEP-1865); a host renders no other.",
        )
    return tool, uri


def _read_app(session: Session, uri: str) -> tuple[AppResource | None, str]:
    """The app's resource as `resources/read` returns it, or None and what went wrong."""
    outcome = session.request(types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri)))
    if not outcome.ok or outcome.raw is None:
        return None, f"resources/read failed: {outcome.describe()}"
    contents = objects(outcome.raw.get("contents"))
    item = next((c for c in contents if c.get("uri") == uri), contents[0] if contents else None)
    if item is None:
        return None, "resources/read returned no contents"
    listed: dict[str, object] | None = None
    if not isinstance(json_object(item.get("_meta")).get("ui"), dict):
        with contextlib.suppress(Exception):  # the listing's _meta.ui is only a fallback (SEP-1865)
            listed = next((r for r in session.listing("resources") if r.get("uri") == uri), None)
    return AppResource.read(uri, item, listed), ""


def _served(session: Session, tool: str, uri: str) -> AppResource:
    """The app's resource, served as an MCP App, or a failure saying what was served instead."""
    resource, problem = _read_app(session, uri)
    if resource is None:
        raise ExpectationFailed(
            f'The app of the tool "{tool}" ({uri}) could not be read from "{session.name}"',
            actual=problem,
            tip="the resource a tool's _meta.ui.resourceUri names must exist on the server (resources/read).",
        )
    if not is_app_mime(resource.mime_type):
        raise ExpectationFailed(
            f'The app of the tool "{tool}" ({uri}) is not served as an MCP App',
            expected=f"mimeType {APP_MIME_TYPE}",
            actual=f"mimeType {json.dumps(resource.mime_type)}",
            tip=f"serve it as {APP_MIME_TYPE}: hosts render no other type (apps.add_html_resource does).",
        )
    if not resource.html.strip():
        raise ExpectationFailed(
            f'The app of the tool "{tool}" ({uri}) is empty',
            expected="an HTML document in the resource's text (or base64 blob)",
            actual="no text",
        )
    return resource


def _last_result(
    context: StepContext, session: Session, name: str
) -> tuple[dict[str, object], dict[str, object]] | None:
    """The arguments and result of the scenario's last call of `name` on `session`, if it made one."""
    items = state(context).transcript.items
    requests = {
        i.seq: i for i in items if i.kind == "request" and i.method == "tools/call" and i.server == session.name
    }
    for item in reversed(items):
        if item.kind != "response" or item.method != "tools/call" or item.server != session.name:
            continue
        request = requests.get(item.related or 0)
        params = request.payload if request is not None and isinstance(request.payload, dict) else {}
        if params.get("name") == name and isinstance(item.payload, dict):
            arguments = params.get("arguments")
            return (arguments if isinstance(arguments, dict) else {}), item.payload
    return None


def _called(context: StepContext, session: Session, name: str, arguments: dict[str, object]) -> Outcome:
    """Call the tool as "When I call the tool" does: its result becomes "the result" of the scenario."""
    outcome = session.call_tool(name, arguments)
    keep_call(context, outcome, name)
    session.raise_problems()
    return outcome


def _open(context: StepContext, tool: str, *, table: bool) -> None:
    session = current_session(context)
    name = text(context, tool)
    listed, uri = _bound(context, session, name)
    if table:
        arguments = argument_table(context, session, name)
        outcome = _called(context, session, name, arguments)
        result = session.check(outcome) if not outcome.is_error_result else outcome.raw
    else:
        earlier = _last_result(context, session, name)
        if earlier is None:
            arguments = {}
            outcome = _called(context, session, name, arguments)
            result = session.check(outcome) if not outcome.is_error_result else outcome.raw
        else:
            arguments, result = earlier
    host = _host(context, session)
    # a host may prefetch and cache an app's resource (SEP-1865): one the scenario read already is reused
    resource = host.resources.get((session.name, uri)) or _served(session, name, uri)
    budget = _Budget(session.timeout)  # from the page's load: the browser's start has its own (startup_timeout)
    app = host.open(session, tool=listed, uri=uri, resource=resource, arguments=arguments, result=result)
    with _evidence(context, host, app):
        if not host.initialized(app, budget.left()):
            raise ExpectationFailed(
                f"{app.label.capitalize()} did not finish its handshake within {session.timeout:g} s",
                expected="ui/initialize, answered by the host, then ui/notifications/initialized",
                details=host.what_it_did(app),
                tip="an app connects to its host as it loads (the ext-apps App.connect(), or its own "
                "postMessage of ui/initialize to window.parent); its errors above say why it did not.",
                kind="timeout",
            )
        host.settle(app, budget.left())  # what the app does with its input and result (render, resize)


# ---------------------------------------------------------------------------------------------
# the client and the binding


@given("the client supports MCP Apps")
def step_client_supports_apps(context: StepContext) -> None:
    """The client advertises the MCP Apps extension (`io.modelcontextprotocol/ui`, MIME type
    `text/html;profile=mcp-app`); without it the client is a plain one, so a server's text fallback
    can be tested too. Declared before the server step.

    Example:
        Given the client supports MCP Apps
        And the MCP server "cart" is running
    """
    st = state(context)
    if st.sessions:
        names = ", ".join(f'"{n}"' for n in st.sessions)
        raise UsageError(
            f"{st.location}: supporting MCP Apps shapes the capabilities the client declares when it connects, "
            f"but the session with {names} is already open. Move this step above the server step "
            '("Given the MCP server "<name>" is running"), or into the Background before it.'
        )
    st.persona.apps = True


@then('the tool "{tool:Q}" has an app')
def step_tool_has_app(context: StepContext, tool: str) -> None:
    """The tool binds an app: its `_meta.ui.resourceUri` (or the deprecated flat `_meta["ui/resourceUri"]`)
    names a `ui://` resource.

    Example: Then the tool "show_cart" has an app
    """
    _bound(context, current_session(context), text(context, tool))


@then('the tool "{tool:Q}" has no app')
def step_tool_has_no_app(context: StepContext, tool: str) -> None:
    """The tool binds no app (no `_meta.ui.resourceUri`): a plain tool, or one a server binds only for
    clients that support MCP Apps.

    Example: Then the tool "cart_total" has no app
    """
    session = current_session(context)
    name = text(context, tool)
    listed = _tool(context, session, name)
    uri = app_uri(listed)
    if uri is not None:
        raise ExpectationFailed(
            f'The tool "{name}" of "{session.name}" has an app',
            expected="no _meta.ui.resourceUri",
            actual=uri,
        )


@then('the app of the tool "{tool:Q}" is served as an MCP App')
def step_app_served(context: StepContext, tool: str) -> None:
    """The `ui://` resource the tool's app names reads (resources/read) as `text/html;profile=mcp-app`,
    with an HTML document in it.

    Example: Then the app of the tool "show_cart" is served as an MCP App
    """
    session = current_session(context)
    name = text(context, tool)
    _, uri = _bound(context, session, name)
    _host(context, session).resources[(session.name, uri)] = _served(session, name, uri)


# ---------------------------------------------------------------------------------------------
# opening and driving


@when('I open the app of the tool "{tool:Q}"')
def step_open_app(context: StepContext, tool: str) -> None:
    """Open the tool's app as a host does: in a headless Chromium, a sandboxed iframe with its declared
    CSP, the host's side of the bridge. Once initialised, the app gets the tool's last input and result
    in this scenario (the tool is called with no arguments first if it was not). Fails when the app
    does not finish its handshake within the request timeout.

    Example:
        When I call the tool "show_cart"
        And I open the app of the tool "show_cart"
    """
    _open(context, tool, table=False)


@when('I open the app of the tool "{tool:Q}" with:')
def step_open_app_with(context: StepContext, tool: str) -> None:
    """Call the tool with an argument table (as "When I call the tool ... with:" does), then open its app
    with that input and result.

    Example:
        When I open the app of the tool "show_cart" with:
          | currency |
          | EUR      |
    """
    _open(context, tool, table=True)


@then('the app shows "{needle:Q}"')
def step_app_shows(context: StepContext, needle: str) -> None:
    """The app shows this text (visible, case-sensitive, anywhere in an element's text), waiting for it up
    to the request timeout.

    Example: Then the app shows "Your cart"
    """
    host, app = _current(context)
    wanted = expected_text(context, needle)
    with _evidence(context, host, app):
        timeout = app.view.timeout
        if not host.run(app.view.shows, wanted, timeout, limit=timeout):
            raise ExpectationFailed(
                f'{app.label.capitalize()} does not show "{wanted}" (waited {timeout:g} s)',
                details=host.what_it_did(app),
                tip="the text must be visible in the app's document (not hidden, not in an input's value).",
            )


@then('the app does not show "{needle:Q}"')
def step_app_does_not_show(context: StepContext, needle: str) -> None:
    """The app shows no visible text containing this, once what it was doing is done (its requests to the
    host answered).

    Example: Then the app does not show "Error"
    """
    host, app = _current(context)
    unwanted = expected_text(context, needle)
    with _evidence(context, host, app):
        budget = _Budget(app.view.timeout)
        host.settle(app, budget.left())
        count = host.run(app.view.count_shown, unwanted, limit=budget.left())
        if count:
            raise ExpectationFailed(
                f'{app.label.capitalize()} shows "{unwanted}" ({count} element{"s" if count > 1 else ""})',
                details=host.what_it_did(app),
            )


@when('I click "{needle:Q}" in the app')
def step_click_in_app(context: StepContext, needle: str) -> None:
    """Click a button or link of the app, found by its visible text or accessible name (an exact match
    first), then let the app finish what the click started (its requests to the host answered).

    Example: When I click "Checkout" in the app
    """
    host, app = _current(context)
    target = text(context, needle)
    with _evidence(context, host, app):
        budget = _Budget(app.view.timeout)
        try:
            host.run(app.view.click, target, budget.left(), limit=budget.left())
        except Exception as exc:
            raise ExpectationFailed(
                f'{app.label.capitalize()} has no button or link "{target}" to click',
                actual=_said(exc),
                details=host.what_it_did(app),
                tip="a button or link is found by its text or its accessible name (aria-label, title).",
            ) from None
        host.settle(app, budget.left())


@when('I type "{value:Q}" into "{field:Q}" in the app')
def step_type_in_app(context: StepContext, value: str, field: str) -> None:
    """Type into a field of the app (replacing what it held), found by its label, placeholder, accessible
    name or `name` attribute; a drop-down gets the option with that label.

    Example: When I type "2" into "Quantity" in the app
    """
    host, app = _current(context)
    typed, target = text(context, value), text(context, field)
    with _evidence(context, host, app):
        budget = _Budget(app.view.timeout)
        try:
            host.run(app.view.type_into, target, typed, budget.left(), limit=budget.left())
        except Exception as exc:
            raise ExpectationFailed(
                f'{app.label.capitalize()} has no field "{target}" to type into',
                actual=_said(exc),
                details=host.what_it_did(app),
                tip="a field is found by its <label>, its placeholder, its accessible name or its name attribute.",
            ) from None
        host.settle(app, budget.left())


def _said(exc: BaseException) -> str:
    """A browser error's first line, bounded (Playwright's carry a call log after it)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300] if lines else ''}"


# ---------------------------------------------------------------------------------------------
# what the app asked the host for


def _call_fits(call: AppCall, name: str, wanted: dict[str, object] | None) -> bool:
    if call.name != name:
        return False
    return wanted is None or all(key in call.arguments and call.arguments[key] == v for key, v in wanted.items())


def _app_called(context: StepContext, tool: str, wanted: dict[str, object] | None) -> None:
    host, app = _current(context)
    name = text(context, tool)
    with _evidence(context, host, app):
        bridge = app.bridge
        timeout = app.view.timeout

        async def seen() -> bool:
            return await bridge.wait_for(lambda: any(_call_fits(c, name, wanted) for c in bridge.record.calls), timeout)

        if not host.run(seen, limit=timeout):
            calls = [f"{c.name} {json.dumps(c.arguments)[:200]}" for c in bridge.record.calls]
            raise ExpectationFailed(
                f'{app.label.capitalize()} did not call the tool "{name}"'
                + (" with these arguments" if wanted else "")
                + f" (waited {timeout:g} s)",
                expected=f"{name} {json.dumps(wanted)}" if wanted else name,
                actual=some_of(calls) if calls else "no tools/call from the app",
                details=host.what_it_did(app),
            )


@then('the app called the tool "{tool:Q}"')
def step_app_called(context: StepContext, tool: str) -> None:
    """The app asked the host to call this tool (`tools/call` over the bridge), waiting up to the request
    timeout. The call is in the transcript; "the result" steps do not see it (it is the app's).

    Example: Then the app called the tool "checkout"
    """
    _app_called(context, tool, None)


@then('the app called the tool "{tool:Q}" with:')
def step_app_called_with(context: StepContext, tool: str) -> None:
    """The app called this tool with these arguments among those it sent (an argument table, coerced by
    the tool's input schema).

    Example:
        Then the app called the tool "checkout" with:
          | quantity |
          | 2        |
    """
    session = current_session(context)
    name = text(context, tool)
    _app_called(context, tool, argument_table(context, session, name))


@then('the app sent the message "{needle:Q}"')
def step_app_sent_message(context: StepContext, needle: str) -> None:
    """The app asked the host to add a message to the conversation (`ui/message`) whose text contains
    this, waiting for it up to the request timeout.

    Example: Then the app sent the message "Order placed"
    """
    host, app = _current(context)
    wanted = expected_text(context, needle)
    with _evidence(context, host, app):
        bridge = app.bridge
        timeout = app.view.timeout

        def texts() -> list[str]:
            return [_message_text(m) for m in bridge.record.messages]

        async def seen() -> bool:
            return await bridge.wait_for(lambda: any(wanted in t for t in texts()), timeout)

        if not host.run(seen, limit=timeout):
            raise ExpectationFailed(
                f'{app.label.capitalize()} did not send a message containing "{wanted}" (waited {timeout:g} s)',
                actual=some_of(texts()) if texts() else "no ui/message from the app",
                details=host.what_it_did(app),
            )


def _message_text(params: dict[str, object]) -> str:
    content = params.get("content")
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(str(b.get("text")) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


@then("the app has no errors")
def step_app_has_no_errors(context: StepContext) -> None:
    """Once what the app was doing is done: no uncaught exception, no console error, no request refused
    (by its CSP or the host), no bridge message that breaks the extension's rules (a request before
    ui/initialize, an answer to a request never sent, a tool kept from apps, a flood, ...).

    Example: Then the app has no errors
    """
    host, app = _current(context)
    with _evidence(context, host, app):
        host.settle(app, app.view.timeout)
        bridge = app.bridge
        count = len(bridge.errors) + bridge.errors_not_kept
        if count:
            raise ExpectationFailed(
                f"{app.label.capitalize()} had {count} error{'s' if count > 1 else ''}",
                details=host.what_it_did(app),
            )
