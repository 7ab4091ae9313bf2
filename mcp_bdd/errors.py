"""The exception tree of mcp-bdd.

    McpBddError                      root: everything mcp-bdd raises on purpose       kind         exit
    ├── ConfigError                  [tool.mcp-bdd] is wrong (before any scenario runs) config        2
    ├── UsageError                   a feature asks for the impossible (bad table, ...)  usage         2
    │   ├── NothingSelected          no feature file / no scenario matched the run       usage         5
    │   └── FakeReplaced             a step needs a fake the profile replaced (skipped)  usage         2
    ├── ServerStartError             a server could not be started or reached            setup         3
    │   └── TransportNotServed       the server has no way to run over that transport    not-served    3
    ├── RequestTimeout               an MCP request did not answer within `timeout`      timeout       1
    ├── ProtocolViolation            the server broke the protocol (framing, bad JSON)   protocol      1
    └── ExpectationFailed            also an AssertionError: behave reports it *failed*  expectation   1
        └── ServerErrorResponse      a request that had to succeed got a JSON-RPC error  server-error  1

Every class carries its `kind` (the failure category the report, `mcp-bdd run` and `probe` show)
and its `exit_code`: nothing decides what went wrong by searching an error's message text.
`kind_of()` extends the same categories to exceptions mcp-bdd did not raise (a bare
AssertionError from a user's step is an expectation; anything else is an error in step code).

Expectation failures read like a bug report: a title, Expected / Actual / At path, the MCP
exchange that produced the value, and a Tip.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any, ClassVar

from mcp_bdd.secrets import mask

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_RAN",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "KINDS",
    "ConfigError",
    "ExpectationFailed",
    "FakeReplaced",
    "McpBddError",
    "NothingSelected",
    "ProtocolViolation",
    "RequestTimeout",
    "ServerErrorResponse",
    "ServerStartError",
    "TransportNotServed",
    "UsageError",
    "did_you_mean",
    "kind_of",
    "pretty",
]

#: The exit codes of every `mcp-bdd` subcommand (and what `behave` hooks map errors to).
EXIT_OK = 0
EXIT_FAILED = 1  # scenarios failed / the probed surface changed / findings at or above --fail-on
EXIT_USAGE = 2  # usage or configuration error
EXIT_UNREACHABLE = 3  # a server could not be started or reached
EXIT_NOTHING_RAN = 5  # nothing was selected: no feature file, or no scenario matched (pytest's 5)
EXIT_INTERRUPTED = 130

#: Failure categories, as the report shows them (kind -> label).
KINDS: dict[str, str] = {
    "expectation": "Expectation failed",
    "server-error": "Server error",
    "protocol": "Protocol violation",
    "timeout": "Timeout",
    "setup": "Setup / start failure",
    "not-served": "Transport not served",
    "usage": "Feature or step misuse",
    "config": "Configuration error",
    "error": "Error in step code",
}

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

    kind: ClassVar[str] = "usage"
    exit_code: ClassVar[int] = EXIT_USAGE

    def __str__(self) -> str:
        # Every way a failure is shown (behave's console, the report, JUnit, `mcp-bdd` on stderr)
        # goes through str(): a message quoting what a server sent may quote a secret.
        return mask(super().__str__())


class ConfigError(McpBddError):
    """The project's `[tool.mcp-bdd]` configuration (or `-D` userdata) is wrong."""

    kind = "config"


class UsageError(McpBddError):
    """A step was used in a way that cannot work (unknown variable, table that does not fit, ...)."""


class NothingSelected(UsageError):
    """A run selected nothing to test: green on nothing would be a lie."""

    exit_code = EXIT_NOTHING_RAN


class FakeReplaced(UsageError):
    """A step stubs or checks a fake that the run's profile replaced with a real dependency.

    The fake steps report their step as skipped, with this message as the reason: a profile that
    runs the features against a sandbox API cannot stub it or count its requests.
    """


class ServerStartError(McpBddError):
    """A server under test could not be started, or could not be reached."""

    kind = "setup"
    exit_code = EXIT_UNREACHABLE


class TransportNotServed(ServerStartError):
    """The server's configuration has no way to run it over the asked transport.

    `mcp-bdd run` reports the scenarios of such a leg as not run, once per message, instead of
    counting them as failures.
    """

    kind = "not-served"


class RequestTimeout(McpBddError):
    """An MCP request got no answer within the configured timeout."""

    kind = "timeout"
    exit_code = EXIT_FAILED


class ProtocolViolation(McpBddError):
    """The server broke the protocol: unframed or undecodable output, a response that cannot be parsed."""

    kind = "protocol"
    exit_code = EXIT_FAILED


class ExpectationFailed(McpBddError, AssertionError):
    """A Then step's expectation was not met.

    Subclasses AssertionError so behave counts the scenario as failed (not errored).
    """

    kind: ClassVar[str] = "expectation"
    exit_code: ClassVar[int] = EXIT_FAILED

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


class ServerErrorResponse(ExpectationFailed):
    """A request that had to succeed was answered with a JSON-RPC error (or the server went away)."""

    kind = "server-error"


def kind_of(exc: BaseException | None) -> str | None:
    """The failure category of an exception, for exceptions mcp-bdd raised and for others."""
    if exc is None:
        return None
    if isinstance(exc, McpBddError):
        return exc.kind
    if isinstance(exc, AssertionError):
        return "expectation"
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "error"
