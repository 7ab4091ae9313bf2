"""Reading a failure: one plain sentence, Expected / Actual / path, the call that produced the
value (request first, then its answer), the tip — in the console text and in the HTML page."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from report_helpers import exchange, feature, run, scenario

from mcp_bdd._text import produced_by, sentence
from mcp_bdd.errors import ExpectationFailed
from mcp_bdd.matchers import assert_matches
from mcp_bdd.report.collector import _failure
from mcp_bdd.report.render import json_lines, render_html, unpack
from mcp_bdd.transcript import Transcript


def test_sentence_reads_like_a_person_wrote_it() -> None:
    assert sentence("t", "confirmed", "pending", "$.order.status", compared=True) == (
        "Expected status to be confirmed, but it was pending"
    )
    assert sentence("t", 1, None, "$.items[2]", compared=True) == "Expected items[2] to be 1, but it was null"
    assert sentence("The text differs", "Result: 8", "Result: 7", compared=True) == (
        'The text differs: expected "Result: 8", but it was "Result: 7"'
    )
    # big or structured values: the title already says what failed
    assert sentence("The result does not match", {"a": 1}, {"a": 2}, compared=True) == "The result does not match"
    assert sentence("Nothing to compare", compared=False) == "Nothing to compare"


def _transcript() -> Transcript:
    t = Transcript()
    listing = t.record("request", "shop", "tools/list", {})
    t.record("response", "shop", "tools/list", {"tools": [{"name": "book"}]}, related=listing.seq)
    call = t.record("request", "shop", "tools/call", {"name": "book", "arguments": {"room": 4}})
    t.record("notification", "shop", "notifications/message", {"data": "booking"})
    t.record("response", "shop", "tools/call", {"structuredContent": {"status": "pending"}}, related=call.seq)
    return t


def test_console_text_has_the_reading_order() -> None:
    exc = ExpectationFailed(
        "Unexpected value at $.status",
        path="$.status",
        expected="confirmed",
        actual="pending",
        exchange=produced_by(_transcript().items),
        tip="the booking may need a payment first.",
    )
    lines = str(exc).splitlines()
    assert lines[0] == "Expected status to be confirmed, but it was pending"
    order = [next(n for n, line in enumerate(lines) if line.lstrip().startswith(h)) for h in (
        "Expected:", "Actual:", "At path:", "The call that produced the value:", "→ [shop] tools/call",
        "← [shop] tools/call", "Tip:")]  # fmt: skip
    assert order == sorted(order)
    assert "tools/list" not in str(exc) and "notifications/message" not in str(exc)  # earlier traffic left out
    assert '"status": "pending"' in str(exc)  # pretty-printed, not one escaped line


def test_produced_by_without_a_request_or_an_answer() -> None:
    t = Transcript()
    assert produced_by(t.items) == ""
    t.record("request", "shop", "tools/call", {"name": "slow"})
    assert produced_by(t.items).endswith("(no answer)")
    assert produced_by(t.items, server="other") == ""


def _diff_failure() -> Any:
    with pytest.raises(ExpectationFailed) as info:
        assert_matches(
            {"id": 7, "status": "confirmed", "rooms": [1, 2]},
            {"id": 7, "status": "pending", "rooms": [1, 2], "note": "x"},
            subset=False,
        )
    failure = _failure(info.value, 20_000)
    assert failure is not None
    return failure


def test_json_lines_mark_the_differing_keys() -> None:
    failure = _diff_failure()
    assert set(failure.differences) == {"$.status", "$.note"}
    marked = [line.strip() for line, hit in json_lines(failure.actual, failure.differences) if hit]
    assert marked == ['"status": "pending",', '"note": "x"']


def test_the_page_reads_a_failure_top_down() -> None:
    call = (
        exchange(1, "request", "tools/list", {}),
        exchange(2, "response", "tools/list", {"tools": []}, related=1),
        exchange(3, "request", "tools/call", {"name": "book", "arguments": {}}),
        exchange(4, "response", "tools/call", {"content": [{"type": "text", "text": '{"status": "pending"}'}]}, 3),
    )
    failed = scenario("booking", "failed", call, error="ASSERT FAILED: The result does not match (2 differences)")
    step = replace(failed.steps[0], failure=_diff_failure(), error_kind="expectation")
    html = render_html([run(feature("f", replace(failed, steps=(step,))))])
    block = html[html.index('<div class="failure">') :]
    block = block[: block.index("</li>")]
    parts = ["failure-sentence", '<div class="diff">', "Differs at", 'class="failure-call"', "failure-tip"]
    assert [block.index(p) for p in parts] == sorted(block.index(p) for p in parts)
    assert re.search(r'<mark>\s*"status": "pending",</mark>', block)
    assert [line for line in block.splitlines() if '"id": 7' in line] == ['  "id": 7,'] * 2  # equal keys: plain
    # the call is the last request and its answer (drawn by the script), not the earlier listing
    row = int(re.search(r'data-call="(\d+)"', block)[1])  # type: ignore[index]
    assert block.index("failure-call") < html.index("All MCP traffic of this step", html.index(block))
    assert [(m["k"], m["m"], m["q"]) for m in unpack(html)["rows"][row]] == [
        ("request", "tools/call", 3),
        ("response", "tools/call", 4),
    ]
