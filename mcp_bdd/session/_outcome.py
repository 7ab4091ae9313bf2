"""What one request produced (`Outcome`), and small helpers every part of the session shares."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from mcp_bdd.errors import unwrap
from mcp_bdd.servers import PROTOCOL_MARK

__all__ = ["Outcome", "dump", "is_connection_closed", "is_protocol_violation", "result_text", "unwrap"]


def is_protocol_violation(exc: BaseException) -> bool:
    """An error our stdio framing made up for a response it could not use (see servers._framing)."""
    return is_made_up(getattr(exc, "error", None))


def is_made_up(error: Any) -> bool:
    """A JSON-RPC error (ErrorData) mcp-bdd made up in an answer's place (servers._framing, session._http)."""
    data = getattr(error, "data", None)
    return isinstance(data, dict) and data.get("mcp_bdd") == PROTOCOL_MARK


def made_up_tip(error: Any) -> str | None:
    """What to do about the fault an error mcp-bdd made up names, when it says (session._http)."""
    data = getattr(error, "data", None)
    tip = data.get("tip") if is_made_up(error) and isinstance(data, dict) else None
    return tip if isinstance(tip, str) else None


def is_connection_closed(exc: BaseException) -> bool:
    """The SDK's own error for a connection that closed under a request (the server went away), not
    an answer from the server: servers use the same code, -32000, for errors of their own
    ("License expired"), so the SDK's fixed message tells the two apart."""
    error = getattr(exc, "error", None)
    closed = getattr(error, "code", None) == types.CONNECTION_CLOSED
    return closed and getattr(error, "message", None) == "Connection closed"


def dump(model: Any) -> Any:
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return model


@dataclass
class Outcome:
    """What one request produced: a raw result, or an error, or a timeout / cancellation."""

    method: str
    params: dict[str, Any]
    raw: dict[str, Any] | None = None
    error: types.ErrorData | None = None
    timed_out: bool = False
    cancelled: bool = False
    elapsed_ms: float = 0.0
    seq: int = 0  # the request's transcript seq
    server: str = ""
    exception: str | None = None  # a client-side failure (invalid result shape, connection lost)
    protocol_violation: bool = False  # the answer came but could not be used (framing, unparseable)
    #: a timed-out request's server had written lines on stdout that were not JSON-RPC: what they
    #: were (`RunningServer.stdout_evidence`), the likelier cause than a slow server
    stdout_evidence: str = ""

    @property
    def ok(self) -> bool:
        return self.raw is not None and self.error is None and not self.timed_out and not self.cancelled

    @property
    def failure_kind(self) -> str | None:
        """The failure category (mcp_bdd.errors.KINDS) of a request that got no usable answer;
        None when an answer came (even an isError result: that is the tool's answer)."""
        if self.timed_out:
            return "timeout"
        if self.protocol_violation:
            return "protocol"
        if self.error is not None or (self.raw is None and not self.cancelled):
            return "server-error"
        return None

    @property
    def is_error_result(self) -> bool:
        return self.raw is not None and bool(self.raw.get("isError"))

    def describe(self, stdout: bool = True) -> str:
        """What actually happened, for failure messages; with what the server wrote on stdout
        instead of an answer unless `stdout` is False (a failure that quotes it once elsewhere)."""
        if self.timed_out:
            said = f"\n{self.stdout_evidence}" if self.stdout_evidence and stdout else ""
            return f"{self.method} timed out after {self.elapsed_ms / 1000:.2f} s{said}"
        if self.cancelled:
            return f"{self.method} was cancelled after {self.elapsed_ms / 1000:.2f} s"
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


def result_text(raw: dict[str, Any]) -> str:
    """The concatenated text content of a tool/prompt result (or text of resource contents)."""
    parts: list[str] = []
    for block in raw.get("content", []) or []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    for item in raw.get("contents", []) or []:
        if isinstance(item, dict) and "text" in item:
            parts.append(str(item["text"]))
    for message in raw.get("messages", []) or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict) and content.get("type") == "text":
            parts.append(str(content.get("text", "")))
    return "".join(parts)
