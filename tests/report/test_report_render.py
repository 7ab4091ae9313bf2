"""The renderer: escaping everywhere, safe embedded JSON, no remote content, merged columns."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser

from report_helpers import SampleRun, exchange, feature, run, scenario

from mcp_bdd.report.model import ExampleRef, Examples, Image, Outline, ServerSurface, StepDef, Table
from mcp_bdd.report.render import CSP, data_url, json_for_html, pretty, render_html, text, unpack
from mcp_bdd.report.views import build_report

EVIL = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1"><!--'


class _Tags(HTMLParser):
    """Collects the start tags a browser would build (what matters for script injection)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _evil_run() -> str:
    x = exchange(1, "request", "tools/call", {"name": EVIL, "arguments": {"t": EVIL}})
    s = scenario("f--evil", name=EVIL, exchanges=(x,), tags=(EVIL,), error=EVIL, step_name=EVIL)
    surface = ServerSurface(
        server="shop",
        name=EVIL,
        version=EVIL,
        instructions=EVIL,
        tools=({"name": EVIL, "description": EVIL},),
    )
    glossary = (StepDef(step_type="given", pattern=EVIL, location="steps/a.py:1", doc=f"{EVIL}\n\nGiven {EVIL}"),)
    return render_html([run(feature("f", s, name=EVIL, description=(EVIL,)), servers=(surface,), glossary=glossary)])


def test_untrusted_text_never_becomes_markup() -> None:
    html = _evil_run()
    tags = _tags(html)
    scripts = [a for t, a in tags if t == "script"]
    assert scripts == [{"type": "application/octet-stream", "id": "mcp-bdd-data", "data-encoding": "gzip+base64"},
                       {}]  # fmt: skip
    assert not [a for t, a in tags if t == "img"]
    assert not any(k.startswith("on") for _, a in tags for k in a)
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html


def test_embedded_json_cannot_break_out_of_its_script_element() -> None:
    value = {"a": "</script><script>alert(1)</script>", "b": "<!-- x", "c": "&amp; \u2028 \u2029"}
    out = str(json_for_html(value))
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in out
    assert json.loads(out) == value
    html = _evil_run()
    [block] = re.findall(r'<script type="application/octet-stream" id="mcp-bdd-data"[^>]*>(.*?)</script>', html, re.S)
    assert re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", block)  # base64: nothing can close the element
    data = unpack(html)
    assert EVIL in data["values"][data["rows"][0][0]["b"]]["arguments"]["t"]  # kept verbatim, drawn as text


def test_each_distinct_payload_is_stored_once() -> None:
    listing = {"tools": [{"name": f"tool_{i}", "description": "x" * 200} for i in range(20)]}
    scenarios = [
        scenario(f"f--s{n}", exchanges=(exchange(1, "request", "tools/list", {}),
                                         exchange(2, "response", "tools/list", dict(listing), related=1)))
        for n in range(30)
    ]  # fmt: skip
    html = render_html([run(feature("f", *scenarios))])
    data = unpack(html)
    assert len(data["rows"]) == 30 and len(data["values"]) == 2  # {} and the listing, once each
    assert data["values"][data["rows"][29][1]["b"]] == listing
    bare = render_html([run(feature("f", *(scenario(f"f--s{n}") for n in range(30))))])
    assert len(html) - len(bare) < 8_000  # 30 copies of a 5 kB listing would be 150 kB on their own


