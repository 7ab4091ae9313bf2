"""A check report for CI: JUnit XML (test dashboards) and Markdown (a GitHub step summary).

Both say what the console says — the findings by severity, the tools not called and why — in a
form a CI system shows without a plug-in. Everything in them may come from the server (names,
titles, texts): secrets are masked as in every output of check, XML is escaped by the writer,
and Markdown is escaped so that a tool's text cannot close a table, open a link or run HTML.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from mcp_bdd.check._finding import Finding
from mcp_bdd.check._registry import REGISTRY, Severity
from mcp_bdd.check._runner import CheckReport
from mcp_bdd.secrets import mask

__all__ = ["junit_xml", "markdown", "not_called_advice"]

#: findings a Markdown summary lists one by one (GitHub caps a step summary at 1 MiB)
MARKDOWN_FINDINGS = 200
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean(text: str) -> str:
    """Masked, and without the control characters XML 1.0 cannot carry."""
    return _CONTROL.sub("?", mask(text))


def junit_xml(report: CheckReport, *, fail_on: Severity) -> str:
    """One testsuite, one testcase per check that ran: failed when it found something at or above
    `fail_on` (each such finding a line of the failure), passed otherwise (findings below it in
    system-out, so the advice is not lost)."""
    failing = report.at_or_above(fail_on)
    suite = ET.Element("testsuite", name="mcp-bdd check", tests=str(len(report.checks)),
                       failures=str(len({f.check for f in failing})), errors="0", skipped="0",
                       time=f"{report.elapsed_s:.3f}")  # fmt: skip
    props = ET.SubElement(suite, "properties")
    for key, value in (("target", report.target), ("protocol", report.protocol), ("seed", str(report.seed)),
                       ("fail_on", fail_on.label)):  # fmt: skip
        ET.SubElement(props, "property", name=key, value=_clean(value))
    by_check: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_check.setdefault(finding.check, []).append(finding)
    for check_id in report.checks:
        spec = REGISTRY.get(check_id)
        case = ET.SubElement(suite, "testcase", classname=f"mcp-bdd.{spec.group if spec else 'contract'}",
                             name=check_id)  # fmt: skip
        found = by_check.get(check_id, [])
        failed = [f for f in found if f.severity >= fail_on]
        if failed:
            failure = ET.SubElement(case, "failure", type=max(f.severity for f in failed).label,
                                    message=_clean(f"{len(failed)} finding(s): {failed[0].title}")[:500])  # fmt: skip
            failure.text = _clean("\n\n".join(f.render() for f in failed))
        rest = [f for f in found if f.severity < fail_on]
        if rest:
            ET.SubElement(case, "system-out").text = _clean("\n\n".join(f.render() for f in rest))
    advice = not_called_advice(report)
    if advice:
        ET.SubElement(suite, "system-out").text = _clean("\n".join(advice))
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


#: what makes Markdown of text inside a line (`#`, `-`, `.` matter only at a line's start, where no
#: server text is ever put)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()|<>~])")


def _md(text: str, limit: int = 300) -> str:
    """Server text as inert Markdown in one table cell: masked, one line, every special character escaped."""
    one = " ".join(_clean(text).split())
    one = one if len(one) <= limit else one[:limit] + "…"
    return _MD_SPECIAL.sub(r"\\\1", one).replace("&", "&amp;")


def markdown(report: CheckReport, *, fail_on: Severity) -> str:
    """The report as GitHub-flavoured Markdown: the verdict, counts by severity, a table of the
    findings (the first MARKDOWN_FINDINGS), the tools not called with the way to call them."""
    failing = report.at_or_above(fail_on)
    who = f"{report.server.get('name') or '(no name)'} {report.server.get('version') or ''}".strip()
    lines = [
        f"## mcp-bdd check: {'❌ findings' if failing else '✅ passed'} — {_md(who)}",
        "",
        f"{_md(report.target)} · {_md(report.protocol)} over {_md(report.transport)} · "
        f"{len(report.checks)} checks, seed {report.seed} · failing at {fail_on.label} or above: "
        f"**{len(failing)}** · {report.elapsed_s:.1f} s",
        "",
        "| severity | findings |",
        "|---|---|",
    ]
    lines += [f"| {level.label} | {sum(1 for f in report.findings if f.severity == level)} |"
              for level in sorted(Severity, reverse=True)]  # fmt: skip
    if report.findings:
        lines += ["", "| severity | check | on | finding |", "|---|---|---|---|"]
        lines += [f"| {f.severity.label} | `{f.check}` | {_md(f.target, 120)} | {_md(f.title)} |"
                  for f in report.findings[:MARKDOWN_FINDINGS]]  # fmt: skip
        if len(report.findings) > MARKDOWN_FINDINGS:
            lines.append(f"\n… and {len(report.findings) - MARKDOWN_FINDINGS:,} more (`--json` lists every one)")
    if report.skipped:
        lines += ["", f"<details><summary>Not called: {len(report.skipped)} tools</summary>", ""]
        lines += [f"- {_md(tool, 120)}: {_md(why)}" for tool, why in sorted(report.skipped.items())[:MARKDOWN_FINDINGS]]
        lines += [f"- {_md(line)}" for line in not_called_advice(report)]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def not_called_advice(report: CheckReport) -> list[str]:
    """How to call the tools left out because they may write: the scoped flag first (those not
    annotated destructive, then the destructive ones, named), then the all-or-nothing one."""
    writes = {t: why for t, why in report.skipped.items() if why.endswith(f"(--allow-writes={t} calls it)")}
    if not writes:
        return []
    destructive = sorted(t for t, why in writes.items() if "annotated destructiveHint: true" in why)
    others = sorted(t for t in writes if t not in destructive)
    said = []
    if others:
        said.append(f"the ones that may write: --allow-writes={_listed(others)}")
    if destructive:
        said.append(f"the destructive ones too (against a server whose data may be lost): "
                    f"--allow-writes={_listed(others + destructive)}")  # fmt: skip
    said.append("every tool: --allow-writes (calls may change the server's data: check a test instance)")
    return said


def _listed(names: list[str], shown: int = 20) -> str:
    return ",".join(names[:shown]) + (f",… ({len(names) - shown} more: see --json)" if len(names) > shown else "")
