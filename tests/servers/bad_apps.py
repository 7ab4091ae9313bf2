"""A deliberately bad MCP Apps server: every Apps defect `mcp-bdd check` looks for, planted once.

Written with the SDK's `mcp.server.apps` where it allows the defect, and with MCPServer's own
`tool(meta=...)` / `resource(mime_type=...)` where `Apps` refuses it (a web URL as the binding, a
binding to no resource, a resource served as plain HTML): the defects a hand-written `_meta` or
another SDK lets through. PLANTED names each with the check that must find it
(tests/test_apps_check.py). `place_order` has an app and no text, but is not read-only: the check
must never call it — every call it gets is appended to the file named by BAD_APPS_CALLS.
"""

from __future__ import annotations

import os
from typing import Any

import mcp_types as types
from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver import MCPServer

READ_ONLY = types.ToolAnnotations(read_only_hint=True)
GOOD_URI = "ui://bad/good.html"
PLAIN_URI = "ui://bad/plain.html"
OPEN_URI = "ui://bad/open.html"

HTML = "<!DOCTYPE html><html><body><p>An app</p></body></html>"

#: (check id, target) pairs the check must report on this server.
PLANTED: list[tuple[str, str]] = [
    ("apps.binding", "tool web_page"),
    ("apps.binding", "tool missing_app"),
    ("apps.mime-type", f"resource {PLAIN_URI}"),
    ("apps.visibility", "tool admin_string"),
    ("apps.visibility", "tool admin_misspelt"),
    ("apps.visibility", "tool admin_flat"),
    ("apps.text-fallback", "tool silent_view"),
    ("apps.csp", f"resource {OPEN_URI}"),
]

#: tools that are well-formed: no Apps finding may name them.
CLEAN = ["good_view", "app_only", "place_order"]


def _no_text(data: dict[str, Any]) -> types.CallToolResult:
    """A result for the app alone: structured content, and no content a plain client could show."""
    return types.CallToolResult(content=[], structured_content=data)


def _add_app_tools(apps: Apps) -> None:
    @apps.tool(resource_uri=GOOD_URI, name="good_view", description="Shows the good app, with a text fallback",
               annotations=READ_ONLY)  # fmt: skip
    def good_view() -> str:
        return "The good app: 3 items"

    @apps.tool(resource_uri=GOOD_URI, name="silent_view", description="Shows the app and gives plain clients nothing",
               annotations=READ_ONLY)  # fmt: skip
    def silent_view() -> types.CallToolResult:
        return _no_text({"items": 3})

    @apps.tool(resource_uri=GOOD_URI, visibility=["app"], name="app_only", description="Refreshes the app's items")
    def app_only() -> str:
        return "3 items"

    @apps.tool(resource_uri=GOOD_URI, name="place_order", description="Places the order shown in the app")
    def place_order() -> types.CallToolResult:
        calls = os.environ.get("BAD_APPS_CALLS")
        if calls:
            with open(calls, "a", encoding="utf-8") as out:
                out.write("place_order\n")
        return _no_text({"order": "ORD-1"})

    @apps.tool(resource_uri=OPEN_URI, name="open_view", description="Shows an app whose CSP allows everything",
               annotations=READ_ONLY)  # fmt: skip
    def open_view() -> str:
        return "open"

    apps.add_html_resource(
        GOOD_URI, HTML, name="good app", csp=ResourceCsp(connect_domains=["https://api.example.com"])
    )
    apps.add_html_resource(
        OPEN_URI,
        HTML,
        name="open app",
        csp=ResourceCsp(connect_domains=["*"], resource_domains=["https:", "'unsafe-eval'"]),
    )


def _add_raw_tools(server: MCPServer) -> None:
    """What `Apps` refuses to write, as a hand-written `_meta` or another SDK sends it."""

    def tool(name: str, meta: dict[str, Any]) -> None:
        @server.tool(name=name, description=f"The {name.replace('_', ' ')} tool of the bad Apps server", meta=meta,
                     annotations=READ_ONLY)  # fmt: skip
        def answer() -> str:
            return name

    tool("web_page", {"ui": {"resourceUri": "https://example.com/app.html"}})
    tool("missing_app", {"ui": {"resourceUri": "ui://bad/missing.html"}})
    tool("plain_view", {"ui": {"resourceUri": PLAIN_URI}})
    tool("admin_string", {"ui": {"resourceUri": GOOD_URI, "visibility": "app"}})
    tool("admin_misspelt", {"ui": {"resourceUri": GOOD_URI, "visibility": ["App"]}})
    tool("admin_flat", {"ui": {"resourceUri": GOOD_URI}, "ui/visibility": ["app"]})

    @server.resource(PLAIN_URI, name="plain app", mime_type="text/html")
    def plain() -> str:
        return HTML


def create_server() -> MCPServer:
    apps = Apps()
    _add_app_tools(apps)
    server = MCPServer("bad-apps", version="0.1.0", extensions=[apps])
    _add_raw_tools(server)
    return server
