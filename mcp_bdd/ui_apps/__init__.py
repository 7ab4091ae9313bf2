"""mcp-bdd as an MCP Apps host: a tool's `ui://` app opened in a real headless Chromium, as a host opens it.

MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension) let a tool carry an interactive UI:
its `_meta.ui.resourceUri` names a `ui://` resource, an HTML document served as
`text/html;profile=mcp-app`, which the host renders in a sandboxed iframe and talks to over
JSON-RPC on `postMessage`. The steps (mcp_bdd/steps/ui_apps.py) open it here and check what it
shows, what clicking does, and what it asks the host for.

    _meta      pure: a tool's binding and visibility, a resource's CSP and permissions, as a host reads them
    _bridge    the host side of the JSON-RPC bridge (initialize, held notifications, proxying, records, teardown)
    _view      one app's page: the host page (host.html) and the app's iframe, served by Playwright's routing
    _host      `AppHost`: a scenario's apps, driven from synchronous steps through the run's event loop
    _browser   the run's one Chromium (Playwright for Python, the `apps` extra), started lazily; `close_browsers`

The browser is Playwright's Chromium driver launching the Chromium on PATH (or `MCP_BDD_CHROMIUM`):
see docs/apps.md.
"""

from __future__ import annotations

from mcp_bdd.ui_apps._bridge import AppCall, Bridge
from mcp_bdd.ui_apps._browser import CHROMIUM_ENV, BrowserUnavailable, close_browsers, find_chromium
from mcp_bdd.ui_apps._host import AppHost, OpenedApp
from mcp_bdd.ui_apps._meta import APP_MIME_TYPE, EXTENSION_ID, AppResource, Csp, app_uri, is_app_mime, visibility
from mcp_bdd.ui_apps._view import Shot

__all__ = [
    "APP_MIME_TYPE",
    "CHROMIUM_ENV",
    "EXTENSION_ID",
    "AppCall",
    "AppHost",
    "AppResource",
    "Bridge",
    "BrowserUnavailable",
    "Csp",
    "OpenedApp",
    "Shot",
    "app_uri",
    "close_browsers",
    "find_chromium",
    "is_app_mime",
    "visibility",
]
