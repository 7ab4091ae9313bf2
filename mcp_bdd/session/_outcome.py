"""What one request produced (`Outcome`), and small helpers every part of the session shares."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, overload

import mcp_types as types
from pydantic import BaseModel

from mcp_bdd._text import unwrap
from mcp_bdd.failures import FailureKind
from mcp_bdd.servers import PROTOCOL_MARK
from mcp_bdd.session._rounds import InputRound

__all__ = [
    "CREDENTIALS_TIP",
    "REFUSAL_MARK",
    "Outcome",
    "Refusal",
    "dump",
    "is_connection_closed",
    "is_protocol_violation",
    "result_text",
    "stands_in",
    "unwrap",
]

#: What marks the error mcp-bdd stands in with for a request's POST refused with HTTP 401 or 403
#: (session._http), beside PROTOCOL_MARK: the server refused the client; it broke no protocol.
REFUSAL_MARK = "http-refusal"
#: what a server that answers 401 wants, at the handshake or later. Worded so that the secret
#: policy reads no `NAME: value` in it ("credentials: give them" printed as "credentials: ****")
CREDENTIALS_TIP = (
    'the server wants credentials. Give them in `headers` of its configuration: an "Authorization" header '
    'with "Bearer ${env.API_TOKEN}".'
)
_REASONS = {401: "Unauthorized", 403: "Forbidden"}


@dataclass(frozen=True)
class Refusal:
    """A request the server refused at the HTTP level, 401 or 403, with no JSON-RPC answer: what
    it sent. The SDK made up "-32603 Server returned an error response" for it (mcp-bdd gives
    the SDK no OAuth flow that would answer it: credentials are `headers`), which read as the
    server's JSON-RPC error: "Then the request is rejected with error code -32603" passed for a
    code the server never sent, and `mcp-bdd check` filed a token's missing scope as a broken tool."""

    status: int
    challenge: str = ""  # its WWW-Authenticate header
    body: str = ""  # the body's start

    def said(self) -> str:
        """What the server sent, and nothing of mcp-bdd's: all that an error-text step may match."""
        parts = [f"HTTP {self.status} ({_REASONS.get(self.status, 'refused')})"]
        if self.challenge:
            parts.append(f"WWW-Authenticate: {self.challenge}")
        if self.body.strip():
            parts.append(f"body: {self.body.strip()}")  # as sent (control characters are escaped where printed)
        return "; ".join(parts)

    @property
    def tip(self) -> str:
        check = f'"Then the last HTTP response has status {self.status}"'
        if self.status == 403:
            return (
                "the credentials lack what this request needs (a scope, a role): give the client a token that has "
                "it (`headers` in the server's configuration, or \"Given the client is authorized with the scopes "
                '..."). To check a refusal that is meant: "Then the request is refused for insufficient scope" '
                f"or {check}."
            )
        return f"{CREDENTIALS_TIP} To check a refusal that is meant: {check}."

    def matched(self) -> str:
        """What an error-text step matches: the server's own status, challenge and body as sent,
        none of mcp-bdd's words ("Forbidden", "body") and no quoting of its text."""
        return " ".join(part for part in (str(self.status), self.challenge, self.body) if part)

    @staticmethod
    def taken(exc: BaseException, kept: dict[str, Refusal]) -> Refusal | None:
        """The refusal the transport kept for the error it stood in with (session._http), or None.
        By the token in the error's data, never by the mark alone: any server can write that."""
        data = getattr(getattr(exc, "error", None), "data", None)
        if not isinstance(data, dict) or data.get("mcp_bdd") != REFUSAL_MARK:
            return None
        token = data.get("token")
        return kept.pop(token, None) if isinstance(token, str) else None


def is_protocol_violation(exc: BaseException) -> bool:
    """An error our stdio framing made up for a response it could not use (see servers._framing)."""
    return is_made_up(getattr(exc, "error", None))


def stands_in(error: object) -> bool:
    """A JSON-RPC error (ErrorData) mcp-bdd put in a request's place, not one the server sent: one
    made up for an unusable answer, a refusal's, or the connection-closed error of a POST that broke
    (session._http: the same as the SDK's own for a connection that closed)."""
    data = getattr(error, "data", None)
    if isinstance(data, dict) and data.get("mcp_bdd") in (PROTOCOL_MARK, REFUSAL_MARK):
        return True
    return _is_closed(error)


def is_made_up(error: object) -> bool:
    """A JSON-RPC error (ErrorData) mcp-bdd made up in an answer's place for one it could not use
    (servers._framing, session._http); not a refusal's (`Refusal.taken`), which is the server's answer."""
    data = getattr(error, "data", None)
    return isinstance(data, dict) and data.get("mcp_bdd") == PROTOCOL_MARK


