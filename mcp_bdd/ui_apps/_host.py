"""`AppHost`: a scenario's MCP Apps, driven from synchronous steps (the steps' facade over `AppView`).

One per scenario, made by the first app step: it opens each app in the run's browser (started on
first use, `_browser`), forwards what the app asks of the server to the scenario's session, hops
every browser operation into the run's event loop with a deadline (`session.hops`), and closes
its apps when the scenario ends (teardown request first, then the page).

An app's requests to the server go through the session's public, synchronous API from a worker
thread (`asyncio.to_thread`): they are the scenario's own requests, recorded in its transcript,
bounded by its `timeout`, and a slow server never blocks the bridge's other messages.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple

import mcp_types as types

from mcp_bdd.secrets import dumps_masked
from mcp_bdd.session import Outcome, Session
from mcp_bdd.transcript import APP_BRIDGE_MIME, SCREENSHOT_MIME
from mcp_bdd.ui_apps._bridge import Bridge, HostInfo
from mcp_bdd.ui_apps._browser import BrowserUnavailable, browser_for
from mcp_bdd.ui_apps._meta import AppResource
from mcp_bdd.ui_apps._view import VIEWPORT, AppView, Shot

if TYPE_CHECKING:
    from mcp_bdd.session._hop import Hops

__all__ = ["AppHost", "OpenedApp"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
#: how long past its own limit a browser operation's hop waits for the loop (the loop is then blocked)
GRACE = 10.0
#: how long the host waits for an app's answer to `ui/resource-teardown` when the scenario ends
TEARDOWN_SECONDS = 3.0


@dataclass
class OpenedApp:
    """An app a step opened: which tool's, which resource, its view (page + bridge)."""

    tool: str
    uri: str
    server: str
    view: AppView
    attached: str | None = None  # the fingerprint of what the last screenshot a step attached showed

    @property
    def label(self) -> str:
        """How messages name it: `the app of the tool "show_cart" (ui://cart/app.html)`."""
        return f'the app of the tool "{self.tool}" ({self.uri})'

    @property
    def bridge(self) -> Bridge:
        assert self.view.bridge is not None
        return self.view.bridge


def _error_of(outcome: Outcome) -> dict[str, object]:
    """What the app gets for a request the server did not answer with a result (a JSON-RPC error)."""
    if outcome.error is not None:
        error: dict[str, object] = {"code": outcome.error.code, "message": outcome.error.message}
        if outcome.error.data is not None:
            error["data"] = outcome.error.data
        return error
    return {"code": -32603, "message": outcome.describe(stdout=False)[:500]}


