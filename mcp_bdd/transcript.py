"""Per-scenario transcript: every MCP request, response, notification and error, timestamped.

Steps never attach by themselves: the `after_step` hook drains what the step caused and
attaches it to that step (`context.attach(TRANSCRIPT_MIME, json)`), which is what the living
documentation report and failure messages read. What hooks caused (a user's before_scenario
starting a server or seeding a table) is attached as HOOKS_MIME when the first step starts (or
after the scenario, when none did), and teardown as TEARDOWN_MIME, so the report shows each as
the hooks' doing, before or after the steps, never as the first or last step's.
Records come from the portal thread (the SDK's callbacks) and from the behave thread, hence the lock.

Bounded: a server that floods notifications (a log line per item of a million-item loop) put
every one in memory, in each report and in behave's json (200,000 log lines: 600 MB of RSS and
a 105 MB report). A scenario's transcript keeps its first NOTIFICATION_LIMIT messages the server
sent unasked — notifications, and its own requests with the client's answers to them (60,000
sampling requests took 1.26 GB and a 43 MB report), and of those no more than NOTIFICATION_BYTES
(1,000 log messages of 1 MB each took a GB, in every report) — and counts the rest, by method,
in an "info" entry at the end of the step they came in. Requests, responses and errors are never
dropped: they are what a step did.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

from mcp_bdd._text import size_text
from mcp_bdd.secrets import dumps_masked, mask, mask_data

__all__ = [
    "APP_BRIDGE_MIME",
    "ARROWS",
    "GATE_PROBE_NAME",
    "HOOKS_MIME",
    "NOTIFICATION_BYTES",
    "NOTIFICATION_LIMIT",
    "SCREENSHOT_MIME",
    "SERVER_MIME",
    "STDERR_MIME",
    "TEARDOWN_MIME",
    "TRANSCRIPT_MIME",
    "Exchange",
    "Kind",
    "Room",
    "Transcript",
    "Weight",
    "evidence",
    "weigh",
]

#: One step's exchanges: a JSON list of `Exchange` dicts.
TRANSCRIPT_MIME = "application/vnd.mcp-bdd.transcript+json"
#: the tool, prompt and resource name `mcp-bdd check` asks for to see how a server answers an
#: unknown one: its requests are the gate's, and the report's coverage map leaves them out
GATE_PROBE_NAME = "mcp_bdd_check_no_such_name_9f3c"
#: Exchanges the before hooks caused (before_scenario, a server started by a hook), before the steps.
HOOKS_MIME = "application/vnd.mcp-bdd.transcript+json; phase=hooks"
#: Exchanges after the steps: after_scenario hooks and teardown (sessions closed, servers stopped).
TEARDOWN_MIME = "application/vnd.mcp-bdd.transcript+json; phase=teardown"
#: A server's identity and surface as seen during the run (see `session.ServerSurface`).
SERVER_MIME = "application/vnd.mcp-bdd.server+json"
#: The last lines of a server's stderr, attached to the failing step: {"server": ..., "text": ...}.
STDERR_MIME = "application/vnd.mcp-bdd.stderr+json"
#: An MCP App as a step left it: a screenshot (PNG, bounded), beside the bridge messages the step saw
#: ({"app": ..., "messages": [...], ...}; JSON, shown as text).
SCREENSHOT_MIME = "image/png"
APP_BRIDGE_MIME = "application/vnd.mcp-bdd.app-bridge+json"

Kind = Literal[
    "request",  # client -> server request (payload: params)
    "response",  # server -> client result (payload: raw result as sent)
    "error",  # request failed: JSON-RPC error, timeout, connection lost (payload: {code, message, data})
    "notification",  # server -> client notification (payload: params)
    "server_request",  # server -> client request: sampling, elicitation, roots (payload: params)
    "client_response",  # what the client answered to a server_request
    "fake",  # traffic of a fake dependency (payload: kind-specific, e.g. an HTTP request received)
    "info",  # anything else worth showing (server started, session opened ...)
]


#: Notifications a scenario's transcript keeps; later ones are counted (the module doc says why).
NOTIFICATION_LIMIT = 1000
#: ... and how much of them, as JSON (`weigh`): each kept one is in every report of the run
NOTIFICATION_BYTES = 16 * 1024 * 1024
#: what a server sends unasked: kept up to the limit (the client's answer to a request, with it)
_UNASKED = frozenset({"notification", "server_request"})

#: How each kind reads in failure messages and in the report: the direction of the message.
ARROWS: dict[str, str] = {
    "request": "→",
    "response": "←",
    "error": "✗",
    "notification": "⇠",
    "server_request": "⇠?",
    "client_response": "→!",
    "fake": "⟂",
    "info": "·",
}


@dataclass(frozen=True)
class Exchange:
    seq: int
    kind: Kind
    server: str
    method: str
    payload: Any
    at: float  # wall clock, seconds since the epoch
    duration_ms: float | None = None
    related: int | None = None  # seq of the request this answers / belongs to

    def to_json(self) -> dict[str, object]:
        """The exchange as a JSON-ready dict, secrets *not* masked: `evidence` masks them.

        Not dataclasses.asdict: it deep-copies every payload, which costs more than the whole
        MCP call for an in-memory server.
        """
        return {
            "seq": self.seq,
            "kind": self.kind,
            "server": self.server,
            "method": self.method,
            "payload": self.payload,
            "at": self.at,
            "duration_ms": self.duration_ms,
            "related": self.related,
        }

    def summary(self, limit: int = 600) -> str:
        arrow = ARROWS[self.kind]
        body = mask(json.dumps(mask_data(self.payload), ensure_ascii=False, default=str))
        if len(body) > limit:
            body = f"{body[:limit]}… ({len(body)} chars)"
        took = f" ({self.duration_ms:.1f} ms)" if self.duration_ms is not None else ""
        return f"{arrow} [{self.server}] {self.method}{took} {body}"


def weigh(payload: object) -> int:
    """The length of `payload` as ASCII JSON: what bounds the messages a transcript or a timeline
    keeps by size, not only by count. Never less than its UTF-8 bytes (a character outside ASCII
    is a 6-character escape, 2-4 bytes in UTF-8), so a bound in MB is one in bytes. One the encoder
    cannot write (nested past its recursion limit) weighs nothing: its count still bounds it."""
    try:
        return len(json.dumps(payload, default=str))
    except (ValueError, RecursionError):
        return 0


def evidence(items: list[Exchange]) -> bytes:
    """Exchanges as evidence leaves the process (an attachment): a JSON array, secrets masked."""
    return dumps_masked([item.to_json() for item in items]).encode()


class Weight:
    """`weigh(payload)`, taken at most once however many bounds ask (a notification goes to the
    transcript and to the timeline), and only when one of them may still keep it: a flood past
    both bounds is counted, not encoded."""

    __slots__ = ("_payload", "_size")

    def __init__(self, payload: object) -> None:
        self._payload = payload
        self._size = -1

    @property
    def size(self) -> int:
        if self._size < 0:
            self._size = weigh(self._payload)
        return self._size


class Room:
    """Room for the first messages of a scenario: `count` of them, `size` of them at most (as
    `weigh`s). The first that does not fit closes it, so the kept ones stay "the first N"; its
    owner counts the rest. One rule for the transcript and the steps' timeline.

    Not locked: its owner calls `admit` under its own lock, after `weight` outside it (a large
    message takes milliseconds to weigh)."""

    def __init__(self, count: int, size: int) -> None:
        self.count = count
        self.size = size
        self.clear()

    def clear(self) -> None:
        self._kept = 0
        self._bytes = 0
        self.open = self.count > 0

    def weight(self, weight: Weight) -> int:
        """What the next message weighs for this room: nothing once the room is closed."""
        return weight.size if self.open else 0

    def admit(self, size: int) -> bool:
        """Whether one more message of `size` is kept; the first that is not closes the room."""
        if self.open and self._kept < self.count and self._bytes + size <= self.size:
            self._kept += 1
            self._bytes += size
            return True
        self.open = False
        return False


class Transcript:
    """Append-only record of one scenario's exchanges, drained step by step."""

    def __init__(
        self, notification_limit: int = NOTIFICATION_LIMIT, notification_bytes: int = NOTIFICATION_BYTES
    ) -> None:
        self._lock = threading.Lock()
        self._items: list[Exchange] = []
        self._drained = 0
        self._room = Room(notification_limit, notification_bytes)  # for what a server sends unasked
        self._last_answer = 0.0  # see `last_answer`
        self._unrecorded: dict[str, dict[str, int]] = {}  # server -> method -> counted, not kept
        self._reported: dict[str, dict[str, int]] = {}  # server -> what its last "info" entry counted

    def record(
        self,
        kind: Kind,
        server: str,
        method: str,
        payload: object = None,
        *,
        duration_ms: float | None = None,
        related: int | None = None,
        weight: Weight | None = None,
    ) -> Exchange:
        """`weight`: the payload's, when a timeline weighs it too (it is taken once)."""
        unasked = kind in _UNASKED
        size = self._room.weight(weight or Weight(payload)) if unasked else 0
        with self._lock:
            if kind != "request":
                self._last_answer = time.monotonic()
            # the answer to a request not kept is not kept either; the rest past the limit are counted
            kept = bool(related) if kind == "client_response" else not unasked or self._count_in(server, method, size)
            if not kept:
                return Exchange(0, kind, server, method, payload, time.time(), duration_ms, related)  # seq 0
            return self._append(kind, server, method, payload, duration_ms, related)

    def _count_in(self, server: str, method: str, size: int) -> bool:
        """One more unasked message of `size` (under the lock): whether it is kept, or only counted
        past the limits (the first that does not fit ends the keeping: "the first N" stays true)."""
        if self._room.admit(size):
            return True
        by_method = self._unrecorded.setdefault(server, {})
        by_method[method] = by_method.get(method, 0) + 1
        return False

    def _append(
        self, kind: Kind, server: str, method: str, payload: object, duration_ms: float | None, related: int | None
    ) -> Exchange:
        item = Exchange(len(self._items) + 1, kind, server, method, payload, time.time(), duration_ms, related)
        self._items.append(item)
        return item

    def _count_unrecorded(self) -> None:
        """An "info" entry per server for the notifications counted since its last one (under the
        lock): how many since then, by method, and how many in the scenario so far."""
        for server, by_method in self._unrecorded.items():
            total = sum(by_method.values())
            before = self._reported.get(server, {})
            if total > sum(before.values()):
                self._reported[server] = dict(by_method)
                payload = {
                    "notifications_not_recorded": total - sum(before.values()),
                    "by_method": {m: n - before.get(m, 0) for m, n in by_method.items() if n > before.get(m, 0)},
                    "in_the_scenario_so_far": total,
                    "why": (
                        f"a scenario's transcript keeps its first {self._room.count} notifications, "
                        f"{size_text(self._room.size)} of them at most (and requests of the server's, "
                        "with the client's answers)"
                    ),
                }
                self._append("info", server, "notifications", payload, None, None)

    def last_answer(self) -> float:
        """When (time.monotonic) the last answer came — a response, an error, a notification, kept
        or only counted: a session that keeps getting answers is at work (a listing of many
        pages), not stalled. A request's own record does not count: nothing came back yet."""
        return self._last_answer

    @property
    def items(self) -> list[Exchange]:
        with self._lock:
            return list(self._items)

    def drain(self) -> list[Exchange]:
        """What was recorded since the last drain (one step's worth)."""
        with self._lock:
            self._count_unrecorded()
            new = self._items[self._drained :]
            self._drained = len(self._items)
            return new

    def tail(self, n: int = 6, server: str | None = None) -> str:
        """The last `n` exchanges as text, for failure messages."""
        items = [i for i in self.items if server is None or i.server == server]
        return "\n".join(i.summary() for i in items[-n:])
