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
        ├── ServerErrorResponse      a request that had to succeed got a JSON-RPC error  server-error  1
        └── RequestRefused           ... was refused with HTTP 401/403 (credentials)     refused       1

Every class carries its `kind` (the failure category the report, `mcp-bdd run` and `probe` show)
and its `exit_code`: nothing decides what went wrong by searching an error's message text. An
ExpectationFailed about a call that got no usable answer ("Then the tool call succeeds" after a
timeout) carries the kind of what happened instead (`Outcome.failure_kind`: timeout, protocol,
server-error, refused), so a slow server is never filed under "Expectation failed".
`kind_of()` extends the same categories to exceptions mcp-bdd did not raise (a bare
AssertionError from a user's step is an expectation; anything else is an error in step code).

Expectation failures read like a bug report, top-down for a person: one plain sentence
("Expected status to be confirmed, but it was pending"), Expected / Actual / At path, the MCP
call that produced the value (request first, then its response), and a Tip.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mcp_bdd._text import Produced, pretty, printable, raised_at, sentence, split_lines, unwrap
from mcp_bdd.failures import EXIT_FAILED, EXIT_NOTHING_RAN, EXIT_UNREACHABLE, EXIT_USAGE, FailureKind

__all__ = [
    "ConfigError",
    "ExpectationFailed",
    "FakeReplaced",
    "JsonDiff",
    "McpBddError",
    "NothingSelected",
    "ProtocolViolation",
    "RequestRefused",
    "RequestTimeout",
    "ServerErrorResponse",
    "ServerStartError",
    "TransportNotServed",
    "UsageError",
    "kind_of",
    "raised",
]

_MISSING = object()


class McpBddError(Exception):
    """Root of every error mcp-bdd raises on purpose."""

    kind: FailureKind = "usage"  # a class's category; an ExpectationFailed may narrow it per instance
    exit_code: ClassVar[int] = EXIT_USAGE

    def __str__(self) -> str:
        # Every way a failure is shown (behave's console, the report, JUnit, `mcp-bdd` on stderr)
        # goes through str(): a message quoting what a server sent may quote a secret, or
        # terminal escape sequences.
        return printable(super().__str__())


class ConfigError(McpBddError):
    """The project's `[tool.mcp-bdd]` configuration (or `-D` userdata) is wrong."""

    kind: FailureKind = "config"


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

    kind: FailureKind = "setup"
    exit_code = EXIT_UNREACHABLE


class TransportNotServed(ServerStartError):
    """The server's configuration has no way to run it over the asked transport.

    `mcp-bdd run` reports the scenarios of such a leg as not run, once per message, instead of
    counting them as failures.
    """

    kind: FailureKind = "not-served"


class RequestTimeout(McpBddError):
    """An MCP request got no answer within the configured timeout."""

    kind: FailureKind = "timeout"
    exit_code = EXIT_FAILED


class ProtocolViolation(McpBddError):
    """The server broke the protocol: unframed or undecodable output, a response that cannot be parsed."""

    kind: FailureKind = "protocol"
    exit_code = EXIT_FAILED


@dataclass(frozen=True)
class JsonDiff:
    """Two JSON values that were compared, and the paths where they differ (for the report's diff view)."""

    expected: object
    actual: object
    paths: tuple[str, ...]


class ExpectationFailed(McpBddError, AssertionError):
    """A Then step's expectation was not met.

    Subclasses AssertionError so behave counts the scenario as failed (not errored).
    """

    kind: FailureKind = "expectation"
    exit_code: ClassVar[int] = EXIT_FAILED

    def __init__(
        self,
        title: str,
        *,
        expected: object = _MISSING,
        actual: object = _MISSING,
        path: str | None = None,
        details: str | None = None,
        exchange: str | None = None,
        tip: str | None = None,
        diff: JsonDiff | None = None,
        kind: FailureKind | None = None,
    ) -> None:
        # "the call succeeds" failing because the call timed out is a timeout, not a wrong value:
        # the step knows what actually happened (Outcome.failure_kind) and says so here.
        if kind is not None:
            self.kind = kind
        self.title = title
        self.expected = expected
        self.actual = actual
        self.path = path
        self.details = details
        self.exchange = exchange
        #: the transcript seq of the request `exchange` quotes (when it came from `produced_by`)
        self.exchange_seq = exchange.seq if isinstance(exchange, Produced) else None
        self.tip = tip
        self.diff = diff
        super().__init__(self.render())

    @property
    def has_expected(self) -> bool:
        return self.expected is not _MISSING

    @property
    def has_actual(self) -> bool:
        return self.actual is not _MISSING

    @property
    def sentence(self) -> str:
        """The first line: a plain sentence when the values allow one, else the title."""
        compared = self.has_expected and self.has_actual
        return sentence(self.title, self.expected, self.actual, self.path, compared=compared)

    def render(self) -> str:
        """Plain text in reading order: sentence, Expected / Actual / At path, details, the call, the tip."""
        lines = [self.sentence]
        if self.has_expected:
            lines.append(_labelled("Expected", self.expected))
        if self.has_actual:
            lines.append(_labelled("Actual", self.actual))
        if self.path is not None:
            lines.append(f"  At path:  {self.path}")
        if self.details:
            lines.append(self.details)
        if self.exchange:
            lines.append("  The call that produced the value:")
            lines.extend("    " + line for line in split_lines(self.exchange))
        if self.tip:
            lines.append(f"  Tip: {self.tip}")
        return "\n".join(lines)


def _labelled(label: str, value: object) -> str:
    text = pretty(value)
    head = f"  {label}:".ljust(12)
    if "\n" not in text:
        return f"{head}{text}"
    return head + "\n" + "\n".join("    " + line for line in split_lines(text))


class ServerErrorResponse(ExpectationFailed):
    """A request that had to succeed was answered with a JSON-RPC error (or the server went away)."""

    kind: FailureKind = "server-error"


class RequestRefused(ExpectationFailed):
    """A request that had to succeed was refused at the HTTP level (401 or 403): the credentials
    the client was given, or their scope, not a fault of the server's."""

    kind: FailureKind = "refused"


def kind_of(exc: BaseException | None, untyped: FailureKind = "error") -> FailureKind | None:
    """The failure category of an exception, for exceptions mcp-bdd raised and for others.

    `untyped` is the category of an exception that says nothing about itself (a RuntimeError):
    in a step it is the step code's error; raised by a before_* hook it is a setup failure.
    """
    if exc is None:
        return None
    if isinstance(exc, McpBddError):
        return exc.kind
    if isinstance(exc, AssertionError):
        return "expectation"
    if isinstance(exc, TimeoutError):
        return "timeout"
    return untyped


def raised(exc: BaseException) -> str:
    """What a user's code raised, in one line: the real exception, its message and where it was
    raised (`RuntimeError: no database (shop.py:41, in lifespan)`). A group's wrapper says only
    "unhandled errors in a TaskGroup (1 sub-exception)"."""
    cause = unwrap(exc)
    if isinstance(cause, McpBddError):
        return str(cause)  # ours already says what and where; its place in mcp-bdd would mislead
    return f"{type(cause).__name__}: {cause}{raised_at(cause)}"
