"""JUnit: behave's --junit loses Rules and hook errors (pinned here); ours keeps them."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from report_helpers import SAMPLE, SampleRun, feature, run, run_behave

from mcp_bdd.report.junit import junit_xml
from mcp_bdd.report.model import Evidence, Scenario, StderrTail, Step, load_run

pytestmark = pytest.mark.slow


def _cases(root: ET.Element) -> list[ET.Element]:
    return list(root.iter("testcase"))


def test_behave_junit_is_wrong_with_rules_and_hooks(tmp_path: Path) -> None:
    """Why mcp_bdd ships its own JUnit. If this test fails, behave fixed it: re-check junit.py."""
    project = tmp_path / "project"
    shutil.copytree(SAMPLE, project)
    run_behave(project, "-f", "null", "--junit", "--junit-directory", "junit")
    calc = ET.parse(project / "junit" / "TESTS-tools.calculator.xml").getroot()
    names = [(c.get("classname"), c.get("name")) for c in _cases(calc)]
    assert len(names) != len(set(names))  # two Rules' "Dividing normally" are indistinguishable
    assert float(calc.get("time", 0)) < sum(float(c.get("time", 0)) for c in _cases(calc)) - 1e-9  # Rules left out
    undefined = next(c for c in _cases(calc) if c.get("name") == "A step nobody has written yet")
    assert undefined.find("error") is not None and undefined.find("error").get("type") == "NoneType"  # type: ignore[union-attr]
    broken = ET.parse(project / "junit" / "TESTS-prompts.broken.xml").getroot()
    assert broken.get("errors") == "0"  # the failing before_feature hook is invisible to CI


def test_our_junit_keeps_rules_outlines_and_hook_errors(sample_run: SampleRun) -> None:
    root = ET.parse(sample_run.project / "reports" / "junit.xml").getroot()
    assert root.tag == "testsuites" and root.get("name") == "stdio"
    names = [(c.get("classname"), c.get("name")) for c in _cases(root)]
    assert len(names) == len(set(names))
    assert ("tools.calculator.Division by zero is refused", "Dividing normally") in names
    assert ("tools.calculator.Division rounds down", "Dividing normally") in names
    assert ("tools.calculator", "Multiplying 4 by 5") in names
    by_name = {c.get("name"): c for c in _cases(root)}
    failure = by_name["A wrong total is reported as a failure"].find("failure")
    assert (
        failure is not None
        and failure.get("message") == "Expected result to be 5, but it was 4"
        and failure.get("type") == "AssertionError"
    )
    for name, kind in (("A step nobody has written yet", "undefined"), ("A pending step", "pending"),
                       ("A scenario whose setup hook breaks", "hook_error")):  # fmt: skip
        error = by_name[name].find("error")
        assert error is not None and error.get("type") == kind, name
    assert by_name["A scenario that is not ready"].find("skipped") is not None
    hooks = by_name["(Feature hooks)"].find("error")
    assert hooks is not None and "prompts fixture" in (hooks.get("message") or "")
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "Calculator tools")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("8", "2", "1")
    total = sum(float(c.get("time", 0)) for c in suite.iter("testcase"))
    assert float(suite.get("time", 0)) >= total - 1e-6
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "15",
        "2",
        "4",
        "2",
    )
    err = by_name["A wrong total is reported as a failure"].find("system-err")
    assert err is not None and "ERROR boom" in (err.text or "")


def test_junit_escapes_characters_xml_cannot_carry(sample_run: SampleRun) -> None:
    loaded = load_run(sample_run.data)
    evil = replace(loaded, features=tuple(replace(f, name=f.name + "\x00\x1b\udc80") for f in loaded.features))
    root = ET.fromstring(junit_xml(evil).encode())  # would raise on a raw NUL or ESC
    assert any(s.get("name") == "Calculator tools\\x00\\x1b\ufffd" for s in root.iter("testsuite"))


def test_junit_shows_controls_a_ci_page_or_terminal_would_apply() -> None:
    """A server's CSI (U+009B), right-to-left override (U+202E) and carriage return reach the
    message, `<failure>`, `<system-err>` and `<system-out>` escaped (`\\x9b`, `\\u202e`, `\\x0d`) as on
    the console and the HTML page: raw, a CI log view or a terminal `cat` would apply them."""
    said = "Expected \x9b2J\x1b[32m1 passed\x1b[0m order \u202eevil\u202c\rOVERWRITTEN"
    step = Step(
        keyword="Then",
        name="the result is \u202e5",
        step_type="then",
        location="features/x.feature:5",
        status="failed",
        error_message=f"ASSERT FAILED: {said}",
        evidence=Evidence(stderr=(StderrTail(server="shop", text=f"boom {said}"),)),
    )
    failing = Scenario(id="s", name="A total \x9b", keyword="Scenario", location="features/x.feature:4",
                       status="failed", steps=(step,))  # fmt: skip
    text = junit_xml(run(feature("f", failing, status="failed")))
    assert not re.search("[\x9b\x1b\u202e\u202c\r]", text), "a raw control character reached the JUnit XML"
    case = ET.fromstring(text.encode()).find(".//testcase")
    assert case is not None and case.get("name") == "A total \\x9b"
    failure, err, out = case.find("failure"), case.find("system-err"), case.find("system-out")
    assert failure is not None and err is not None and out is not None
    assert "\\x9b2J\\x1b[32m1 passed" in (failure.get("message") or "")
    assert "\\u202eevil\\u202c\\x0dOVERWRITTEN" in (failure.text or "") and "\\x0dOVERWRITTEN" in (err.text or "")
    assert "the result is \\u202e5" in (out.text or "")
