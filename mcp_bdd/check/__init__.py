"""`mcp-bdd check`: a compliance, quality and contract gate that needs nothing but the server.

Checks are plain functions in a registry (`@check(id, severity=..., group=..., rationale=...)`),
each yielding `Problem`s the runner turns into `Finding`s; the same checks run from the command
line (`mcp-bdd check`), from Gherkin steps (`Then the server passes the MCP compliance checks`)
and, for the contract lock, from `mcp-bdd probe --baseline`. docs/check.md lists every check.

    from mcp_bdd.check import check, Problem

    @check("acme.no-beta-tools", severity="low", group="quality", rationale="Beta tools confuse users.")
    def no_beta_tools(ctx):
        for tool in ctx.tools:
            if "beta" in tool["name"]:
                yield Problem(title="a beta tool is exposed", target=f"tool {tool['name']}", tip="hide it.")

The names below are imported on first use, and with them the built-in checks are registered:
`mcp-bdd check` imports this package to parse its options, before it starts the clock its summary
reports, and importing the MCP SDK is seconds of a run that the summary must not leave out.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_bdd.check._context import CheckContext, CheckOptions
    from mcp_bdd.check._finding import Call, Finding, Problem
    from mcp_bdd.check._registry import GROUPS, REGISTRY, CheckSpec, Severity, check, select
    from mcp_bdd.check._runner import CheckReport, run_checks

__all__ = [
    "GROUPS",
    "REGISTRY",
    "Call",
    "CheckContext",
    "CheckOptions",
    "CheckReport",
    "CheckSpec",
    "Finding",
    "Problem",
    "Severity",
    "check",
    "run_checks",
    "select",
]

_MODULES = {
    "CheckContext": "_context",
    "CheckOptions": "_context",
    "Call": "_finding",
    "Finding": "_finding",
    "Problem": "_finding",
    "GROUPS": "_registry",
    "REGISTRY": "_registry",
    "CheckSpec": "_registry",
    "Severity": "_registry",
    "check": "_registry",
    "select": "_registry",
    "CheckReport": "_runner",
    "run_checks": "_runner",
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    importlib.import_module("mcp_bdd.check.checks")  # the built-in checks register themselves
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
