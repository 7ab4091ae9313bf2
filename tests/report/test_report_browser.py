"""The report in a real browser (headless Chromium via selenium): search, tag filter, status
filter, transcripts drawn on demand, deep links, print — and no script from a server ever runs.

Skipped with a reason when Chromium or its driver is missing (CI installs Debian's `chromium`
and `chromium-driver`). Set MCP_BDD_SCREENSHOT=path to also save a screenshot of the page.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from report_helpers import SampleRun, open_page

pytestmark = pytest.mark.slow


def _wait(predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def _visible_scenarios(driver: Any) -> list[str]:
    script = (
        "return [...document.querySelectorAll('[data-scenario]')].filter(e => !e.closest('[hidden]')).map(e => e.id)"
    )
    return list(driver.execute_script(script))


def _pwned(driver: Any) -> Any:
    return driver.execute_script("return [window.__pwned, document.title]")


def _type(driver: Any, element_id: str, text: str) -> None:
    element = driver.find_element("id", element_id)
    element.clear()
    element.send_keys(text)


def test_report_in_a_real_browser(browser: Any, sample_run: SampleRun) -> None:
    open_page(browser, sample_run.html.as_uri())
    assert _pwned(browser) == [None, "Shop <MCP> server"]
    everything = _visible_scenarios(browser)
    assert len(everything) == 14

    # search by text (step text counts)
    _type(browser, "q", "juggle")
    assert _wait(lambda: _visible_scenarios(browser) == ["tools-calculator--a-step-nobody-has-written-yet"])
    assert "Showing 1 of 14 scenarios." in browser.find_element("id", "shown").text
    browser.find_element("id", "clear").click()
    assert _wait(lambda: len(_visible_scenarios(browser)) == 14)

    # tag expressions: inherited feature tags and outline tags count
    _type(browser, "tagexpr", "@tools and not @slow")
    assert _wait(lambda: len(_visible_scenarios(browser)) == 6)
    _type(browser, "tagexpr", "@slow or @smoke")
    assert _wait(lambda: len(_visible_scenarios(browser)) == 3)
    _type(browser, "tagexpr", "@slow and")
    assert _wait(lambda: "ends too early" in browser.find_element("id", "tag-error").text)
    browser.find_element("id", "clear").click()
    assert _wait(lambda: len(_visible_scenarios(browser)) == 14)

    # status filter
    browser.find_element("css selector", '[data-outcome="failed"]').click()
    assert _wait(lambda: len(_visible_scenarios(browser)) == 2), _visible_scenarios(browser)
    failed = _visible_scenarios(browser)
    assert all("wrong-total" in i or "multiplying-4" in i for i in failed), failed
    hidden_feature = browser.execute_script("return document.getElementById('resources-catalog').hidden")
    assert hidden_feature is True  # a feature with no match is hidden as a whole
    browser.find_element("id", "clear").click()
    assert _wait(lambda: len(_visible_scenarios(browser)) == 14)

    # failure categories (from the typed errors): the two expectation failures, then clear
    browser.find_element("css selector", '[data-kind="expectation"]').click()
    assert _wait(lambda: len(_visible_scenarios(browser)) == 2), _visible_scenarios(browser)
    assert set(_visible_scenarios(browser)) == set(failed)
    browser.find_element("id", "clear").click()
    assert _wait(lambda: len(_visible_scenarios(browser)) == 14)

    # expand the hostile transcript: drawn as text, nothing runs, svg never shown
    evidence = browser.find_elements("css selector", "#resources-catalog--echoing-b-hostile-b-markup details[data-ev]")
    target = evidence[-1]
    browser.execute_script("arguments[0].scrollIntoView()", target)
    target.find_element("tag name", "summary").click()
    pre_texts = _wait(lambda: [p.text for p in target.find_elements("tag name", "pre")])
    assert any("<script>window.__pwned=1" in t for t in pre_texts)
    assert target.find_elements("tag name", "script") == [] and target.find_elements("tag name", "img") == []
    assert _pwned(browser) == [None, "Shop <MCP> server"]

    # images: a safe PNG from a tool result becomes an <img> with a data: URL
    adding = browser.find_elements("css selector", "#tools-calculator--adding-two-numbers details[data-ev]")[1]
    browser.execute_script("arguments[0].open = true", adding)
    srcs = _wait(lambda: [i.get_attribute("src") for i in adding.find_elements("tag name", "img")])
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)

    # deep link to a collapsed outline row opens it
    row = "tools-calculator--multiplying-a-by-b--multiplying-2-by-3-1-1-small-numbers"
    assert browser.execute_script("return document.getElementById(arguments[0]).open", row) is False
    open_page(browser, f"{sample_run.html.as_uri()}#{row}")
    assert _wait(lambda: browser.execute_script("return document.getElementById(arguments[0]).open", row))

    # print expands everything (and draws every transcript)
    browser.execute_script("window.dispatchEvent(new Event('beforeprint'))")
    closed = browser.execute_script("return document.querySelectorAll('details:not([open])').length")
    drawn = browser.execute_script("return document.querySelectorAll('details[data-ev]:not([data-drawn])').length")
    assert (closed, drawn) == (0, 0)
    assert _pwned(browser) == [None, "Shop <MCP> server"]

    shot = os.environ.get("MCP_BDD_SCREENSHOT")
    if shot:
        browser.execute_script("window.dispatchEvent(new Event('afterprint')); window.scrollTo(0, 0)")
        Path(shot).parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(shot)


def test_long_values_fold_and_text_holding_json_or_markdown_is_formatted(browser: Any, tmp_path: Path) -> None:
    from report_helpers import exchange, feature, run, scenario

    from mcp_bdd.report.render import write_html

    markdown = "# Order ORD-1\n\n- **2** lamps\n- 1 `chair`\n\n```\nlamp × 2\n```\n"
    result = {
        "content": [
            {"type": "text", "text": '{"order": "ORD-1", "lines": [1, 2]}'},
            {"type": "text", "text": markdown},
        ],
        "structuredContent": {"ids": list(range(50)), "note": "n" * 1000},
    }
    messages = (
        exchange(1, "request", "tools/call", {"name": "order"}),
        exchange(2, "response", "tools/call", result, 1),
    )
    page = write_html(tmp_path / "fold.html", [run(feature("f", scenario("f--s", exchanges=messages)))])
    open_page(browser, page.as_uri())
    details = browser.find_element("css selector", "#f--s details[data-ev]")
    browser.execute_script("arguments[0].open = true", details)
    response = _wait(lambda: details.find_elements("css selector", ".x.k-response"))[0]
    raw = response.find_element("css selector", "pre.json")
    assert "show all 50 items" in raw.text and "show all 1000 characters" in raw.text
    assert "n" * 1000 not in raw.text and len(raw.text.splitlines()) < 30  # 8 of 50 ids shown, the string cut
    for button in raw.find_elements("css selector", "button.fold"):
        button.click()
    assert _wait(lambda: "n" * 1000 in raw.text and "show all" not in raw.text)
    assert _json(raw.text)["structuredContent"]["ids"] == list(range(50))  # unfolded = valid JSON
    formatted = [x.text for x in response.find_elements("css selector", ".xtext")]
    assert formatted[0].startswith("text 1 as JSON") and '"order": "ORD-1"' in formatted[0]
    assert formatted[1].startswith("text 2 as Markdown")
    md = response.find_element("css selector", ".md")
    assert md.find_element("css selector", ".md-h").text == "Order ORD-1"
    assert [li.text for li in md.find_elements("tag name", "li")] == ["2 lamps", "1 chair"]
    assert md.find_element("tag name", "strong").text == "2"
    assert md.find_element("tag name", "code").text == "chair" and md.find_element("tag name", "pre").text == "lamp × 2"


def test_the_inlined_stylesheet_is_the_one_written(browser: Any, sample_run: SampleRun) -> None:
    """report.css is inlined without its comments and layout (report/minify.py): Chromium builds
    the same rules from it as from the file as written."""
    written = (Path(__file__).resolve().parents[2] / "mcp_bdd/report/templates/report.css").read_text(encoding="utf-8")
    open_page(browser, sample_run.html.as_uri())
    rules = browser.execute_script(
        """
        const parse = (text) => { const sheet = new CSSStyleSheet(); sheet.replaceSync(text);
                                  return [...sheet.cssRules].map(r => r.cssText); };
        return [parse(arguments[0]), parse(document.querySelector('head style').textContent)];
        """,
        written,
    )
    assert len(rules[0]) > 200 and rules[0] == rules[1]


_STEP_LOOK = """
const step = document.querySelector(arguments[0]);
const line = step.querySelector(':scope > p'), parts = [...line.children];
const look = (e, pseudo) => { const c = getComputedStyle(e, pseudo || null);
  return {display: c.display, weight: c.fontWeight, color: c.color, style: c.fontStyle, opacity: c.opacity,
          content: c.content, background: c.backgroundColor}; };