def made_up_tip(error: object) -> str | None:
    """What to do about the fault an error mcp-bdd made up names, when it says (session._http)."""
    data = getattr(error, "data", None)
    tip = data.get("tip") if is_made_up(error) and isinstance(data, dict) else None
    return tip if isinstance(tip, str) else None


def is_connection_closed(exc: BaseException) -> bool:
    """The SDK's own error for a connection that closed under a request (the server went away), not
    an answer from the server: servers use the same code, -32000, for errors of their own
    ("License expired"), so the SDK's fixed message tells the two apart."""
    return _is_closed(getattr(exc, "error", None))


def _is_closed(error: object) -> bool:
    closed = getattr(error, "code", None) == types.CONNECTION_CLOSED
    return closed and getattr(error, "message", None) == "Connection closed"


@overload
def dump(model: BaseModel) -> dict[str, object]: ...
@overload
def dump(model: None) -> None: ...
def dump(model: BaseModel | None) -> dict[str, object] | None:
    """A model as it goes over the wire (by alias, JSON values, no nulls); None stays None."""
    return None if model is None else model.model_dump(by_alias=True, mode="json", exclude_none=True)


@dataclass
class Outcome:
    """What one request produced: a raw result, or an error, or a timeout / cancellation."""

    method: str
    params: dict[str, object]
    #: the result as sent; its values stay untyped while check/ reads them unnarrowed (object is next)
    raw: dict[str, Any] | None = None
    error: types.ErrorData | None = None
    timed_out: bool = False
    cancelled: bool = False
    elapsed_ms: float = 0.0
    seq: int = 0  # the request's transcript seq
    server: str = ""
    exception: str | None = None  # a client-side failure (invalid result shape, connection lost)
    protocol_violation: bool = False  # the answer came but could not be used (framing, unparseable)
    refusal: Refusal | None = None  # refused at the HTTP level (401/403), no JSON-RPC answer
    #: a timed-out request's server had written lines on stdout that were not JSON-RPC: what they
    #: were (`RunningServer.stdout_evidence`), the likelier cause than a slow server
    stdout_evidence: str = ""
    #: the input-required rounds the answer took (2026-07-28), in order; empty for a direct answer
    rounds: list[InputRound] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.raw is not None and self.error is None and not self.timed_out and not self.cancelled

    @property
    def failure_kind(self) -> FailureKind | None:
        """The failure category (mcp_bdd.failures.KINDS) of a request that got no usable answer;
        None when an answer came (even an isError result: that is the tool's answer)."""
        if self.timed_out:
            return "timeout"
        if self.protocol_violation:
            return "protocol"
        if self.refusal is not None:
            return "refused"
        if self.error is not None or (self.raw is None and not self.cancelled):
            return "server-error"
        return None

    @property
    def is_error_result(self) -> bool:
        return self.raw is not None and self.raw.get("isError") is True

    def describe(self, stdout: bool = True) -> str:
        """What actually happened, for failure messages; with what the server wrote on stdout
        instead of an answer unless `stdout` is False (a failure that quotes it once elsewhere)."""
        if self.timed_out:
            said = f"\n{self.stdout_evidence}" if self.stdout_evidence and stdout else ""
            return f"{self.method} timed out after {self.elapsed_ms / 1000:.2f} s{said}"
        if self.cancelled:
            return f"{self.method} was cancelled after {self.elapsed_ms / 1000:.2f} s"
        if self.refusal is not None:
            return f"{self.method} was refused by the server: {self.refusal.said()}"
        if self.error is not None:
            return f"JSON-RPC error {self.error.code}: {self.error.message}" + (
                f" (data: {json.dumps(self.error.data, default=str)[:300]})" if self.error.data is not None else ""
            )
        if self.exception is not None:
            return self.exception
        if self.raw is not None and self.method == "tools/call":
            text = result_text(self.raw)
            flag = "isError: true" if self.is_error_result else "isError: false"
            return f"{flag}, text: {text[:1500]!r}" + (
                f", structuredContent: {json.dumps(self.raw['structuredContent'])[:800]}"
                if "structuredContent" in self.raw
                else ""
            )
        return json.dumps(self.raw, default=str)[:1500]


def result_text(raw: Mapping[str, object]) -> str:
    """The concatenated text content of a tool/prompt result (or text of resource contents)."""
    parts: list[str] = []
    for block in _items(raw.get("content")):
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    for item in _items(raw.get("contents")):
        if isinstance(item, dict) and "text" in item:
            parts.append(str(item["text"]))
    for message in _items(raw.get("messages")):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict) and content.get("type") == "text":
            parts.append(str(content.get("text", "")))
    return "".join(parts)


def _items(value: object) -> list[object]:
    """A JSON array's items; none for anything else (a missing field, or one of another shape)."""
    return value if isinstance(value, list) else []
