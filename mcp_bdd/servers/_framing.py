"""Newline-delimited JSON-RPC over a byte stream: linear, bounded, and honest about bad output.

Why our own framing: the SDK's `stdio_client` (and our 0.1 transport) re-joined the whole
pending buffer on every chunk, so a 30 MB result cost ~12 s and 324 MB; it also drops lines it
cannot parse with nothing but a log line, so a server that pretty-prints its JSON-RPC (the
classic framing bug) just "times out". Here:

- `LineSplitter` keeps the pieces of an unfinished line in a list and joins them once, when its
  newline arrives: every byte is copied a bounded number of times. A line longer than
  `max_line` bytes is a protocol violation, reported once, and skipped to its end.
- `StdoutEvidence` counts what was not a JSON-RPC message (plain text, pretty-printed JSON,
  invalid UTF-8, JSON that is not JSON-RPC) and quotes the first one: the failure message of a
  handshake or a request then says what the server wrote instead of "timed out".
- A *response* that cannot be parsed (nested too deep, spread over several lines, not fitting
  the JSON-RPC schema) fails its pending request at once: `decode_line` turns it into a JSON-RPC
  error for the same id, marked with `PROTOCOL_MARK`, which the session reports as a protocol
  violation instead of waiting for its timeout.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage

__all__ = ["PROTOCOL_MARK", "LineSplitter", "LineTooLong", "StdoutEvidence", "decode_line", "too_long"]

#: `error.data["mcp_bdd"]` of a JSON-RPC error we made up for a response that could not be used
PROTOCOL_MARK = "protocol-violation"
_QUOTE = 300  # characters of a bad line quoted in messages
_PRETTY_LIMIT = 1 << 20  # bytes of consecutive bad lines kept to re-assemble pretty-printed JSON
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')


class LineTooLong(ValueError):
    """A line grew past the configured bound before its newline came."""


class LineSplitter:
    """Split a byte stream into lines in time linear in its size, each line at most `max_line` bytes."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False  # inside a line that was too long: drop bytes until its newline

    def feed(self, data: bytes) -> list[bytes]:
        """The complete lines `data` finishes; raises LineTooLong (once per long line)."""
        lines: list[bytes] = []
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._skipping:
                self._skipping = False
            elif self._parts:
                self._parts.append(data[start:end])
                lines.append(b"".join(self._parts))
            else:
                lines.append(data[start:end])
            self._parts, self._size = [], 0
            start = end + 1
        rest = data[start:]
        if rest and not self._skipping:
            self._parts.append(rest)
            self._size += len(rest)
            if self._size > self.max_line:
                head = b"".join(self._parts)[:4096]
                self._parts, self._size, self._skipping = [], 0, True
                if lines:
                    return lines  # the long line is reported with the next feed
                raise LineTooLong(head)
        return lines


@dataclass
class StdoutEvidence:
    """What a server wrote on stdout that was not a JSON-RPC message, for failure messages."""

    bad_lines: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    first: str | None = None
    _pretty: list[bytes] = field(default_factory=list)
    _pretty_size: int = 0

    def note(self, kind: str, line: bytes) -> str:
        """Count one bad line; returns a one-line description for the transcript."""
        self.bad_lines += 1
        self.kinds[kind] += 1
        quoted = line[:_QUOTE].decode("utf-8", "replace")
        described = f"{kind}: {quoted!r}" + (f" … ({len(line)} bytes)" if len(line) > _QUOTE else "")
        if self.first is None:
            self.first = described
        return described

    def describe(self) -> str:
        """`The server wrote N lines on stdout that are not JSON-RPC messages ...`, or ""."""
        if not self.bad_lines:
            return ""
        kinds = ", ".join(f"{n} {k}" for k, n in self.kinds.most_common())
        return (
            f"The server wrote {self.bad_lines} line{'s' if self.bad_lines != 1 else ''} on stdout that "
            f"{'are not JSON-RPC messages' if self.bad_lines != 1 else 'is not a JSON-RPC message'} ({kinds}); "
            f"the first: {self.first}\n"
            f"  That usually means: {_meaning(self.kinds)}"
        )