class AppHost:
    """The MCP Apps of one scenario."""

    def __init__(self, *, portal: object, hops: Hops, startup_timeout: float, version: str) -> None:
        self.portal = portal
        self.hops = hops
        self.startup_timeout = startup_timeout
        self.version = version
        self.apps: list[OpenedApp] = []
        #: the apps' resources the scenario read, by (server, uri): opening one of them reads it no more
        self.resources: dict[tuple[str, str], AppResource] = {}

    def run(self, fn: Callable[[*Ts], Awaitable[T]], *args: *Ts, limit: float) -> T:
        """`fn(*args)` in the run's event loop; the step gives up `GRACE` s after `limit`."""
        result: T = self.hops.call(fn, *args, deadline=limit + GRACE)
        return result

    @property
    def current(self) -> OpenedApp | None:
        return self.apps[-1] if self.apps else None

    def open(
        self,
        session: Session,
        *,
        tool: dict[str, object],
        uri: str,
        resource: AppResource,
        arguments: dict[str, object],
        result: dict[str, object] | None,
    ) -> OpenedApp:
        """Show the app of `tool` and connect its bridge (the browser started first if need be).

        Returns once the page is loaded; `initialized` says whether the app finished its handshake."""
        holder = browser_for(self.portal)
        holder.hops = self.hops
        browser = self.run(holder.browser, self.startup_timeout, limit=self.startup_timeout)
        view = AppView(
            resource=resource,
            host=HostInfo(name="mcp-bdd", version=self.version, width=VIEWPORT[0], height=VIEWPORT[1]),
            timeout=session.timeout,
        )
        opened = OpenedApp(tool=str(tool.get("name")), uri=uri, server=session.name, view=view)
        self.apps.append(opened)  # closed with the scenario even when it fails to open

        async def proxy(
            method: str, params: dict[str, object]
        ) -> tuple[dict[str, object] | None, dict[str, object] | None]:
            outcome = await asyncio.to_thread(_forward, session, method, params)
            return (outcome.raw, None) if outcome.ok else (None, _error_of(outcome))

        async def tools() -> list[dict[str, object]]:
            return await asyncio.to_thread(session.tool_list)

        show = functools.partial(
            view.open, browser, tool=tool, arguments=arguments, result=result, proxy=proxy, tools=tools
        )
        try:
            self.run(show, limit=session.timeout)
        except Exception as exc:  # the host page did not load: the browser's words, shortened
            said = str(exc).strip().splitlines()
            raise BrowserUnavailable(
                f"{opened.label.capitalize()} could not be shown: {type(exc).__name__}: "
                + (said[0][:300] if said else "")
                + f"\n  Tip: the browser ({holder.executable or 'Chromium'}) did not load the host page within "
                f"{session.timeout:g} s; a loaded machine may need a larger `timeout`."
            ) from None
        return opened

    def initialized(self, app: OpenedApp, timeout: float) -> bool:
        """Wait until the app finished its handshake and got the tool's input and result."""

        async def ready() -> bool:
            bridge = app.bridge
            done = await bridge.wait_for(lambda: bridge.initialized, timeout)
            if done:
                await bridge.idle(timeout)
            return done

        return self.run(ready, limit=timeout)

    def settle(self, app: OpenedApp, timeout: float) -> None:
        self.run(app.view.settle, timeout, limit=timeout)

    def screenshot(self, app: OpenedApp, timeout: float) -> Shot:
        try:
            return self.run(app.view.screenshot, timeout, limit=timeout)
        except Exception as exc:
            return Shot(None, f"no screenshot: {type(exc).__name__}: {exc}")

    def what_it_did(self, app: OpenedApp, *, shown: bool = True) -> str:
        """What the app did, for a failure message: its handshake, what it asked the host for, its
        errors and console, and (`shown`) the text it shows. Everything quoted is the app's: bounded."""
        bridge = app.bridge
        lines: list[str] = []
        if bridge.initialized:
            info = bridge.app_info or {}
            lines.append(f"it initialised as {json.dumps(info.get('name'))} {json.dumps(info.get('version'))}")
        elif bridge.initialize_answered:
            lines.append("it sent ui/initialize but never ui/notifications/initialized")
        else:
            lines.append("it never sent ui/initialize")
        if bridge.stopped:
            lines.append(f"the host stopped it: {bridge.stopped}")
        if bridge.asked:
            lines.append("it sent: " + ", ".join(f"{m} ×{n}" for m, n in bridge.asked.items()))
        else:
            lines.append(f"it sent no bridge message ({bridge.messages_in} relayed)")
        for call in bridge.record.calls[:10]:
            how = (
                f"refused ({call.refused})"
                if call.refused
                else "error " + json.dumps(call.error)[:200]
                if call.error
                else "answered"
                if call.done
                else "in flight"
            )
            lines.append(f'it called the tool "{call.name}" with {json.dumps(call.arguments)[:200]}: {how}')
        errors = bridge.errors[:8]
        if errors:
            more = len(bridge.errors) - len(errors) + bridge.errors_not_kept
            lines.append(
                "its errors:\n      - " + "\n      - ".join(errors) + (f"\n      … and {more} more" if more else "")
            )
        console = [c for c in app.view.console if not c.startswith("error:")][:5]
        if console:
            lines.append("its console:\n      " + "\n      ".join(c[:300] for c in console))
        if shown and not bridge.stopped:
            text = self.run(app.view.visible_text, limit=5)
            lines.append(f"it shows: {json.dumps(text, ensure_ascii=False)}" if text else "it shows no text")
        return "\n".join("  " + line for line in lines)

    def evidence(self, app: OpenedApp, timeout: float) -> list[tuple[str, bytes]]:
        """What a step attaches about the app: a screenshot as it is now (left out when the app shows
        what it showed in the last one attached: the report shows that one), and the bridge messages
        since the last step's, secrets masked."""
        out: list[tuple[str, bytes]] = []
        try:
            seen = self.run(app.view.fingerprint, min(timeout, 1.0), limit=timeout)
        except Exception:
            seen = None
        if seen is not None and seen == app.attached:
            note = "the app looks as in the previous screenshot"
        else:
            shot = self.screenshot(app, timeout)
            note = shot.note
            if shot.png is not None:
                app.attached = seen
                out.append((SCREENSHOT_MIME, shot.png))
        bridge = app.bridge
        messages = bridge.drain()
        if not out and not messages and not shot_note_needed(note):
            return out  # nothing new to show: the last step's evidence still holds
        record = {
            "app": app.label,
            "server": app.server,
            "initialized": bridge.initialized,
            "app_info": bridge.app_info,
            "messages": messages,
            "errors": len(bridge.errors) + bridge.errors_not_kept,
        }
        if note:
            record["screenshot"] = note
        out.append((APP_BRIDGE_MIME, dumps_masked(record).encode()))
        return out

    def close(self) -> list[str]:
        """Close every app of the scenario (teardown first). Never raises; returns the problems."""
        problems: list[str] = []
        apps, self.apps = self.apps, []
        for app in apps:
            try:
                problem = self.run(app.view.close, TEARDOWN_SECONDS, limit=TEARDOWN_SECONDS + 10)
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if problem:
                problems.append(f"{app.label}: {problem}")
        return problems


def shot_note_needed(note: str) -> bool:
    """Whether a note about the screenshot says something (why there is none), not just "as before"."""
    return bool(note) and not note.startswith("the app looks as in")


def _forward(session: Session, method: str, params: dict[str, object]) -> Outcome:
    """One request the app asked for, on the scenario's session (a worker thread: the session's API is synchronous)."""
    if method == "tools/call":
        arguments = params.get("arguments")  # an object or absent: the bridge refused anything else
        return session.call_tool(str(params["name"]), dict(arguments) if isinstance(arguments, dict) else {})
    given = params.get("cursor")
    cursor = given if isinstance(given, str) else None
    request: types.ReadResourceRequest | types.ListResourcesRequest | types.ListResourceTemplatesRequest
    if method == "resources/read":
        request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=str(params["uri"])))
    elif method == "resources/list":
        request = types.ListResourcesRequest(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
    else:
        request = types.ListResourceTemplatesRequest(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
    return session.request(request)
