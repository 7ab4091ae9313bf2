"""The coverage map: exercised, error paths (isError and JSON-RPC), templates, never touched."""

from __future__ import annotations

from report_helpers import exchange, feature, scenario

from mcp_bdd.report.coverage import compute_coverage, coverage_json, template_regex
from mcp_bdd.report.model import ServerSurface

SURFACE = ServerSurface(
    server="shop",
    tools=({"name": "add"}, {"name": "refund"}),
    resources=({"uri": "shop://catalog"},),
    resource_templates=({"uriTemplate": "shop://items/{id}"},),
    prompts=({"name": "summarise"},),
)


def test_coverage_from_transcripts() -> None:
    ok = scenario(
        "f--ok",
        exchanges=(
            exchange(1, "request", "tools/call", {"name": "add", "arguments": {}}),
            exchange(2, "response", "tools/call", {"content": [], "isError": False}, related=1),
            exchange(3, "request", "resources/read", {"uri": "shop://items/42"}),
            exchange(4, "response", "resources/read", {"contents": []}, related=3),
        ),
    )
    bad = scenario(
        "f--bad",
        exchanges=(
            exchange(1, "request", "tools/call", {"name": "add", "arguments": {"a": "x"}}),
            exchange(2, "response", "tools/call", {"content": [], "isError": True}, related=1),
            exchange(3, "request", "prompts/get", {"name": "nope"}),
            exchange(4, "error", "prompts/get", {"code": -32602, "message": "Unknown prompt"}, related=3),
            exchange(5, "request", "tools/list", {}),
        ),
    )
    [cov] = compute_coverage([feature("f", ok, bad)], [SURFACE])
    items = {(i.kind, i.name): i for i in cov.items}
    add = items[("tool", "add")]
    assert (add.calls, add.error_calls, [s for s, _ in add.scenarios]) == (2, 1, ["f--ok", "f--bad"])
    assert not items[("tool", "refund")].exercised
    assert items[("resource_template", "shop://items/{id}")].calls == 1
    assert not items[("resource", "shop://catalog")].exercised
    nope = items[("prompt", "nope")]
    assert not nope.in_catalog and nope.error_calls == 1
    assert (cov.catalog_exercised, cov.catalog_total) == (2, 5)
    assert dict(cov.methods) == {"tools/call": 2, "resources/read": 1, "prompts/get": 1, "tools/list": 1}
    assert coverage_json([cov])[0]["exercised"] == 2


def test_servers_without_a_surface_still_get_a_map() -> None:
    s = scenario("f--s", exchanges=(exchange(1, "request", "tools/call", {"name": "t"}, server="time"),))
    [cov] = compute_coverage([feature("f", s)], [])
    assert cov.server == "time" and cov.items[0].name == "t" and not cov.items[0].in_catalog


def test_uri_templates() -> None:
    assert template_regex("shop://items/{id}").fullmatch("shop://items/42")
    assert not template_regex("shop://items/{id}").fullmatch("shop://items/42/more")
    assert template_regex("file:///{+path}").fullmatch("file:///a/b/c.txt")
    assert template_regex("a.b://{x}").fullmatch("a.b://1") and not template_regex("a.b://{x}").fullmatch("aXb://1")


def test_the_gates_probe_of_an_unknown_name_is_not_a_use_of_the_server() -> None:
    """`mcp-bdd check` (or its step) asks for a name no server has, to see how it answers: that
    name was listed as an exercised tool, prompt and resource (issue: the first hour, item 11)."""
    from mcp_bdd.transcript import GATE_PROBE_NAME

    probed = scenario(
        "f--gate",
        exchanges=(
            exchange(1, "request", "tools/call", {"name": GATE_PROBE_NAME, "arguments": {}}),
            exchange(2, "request", "prompts/get", {"name": GATE_PROBE_NAME}),
            exchange(3, "request", "resources/read", {"uri": f"mcp-bdd-check://{GATE_PROBE_NAME}"}),
            exchange(4, "request", "tools/call", {"name": "add", "arguments": {}}),
        ),
    )
    [cov] = compute_coverage([feature("f", probed)], [SURFACE])
    assert [i.name for i in cov.items if i.calls] == ["add"]
    assert all(GATE_PROBE_NAME not in i.name for i in cov.items)


def test_a_server_reached_over_several_transports_shows_them_all() -> None:
    from mcp_bdd.report.evidence import merge_surfaces

    merged = ServerSurface(server="shop", transport="in-memory")
    for transport in ("stdio", "streamable-http", "stdio"):
        merged = merge_surfaces(merged, ServerSurface(server="shop", transport=transport))
    assert merged.transport == "in-memory, stdio, streamable-http"
