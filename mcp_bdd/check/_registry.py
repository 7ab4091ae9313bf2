"""The check registry: every check is a plain function registered with an id, a severity and a rationale.

Modelled on schemathesis: a check is a function of one argument (the run's `CheckContext`) that
yields `Problem`s; the runner stamps each with the check's id, group and severity, making it a
`Finding`. Built-in checks register through the same `@check` decorator a user's would, so
`--only` / `--skip` and docs/check.md see them all alike.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_bdd._text import did_you_mean
from mcp_bdd.check._finding import Finding, Problem
from mcp_bdd.check._severity import Severity
from mcp_bdd.errors import UsageError

if TYPE_CHECKING:
    from mcp_bdd.check._context import CheckContext

__all__ = [
    "CONTRACT",
    "GROUPS",
    "REGISTRY",
    "CheckFunc",
    "CheckSpec",
    "Severity",
    "check",
    "finding_of",
    "names_contract",
    "select",
]


#: The groups, in the order they run and print.
GROUPS: dict[str, str] = {
    "protocol": "the protocol: handshake, declared capabilities, pagination, unknown names",
    "transport": "the wire: only JSON-RPC on a stdio server's stdout, a loopback HTTP server refusing foreign hosts",
    "schemas": "tool names, input and output schemas, structuredContent against outputSchema",
    "quality": "what an LLM client reads: descriptions, annotations, confusable names",
    "poisoning": "security: instructions hidden for the model, invisible unicode, exfiltration, leaks",
    "auth": "OAuth over HTTP: the 401 challenge, RFC 9728 and RFC 8414 metadata, bad tokens refused",
    "honest-schemas": "generated calls: does each tool do what its inputSchema says?",
    "apps": "MCP Apps: app bindings, their ui:// resources, visibility, text fallback, CSP",
    "tasks": "Tasks: each tool's execution.taskSupport against what the server offers and does",
    "contract": "the tool surface against a contract file kept in version control",
}

CheckFunc = Callable[["CheckContext"], Iterable[Problem]]


@dataclass(frozen=True)
class CheckSpec:
    id: str
    severity: Severity
    group: str
    rationale: str  # one line: why a server must pass this
    doc: str  # the function's docstring: what exactly is checked
    func: CheckFunc
    calls_tools: bool = False  # calls tools (only read-only ones, unless --allow-writes)
    late: bool = False  # runs after the others (looks at every call they made)


#: Every registered check by id, in registration order.
REGISTRY: dict[str, CheckSpec] = {}


def check(
    id: str,
    *,
    severity: Severity | str,
    group: str,
    rationale: str,
    calls_tools: bool = False,
    late: bool = False,
) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check: `@check("schemas.input-valid", severity="high", group="schemas", rationale=...)`."""
    if group not in GROUPS:
        raise UsageError(f'@check("{id}"): unknown group "{group}". {did_you_mean(group, GROUPS, "group")}.')
    level = severity if isinstance(severity, Severity) else Severity.parse(severity, f'@check("{id}")')

    def register(func: CheckFunc) -> CheckFunc:
        if id in REGISTRY and REGISTRY[id].func is not func:
            raise UsageError(
                f'@check("{id}") is registered twice ({REGISTRY[id].func.__module__} and {func.__module__}).'
            )
        REGISTRY[id] = CheckSpec(
            id=id,
            severity=level,
            group=group,
            rationale=rationale,
            doc=inspect.getdoc(func) or "",
            func=func,
            calls_tools=calls_tools,
            late=late,
        )
        return func

    return register


def _matches(spec: CheckSpec, pattern: str) -> bool:
    return _names(spec.id, spec.group, pattern)


def _names(check_id: str, group: str, pattern: str) -> bool:
    return pattern == group or fnmatch.fnmatchcase(check_id, pattern) or check_id.startswith(pattern + ".")


#: The contract check: no registered function, it compares the surface with `--contract FILE`.
CONTRACT = "contract.matches"


def names_contract(pattern: str) -> bool:
    """Whether an `--only` / `--skip` pattern names the contract check (`contract`, `contract.*`)."""
    return _names(CONTRACT, "contract", pattern)


def select(only: Sequence[str] = (), skip: Sequence[str] = (), *, contract: bool = False) -> list[CheckSpec]:
    """The checks to run: `only`/`skip` name check ids, groups or globs (`poisoning`, `schemas.*`).

    `contract`: a contract is given (`mcp-bdd check --contract FILE`), so `contract` and
    `contract.matches` name what will run; without one they name a check that cannot run, which is
    said, not answered with "no such check" (`--list` shows it)."""
    specs = list(REGISTRY.values())
    for pattern in [*only, *skip]:
        if any(_matches(s, pattern) for s in specs):
            continue
        if names_contract(pattern) and (contract or pattern in skip):
            continue
        if names_contract(pattern):
            raise UsageError(
                f'"{pattern}" names {CONTRACT}, which compares the server\'s surface with a contract file: '
                "give it with --contract FILE (recorded by `mcp-bdd contract update FILE ...`); in a feature, "
                'the step is `Then the tool surface matches the contract "FILE"`.'
            )
        names = [*GROUPS, *REGISTRY, CONTRACT]
        raise UsageError(f'No check matches "{pattern}". {did_you_mean(pattern, names, "check or group")}.')
    if only:
        specs = [s for s in specs if any(_matches(s, p) for p in only)]
    specs = [s for s in specs if not any(_matches(s, p) for p in skip)]
    order = list(GROUPS)
    return sorted(specs, key=lambda s: (s.late, order.index(s.group)))


def describe_all() -> list[dict[str, str]]:
    """Every check as a dict (id, group, severity, rationale, doc), for docs and `--list`."""
    return [
        {"id": s.id, "group": s.group, "severity": s.severity.label, "rationale": s.rationale, "doc": s.doc}
        for s in REGISTRY.values()
    ]


def finding_of(spec: CheckSpec, problem: Problem) -> Finding:
    """The runner's stamp: a check's problem with the check's id, group, severity and rationale."""
    return Finding(
        check=spec.id,
        group=spec.group,
        severity=problem.severity if problem.severity is not None else spec.severity,
        title=problem.title,
        target=problem.target,
        details=problem.details,
        tip=problem.tip,
        call=problem.call,
        rationale=spec.rationale,
    )
