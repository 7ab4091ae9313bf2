"""A check report as a human reads it (grouped by severity), as JSON, and as SARIF 2.1.0."""

from __future__ import annotations

from typing import TextIO

from mcp_bdd._text import terminal_json
from mcp_bdd.check._registry import GROUPS, REGISTRY, Severity
from mcp_bdd.check._runner import CheckReport

__all__ = ["print_report", "sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: tools the console lists as not called before it only counts the rest (`--json` lists them all)
NOT_CALLED_SHOWN = 20
HELP_URI = "https://github.com/mcp-bdd/mcp-bdd/blob/main/docs/check.md"


def print_report(report: CheckReport, out: TextIO, *, fail_on: Severity) -> None:
    info = report.server
    who = f"{info.get('name') or '(no name)'} {info.get('version') or ''}".strip()
    failing = report.at_or_above(fail_on)
    head = "FINDINGS" if failing else "passed"
    print(f"{head}: {who}", file=out)
    print(f"  target:    {report.target}", file=out)
    print(f"  protocol:  {report.protocol} over {report.transport}", file=out)
    print("  surface:   " + ", ".join(counted(n, k) for k, n in report.counts.items()), file=out)
    print(f"  checks:    {len(report.checks)} run, seed {report.seed}", file=out)
    for level in sorted(Severity, reverse=True):
        group = [f for f in report.findings if f.severity == level]
        if not group:
            continue
        print(f"\n{level.label.upper()} ({len(group)})", file=out)
        for finding in group:
            print("", file=out)
            print("\n".join("  " + line for line in finding.render().splitlines()), file=out)
    _print_not_called(report, out)
    if report.notes:
        print("\nNotes:", file=out)
        for note in report.notes:
            print(f"  {note}", file=out)
    counts = {level.label: sum(1 for f in report.findings if f.severity == level) for level in Severity}
    summary = ", ".join(f"{n} {label}" for label, n in sorted(counts.items(), key=lambda kv: -Severity.parse(kv[0])))
    left_out = f"; {counted(len(report.skipped), 'tools')} not called" if report.skipped else ""
    print(f"\n{counted(len(report.findings), 'findings')} ({summary}); failing at {fail_on.label} or above: "
          f"{len(failing)}{left_out}; {report.elapsed_s:.2f} s", file=out)  # fmt: skip


def _print_not_called(report: CheckReport, out: TextIO) -> None:
    if not report.skipped:
        return
    print(f"\nNot called ({counted(len(report.skipped), 'tools')}):", file=out)
    skipped = sorted(report.skipped.items())
    for tool, why in skipped[:NOT_CALLED_SHOWN]:
        print(f'  "{tool}": {why}', file=out)
    if len(skipped) > NOT_CALLED_SHOWN:
        print(f"  … and {len(skipped) - NOT_CALLED_SHOWN:,} more (--json lists every one, with its reason)", file=out)
    from mcp_bdd.check._formats import not_called_advice

    advice = not_called_advice(report)
    if advice:  # a crash in a tool that may write is found only when it is called: say how, scoped first
        print("  Not called, so not checked (a crash in them too). To call", file=out)
        for line in advice:
            print(f"    {line}", file=out)


def counted(n: int, plural: str) -> str:
    """`1 tool call`, `2 tool calls`, `1 resource template`: `plural` as the counts name it."""
    return f"{n:,} {plural[:-1] if n == 1 and plural.endswith('s') else plural}"


def report_json(report: CheckReport, *, fail_on: Severity) -> dict[str, object]:
    data = report.to_json()
    data["fail_on"] = fail_on.label
    data["status"] = "findings" if report.at_or_above(fail_on) else "passed"
    return data


def sarif(report: CheckReport) -> dict[str, object]:
    """SARIF 2.1.0: one run, a rule per check that ran, a result per finding (located at the server)."""
    rules: list[dict[str, object]] = []
    index: dict[str, int] = {}
    for check_id in report.checks:
        index[check_id] = len(rules)
        rules.append(_rule(check_id))
    results = []
    for finding in report.findings:
        message = finding.title + (f"\n{finding.details}" if finding.details else "")
        if finding.tip:
            message += f"\nTip: {finding.tip}"
        result: dict[str, object] = {
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
    from mcp_bdd._version import __version__

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


def _rule(check_id: str) -> dict[str, object]:
    """A check as a SARIF rule; the contract check has no registered function, so no spec."""
    spec = REGISTRY.get(check_id)
    if spec is None:  # CONTRACT: its findings' severity is the change's category
        why = GROUPS["contract"]
        group, level, doc = "contract", Severity.HIGH.sarif_level, why
    else:
        why, group, level, doc = spec.rationale, spec.group, spec.severity.sarif_level, spec.doc or spec.rationale
    return {
        "id": check_id,
        "name": check_id.replace(".", "/"),
        "shortDescription": {"text": why},
        "fullDescription": {"text": doc},
        "helpUri": f"{HELP_URI}#{check_id.replace('.', '')}",
        "defaultConfiguration": {"level": level},
        "properties": {"group": group, "tags": ["mcp", group]},
    }


def _artifact(report: CheckReport) -> str:
    """A location for code-scanning dashboards: the server's URL, else a stable name for the command."""
    target = report.target
    if target.startswith(("http://", "https://")):
        return target
    name = str(report.server.get("name") or "server")
    return f"mcp-server/{name}"


def dumps(data: object) -> str:
    """`check --json` and `--sarif`: secrets masked; printed to a terminal or a pipe (or read in one),
    so what would drive a terminal is escaped (as JSON escapes: the data is the same)."""
    return terminal_json(data)
