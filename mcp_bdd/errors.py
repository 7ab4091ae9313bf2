"""The exception tree of mcp-bdd.

    McpBddError                      root: everything mcp-bdd raises on purpose
    ├── ConfigError                  [tool.mcp-bdd] is wrong (raised before any scenario runs)
    ├── UsageError                   a feature file asks for something impossible (bad table, unknown var)
    ├── ServerStartError             a server could not be started or reached
    ├── RequestTimeout               an MCP request did not answer within `timeout`
    └── ExpectationFailed            also an AssertionError: behave reports it as *failed*, not errored

Expectation failures read like a bug report: a title, Expected / Actual / At path, the MCP
exchange that produced the value, and a Tip.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ConfigError",
    "ExpectationFailed",
    "McpBddError",
    "RequestTimeout",
    "ServerStartError",
    "UsageError",
    "did_you_mean",
    "pretty",
]

_MISSING = object()


def pretty(value: Any, limit: int = 2000) -> str:
    """Render a JSON-like value for a failure message; long values are cut with the full size noted."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > limit:
        return f"{text[:limit]}… ({len(text)} characters in all)"
    return text


def did_you_mean(name: str, choices: Iterable[str], what: str = "name") -> str:
    """`Did you mean "x"? Available <what>s: a, b, c` — the closest choice first."""
    options = sorted(set(choices))
    if not options:
        return f"There are no {what}s at all."
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    listing = ", ".join(f'"{o}"' for o in options[:40])
    if len(options) > 40:
        listing += f", … ({len(options)} in all)"
    hint = f'Did you mean "{close[0]}"? ' if close else ""
    return f"{hint}Available {what}s: {listing}"


class McpBddError(Exception):
    """Root of every error mcp-bdd raises on purpose."""


class ConfigError(McpBddError):
    """The project's `[tool.mcp-bdd]` configuration (or `-D` userdata) is wrong."""


class UsageError(McpBddError):
    """A step was used in a way that cannot work (unknown variable, table that does not fit, ...)."""


class ServerStartError(McpBddError):
    """A server under test could not be started, or could not be reached."""


class RequestTimeout(McpBddError):
    """An MCP request got no answer within the configured timeout."""


class ExpectationFailed(McpBddError, AssertionError):
    """A Then step's expectation was not met.

    Subclasses AssertionError so behave counts the scenario as failed (not errored).
    """

    def __init__(
        self,
        title: str,
        *,
        expected: Any = _MISSING,
        actual: Any = _MISSING,
        path: str | None = None,
        details: str | None = None,
        exchange: str | None = None,
        tip: str | None = None,
    ) -> None:
        self.title = title
        self.expected = expected
        self.actual = actual
        self.path = path
        self.details = details
        self.exchange = exchange
        self.tip = tip
        super().__init__(self.render())

    def render(self) -> str:
        lines = [self.title]
        if self.path is not None:
            lines.append(f"  At path:  {self.path}")
        if self.expected is not _MISSING:
            lines.append(_labelled("Expected", self.expected))
        if self.actual is not _MISSING:
            lines.append(_labelled("Actual", self.actual))
        if self.details:
            lines.append(self.details)
        if self.exchange:
            lines.append("  MCP exchange:")
            lines.extend("    " + line for line in self.exchange.splitlines())
        if self.tip:
            lines.append(f"  Tip: {self.tip}")
        return "\n".join(lines)


def _labelled(label: str, value: Any) -> str:
    text = pretty(value)
    head = f"  {label}:".ljust(12)
    if "\n" not in text:
        return f"{head}{text}"
    return head + "\n" + "\n".join("    " + line for line in text.splitlines())
