"""JUnit XML from the run model — because behave's own `--junit` gets Rules and hooks wrong.

What behave 1.3.3's `--junit` does (pinned by tests/report/test_report_junit.py):
- scenarios of different Rules with the same name become identical testcases (the Rule is
  not in classname or name), and a suite's `time` leaves out every scenario inside a Rule;
- an undefined step is reported as `<error type="NoneType" message="None">`;
- a failing before_feature hook shows only as skipped testcases: CI stays green.

Here: one `<testsuite>` per feature; classname = the feature file as a dotted path, plus the Rule
name; failed -> `<failure>`, error/undefined/pending/hook errors -> `<error>`, skipped/untested ->
`<skipped>`; a feature or rule hook error is a testcase of its own so that CI sees it, and so is
a run that did not start (its before_all failed: a configuration error): one `(run setup)` suite.
Requirement links (report/links.py) of a scenario's tags, its Rule's and its Feature's become
testcase properties: `requirements` = "JIRA-7, ABC-1" (the property Xray's JUnit import reads)
and one `link:<id>` = URL each.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from mcp_bdd._text import CONTROLS, control_escape
from mcp_bdd.report.files import write_text
from mcp_bdd.report.links import requirement_links
from mcp_bdd.report.model import Feature, Outline, Rule, Run, Scenario, Step, not_started

__all__ = ["junit_xml", "write_junit"]

# XML 1.0 cannot carry surrogates, U+FFFE and U+FFFF, and server output may contain anything.
_INVALID_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
# Nor should it carry, raw, what a CI page or a terminal showing it would apply: a CSI (U+009B),
# a right-to-left override (U+202E), a carriage return that overwrites its line. The controls the
# console (`_text.printable`) and the HTML page escape are escaped here the same way (`\u202e`).
_CONTROL = re.compile(f"[{CONTROLS}]")
_EXCEPTION = re.compile(r"^(?:ERROR: )?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Timeout)\w*)\b", re.M)


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", _CONTROL.sub(lambda m: control_escape(m.group()), text))


def _dotted(filename: str) -> str:
    path = filename.replace("\\", "/")
    if path.startswith("features/"):
        path = path[len("features/") :]
    if path.endswith(".feature"):
        path = path[: -len(".feature")]
    return path.replace("/", ".")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:500]


def _culprit(scenario: Scenario) -> Step | None:
    return next((s for s in scenario.steps if s.status not in ("passed", "skipped", "untested")), None)


def _steps_text(scenario: Scenario) -> str:
    lines = [f"{scenario.keyword}: {scenario.name}  # {scenario.location}"]
    for step in scenario.steps:
        lines.append(f"  {step.keyword} {step.name} ... {step.status} ({step.duration:.3f}s)")
    return "\n".join(lines)


def _problem(tag: str, status: str, message: str, detail: str) -> ET.Element:
    element = ET.Element(tag)
    kind = status
    if status in ("failed", "error"):
        found = _EXCEPTION.search(message)
        kind = found.group(1) if found else ("AssertionError" if status == "failed" else "Error")
    if message.startswith("ASSERT FAILED:"):
        message = message[len("ASSERT FAILED:") :].strip()
    element.set("type", _clean(kind))
    element.set("message", _clean(_first_line(message)))
    element.text = _clean(detail)
    return element


def _properties(case: ET.Element, tags: tuple[str, ...], links: dict[str, str]) -> None:
    found = requirement_links(tags, links)
    if not found:
        return
    properties = ET.SubElement(case, "properties")
    ET.SubElement(properties, "property", name="requirements", value=_clean(", ".join(k.id for k in found)))
    for link in found:
        ET.SubElement(properties, "property", name=_clean(f"link:{link.id}"), value=_clean(link.url))


def _testcase(
    scenario: Scenario,
    classname: str,
    counts: dict[str, int],
    tags: tuple[str, ...] = (),
    links: dict[str, str] | None = None,
) -> ET.Element:
    case = ET.Element("testcase")
    case.set("classname", _clean(classname))
    case.set("name", _clean(scenario.name))
    case.set("time", f"{scenario.duration:.6f}")
    filename, _, line = scenario.location.rpartition(":")
    case.set("file", _clean(filename))
    case.set("line", line)
    counts["tests"] += 1
    _properties(case, (*tags, *scenario.tags), links or {})
    status = scenario.status
    step = _culprit(scenario)
    message = scenario.error_message or (step.error_message if step and step.error_message else "") or status
    detail = message
    if step is not None:
        detail = f"Step: {step.keyword} {step.name}\nAt: {step.location}\n\n{message}"
        tails = [f"--- stderr of {t.server} ---\n{t.text}" for t in step.evidence.stderr]
        if tails:
            err = ET.SubElement(case, "system-err")
            err.text = _clean("\n".join(tails))
    first = 1 if case.find("properties") is not None else 0  # <properties> comes first
    if status == "failed":
        counts["failures"] += 1
        case.insert(first, _problem("failure", status, message, detail))
    elif status in ("error", "undefined", "pending", "hook_error"):
        counts["errors"] += 1
        case.insert(first, _problem("error", status, message, detail))
    elif status in ("skipped", "untested"):
        counts["skipped"] += 1
        skipped = ET.Element("skipped")
        skipped.set(
            "message", "not run (untested)" if status == "untested" else _clean(scenario.skip_reason or "skipped")
        )
        case.insert(first, skipped)
    out = ET.SubElement(case, "system-out")
    out.text = _clean(_steps_text(scenario))
    return case


def _hook_case(name: str, classname: str, location: str, message: str, counts: dict[str, int]) -> ET.Element:
    case = ET.Element("testcase")
    case.set("classname", _clean(classname))
    case.set("name", _clean(name))
    case.set("time", "0")
    counts["tests"] += 1
    counts["errors"] += 1
    case.append(_problem("error", "hook_error", message, f"At: {location}\n\n{message}"))
    return case


def _cases(
    children: Iterable[Scenario | Outline | Rule],
    classname: str,
    counts: dict[str, int],
    tags: tuple[str, ...] = (),
    links: dict[str, str] | None = None,
) -> list[ET.Element]:
    cases: list[ET.Element] = []
    for child in children:
        if isinstance(child, Rule):
            rule_class = f"{classname}.{child.name}"
            if child.error_message:
                cases.append(_hook_case("(Rule hooks)", rule_class, child.location, child.error_message, counts))
            cases.extend(_cases(child.children, rule_class, counts, (*tags, *child.tags), links))
        elif isinstance(child, Outline):
            inner = (*tags, *child.tags)
            cases.extend(_testcase(s, classname, counts, inner, links) for s in child.scenarios)
        else:
            cases.append(_testcase(child, classname, counts, tags, links))
    return cases


def _suite(
    feature: Feature, stamp: str, links: dict[str, str], meta: dict[str, str] | None = None
) -> tuple[ET.Element, dict[str, int]]:
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    classname = _dotted(feature.filename)
    cases = []
    if feature.error_message:
        cases.append(_hook_case("(Feature hooks)", classname, feature.location, feature.error_message, counts))
    cases.extend(_cases(feature.children, classname, counts, feature.tags, links))
    suite = ET.Element("testsuite")
    suite.set("name", _clean(feature.name or classname))
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{feature.duration:.6f}")
    suite.set("timestamp", stamp)
    suite.set("file", _clean(feature.filename))
    if meta and meta.get("profile"):  # the run's profile: fakes, or the real dependencies it swapped in
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="profile", value=_clean(meta["profile"]))
    suite.extend(cases)
    return suite, counts


def _setup_suite(short: str, why: str, stamp: str) -> tuple[ET.Element, dict[str, int]]:
    """The run's setup as a suite with one erroring testcase: CI counts it, no feature hides it."""
    counts = {"tests": 1, "failures": 0, "errors": 1, "skipped": 0}
    case = ET.Element("testcase", classname="mcp-bdd", name="(before_all)", time="0")
    case.append(_problem("error", "hook_error", short, f"At: environment.py: before_all\n\n{why}"))
    suite = ET.Element("testsuite")
    suite.set("name", "(run setup)")
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", "0")
    suite.set("timestamp", stamp)
    suite.append(case)
    return suite, counts


def junit_xml(run: Run) -> str:
    """The run as one JUnit XML document (`<testsuites>` with a `<testsuite>` per feature)."""
    root = ET.Element("testsuites")
    root.set("name", _clean(run.label))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(run.started_at or time.time()))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suites = [_suite(feature, stamp, run.links, dict(run.meta)) for feature in run.features]
    why = not_started(run)
    if why is not None:
        suites.insert(0, _setup_suite(not_started(run, one_line=True) or why, why, stamp))
    for suite, counts in suites:
        root.append(suite)
        for key, value in counts.items():
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{run.duration:.6f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: str | Path, run: Run) -> Path:
    return write_text(path, junit_xml(run))
