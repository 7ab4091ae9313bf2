"""The host side of the MCP Apps bridge without a browser: what a host reads from a tool's and a resource's
metadata (binding, visibility, CSP), and the JSON-RPC it speaks with an app (mcp_bdd/ui_apps/_bridge.py),
driven message by message as the host page would relay them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_bdd.ui_apps import AppResource, Bridge, Csp, app_uri, is_app_mime, visibility
from mcp_bdd.ui_apps._bridge import ERROR_LIMIT, LOG_LIMIT, HostInfo

# -- metadata ---------------------------------------------------------------------------------


def test_a_tool_names_its_app_in_meta_ui_or_the_deprecated_flat_key() -> None:
    assert app_uri({"_meta": {"ui": {"resourceUri": "ui://cart/app.html"}}}) == "ui://cart/app.html"
    assert app_uri({"_meta": {"ui/resourceUri": "ui://old/app.html"}}) == "ui://old/app.html"
    assert app_uri({"_meta": {"ui": {"resourceUri": 42}}}) is None
    assert app_uri({"_meta": "nonsense"}) is None
    assert app_uri({}) is None


def test_visibility_defaults_to_model_and_app_and_ignores_what_it_cannot_read() -> None:
    assert visibility({}) == ("model", "app")
    assert visibility({"_meta": {"ui": {"visibility": ["app"]}}}) == ("app",)
    assert visibility({"_meta": {"ui": {"visibility": "app"}}}) == ("model", "app")


def test_the_mcp_app_mime_type_compares_as_a_media_type() -> None:
    assert is_app_mime("text/html;profile=mcp-app")
    assert is_app_mime("text/html; profile=mcp-app")
    assert is_app_mime("TEXT/HTML;Profile=mcp-app")
    assert not is_app_mime("text/html")
    assert not is_app_mime("text/html;profile=other")
    assert not is_app_mime(None)


def test_no_declared_csp_is_the_spec_restrictive_default() -> None:
    header = Csp.read(None).header()
    assert "default-src 'none'" in header
    assert "connect-src 'none'" in header
    assert "frame-src 'none'" in header
    assert "object-src 'none'" in header
    assert "script-src 'self' 'unsafe-inline'" in header


def test_declared_domains_reach_their_directives_and_unsafe_entries_are_dropped() -> None:
    csp = Csp.read(
        {
            "connectDomains": ["https://api.example.com", "https://x.com; script-src *", "'unsafe-eval'"],
            "resourceDomains": ["https://cdn.example.com"],
            "frameDomains": ["https://player.example.com"],
        }
    )
    header = csp.header()
    assert "connect-src https://api.example.com;" in header
    assert "script-src 'self' 'unsafe-inline' https://cdn.example.com" in header
    assert "frame-src https://player.example.com" in header
    assert "unsafe-eval" not in header and "script-src *" not in header
    assert len(csp.dropped) == 2
    assert csp.approved()["connectDomains"] == ["https://api.example.com"]


def test_a_resource_reads_its_meta_from_the_content_then_from_the_listing() -> None:
    content = {"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "text": "<p>hi</p>"}
    listed = {
        "uri": "ui://a",
        "_meta": {"ui": {"csp": {"connectDomains": ["https://x.example"]}, "prefersBorder": True}},
    }
    resource = AppResource.read("ui://a", content, listed)
    assert resource.csp.connect == ("https://x.example",)
    assert resource.prefers_border is True
    blob = AppResource.read("ui://b", {"blob": "PHA+aGk8L3A+", "_meta": {"ui": {"permissions": {"camera": {}}}}}, None)
    assert blob.html == "<p>hi</p>"
    assert blob.permissions == ("camera",)


# -- the bridge -------------------------------------------------------------------------------

TOOL = {"name": "show_cart", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://cart"}}}
TOOLS = [TOOL, {"name": "secret", "_meta": {"ui": {"visibility": ["model"]}}}, {"name": "checkout"}]


class Harness:
    """A bridge with its browser and server replaced by lists: what it posted, what it forwarded."""

    def __init__(self) -> None:
        self.posted: list[dict[str, Any]] = []
        self.forwarded: list[tuple[str, dict[str, Any]]] = []
        self.resized: list[dict[str, Any]] = []

    async def post(self, message: dict[str, Any]) -> None:
        self.posted.append(message)

    async def proxy(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        self.forwarded.append((method, params))
        if params.get("name") == "broken":
            return None, {"code": -32602, "message": "no such tool"}
        return {"content": [{"type": "text", "text": "done"}]}, None

    async def resize(self, params: dict[str, Any]) -> None:
        self.resized.append(params)

    async def tools(self) -> list[dict[str, Any]]:
        return TOOLS

    def bridge(self, result: dict[str, Any] | None = None) -> Bridge:
        return Bridge(
            tool=TOOL,
            arguments={"currency": "EUR"},
            result=result or {"content": [], "structuredContent": {"items": 2}},
            host=HostInfo(name="mcp-bdd", version="0", width=720, height=480),
            csp=Csp.read(None),
            post=self.post,
            proxy=self.proxy,
            resize=self.resize,
            timeout=5,
            tools=self.tools,
        )


def relay(bridge: Bridge, message: Any) -> None:
    bridge.receive({"kind": "message", "json": json.dumps(message)})


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _handshake(h: Harness) -> Bridge:
    bridge = h.bridge()
    relay(
        bridge,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ui/initialize",
            "params": {
                "appInfo": {"name": "cart", "version": "1"},
                "protocolVersion": "2026-01-26",
                "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]},
            },
        },
    )
    await bridge.idle(2)
    return bridge


def test_initialize_is_answered_and_the_tool_input_and_result_wait_for_initialized() -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = await _handshake(h)
        [answer] = h.posted
        assert answer["id"] == 1
        result = answer["result"]
        assert result["protocolVersion"] == "2026-01-26"
        assert result["hostContext"]["toolInfo"]["tool"]["name"] == "show_cart"
        assert result["hostContext"]["displayMode"] == "inline"
        assert "serverTools" in result["hostCapabilities"]
        relay(bridge, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        await bridge.idle(2)
        assert [m.get("method") for m in h.posted[1:]] == [
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
        ]
        assert h.posted[1]["params"] == {"arguments": {"currency": "EUR"}}
        assert h.posted[2]["params"]["structuredContent"] == {"items": 2}
        assert bridge.errors == []
        await bridge.close()

    run(scenario())


def test_an_unknown_protocol_version_gets_the_hosts_own() -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = h.bridge()
        relay(
            bridge,
            {
                "jsonrpc": "2.0",
                "id": "a",
                "method": "ui/initialize",
                "params": {"appInfo": {"name": "x"}, "protocolVersion": "1999-01-01"},
            },
        )
        await bridge.idle(2)
        assert h.posted[0]["result"]["protocolVersion"] == "2026-01-26"
        await bridge.close()

    run(scenario())


def test_tool_calls_are_forwarded_and_a_tool_kept_from_apps_is_refused() -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = await _handshake(h)
        relay(
            bridge,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "checkout", "arguments": {"quantity": 2}},
            },
        )
        relay(bridge, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "secret"}})
        relay(bridge, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "broken"}})
        await bridge.idle(2)
        by_id = {m["id"]: m for m in h.posted if "id" in m}
        assert by_id[2]["result"]["content"][0]["text"] == "done"
        assert by_id[3]["error"]["code"] == -32000 and "visibility" in by_id[3]["error"]["message"]
        assert by_id[4]["error"] == {"code": -32602, "message": "no such tool"}
        assert [name for name, _ in [(p["name"], p) for _, p in h.forwarded]] == ["checkout", "broken"]
        calls = {c.name: c for c in bridge.record.calls}
        assert calls["checkout"].arguments == {"quantity": 2} and calls["checkout"].done
        assert calls["secret"].refused
        assert len(bridge.errors) == 1 and "secret" in bridge.errors[0]
        await bridge.close()

    run(scenario())


def test_messages_links_display_modes_and_sizes_are_recorded() -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = await _handshake(h)
        relay(
            bridge,
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "ui/message",
                "params": {"role": "user", "content": [{"type": "text", "text": "Order placed"}]},
            },
        )
        relay(bridge, {"jsonrpc": "2.0", "id": 6, "method": "ui/open-link", "params": {"url": "https://example.com"}})
        relay(
            bridge, {"jsonrpc": "2.0", "id": 7, "method": "ui/request-display-mode", "params": {"mode": "fullscreen"}}
        )
        relay(bridge, {"jsonrpc": "2.0", "id": 8, "method": "ui/request-display-mode", "params": {"mode": "pip"}})
        relay(bridge, {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": 300}})
        relay(bridge, {"jsonrpc": "2.0", "id": 9, "method": "ui/teleport"})
        await bridge.idle(2)
        by_id = {m["id"]: m for m in h.posted if "id" in m}
        assert by_id[5]["result"] == {} and by_id[6]["result"] == {}
        assert by_id[7]["result"] == {"mode": "fullscreen"}
        assert by_id[8]["result"] == {"mode": "fullscreen"}  # pip: not declared by the app, the mode stays
        assert any(m.get("method") == "ui/notifications/host-context-changed" for m in h.posted)
        assert bridge.record.messages[0]["content"][0]["text"] == "Order placed"
        assert bridge.record.links == ["https://example.com"]
        assert bridge.record.display_modes == ["fullscreen", "pip"]
        assert h.resized == [{"height": 300}]
        assert by_id[9]["error"]["code"] == -32601
        assert len(bridge.errors) == 2 and "pip" in bridge.errors[0]
        assert "ui/teleport (not a method of the extension)" in bridge.errors[1]
        await bridge.close()

    run(scenario())


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "checkout"}}, "before ui/initialize"),
        ({"jsonrpc": "2.0", "id": 999, "result": {}}, "never sent (id 999)"),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, '"jsonrpc": "1.0"'),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}, "not a string or an integer"),
        ({"jsonrpc": "2.0", "method": "ui/notifications/party"}, "not one of the extension's"),
        ({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}, "before it sent ui/initialize"),
    ],
)
def test_a_message_that_breaks_the_rules_is_one_of_the_apps_errors(message: dict[str, Any], said: str) -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = h.bridge()
        relay(bridge, message)
        await bridge.idle(2)
        assert len(bridge.errors) == 1 and said in bridge.errors[0], bridge.errors
        await bridge.close()

    run(scenario())


def test_what_is_not_json_rpc_is_ignored_as_the_reference_host_ignores_it() -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = h.bridge()
        relay(bridge, {"type": "webpackOk"})
        relay(bridge, "a string")
        await bridge.idle(2)
        assert bridge.errors == [] and h.posted == []
        await bridge.close()

    run(scenario())


def test_the_relays_notes_are_errors_and_a_flood_stops_the_app() -> None:
    async def scenario() -> None:
        bridge = Harness().bridge()
        bridge.receive({"kind": "too-large", "length": 5_000_000, "limit": 1_048_576, "head": "{"})
        bridge.receive({"kind": "unserialisable", "error": "DataCloneError"})
        bridge.receive({"kind": "foreign", "origin": "https://evil.example"})
        bridge.receive({"kind": "flood", "relayed": 2000})
        assert [e.split(" ")[0] for e in bridge.errors] == ["posted", "posted", "a", "flooded"]
        assert bridge.stopped
        assert await bridge.teardown(1) is None  # a stopped app is not asked to tear down
        await bridge.close()

    run(scenario())


def test_the_record_is_bounded() -> None:
    async def scenario() -> None:
        bridge = Harness().bridge()
        for i in range(LOG_LIMIT + 50):
            relay(bridge, {"jsonrpc": "2.0", "method": "ui/notifications/unknown", "params": {"i": i}})
        assert len(bridge.log) <= LOG_LIMIT
        assert len(bridge.errors) == ERROR_LIMIT and bridge.errors_not_kept == LOG_LIMIT + 50 - ERROR_LIMIT
        drained = bridge.drain()
        assert "not kept" in drained[-1]["note"]
        await bridge.close()

    run(scenario())


def test_teardown_waits_for_the_apps_answer_and_is_bounded() -> None:
    async def scenario() -> None:
        h = Harness()
        bridge = await _handshake(h)
        relay(bridge, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        await bridge.idle(2)
        waiting = asyncio.ensure_future(bridge.teardown(2))
        await asyncio.sleep(0)  # the teardown task sends its request
        await bridge.idle(2)
        request = h.posted[-1]
        assert request["method"] == "ui/resource-teardown"
        relay(bridge, {"jsonrpc": "2.0", "id": request["id"], "result": {}})
        assert await waiting is None
        assert await bridge.teardown(0.2) is not None  # no answer the second time: said, not hung
        await bridge.close()

    run(scenario())
