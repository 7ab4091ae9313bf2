"""One opened MCP App: its page in the run's browser, its bridge, and what a step does with it.

Async, in the run's event loop (see `_browser`); `_host.AppHost` is the steps' synchronous facade.

How an app is shown, as a web host shows it: a fresh browser context per app; the host page
(`host.html`, served as `HOST_ORIGIN`) holds one iframe, sandboxed (`allow-scripts allow-forms
allow-same-origin`: on an origin of its own, the app keeps its storage and cannot reach the
host), whose document is the `ui://` resource's HTML served as `APP_ORIGIN` with the
Content-Security-Policy its `_meta.ui.csp` declares (a real response header: the app cannot
loosen it). Both origins are answered by Playwright's routing, never by a network server: the
app's document is the only thing served from its origin, and any other request there is refused
and counted among the app's errors. What it loads from elsewhere is left to its CSP.

What the app does wrong is collected as it happens: uncaught exceptions, console errors
(a CSP refusal is one), requests the host refused, and the bridge's protocol errors.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import struct
import zlib
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Literal

from mcp_bdd.ui_apps._bridge import Bridge, HostInfo, Proxy, Tools
from mcp_bdd.ui_apps._meta import AppResource

if TYPE_CHECKING:  # Playwright is the `apps` extra: imported where a browser starts (_browser)
    from playwright.async_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        FloatRect,
        FrameLocator,
        Locator,
        Page,
        Route,
    )
    from playwright.async_api import Error as PlaywrightError

__all__ = ["APP_ORIGIN", "HOST_ORIGIN", "MESSAGE_BYTES", "MESSAGE_LIMIT", "VIEWPORT", "AppView", "Shot"]

HOST_ORIGIN = "http://mcp-bdd-host.test"
#: another site than the host's: Chromium then runs the app in a process of its own (site isolation)
APP_ORIGIN = "http://mcp-bdd-app.test"
APP_PATH = "/app.html"
#: the browser window an app is shown in (CSS pixels): the host context's container width and height
VIEWPORT = (600, 450)
#: messages the host page relays from one app (a flood past it is one error), and the size of each (JSON chars)
MESSAGE_LIMIT = 2000
MESSAGE_BYTES = 1024 * 1024
#: a screenshot above this is drawn again smaller (the report embeds images up to ~1.5 MB)
SHOT_BYTES = 400 * 1024
#: console messages and page errors kept per app
_CONSOLE_LIMIT = 200


@dataclass(frozen=True)
class Shot:
    """A screenshot for the evidence: PNG bytes, or why there is none."""

    png: bytes | None
    note: str = ""


def _host_page(resource: AppResource) -> str:
    template = resources.files("mcp_bdd.ui_apps").joinpath("host.html").read_text(encoding="utf-8")
    limits = {
        "messages": MESSAGE_LIMIT,
        "bytes": MESSAGE_BYTES,
        "maxHeight": 4000,
        "maxWidth": VIEWPORT[0],
    }
    app = {
        "src": APP_ORIGIN + APP_PATH,
        "origin": APP_ORIGIN,
        "sandbox": "allow-scripts allow-forms allow-same-origin",
        "allow": "; ".join(resource.permissions),
        "border": bool(resource.prefers_border),
        "height": VIEWPORT[1] - (2 if resource.prefers_border else 0),
    }

    def script_json(value: object) -> str:  # JSON inside a <script>: no "</script>" can close it early
        return json.dumps(value).replace("<", "\\u003c")

    return template.replace("/*LIMITS*/", script_json(limits)).replace("/*APP*/", script_json(app))


class AppView:
    """One app in its own browser context. Every method runs in the run's event loop."""

    def __init__(self, *, resource: AppResource, host: HostInfo, timeout: float) -> None:
        self.resource = resource
        self.host = host
        self.timeout = timeout
        self.bridge: Bridge | None = None
        self.context: BrowserContext | None = None
        self.page: Page | None = None
        self.console: list[str] = []  # what the app wrote to its console (all levels), bounded
        self.last_png: bytes | None = None

    # -- opening -------------------------------------------------------------------------------
    async def open(
        self,
        browser: Browser,
        *,
        tool: dict[str, object],
        arguments: dict[str, object],
        result: dict[str, object] | None,
        proxy: Proxy,
        tools: Tools,
    ) -> None:
        """Show the app and connect its bridge; returns once the page is loaded (the app may still
        be initialising: `initialized` waits for that)."""
        context = self.context = await browser.new_context(
            viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]},
            device_scale_factor=1,
            java_script_enabled=True,
            service_workers="block",
            accept_downloads=False,
            locale=self.host.locale,
            timezone_id=self.host.time_zone,
        )
        context.set_default_timeout(self.timeout * 1000)
        page = self.page = await context.new_page()
        self.bridge = Bridge(
            tool=tool,
            arguments=arguments,
            result=result,
            host=self.host,
            csp=self.resource.csp,
            post=self._post,
            proxy=proxy,
            resize=self._resize,
            timeout=self.timeout,
            tools=tools,
        )
        if self.resource.csp.dropped:
            self.bridge.note("host", None, f"CSP entries not applied (unsafe): {', '.join(self.resource.csp.dropped)}")
        self.bridge.note("host", None, f"Content-Security-Policy: {self.resource.csp.header()}")
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("crash", lambda _page: self._error("the app's page crashed"))
        await page.expose_binding("__mcpBddFromApp", self._from_page)
        await context.route(f"{HOST_ORIGIN}/**", self._serve_host)
        await context.route(f"{APP_ORIGIN}/**", self._serve_app)
        await page.goto(f"{HOST_ORIGIN}/", wait_until="load", timeout=self.timeout * 1000)

    def _from_page(self, source: dict[str, object], relayed: object) -> None:
        """The binding: only the host page's own frame may call it (the app's frame sees it too)."""
        if self.bridge is None or self.page is None:
            return
        if source.get("frame") is not self.page.main_frame:
            self.bridge.error("called the host page's relay itself, bypassing postMessage")
            return
        self.bridge.receive(relayed)

    async def _serve_host(self, route: Route) -> None:
        if route.request.url.rstrip("/") == HOST_ORIGIN:
            await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=_host_page(self.resource))
        else:
            await route.fulfill(status=404, body="")

    async def _serve_app(self, route: Route) -> None:
        url = route.request.url
        if url == APP_ORIGIN + APP_PATH and route.request.is_navigation_request():
            await route.fulfill(
                status=200,
                content_type="text/html; charset=utf-8",
                headers={
                    "Content-Security-Policy": self.resource.csp.header(),
                    "X-Content-Type-Options": "nosniff",
                },
                body=self.resource.html,
            )
            return
        self._error(
            f"asked for {url[:300]}, which the host does not serve (an MCP App is one document: "
            "inline its scripts and styles, or load them from a domain its _meta.ui.csp declares)"
        )
        await route.fulfill(status=404, body="")

    def _error(self, text: str) -> None:
        if self.bridge is not None:
            self.bridge.error(text)

    def _on_console(self, message: ConsoleMessage) -> None:
        try:
            url = str((message.location or {}).get("url", ""))
            text = str(message.text)[:1000]
            kind = str(message.type)
        except Exception:  # a console message whose arguments are gone
            return
        if url.startswith(HOST_ORIGIN):
            return
        if len(self.console) < _CONSOLE_LIMIT:
            self.console.append(f"{kind}: {text}")
        if kind == "error":
            refused = "Content Security Policy" in text
            self._error(("refused by its Content-Security-Policy: " if refused else "console error: ") + text)

    def _on_page_error(self, error: PlaywrightError) -> None:
        name = getattr(error, "name", "") or "Error"
        message = getattr(error, "message", "") or str(error)
        self._error(f"uncaught {name}: {str(message)[:1000]}")

    async def _post(self, message: dict[str, object]) -> None:
        if self.page is not None and not self.page.is_closed():
            await self.page.evaluate("m => window.__mcpBdd.toApp(m)", message)

    async def _resize(self, params: dict[str, object]) -> None:
        height = params.get("height")
        if self.page is not None and not self.page.is_closed() and isinstance(height, int | float):
            await self.page.evaluate("h => window.__mcpBdd.resize(null, h)", height)

    @property
    def frame(self) -> FrameLocator:
        """The app's document."""
        assert self.page is not None
        return self.page.frame_locator("#app")

    # -- what a step does ----------------------------------------------------------------------
    async def settle(self, timeout: float) -> None:
        """Let the app finish what the last action started: its handlers run (a round trip through
        its event loop and the host's), every request it made is answered, and again while that
        brought more traffic (an answer it acts on: a message, a resize). Bounded by `timeout`."""
        assert self.page is not None and self.bridge is not None
        bridge = self.bridge
        try:
            async with asyncio.timeout(timeout):
                for _ in range(20):
                    before = bridge.traffic
                    app = next((f for f in self.page.frames if f.url.startswith(APP_ORIGIN)), None)
                    if app is not None and bridge.stopped is None:
                        # after a frame is drawn: its resize observers have spoken by then
                        await app.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
                    await self.page.evaluate("() => new Promise(r => setTimeout(r, 0))")
                    await bridge.idle(timeout)
                    if bridge.traffic == before:
                        return
        except Exception:  # out of time, or a hung or gone app: what it did is in its record
            return

    def _text(self, wanted: str) -> Locator:
        """Visible elements whose text holds `wanted` (case-sensitive, white space as written)."""
        return self.frame.get_by_text(re.compile(re.escape(wanted))).locator("visible=true")

    async def shows(self, wanted: str, timeout: float) -> bool:
        try:
            await self._text(wanted).first.wait_for(state="visible", timeout=timeout * 1000)
        except Exception:
            return False
        return True

    async def count_shown(self, wanted: str) -> int:
        try:
            return int(await self._text(wanted).count())
        except Exception:
            return 0

    async def visible_text(self, limit: int = 1500) -> str:
        """The app's visible text, for failure messages (bounded; "" when it cannot be read)."""
        try:
            text = await self.frame.locator("body").inner_text(timeout=min(self.timeout, 2) * 1000)
        except Exception:
            return ""
        text = re.sub(r"\s+", " ", str(text)).strip()
        return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"

    async def click(self, name: str, timeout: float) -> None:
        """Click a button or link by its visible text or accessible name (an exact name first)."""
        frame = self.frame
        roles: tuple[Literal["button", "link", "menuitem", "tab"], ...] = ("button", "link", "menuitem", "tab")
        exact = _union([frame.get_by_role(r, name=name, exact=True) for r in roles]).locator("visible=true")
        loose = _union([frame.get_by_role(r, name=name) for r in roles]).locator("visible=true")
        await exact.or_(loose).first.wait_for(state="visible", timeout=timeout * 1000)
        target = exact if await exact.count() else loose
        await target.first.click(timeout=timeout * 1000)

    async def type_into(self, field: str, value: str, timeout: float) -> None:
        """Fill a field found by its label, placeholder, accessible name or name attribute."""
        frame = self.frame
        candidates = _union(
            [
                frame.get_by_label(field, exact=True),
                frame.get_by_placeholder(field, exact=True),
                frame.get_by_role("textbox", name=field, exact=True),
                frame.get_by_role("spinbutton", name=field, exact=True),
                frame.get_by_role("combobox", name=field, exact=True),
                frame.locator(f"[name={json.dumps(field)}]"),
                frame.get_by_label(field),
                frame.get_by_placeholder(field),
            ]
        ).locator("visible=true")
        target = candidates.first
        await target.wait_for(state="visible", timeout=timeout * 1000)
        tag = str(await target.evaluate("e => e.tagName")).lower()
        if tag == "select":
            await target.select_option(label=value, timeout=timeout * 1000)
        else:
            await target.fill(value, timeout=timeout * 1000)

    async def screenshot(self, timeout: float) -> Shot:
        """The app as shown (the viewport: bounded), drawn smaller while it is too large for the report."""
        if self.page is None or self.page.is_closed():
            return Shot(None, "the app's page is closed")
        try:
            png = await self.page.screenshot(
                type="png",
                scale="css",
                animations="disabled",
                caret="hide",
                clip=await self._shown_box(),
                timeout=timeout * 1000,
            )
            png = await self._indexed(png)
            factor = 0.7
            while len(png) > SHOT_BYTES and factor > 0.1:
                shrunk = await self.page.evaluate(
                    "([b, f]) => window.__mcpBdd.shrink(b, f)", [base64.b64encode(png).decode("ascii"), factor]
                )
                png = base64.b64decode(shrunk)
                factor *= 0.7
        except Exception as exc:
            said = str(exc).strip().splitlines()
            return Shot(None, f"no screenshot: {type(exc).__name__}: {said[0][:200] if said else ''}")
        if len(png) > SHOT_BYTES:
            return Shot(None, f"the screenshot stayed above {SHOT_BYTES} bytes")
        self.last_png = png
        return Shot(png)

    async def _indexed(self, png: bytes) -> bytes:
        """The screenshot as an indexed-colour PNG when it has at most 256 colours (else as it was):
        the same picture, about a third of the bytes, in every report of the run."""
        assert self.page is not None
        try:
            found = await self.page.evaluate("b => window.__mcpBdd.palette(b)", base64.b64encode(png).decode("ascii"))
        except Exception:
            return png
        if not isinstance(found, dict):
            return png
        smaller = indexed_png(int(found["width"]), int(found["height"]), found["palette"], found["indices"])
        return smaller if smaller is not None and len(smaller) < len(png) else png

    async def fingerprint(self, timeout: float) -> str | None:
        """What the app shows, as text: its document, its fields' values, its frame's size, or None when
        it cannot be read. Two alike look alike: a step leaves out a screenshot the last one already
        shows (pixels would not do: Chromium draws a rounded corner a little differently each time).
        An empty style attribute is what a screenshot's hidden caret leaves on a field: not the app's."""
        assert self.page is not None
        app = next((f for f in self.page.frames if f.url.startswith(APP_ORIGIN)), None)
        if app is None or self.bridge is None or self.bridge.stopped is not None:
            return None
        try:
            seen = await asyncio.wait_for(
                app.evaluate(
                    """() => JSON.stringify([
                        document.documentElement.outerHTML.replaceAll(' style=""', ""),
                        [...document.querySelectorAll("input, textarea, select")].map(e => [e.value, e.checked]),
                        innerWidth, innerHeight, scrollX, scrollY,
                    ])"""
                ),
                timeout,
            )
        except Exception:
            return None
        return hashlib.sha256(str(seen).encode()).hexdigest()

    async def _shown_box(self) -> FloatRect | None:
        """The part of the window the app (or the host's notice in its place) takes, within the window:
        what the screenshot shows (the white below a short app costs bytes and says nothing)."""
        assert self.page is not None
        box = await self.page.evaluate(
            """() => {
                const e = document.getElementById("app") || document.getElementById("stopped");
                if (!e) return null;
                const r = e.getBoundingClientRect();
                return {x: r.x, y: r.y, width: r.width, height: r.height};
            }"""
        )
        if not isinstance(box, dict):
            return None
        width = min(float(box["width"]), VIEWPORT[0] - float(box["x"]))
        height = min(float(box["height"]), VIEWPORT[1] - float(box["y"]))
        if width < 1 or height < 1:
            return None
        return {"x": float(box["x"]), "y": float(box["y"]), "width": width, "height": height}

    # -- closing -------------------------------------------------------------------------------
    async def close(self, timeout: float) -> str | None:
        """Teardown (the app's answer awaited), then the browser context goes. What went wrong, or None."""
        problem = None
        if self.bridge is not None:
            try:
                problem = await self.bridge.teardown(timeout)
                await self.bridge.idle(min(timeout, 2))
            finally:
                await self.bridge.close()
        if self.context is not None:
            context, self.context = self.context, None
            try:
                await asyncio.wait_for(context.close(), timeout + 5)
            except Exception as exc:
                problem = f"its browser context did not close: {type(exc).__name__}: {exc}"
        return problem


def indexed_png(width: int, height: int, palette: list[int], indices: str) -> bytes | None:
    """An 8-bit indexed-colour PNG of `width` x `height` pixels: `palette` as 0xRRGGBB, `indices` (base64)
    one byte per pixel. None when the parts do not fit together (the page computed them)."""
    try:
        pixels = base64.b64decode(indices)
    except ValueError:
        return None
    if width < 1 or height < 1 or len(pixels) != width * height or not 0 < len(palette) <= 256:
        return None
    rows = b"".join(b"\x00" + pixels[y * width : (y + 1) * width] for y in range(height))  # filter: none

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    plte = b"".join(struct.pack(">I", int(c) & 0xFFFFFF)[1:] for c in palette)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
        + chunk(b"PLTE", plte)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def _union(locators: list[Locator]) -> Locator:
    """One locator for any of `locators`."""
    found = locators[0]
    for other in locators[1:]:
        found = found.or_(other)
    return found
