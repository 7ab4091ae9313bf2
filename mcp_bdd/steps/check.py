"""Steps: `mcp-bdd check` inside a feature — compliance, honest errors, poisoning, the contract lock.

The same registered checks the command runs (mcp_bdd.check), on the scenario's session. Every
finding, failing or not, is attached to the step, so the living documentation shows what was
checked and what was found; the step fails on findings at or above medium severity (low ones are
advice). Tools are called only when annotated `readOnlyHint: true`.
"""

from __future__ import annotations

import json
from pathlib import Path

from mcp_bdd._text import did_you_mean
from mcp_bdd.check import CheckOptions, CheckReport, Finding, Severity, run_checks, select
from mcp_bdd.contract import compare, load_contract, read_surface, save_contract
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.steps._base import StepContext, current_session, state, text, then

__all__: list[str] = []

FINDINGS_MIME = "text/plain"


def _names(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _run(
    context: StepContext, only: list[str], options: CheckOptions | None = None, server: str | None = None
) -> CheckReport:
    session = current_session(context, server)
    report = run_checks(session, select(only), options or CheckOptions())
    _attach(context, report)
    return report


def _attach(context: StepContext, report: CheckReport) -> None:
    lines = [f"mcp-bdd check: {len(report.findings)} findings, {len(report.checks)} checks, seed {report.seed}"]
    lines.extend(f.render() for f in report.findings)
    if report.skipped:
        lines.append("Not called: " + "; ".join(f"{k} ({v})" for k, v in sorted(report.skipped.items())))
    lines.extend(f"note: {n}" for n in report.notes)
    context.attach(FINDINGS_MIME, "\n\n".join(lines).encode("utf-8"))


def _fail_on(findings: list[Finding], what: str, level: Severity = Severity.MEDIUM) -> None:
    failing = [f for f in findings if f.severity >= level]
    if failing:
        shown = "\n\n".join(f.render() for f in failing[:12])
        more = f"\n\n(+{len(failing) - 12} more)" if len(failing) > 12 else ""
        raise ExpectationFailed(
            f"{len(failing)} finding(s) at {level.label} severity or above: {what}",
            details=shown + more,
            tip="each finding says what to fix; replay the generated calls with the seed shown "
            "(`mcp-bdd check --seed N`). docs/check.md explains every check.",
        )


@then("the server passes the MCP compliance checks")
def step_passes_checks(context: StepContext) -> None:
    """Run every built-in check of `mcp-bdd check` (protocol, schemas, quality, poisoning, generated calls
    to read-only tools) on the current server; fail on findings of medium severity or above.

    Example: Then the server passes the MCP compliance checks
    """
    _fail_on(_run(context, []).findings, "the server does not pass the MCP compliance checks")


@then('the server passes the MCP compliance checks, never calling the tools "{tools:Q}"')
def step_passes_checks_except(context: StepContext, tools: str) -> None:
    """The compliance checks, leaving some tools uncalled (slow or costly by design); comma-separated.

    Example: Then the server passes the MCP compliance checks, never calling the tools "slow"
    """
    options = CheckOptions(no_call=_names(text(context, tools)))
    _fail_on(_run(context, [], options).findings, "the server does not pass the MCP compliance checks")


@then('the server passes the checks "{checks:Q}"')
def step_passes_named_checks(context: StepContext, checks: str) -> None:
    """Run some checks only: check ids, groups or globs, comma-separated (see `mcp-bdd check --list`).

    Example: Then the server passes the checks "protocol, schemas"
    """
    only = list(_names(text(context, checks)))
    _fail_on(_run(context, only).findings, f"the server does not pass the checks {', '.join(only)}")


@then("every tool's error for a missing argument names the argument")
def step_missing_argument_named(context: StepContext) -> None:
    """Call each read-only tool without each of its required arguments: the error must name the argument
    (an assistant fixes its call from that text), and nothing may crash or hang.

    Example: Then every tool's error for a missing argument names the argument
    """
    report = _run(context, ["honest.missing-argument"])
    _fail_on(report.findings, "an error for a missing argument does not name it")


@then("no tool description contains instructions to the model")
def step_no_hidden_instructions(context: StepContext) -> None:
    """No description hides instructions for the model (ignore previous instructions, do not tell the user,
    <IMPORTANT> blocks, exfiltration hints) or text the user cannot see (zero-width, bidi controls).

    Example: Then no tool description contains instructions to the model
    """
    report = _run(context, ["poisoning.hidden-instructions", "poisoning.invisible-unicode"])
    _fail_on(report.findings, "a description speaks to the model behind the user's back", Severity.LOW)


@then('the tool "{name:Q}" passes the checks')
def step_tool_passes(context: StepContext, name: str) -> None:
    """Every check, for one tool (its own row in a Scenario Outline: one line per tool in the living doc).
    The tool is called only if annotated read-only.

    Example:
        Then the tool "<tool>" passes the checks
        Examples:
          | tool        |
          | check_stock |
    """
    wanted = text(context, name)
    session = current_session(context)
    names = [str(t.get("name")) for t in session.listing("tools")]
    if wanted not in names:
        raise UsageError(f'{state(context).location}: no tool "{wanted}". {did_you_mean(wanted, names, "tool")}.')
    report = _run(context, [], CheckOptions(only_tools=(wanted,)))
    mine = [f for f in report.findings if f.target == f"tool {wanted}" or f.target.startswith(f"tool {wanted},")]
    _fail_on(mine, f'the tool "{wanted}" does not pass the checks')


# ---------------------------------------------------------------------------------------------
# the contract lock


def _contract_path(context: StepContext, path: str) -> Path:
    chosen = Path(text(context, path))
    return chosen if chosen.is_absolute() else Path(state(context).config.root) / chosen


def _update_requested(context: StepContext) -> bool:
    value = str(dict(context.config.userdata).get("mcp_bdd.update_contracts", "")).strip().lower()
    return value in ("1", "true", "yes", "on")


def _contract(context: StepContext, path: str, *, breaking_only: bool) -> None:
    session = current_session(context)
    file = _contract_path(context, path)
    surface = read_surface(session)
    if not file.exists() or _update_requested(context):
        save_contract(file, surface)
        why = "recorded (first run)" if not file.exists() else "updated (-D mcp_bdd.update_contracts=true)"
        context.attach(FINDINGS_MIME, f"contract {file}: {why}; tools sha256 {surface.sha256}".encode())
        return
    changes = compare(load_contract(file), surface)
    summary = {c: [x.render() for x in changes.of(c)] for c in ("breaking", "routing", "annotations", "additive")}
    context.attach(FINDINGS_MIME, json.dumps({"contract": str(file), **summary}, indent=2).encode("utf-8"))
    failing = changes.of("breaking") if breaking_only else changes.items
    if failing:
        raise ExpectationFailed(
            f'The tool surface of "{session.name}" differs from the contract {path} ({changes.worst()})',
            details="\n".join(f"  {c.render()}" for c in changes.items),
            tip="if the change is intended, record it: `mcp-bdd contract update "
            f"{path} ...` or run behave with -D mcp_bdd.update_contracts=true, and review the diff in git.",
        )


@then('the tool surface matches the contract "{path:Q}"')
def step_matches_contract(context: StepContext, path: str) -> None:
    """Compare the server's tools, resources and prompts with a contract file kept in version control (the
    same file `mcp-bdd probe --baseline` reads). The first run records it; `-D mcp_bdd.update_contracts=true`
    rewrites it. Any difference fails, classified: breaking, routing (descriptions), annotations, additive.

    Example: Then the tool surface matches the contract "contracts/shop.json"
    """
    _contract(context, path, breaking_only=False)


@then('the tool surface has no breaking change against the contract "{path:Q}"')
def step_no_breaking_change(context: StepContext, path: str) -> None:
    """Like the contract step, but only breaking changes fail (tool removed, required argument added, type
    narrowed, output field removed, enum value removed); the others are attached to the report.

    Example: Then the tool surface has no breaking change against the contract "contracts/shop.json"
    """
    _contract(context, path, breaking_only=True)
