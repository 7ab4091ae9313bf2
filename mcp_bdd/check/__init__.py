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
"""

from __future__ import annotations

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

from mcp_bdd.check import checks as _builtin  # noqa: F401 - the built-in checks register themselves
