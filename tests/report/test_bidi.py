"""Bidirectional controls a server sends (U+202E RIGHT-TO-LEFT OVERRIDE, the embeddings, isolates
and marks) are shown in the report as visible escapes (`\\u202e`), never applied: applied, they
reverse the report's own sentences around them ("Connected to shop…" read backwards) and make a
value read as something else. Checked in headless Chromium, with and without scripts; the data
the page and living-doc.json carry keeps the characters as the server sent them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from report_helpers import FORMATTER, open_page, run_behave

from mcp_bdd._text import BIDI_CONTROLS, CONTROLS
from mcp_bdd.report.render import unpack

pytestmark = pytest.mark.slow

CONTROL = re.compile(f"[{CONTROLS}]")  # the other controls too (NUL, ESC): shown, like the bidirectional ones
HEBREW = "\u05e9\u05dc\u05d5\u05dd"  # legitimate right-to-left letters: they stay as they are

SERVER = f'''
from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("shop\\u202e", version="1.0.0")

    @server.tool()
    def status() -> str:
        """Order status\\u2067 of an order."""
        return "\\u202edelivered {HEBREW} \\x1b[31mred\\x00"

    return server
'''

FEATURE = """Feature: Bidi

  Scenario: status \u202dof an order
    Given the MCP server "shop" is running
    When I list the tools
    And I call the tool "status"
    Then the result text is "pending\u200f"
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("bidi")
    files = {
        "mcp-bdd.toml": '[servers.shop]\napp = "bidi_server:create_server"\n',
        "bidi_server.py": SERVER,
        "environment.py": "from mcp_bdd.environment import *  # noqa: F403\n",
        "steps/mcp_steps.py": "from mcp_bdd.steps import *  # noqa: F403\n",
        "features/b.feature": FEATURE,
    }
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    proc = run_behave(project, "-f", FORMATTER, "-o", "reports/living-doc.html")
    html = project / "reports" / "living-doc.html"
    assert html.exists(), f"no report written\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return html


_ALL_TEXT = """
const texts = [document.title, document.documentElement.textContent];
for (const el of document.querySelectorAll("*")) {
  for (const a of el.attributes) { texts.push(a.value); }
}
return texts;
"""


def _raw_controls(driver: Any) -> list[str]:
    """Where the page's text and attribute values still hold a raw bidirectional control."""
    return [
        ascii(t[max(0, m.start() - 60) : m.end() + 20])
        for t in driver.execute_script(_ALL_TEXT)
        for m in CONTROL.finditer(t)
    ]


def test_the_data_keeps_what_the_server_sent(page: Path) -> None:
    data = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    assert "shop\u202e" in json.dumps(data, ensure_ascii=False)
    values = unpack(page.read_text(encoding="utf-8"))["values"]
    assert "\u202edelivered" in json.dumps(values, ensure_ascii=False)


def test_bidi_controls_are_shown_not_applied(browser: Any, page: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    open_page(browser, page.as_uri())
    browser.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    drawn = "return document.querySelectorAll('details[data-ev]:not([data-drawn])').length"
    WebDriverWait(browser, 10, poll_frequency=0.02).until(lambda d: d.execute_script(drawn) == 0)
    assert _raw_controls(browser) == []

    text = browser.find_element("tag name", "body").text
    assert "Connected to shop\\u202e 1.0.0 over in-memory" in text  # our sentence reads as written
    assert "status \\u202dof an order" in text  # the scenario name
    assert "tools, resources and prompts of shop (“shop\\u202e”) used by the scenarios" in text  # summary card: configured name, then its own
    assert "Order status\\u2067 of an order." in text  # the tool's description
    # the failure: its Actual value, and the call that produced it (drawn from the packed data)
    failure = browser.find_element("css selector", ".step.s-failed .failure")
    actual = failure.find_element("css selector", ".failure-facts").text
    assert f"\\u202edelivered {HEBREW} \\x1b[31mred\\x00" in actual, actual
    assert "pending\\u200f" in actual, actual
    call = failure.find_element("css selector", ".failure-call .exchanges").text
    assert '"name": "shop\\u202e", "version": "1.0.0"' in call, call
    # in JSON, C0 controls are JSON's own escapes; a bidirectional control is a character there
    assert f'"text": "\\u202edelivered {HEBREW} \\u001b[31mred\\u0000"' in call, call
    # each escape is marked as one, where the report draws it and where the script does
    marks = browser.find_elements("css selector", ".bidi")
    assert {m.text for m in marks} >= {"\\u202e", "\\u202d", "\\u2067", "\\u200f", "\\x1b", "\\x00"}
    assert failure.find_elements("css selector", ".failure-call .bidi")
    assert failure.find_elements("css selector", ".failure-facts .bidi")


def test_bidi_controls_are_shown_without_scripts(browser_without_scripts: Any, page: Path) -> None:
    driver = browser_without_scripts
    driver.get(page.as_uri())
    driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    assert _raw_controls(driver) == []
    call = driver.find_element("css selector", ".failure-call noscript pre.x-static").text
    assert '"name": "shop\\u202e", "version": "1.0.0"' in call, call
    assert "Connected to shop\\u202e 1.0.0" in driver.find_element("tag name", "body").text


def test_the_page_script_shows_the_same_controls_as_the_terminal() -> None:
    """report.js cannot import errors.CONTROLS: its copy is held to it here."""
    script = (Path(__file__).resolve().parents[2] / "mcp_bdd" / "report" / "templates" / "report.js").read_text()
    assert f"var CONTROL = /([{CONTROLS}])/;" in script
    assert f"var BIDI_ONLY = /[{BIDI_CONTROLS}]/;" in script
