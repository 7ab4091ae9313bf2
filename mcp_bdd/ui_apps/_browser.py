"""The run's one headless Chromium, driven by Playwright for Python in the run's event loop.

Why Playwright's async API in the portal's loop (not its sync API in behave's thread): the app
talks to the host on its own schedule (a click's `tools/call` arrives while no step runs), and
the host answers it by calling the scenario's session. In the loop, the bridge's callbacks run
as soon as a message arrives, whatever behave's thread is doing; steps reach the browser by the
same hops as sessions (`session.hops`), with deadlines that hold.

Why lazily, once per run: a browser costs about a second to start and most scenarios open no
app. The first app step starts it (within `startup_timeout`); each app gets a fresh browser
context (its own cookies, storage and origin), closed when the scenario ends; the browser stops
at the end of the run (`close_browsers`, which the runtime calls). Nothing is left behind when
the run is killed: Playwright's driver runs as a child of the test process, ends when its pipe
closes, and takes the browser with it (tests/test_apps_processes.py kills behave with SIGKILL).

Which browser: `MCP_BDD_CHROMIUM` (a path or a command name), else the first of `chromium`,
`chromium-browser`, `google-chrome`, `google-chrome-stable` on PATH, else Playwright's own
Chromium when `playwright install chromium` put one in place. None of them, or no Playwright,
is a failure that names what to install: never a skip, which would read as green.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from mcp_bdd.errors import McpBddError

if TYPE_CHECKING:  # Playwright is the `apps` extra: imported when the first app is opened
    from playwright.async_api import Browser, Playwright

    from mcp_bdd.session._hop import Hops

__all__ = ["CHROMIUM_ENV", "BrowserUnavailable", "RunBrowser", "browser_for", "close_browsers", "find_chromium"]

#: the environment variable that names the Chromium (or Chrome) to use: a path, or a command on PATH
CHROMIUM_ENV = "MCP_BDD_CHROMIUM"
#: the commands looked for on PATH, in order
CHROMIUM_COMMANDS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_INSTALL = (
    "Install the apps extra and a Chromium: pip install 'mcp-bdd[apps]', then apt-get install chromium "
    "(Debian/Ubuntu; or your system's Chromium or Chrome), or `playwright install chromium` where it can "
    f"download; or point {CHROMIUM_ENV} at a Chromium or Chrome executable."
)


class BrowserUnavailable(McpBddError):
    """No browser to open an MCP App in: Playwright is not installed, no Chromium is found, or it
    would not start. A setup failure, named with what to install (never a skip)."""

    kind = "setup"


class _Driver(Protocol):
    """What `async_playwright()` gives: only started (never entered as a context); `_stop` stops its Playwright."""

    async def start(self) -> Playwright: ...


def _playwright() -> Callable[[], _Driver]:
    """`playwright.async_api.async_playwright`, or a failure that says how to install it."""
    try:
        import playwright.async_api as api
    except ImportError as exc:
        raise BrowserUnavailable(
            "MCP Apps are opened in a real browser, through Playwright for Python, which is not installed "
            f"({exc}).\n  Tip: {_INSTALL}"
        ) from None
    return api.async_playwright


def find_chromium() -> str | None:
    """The Chromium to launch: `MCP_BDD_CHROMIUM`, else the first Chromium or Chrome on PATH; None when
    neither names one (Playwright's own, if installed, is tried next). A `MCP_BDD_CHROMIUM` that names
    nothing is a failure of its own: the user asked for that browser."""
    named = os.environ.get(CHROMIUM_ENV, "").strip()
    if named:
        found = shutil.which(named) or (named if os.path.isfile(named) and os.access(named, os.X_OK) else None)
        if found is None:
            raise BrowserUnavailable(
                f"{CHROMIUM_ENV}={named} names no executable file (nor a command on PATH).\n"
                f"  Tip: set it to the path of a Chromium or Chrome executable, or unset it to use the one on PATH."
            )
        return found
    return next((path for path in map(shutil.which, CHROMIUM_COMMANDS) if path), None)


class RunBrowser:
    """The run's browser: started at the first app, in the portal's event loop, closed at the run's end."""

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock: asyncio.Lock | None = None
        self.executable = ""
        #: the hops into the run's event loop (a session's), kept for the close at the end of the run
        self.hops: Hops | None = None

    async def browser(self, startup_timeout: float) -> Browser:
        """The running browser, started now if it is not (at most `startup_timeout` s)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            await self._stop()
            async_playwright = _playwright()
            executable = find_chromium()
            try:
                driver = self._playwright = await asyncio.wait_for(async_playwright().start(), startup_timeout)
                if executable is None:
                    own = driver.chromium.executable_path
                    if not own or not os.path.exists(own):
                        raise BrowserUnavailable(
                            "No Chromium to open MCP Apps in: "
                            f"{CHROMIUM_ENV} is not set, none of {', '.join(CHROMIUM_COMMANDS)} is on PATH, "
                            f"and Playwright's own Chromium is not installed.\n  Tip: {_INSTALL}"
                        )
                self.executable = executable or driver.chromium.executable_path
                browser = self._browser = await driver.chromium.launch(
                    executable_path=executable,
                    headless=True,
                    timeout=startup_timeout * 1000,
                    # no first-run or background work in a test browser; no GPU in a container
                    args=["--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions"],
                )
            except BrowserUnavailable:
                await self._stop()
                raise
            except Exception as exc:
                await self._stop()
                said = str(exc).strip().splitlines()
                raise BrowserUnavailable(
                    f"The browser for MCP Apps did not start ({executable or 'Playwright Chromium'}): "
                    + " | ".join(said[:6])[:1200]
                    + f"\n  Tip: check that it runs (`{executable or 'chromium'} --headless --version`). {_INSTALL}"
                ) from None
            return browser

    async def _stop(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        if browser is not None:
            with contextlib.suppress(Exception):  # the driver's stop below ends it anyway
                await asyncio.wait_for(browser.close(), 10)
        if playwright is not None:
            with contextlib.suppress(Exception):  # a driver that does not stop dies with its pipe
                await asyncio.wait_for(playwright.stop(), 10)

    async def aclose(self) -> None:
        if self._lock is None:
            return
        async with self._lock:
            await self._stop()


_BY_PORTAL: weakref.WeakKeyDictionary[object, RunBrowser] = weakref.WeakKeyDictionary()


def browser_for(portal: object) -> RunBrowser:
    """The run's browser holder (one per portal: one per run), made on first use; not yet started."""
    found = _BY_PORTAL.get(portal)
    if found is None:
        found = _BY_PORTAL[portal] = RunBrowser()
    return found


def close_browsers(portal: object) -> list[str]:
    """Stop the run's browser (the end of the run); the problems met, as text. Never raises."""
    found = _BY_PORTAL.pop(portal, None)
    if found is None or found.hops is None:
        return []
    try:
        found.hops.call(found.aclose, deadline=30)
    except Exception as exc:
        return [f"the MCP Apps browser did not stop cleanly: {type(exc).__name__}: {exc}"]
    return []
