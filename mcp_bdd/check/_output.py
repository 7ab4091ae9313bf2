"""A check report as a human reads it (grouped by severity), as JSON, and as SARIF 2.1.0."""

from __future__ import annotations

from typing import Any, TextIO

from mcp_bdd.check._registry import REGISTRY, Severity
from mcp_bdd.check._runner import CheckReport
from mcp_bdd.errors import terminal_json

__all__ = ["print_report", "sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
HELP_URI = "https://github.com/mcp-bdd/mcp-bdd/blob/main/docs/check.md"


def print_report(report: CheckReport, out: TextIO, *, fail_on: Severity) -> None:
    info = report.server
    who = f"{info.get('name') or '(no name)'} {info.get('version') or ''}".strip()
    failing = report.at_or_above(fail_on)
    head = "FINDINGS" if failing else "passed"
    print(f"{head}: {who}", file=out)
    print(f"  target:    {report.target}", file=out)
    print(f"  protocol:  {report.protocol} over {report.transport}", file=out)
    print("  surface:   " + ", ".join(f"{n} {k}" for k, n in report.counts.items()), file=out)
    print(f"  checks:    {len(report.checks)} run, seed {report.seed}", file=out)
    for level in sorted(Severity, reverse=True):
        group = [f for f in report.findings if f.severity == level]
        if not group:
            continue
        print(f"\n{level.label.upper()} ({len(group)})", file=out)
        for finding in group:
            print("", file=out)
            print("\n".join("  " + line for line in finding.render().splitlines()), file=out)
    if report.skipped:
        print(f"\nNot called ({len(report.skipped)} tools):", file=out)
        for tool, why in sorted(report.skipped.items()):
            print(f'  "{tool}": {why}', file=out)
    if report.notes:
        print("\nNotes:", file=out)
        for note in report.notes:
            print(f"  {note}", file=out)
    counts = {level.label: sum(1 for f in report.findings if f.severity == level) for level in Severity}
    summary = ", ".join(f"{n} {label}" for label, n in sorted(counts.items(), key=lambda kv: -Severity.parse(kv[0])))
    print(f"\n{len(report.findings)} findings ({summary}); failing at {fail_on.label} or above: "
          f"{len(failing)}; {report.elapsed_s:.2f} s", file=out)  # fmt: skip


def report_json(report: CheckReport, *, fail_on: Severity) -> dict[str, Any]:
    data = report.to_json()
    data["fail_on"] = fail_on.label
    data["status"] = "findings" if report.at_or_above(fail_on) else "passed"
    return data


def sarif(report: CheckReport) -> dict[str, Any]:
    """SARIF 2.1.0: one run, a rule per check that ran, a result per finding (located at the server)."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for check_id in report.checks:
        spec = REGISTRY[check_id]
        index[check_id] = len(rules)
        rules.append({
            "id": spec.id,
            "name": spec.id.replace(".", "/"),
            "shortDescription": {"text": spec.rationale},
            "fullDescription": {"text": spec.doc or spec.rationale},
            "helpUri": f"{HELP_URI}#{spec.id.replace('.', '')}",
            "defaultConfiguration": {"level": spec.severity.sarif_level},
            "properties": {"group": spec.group, "tags": ["mcp", spec.group]},
        })  # fmt: skip
    results = []
    for finding in report.findings:
        message = finding.title + (f"\n{finding.details}" if finding.details else "")
        if finding.tip:
            message += f"\nTip: {finding.tip}"
        result: dict[str, Any] = {
            "ruleId": finding.check,
            "level": finding.severity.sarif_level,
            "message": {"text": message},
            "locations": [{
                "physicalLocation": {"artifactLocation": {"uri": _artifact(report)}},
                "logicalLocations": [{"name": finding.target, "kind": "member"}],
            }],
            "partialFingerprints": {"mcpBddFinding/v1": f"{finding.check}|{finding.target}|{finding.title}"},
        }  # fmt: skip
        if finding.check in index:
            result["ruleIndex"] = index[finding.check]
        if finding.call is not None:
            result["properties"] = {"call": finding.call.to_json()}
        results.append(result)
    from mcp_bdd import __version__

    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mcp-bdd check", "version": __version__, "informationUri": HELP_URI,
                                "rules": rules}},
            "invocations": [{"executionSuccessful": True, "properties": {"seed": report.seed}}],
            "properties": {"server": report.server, "protocol": report.protocol, "transport": report.transport},
            "results": results,
        }],
    }  # fmt: skip


def _artifact(report: CheckReport) -> str:
    """A location for code-scanning dashboards: the server's URL, else a stable name for the command."""
    target = report.target
    if target.startswith(("http://", "https://")):
        return target
    name = str(report.server.get("name") or "server")
    return f"mcp-server/{name}"


def dumps(data: Any) -> str:
    """`check --json` and `--sarif`: secrets masked; printed to a terminal or a pipe (or read in one),
    so what would drive a terminal is escaped (as JSON escapes: the data is the same)."""
    return terminal_json(data)