return {line: look(line), dot: look(line, '::before'), tags: parts.map(e => e.tagName.toLowerCase()),
        keyword: look(line.querySelector('b')), name: look(line.querySelector('b + span'), '::after'),
        link: line.querySelector('a') && Object.assign(look(line.querySelector('a')), {title: line.querySelector('a').title}),
        status: line.querySelector('.step-status') && line.querySelector('.step-status').textContent};
"""


def test_a_steps_short_line_is_styled_by_place(browser: Any, sample_run: SampleRun) -> None:
    """A step's line is a thousand times in a large report, so it is short elements the stylesheet
    knows by where they stand: keyword, name, glossary link, duration."""
    open_page(browser, sample_run.html.as_uri())
    browser.execute_script("document.querySelectorAll('details.scenario').forEach(d => d.open = true)")
    passed = browser.execute_script(_STEP_LOOK, "#tools-calculator--adding-two-numbers .step:not(.bg)")
    assert passed["line"]["display"] == "flex" and passed["dot"]["content"] == '""'
    assert passed["dot"]["background"] == "rgb(26, 127, 55)"  # the passed colour, with no class saying so
    assert passed["tags"][:3] == ["b", "span", "a"] and passed["status"] is None
    assert passed["keyword"]["weight"] == "700" and passed["keyword"]["color"] == "rgb(5, 80, 174)"
    assert passed["name"]["content"] == "none"
    assert passed["link"] == {**passed["link"], "opacity": "0", "title": "What this step means (glossary)"}
    background = browser.execute_script(_STEP_LOOK, "#tools-calculator--adding-two-numbers .step.bg")
    assert background["name"]["content"] == '"background"'
    failed = browser.execute_script(
        _STEP_LOOK, "#tools-calculator--a-wrong-total-is-reported-as-a-failure .step.s-failed"
    )
    assert failed["status"] == "Failed" and failed["line"]["background"] == "rgb(255, 235, 233)"
    assert failed["dot"]["background"] == "rgb(207, 34, 46)"


def test_a_steps_duration_stands_at_the_end_of_its_line(browser: Any, tmp_path: Path) -> None:
    from dataclasses import replace

    from report_helpers import feature, run, scenario

    from mcp_bdd.report.render import write_html

    slow = scenario("f--s")
    slow = replace(slow, steps=(replace(slow.steps[0], duration=0.25),))
    open_page(browser, write_html(tmp_path / "slow.html", [run(feature("f", slow))]).as_uri())
    browser.execute_script("document.getElementById('f--s').open = true")
    line = browser.execute_script(
        "const i = document.querySelector('#f--s .step > p > i'); const c = getComputedStyle(i);"
        "return [i.textContent, c.fontStyle, c.marginLeft !== '0px',"
        " i.parentNode.getBoundingClientRect().right - i.getBoundingClientRect().right]"
    )
    assert line[:3] == ["250 ms", "normal", True] and line[3] < 1  # not italic, pushed to the line's right end


def _json(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return None