def test_strict_csp_and_no_remote_content() -> None:
    html = _evil_run()
    metas = [a for t, a in _tags(html) if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [m["content"] for m in metas] == [CSP]
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    for tag, attrs in _tags(html):
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:|//|file:|javascript:)", value, re.I), (tag, attrs)
    assert not _tags(html) or all(t != "link" for t, _ in _tags(html))


def test_data_urls_only_for_base64_rasters() -> None:
    png = base64.b64encode(b"\x89PNG....").decode()
    assert data_url(Image(mime="image/png", data=png, size=8)) == f"data:image/png;base64,{png}"
    assert data_url(Image(mime="image/svg+xml", data=png, size=8)) == ""
    assert data_url(Image(mime="image/png", data='x" onerror="alert(1)', size=8)) == ""


def test_text_filter_escapes_element_content() -> None:
    assert str(text('<a href="x">&</a>')) == '&lt;a href="x"&gt;&amp;&lt;/a&gt;'


def test_pretty_json_keeps_small_values_on_one_line() -> None:
    assert pretty({"a": 1, "b": [1, 2]}) == '{"a": 1, "b": [1, 2]}'
    long = {"content": [{"type": "text", "text": "x" * 100}], "isError": False}
    assert pretty(long).splitlines()[0] == "{"
    assert json.loads(pretty(long)) == long


def test_outline_examples_table_links_each_row_to_its_result() -> None:
    rows = (("2", "3"), ("4", "5"))
    s1 = scenario("f--o--r1", name="mul 2 3", example=ExampleRef(examples=1, row=1))
    s2 = scenario("f--o--r2", name="mul 4 5", status="failed", example=ExampleRef(examples=1, row=2))
    examples = Examples(keyword="Examples", name="small", location="f:9", table=Table(headings=("a", "b"), rows=rows))
    o = Outline(id="f--o", name="mul <a> <b>", keyword="Scenario Outline", location="f:3", status="failed",
                examples=(examples,), scenarios=(s1, s2))  # fmt: skip
    html = render_html([run(feature("f", o))])
    table = html[html.index('<table class="datatable examples-table">') :]
    assert table.index('href="#f--o--r1"') < table.index('href="#f--o--r2"')
    assert 'id="f--o--r2"' in html


def test_merged_report_has_a_column_per_run_and_flags_disagreement() -> None:
    a = run(feature("f", scenario("f--s"), scenario("f--only-a")), label="stdio")
    b = run(feature("f", scenario("f--s", status="failed", error="boom")), label="http")
    view = build_report([a, b])
    [s, only_a] = view.scenarios
    assert s.inconsistent and s.disagreement == "passed on stdio · failed on http"
    assert not only_a.inconsistent and only_a.results[1] is None
    html = render_html([a, b])
    assert "Runs disagree: passed on stdio · failed on http" in html
    assert '<span class="run-pill s-passed" title="stdio: Passed">stdio</span>' in html
    assert '<span class="run-pill s-failed" title="http: Failed">http</span>' in html


def test_capabilities_are_the_feature_folders() -> None:
    f1 = feature("a", scenario("a--1"), filename="features/tools/a.feature")
    f2 = feature("b", scenario("b--1"), filename="features/resource_templates/b.feature")
    f3 = feature("c", scenario("c--1"), filename="features/checkout_flow.feature")
    f4 = feature("d", scenario("d--1"), filename="features/tools/d.feature", tags=("capability:payments",))
    view = build_report([run(f1, f2, f3, f4)])
    # a folder, else the feature file itself (never "General"); a @capability:<name> tag wins
    assert [c.title for c in view.capabilities] == ["Checkout flow", "Payments", "Resource templates", "Tools"]
    flat = build_report(
        [run(feature("x", filename="features/orders.feature"), feature("y", filename="features/a.feature"))]
    )
    assert [c.title for c in flat.capabilities] == ["A", "Orders"]


def test_outline_rows_are_titled_by_their_example_values() -> None:
    from mcp_bdd.report.collector import row_title

    assert row_title("Multiplying 4 by 5 -- @1.2 small numbers", "Multiplying <a> by <b>", ("a", "b"), ("4", "5")) == (
        "Multiplying 4 by 5"
    )
    assert row_title("Booking a room -- @2.1 ", "Booking a room", ("room", "nights"), ("12", "3")) == (
        "room = 12, nights = 3"
    )


def test_step_docstrings_split_into_summary_and_example() -> None:
    from mcp_bdd.report.glossary import split_doc

    assert split_doc('Call a tool.\n\n    When I call "add"\n    Then it works') == (
        "Call a tool.",
        'When I call "add"\nThen it works',
    )
    assert split_doc('Call a tool\n    with arguments.\n    When I call "add"') == (
        "Call a tool with arguments.",
        'When I call "add"',
    )
    assert split_doc('Stub it.\n\nExample: Given the fake "p" responds') == ("Stub it.", 'Given the fake "p" responds')
    # the label on a line of its own, the example indented under it: 52 of this project's steps
    labelled = 'Stub it.\n\nExample:\n    Given the fake "p" responds with:\n      """\n      {}\n      """'
    assert split_doc(labelled) == ("Stub it.", 'Given the fake "p" responds with:\n  """\n  {}\n  """')
    scenario = "Open it.\n\nExample: Opening\n  Given x"  # "Example:" naming a scenario is Gherkin, not a label
    assert split_doc(scenario) == ("Open it.", "Example: Opening\n  Given x")
    assert split_doc("") == ("", "")


def test_failure_categories_are_counted_per_scenario() -> None:
    from dataclasses import replace

    bad = scenario("f--bad", "failed", error="ASSERT FAILED: no")
    bad = replace(bad, steps=(replace(bad.steps[0], error_kind="expectation"),))
    slow = scenario("f--slow", "error", error="timed out")
    slow = replace(slow, steps=(replace(slow.steps[0], error_kind="timeout"),))
    hook = replace(scenario("f--hook", "hook_error"), error_kind="setup", error_message="server did not start")
    view = build_report([run(feature("f", bad, slow, hook, scenario("f--ok")))])
    assert view.categories == [("expectation", "Expectation failed", 1), ("timeout", "Timeout", 1),
                               ("setup", "Setup / start failure", 1)]  # fmt: skip
    assert {e["id"]: e["kind"] for e in view.index()}["f--ok"] is None
    html = render_html([run(feature("f", bad, slow, hook))])
    assert html.count('data-kind="timeout"') == 1 and "Why scenarios did not pass" in html


def test_setup_is_shown_as_what_it_did() -> None:
    from mcp_bdd.report.actions import actions

    said = actions(
        (
            exchange(1, "info", "fake database started", {"kind": "database"}, server="db"),
            exchange(2, "fake", "seed inventory", {"table": "inventory", "rows": [[1], [2], [3]]}, server="db"),
            exchange(3, "info", "connect", {"transport": "stdio"}),
            exchange(
                4,
                "info",
                "connected",
                {"protocol": "2026-07-28", "server_info": {"name": "shop", "version": "1"}},
                duration_ms=210.0,
            ),
            exchange(5, "fake", "POST /charges", {"method": "POST", "path": "/charges"}, server="payments"),
            exchange(6, "request", "tools/call", {"name": "add"}),
        )
    )
    assert said == [
        "Started the fake database db",
        "Seeded the table inventory of db with 3 rows",
        "Connected to shop 1 over stdio (protocol 2026-07-28) in 210 ms",
        "The fake payments received POST /charges",
    ]


def test_the_page_speaks_plainly(sample_run: SampleRun) -> None:
    """No internal words on the page a product owner reads (scripts and data aside)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", sample_run.text, flags=re.S)
    words = re.sub(r"<[^>]+>", " ", page)
    for jargon in ("surface", "listing pages", "-- @", "absorb", "portal", "transcript seq"):
        assert jargon not in words, jargon
    assert "Multiplying 4 by 5" in words  # outline rows by their values


def test_a_coverage_tile_names_the_configured_server_and_an_empty_catalog_has_none() -> None:
    """Three configured servers that all call themselves "shop" read as three tiles "of shop"; a
    server with nothing in its catalog got "0 of 0" (issue: the first hour, item 11)."""
    from mcp_bdd.report.model import ServerSurface

    servers = (
        ServerSurface(server="shop", name="shop", tools=({"name": "add"},)),
        ServerSurface(server="shop-legacy", name="shop", tools=({"name": "add"},)),
        ServerSurface(server="pdf", name="PDF Server", tools=()),
    )
    html = render_html([run(feature("f", scenario("f--s")), servers=servers)])
    assert "tools, resources and prompts of shop used" in html
    assert "tools, resources and prompts of shop-legacy (“shop”) used" in html
    assert "0 of 0" not in html and "of pdf" not in html


def test_the_same_app_configured_again_lists_only_what_differs_or_was_exercised() -> None:
    """shop, shop-legacy and shop-secure are one app: their catalogs were listed three times, and
    made this project's report larger than its target."""
    from mcp_bdd.report.model import ServerSurface

    same = {"name": "add", "description": "Add two numbers"}
    servers = (
        ServerSurface(server="shop", name="shop", tools=(same, {"name": "pay", "description": "Pay for real"})),
        ServerSurface(server="shop-legacy", name="shop", tools=(same, {"name": "pay", "description": "Simulated"})),
    )
    html = render_html([run(feature("f", scenario("f--s")), servers=servers)])
    legacy = html[html.index('id="server-shop-legacy"') :]
    assert "Simulated" in legacy and "Add two numbers" not in legacy  # the differing record only
    assert 'href="#server-shop"' in legacy and "Add two numbers" in html[: html.index('id="server-shop-legacy"')]
