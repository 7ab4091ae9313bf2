"""Run the selected checks against one open session and collect their findings."""

from __future__ import annotations

import itertools
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mcp_bdd.check._context import CheckContext, CheckOptions
from mcp_bdd.check._finding import Finding, Problem
from mcp_bdd.check._registry import CheckSpec, finding_of
from mcp_bdd.check._severity import Severity
from mcp_bdd.errors import McpBddError, UsageError
from mcp_bdd.session import Session

__all__ = ["CheckReport", "run_checks"]

#: characters of a crashed check's exception message quoted
_SAID = 500
#: targets a folded finding names before it only counts them
_NAMED = 20


@dataclass
class CheckReport:
    """The result of a check run: what was checked, what was found, what was left out and why."""

    target: str
    transport: str
    server: dict[str, object]
    protocol: str
    seed: int
    checks: list[str]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)  # tools / resources / prompts / tool calls

    def at_or_above(self, level: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity >= level]

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "transport": self.transport,
            "server": self.server,
            "protocol": self.protocol,
            "seed": self.seed,
            "checks": self.checks,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
            "notes": self.notes,
            "skipped": self.skipped,
            "elapsed_s": round(self.elapsed_s, 3),
        }


def _problems_of(spec: CheckSpec, ctx: CheckContext) -> list[Problem]:
    """What `spec` found, ending with why it could not finish if it broke: a check that broke is no
    pass, and the problems it yielded before breaking are kept."""
    problems: list[Problem] = []
    try:
        found = spec.func(ctx)
        if not isinstance(found, Iterable):
            return [_broken(spec, f"it returned {type(found).__name__}, not Problems (a `yield` missing?)")]
        for problem in found:
            if not _is_problem(problem):
                return [*problems, _broken(spec, f"it yielded {type(problem).__name__}, not a Problem")]
            problems.append(problem)
    except UsageError:
        raise
    except McpBddError as exc:  # the server broke the check itself (timeout, crash)
        problems.append(
            Problem(
                title="the check could not complete: the server failed a request it had to answer",
                details=str(exc),
                tip="see the server's stderr; a request that times out or kills the server is a bug in itself.",
            )
        )
    except Exception as exc:  # a bug in the check (a bare `assert` too): the other checks still run
        problems.append(_broken(spec, _raised(spec, exc), type(exc).__name__))
    return problems


def _is_problem(found: object) -> bool:
    texts = ("title", "target", "details", "tip")
    return isinstance(found, Problem) and all(isinstance(getattr(found, name), str) for name in texts)


def _raised(spec: CheckSpec, exc: Exception) -> str:
    """The exception, and where in the check it was raised: the deepest frame in the check's own
    file (a `json.loads` deep in the standard library is not where the bug is), else the deepest."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename == spec.func.__code__.co_filename]
    frame = own[-1] if own else frames[-1] if frames else None
    said = str(exc)
    said = said if len(said) <= _SAID else said[:_SAID] + "..."
    where = f" at {frame.filename}:{frame.lineno} in {frame.name}" if frame is not None else ""
    return f"{type(exc).__name__}: {said}{where}"


def _broken(spec: CheckSpec, details: str, what: str = "") -> Problem:
    """A check that did what no server failure makes it do (raised, returned or yielded the wrong
    thing): a bug in the check (a project's own, or a built-in one meeting an answer it did not
    foresee). HIGH whatever the check's severity: the gate must not pass on a check that checked
    nothing."""
    own = spec.func.__module__.startswith("mcp_bdd.")
    return Problem(
        title=f"the check itself crashed with {what}" if what else "the check itself is broken",
        details=details,
        tip=(
            "a bug in mcp-bdd's check, not a verdict on the server: please report it with this message"
            if own
            else f"a bug in the check {spec.id} ({spec.func.__module__}), not a verdict on the server: fix it there"
        )
        + "; the other checks ran.",
        severity=Severity.HIGH,
    )


def _folded(findings: list[Finding], options: CheckOptions) -> list[Finding]:
    """`findings` (sorted) with those of one check at one severity past `max_findings` folded into
    one finding that counts them and names some of their targets. Why: a large catalog made
    thousands of findings of one kind, and a gate's report must stay readable (and its SARIF a
    dashboard can take). The fold keeps the severity, so the exit code is the same; findings on a
    tool the run was asked about (`only_tools`, the per-tool step) are never folded."""
    limit = options.max_findings
    if limit <= 0:
        return findings
    asked = tuple(f"tool {t}" for t in options.only_tools)

    def about_asked(finding: Finding) -> bool:  # "tool x", "tool x, argument y"
        return any(finding.target == t or finding.target.startswith(t + ",") for t in asked)

    kept: list[Finding] = []
    for _key, group in itertools.groupby(findings, key=lambda f: (f.check, f.severity)):  # sorted: contiguous
        items = list(group)
        kept.extend(items[:limit])
        kept.extend(f for f in items[limit:] if about_asked(f))
        folded = [f for f in items[limit:] if not about_asked(f)]
        if folded:
            kept.append(_fold(folded, limit))
    return kept


def _fold(folded: list[Finding], limit: int) -> Finding:
    """One finding for `folded`: how many, and the first of their targets by name."""
    first = folded[0]
    targets = list(dict.fromkeys(f.target for f in folded))
    more = len(targets) - _NAMED
    return Finding(
        check=first.check,
        group=first.group,
        severity=first.severity,
        title=f"{len(folded):,} more findings of this check at {first.severity.label} severity, not listed one by one",
        target=", ".join(targets[:_NAMED]) + (f", … and {more:,} more" if more > 0 else ""),
        details=f"the first {limit} are listed one by one; findings of one check most often share one fix",
        tip=first.tip,
        rationale=first.rationale,
    )


def run_checks(session: Session, specs: Sequence[CheckSpec], options: CheckOptions | None = None) -> CheckReport:
    """Run `specs` in order against `session`; a check that breaks on the server becomes a finding."""
    import mcp_bdd.check.checks  # noqa: F401 - registers the built-in checks

    options = options or CheckOptions()
    started = time.monotonic()
    ctx = CheckContext(session=session, options=options)
    ctx.read_surface()
    findings: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for spec in specs:
        for problem in _problems_of(spec, ctx):
            finding = finding_of(spec, problem)
            key = (finding.check, finding.target, finding.title)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    findings.sort(key=lambda f: (-f.severity, f.group, f.check, f.target))
    findings = _folded(findings, options)
    handle = session.server
    return CheckReport(
        target=handle.display,
        transport=handle.transport,
        server=ctx.server_info,
        protocol=ctx.protocol,
        seed=options.seed,
        checks=[s.id for s in specs],
        findings=findings,
        notes=ctx.notes,
        skipped=dict(ctx.skipped),
        elapsed_s=time.monotonic() - started,
        counts={
            "tools": len(ctx.tools),
            "resources": len(ctx.resources),
            "resource templates": len(ctx.templates),
            "prompts": len(ctx.prompts),
            "tool calls": len(ctx.calls),
        },
    )