def _meaning(kinds: Counter[str]) -> str:
    if kinds["pretty-printed JSON"] or kinds["a JSON-RPC message spread over several lines"]:
        return (
            "the server pretty-prints its JSON-RPC messages. Over stdio each message must be one line "
            "(no newlines inside it): serialise with json.dumps(message) / JSON.stringify(message), no indent."
        )
    if kinds["invalid UTF-8"]:
        return "the server writes bytes that are not UTF-8 on stdout; MCP messages over stdio are UTF-8 JSON."
    if kinds["a response nested too deep to parse"]:
        return (
            "the server answered with JSON nested deeper than JSON parsers accept (a recursive structure "
            "serialised without a limit?): flatten the result, or cut the recursion."
        )
    if kinds["line too long"]:
        return (
            "a message was larger than max_message_bytes; raise it in [tool.mcp-bdd] if that size is expected, "
            "or the server never ends its lines."
        )
    return (
        "the server (or a library it uses) prints logs or banners on stdout. Over stdio, stdout belongs to "
        "the protocol: write logs to stderr (print(..., file=sys.stderr), console.error)."
    )


def decode_line(line: bytes, evidence: StdoutEvidence) -> SessionMessage | Exception | None:
    """One line of stdout: a message, an Exception describing a bad line, or None (blank line).

    A response that cannot be used becomes a JSON-RPC error for its own id (see module doc).
    """
    if not line.strip():
        return None
    try:
        message = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        return _bad_line(line, evidence)
    evidence._pretty.clear()  # a good message ends any half-assembled pretty-printed one
    evidence._pretty_size = 0
    return message


def _bad_line(line: bytes, evidence: StdoutEvidence) -> SessionMessage | Exception:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return ValueError(evidence.note("invalid UTF-8", line))
    try:
        data = json.loads(text)
    except RecursionError:
        return _unusable(line, evidence, "a response nested too deep to parse", _id_in(line))
    except ValueError:
        return _maybe_pretty(line, evidence)
    if isinstance(data, dict) and data.get("jsonrpc") == "2.0" and ("result" in data or "error" in data):
        return _unusable(line, evidence, "a response that does not fit the JSON-RPC schema", data.get("id"))
    return ValueError(evidence.note("JSON that is not a JSON-RPC message", line))


def _maybe_pretty(line: bytes, evidence: StdoutEvidence) -> SessionMessage | Exception:
    """A line of a message spread over several lines: re-assemble it to fail its request at once."""
    stripped = line.strip()
    if evidence._pretty or stripped in (b"{", b"["):
        if evidence._pretty_size + len(line) <= _PRETTY_LIMIT:
            evidence._pretty.append(line)
            evidence._pretty_size += len(line)
        try:
            whole = json.loads(b"\n".join(evidence._pretty))
        except (ValueError, RecursionError):
            return ValueError(evidence.note("pretty-printed JSON", line))
        evidence._pretty.clear()
        evidence._pretty_size = 0
        if isinstance(whole, dict) and ("result" in whole or "error" in whole):
            return _unusable(line, evidence, "a JSON-RPC message spread over several lines", whole.get("id"))
        return ValueError(evidence.note("a JSON-RPC message spread over several lines", line))
    return ValueError(evidence.note("not JSON", line))


def _id_in(line: bytes) -> Any:
    """The id of a response we cannot parse: near its start (the SDKs write it first) or its end."""
    for window in (line[:256], line[-256:]):
        match = _ID.search(window)
        if match:
            return json.loads(match.group(1))
    return None


def _unusable(line: bytes, evidence: StdoutEvidence, kind: str, request_id: Any) -> SessionMessage | Exception:
    """Count the line; fail its request at once when its id is known, else report it as a bad line."""
    described = evidence.note(kind, line)
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        return ValueError(described)
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(
            code=types.PARSE_ERROR,
            message=f"mcp-bdd could not use the server's response: {kind} ({len(line)} bytes).",
            data={"mcp_bdd": PROTOCOL_MARK, "first_bytes": line[:_QUOTE].decode("utf-8", "replace")},
        ),
    )
    return SessionMessage(error)


def too_long(head: bytes, evidence: StdoutEvidence) -> SessionMessage | Exception:
    """A line past `max_line` bytes (only its head is kept): fail its request if its id shows early."""
    return _unusable(head, evidence, "line too long", _id_in(head))
