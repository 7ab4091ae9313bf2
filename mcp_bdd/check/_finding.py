"""What a check reports: a `Problem` (yielded by the check) becomes a `Finding` (stamped by the runner).

A finding carries everything a reader needs to act without rerunning: which check, how bad,
what is wrong, on which tool / prompt / resource, the exact call that showed it (request and
response, secrets masked, sizes bounded) and a Tip.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

from mcp_bdd.check._secrets import mask_shapes
from mcp_bdd.check._severity import Severity
from mcp_bdd.secrets import mask, mask_data

if TYPE_CHECKING:
    from mcp_bdd.session import Outcome

__all__ = ["Call", "Finding", "Problem", "bounded", "call_of"]

#: Longest string kept from a server's answer in a finding (the rest is cut, its size noted).
TEXT_LIMIT = 1500


@overload
def bounded(value: str, limit: int = TEXT_LIMIT) -> str: ...
@overload
def bounded(value: Mapping[str, object], limit: int = TEXT_LIMIT) -> dict[str, object]: ...
@overload
def bounded(value: object, limit: int = TEXT_LIMIT) -> object: ...
def bounded(value: object, limit: int = TEXT_LIMIT) -> object:
    """A copy of `value` with secrets masked and every long string cut: findings stay small and safe
    (a string stays a string, a mapping becomes a dict with string keys)."""
    value = mask_data(value, any_key=True)

    def cut(item: object) -> object:
        if isinstance(item, str):
            item = mask_shapes(mask(item))
            return item if len(item) <= limit else f"{item[:limit]}… ({len(item)} characters in all)"
        if isinstance(item, dict):
            return {str(k)[:200]: cut(v) for k, v in list(item.items())[:100]}
        if isinstance(item, list):
            return [cut(v) for v in item[:50]] + ([f"… ({len(item)} items in all)"] if len(item) > 50 else [])
        return item

    return cut(value)


@dataclass(frozen=True)
class Call:
    """One request the check made and what came back (masked, bounded)."""

    method: str
    params: dict[str, object]
    response: dict[str, object] | None = None  # the result, as sent
    error: dict[str, object] | None = None  # a JSON-RPC error {code, message, data}
    note: str | None = None  # timed out / connection lost

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"method": self.method, "params": self.params}
        for key in ("response", "error", "note"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    def render(self) -> str:
        lines = [f"→ {self.method} {json.dumps(self.params, ensure_ascii=False)[:600]}"]
        if self.error is not None:
            lines.append(f"← error {json.dumps(self.error, ensure_ascii=False)[:600]}")
        if self.response is not None:
            lines.append(f"← {json.dumps(self.response, ensure_ascii=False)[:600]}")
        if self.note:
            lines.append(f"← {self.note}")
        return "\n".join(lines)


def call_of(outcome: Outcome) -> Call:
    error: dict[str, object] | None = None
    if outcome.error is not None:
        error = {"code": outcome.error.code, "message": outcome.error.message}
        if outcome.error.data is not None:
            error["data"] = outcome.error.data
    note = None
    if outcome.timed_out:
        note = f"no answer within {outcome.elapsed_ms / 1000:.2f} s (timed out)"
    elif outcome.exception:
        note = outcome.exception
    return Call(
        method=outcome.method,
        params=bounded(outcome.params),
        response=bounded(outcome.raw) if outcome.raw is not None else None,
        error=bounded(error) if error is not None else None,
        note=bounded(note) if note else None,
    )


@dataclass(frozen=True)
class Problem:
    """What a check function yields: the runner turns it into a `Finding`."""

    title: str
    target: str = "server"  # "tool add", "prompt greet", "resource shop://catalog", "server"
    details: str = ""
    tip: str = ""
    call: Call | None = None
    severity: Severity | None = None  # overrides the check's default severity for this one


@dataclass(frozen=True)
class Finding:
    check: str
    group: str
    severity: Severity
    title: str
    target: str
    details: str
    tip: str
    call: Call | None = None
    rationale: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # what a server sent may reach titles and details: never re-publish a secret it leaked
        object.__setattr__(self, "title", mask_shapes(mask(self.title)))
        object.__setattr__(self, "details", mask_shapes(mask(self.details)))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "check": self.check,
            "group": self.group,
            "severity": self.severity.label,
            "title": self.title,
            "target": self.target,
        }
        if self.details:
            out["details"] = self.details
        if self.tip:
            out["tip"] = self.tip
        if self.call is not None:
            out["call"] = self.call.to_json()
        return out

    def render(self) -> str:
        lines = [f"[{self.severity.label}] {self.check}: {self.title}", f"  on: {self.target}"]
        lines.extend(f"  {line}" for line in self.details.splitlines())
        if self.call is not None:
            lines.extend(f"  {line}" for line in self.call.render().splitlines())
        if self.tip:
            lines.append(f"  Tip: {self.tip}")
        return "\n".join(lines)
