"""Caching hints (2026-07-28): how long a listing or a read stays fresh, and who may share it.

A server marks each answer to `tools/list`, `prompts/list`, `resources/list`,
`resources/templates/list` and `resources/read` with `ttlMs` (how many milliseconds it stays
fresh; 0: at once stale) and `cacheScope` (`public`: shareable across authorization contexts;
`private`: only for the one that asked). The steps read the last answer of that kind, as sent.
"""

from __future__ import annotations

from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.steps._base import StepContext, current_session, state, text, then

__all__: list[str] = []

#: the words of a phrase for each cacheable answer, and its method
CACHEABLE = {
    "tool list": "tools/list",
    "prompt list": "prompts/list",
    "resource list": "resources/list",
    "resource template list": "resources/templates/list",
    "resource": "resources/read",
}
_SCOPES = ("public", "private")


def _hints(context: StepContext, what: str) -> tuple[str, dict[str, object]]:
    method = CACHEABLE[what]
    session = current_session(context)
    hints = session.cache_hints.get(method)
    if hints is None:
        first = 'When I read the resource "<uri>"' if what == "resource" else f"When I list the {what[:-5]}s"
        raise UsageError(
            f'{state(context).location}: no {method} answer from "{session.name}" yet. Ask for it first: {first}.'
        )
    return method, hints


@then("the {what:Cacheable} carries caching hints")
def step_has_hints(context: StepContext, what: str) -> None:
    """Check that the last answer of this kind says how long it stays fresh (ttlMs, a whole number
    of milliseconds, 0 or more) and who may share it (cacheScope: public or private).

    Example: Then the tool list carries caching hints
    """
    method, hints = _hints(context, what)
    ttl, scope = hints.get("ttlMs"), hints.get("cacheScope")
    problems = []
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        problems.append("ttlMs is missing" if "ttlMs" not in hints else f"ttlMs is {ttl!r}, not a whole number >= 0")
    if scope not in _SCOPES:
        problems.append("cacheScope is missing" if "cacheScope" not in hints else f"cacheScope is {scope!r}")
    if problems:
        raise ExpectationFailed(
            f"The {what} ({method}) carries no valid caching hints: " + "; ".join(problems),
            expected={"ttlMs": "an integer >= 0", "cacheScope": "public or private"},
            actual=hints or "neither field",
        )


def _expect_hint(context: StepContext, what: str, field: str, wanted: object) -> None:
    """The last answer's caching hint `field` is `wanted`, or a failure that shows what it is."""
    method, hints = _hints(context, what)
    if field not in hints or hints[field] != wanted or type(hints[field]) is not type(wanted):
        raise ExpectationFailed(
            f"The {what} ({method}) does not have {field} {wanted!r}",
            expected={field: wanted},
            actual=hints or "no caching hints",
        )


@then("the {what:Cacheable} may be cached for {ms:Int} ms")
def step_ttl(context: StepContext, what: str, ms: int) -> None:
    """Check how long the last answer of this kind stays fresh (its ttlMs, in milliseconds).

    Example: Then the resource may be cached for 60000 ms
    """
    _expect_hint(context, what, "ttlMs", ms)


@then('the {what:Cacheable} has the cache scope "{scope:Q}"')
def step_scope(context: StepContext, what: str, scope: str) -> None:
    """Check who may reuse the last answer of this kind: "public" (any user) or "private" (the one who asked).

    Example: Then the tool list has the cache scope "public"
    """
    wanted = text(context, scope)
    if wanted not in _SCOPES:
        raise UsageError(f'{state(context).location}: the cache scope is "public" or "private", not "{wanted}".')
    _expect_hint(context, what, "cacheScope", wanted)
