"""The one failure vocabulary: what went wrong, in the words every output uses.

    kind          label (the report, `mcp-bdd run`)   raised as (mcp_bdd.errors)
    expectation   Expectation failed                  ExpectationFailed, a user's AssertionError
    server-error  Server error                        ServerErrorResponse
    refused       Access refused                      RequestRefused (HTTP 401/403)
    protocol      Protocol violation                  ProtocolViolation
    timeout       Timeout                             RequestTimeout, TimeoutError
    setup         Setup / start failure               ServerStartError, an error in a before hook
    not-served    Transport not served                TransportNotServed
    usage         Feature or step misuse              UsageError
    config        Configuration error                 ConfigError
    error         Error in step code                  any other exception

A request that got no usable answer has one of these kinds too (`Outcome.failure_kind`), and a
one-shot command (probe, check, contract, call, list) says it in one word with its exit code
(`Unanswered`). The exit codes are the same for every `mcp-bdd` command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_RAN",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "KINDS",
    "FailureKind",
    "Unanswered",
    "kind_label",
]

#: The exit codes of every `mcp-bdd` subcommand (and what `behave` hooks map errors to).
EXIT_OK = 0
EXIT_FAILED = 1  # scenarios failed / the probed surface changed / findings at or above --fail-on
EXIT_USAGE = 2  # usage or configuration error
EXIT_UNREACHABLE = 3  # a server could not be started or reached
EXIT_NOTHING_RAN = 5  # nothing was selected: no feature file, or no scenario matched (pytest's 5)
EXIT_INTERRUPTED = 130

FailureKind = Literal[
    "expectation", "server-error", "refused", "protocol", "timeout", "setup", "not-served", "usage", "config", "error"
]

#: Failure categories, as the report shows them (kind -> label).
KINDS: dict[FailureKind, str] = {
    "expectation": "Expectation failed",
    "server-error": "Server error",
    "refused": "Access refused",
    "protocol": "Protocol violation",
    "timeout": "Timeout",
    "setup": "Setup / start failure",
    "not-served": "Transport not served",
    "usage": "Feature or step misuse",
    "config": "Configuration error",
    "error": "Error in step code",
}


def kind_label(kind: str | None, unknown: str | None = None) -> str:
    """The label of a kind read back from a report's JSON, where it is a string: one this version
    does not know (a report of a later mcp-bdd) is shown as `unknown`, else as its own words."""
    for known, text in KINDS.items():
        if known == kind:
            return text
    if unknown is not None:
        return unknown
    return (kind or "error").replace("-", " ").capitalize()


@dataclass(frozen=True)
class Unanswered:
    """How every command that got no answer from a server (probe, check, contract, call, list) says
    so, and its exit code: REFUSED (1) for a request the server refused with HTTP 401/403 — the
    credentials, not the server —, TIMEOUT (1) for a request of an open session that got no answer
    in time (the server was reached), else UNREACHABLE (3): not started, not reached, or broken."""

    word: str
    exit_code: int

    @classmethod
    def connecting(cls, kind: FailureKind | None) -> Unanswered:
        """What a failure to open the session says: refused, else unreachable (a server that does
        not answer its handshake in time was not reached)."""
        return cls("REFUSED", EXIT_FAILED) if kind == "refused" else cls("UNREACHABLE", EXIT_UNREACHABLE)

    @classmethod
    def answering(cls, kind: FailureKind | None) -> Unanswered:
        """What a request of an open session that got no usable answer says."""
        if kind == "timeout":
            return cls("TIMEOUT", EXIT_FAILED)
        return cls.connecting(kind)

    @property
    def status(self) -> str:
        """The `status` of a --json output."""
        return self.word.lower()
