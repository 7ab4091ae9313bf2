"""SSE framing for the session's HTTP transports: whole events, their fields, and the legacy
endpoint event (a part of `_http`).

Why its own module: an SSE stream is long-lived and arrives in chunks that split events anywhere,
so it is passed on one whole event at a time, each bounded by `max_message_bytes` (`Events`);
and a legacy SSE stream first names, in an `endpoint` event, the URL to post requests to, which
must be the stream's own origin (`Endpoint`). What it does not cover: what a request's answer
is (`_http.BoundedTransport`), and the SDK's own parsing of the events passed on.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Protocol
from urllib.parse import urljoin, urlparse

import httpx2

from mcp_bdd.errors import ServerStartError

__all__ = ["QUOTE", "Endpoint", "EndpointRefused", "Events", "endpoint_in", "event_data"]


class EndpointHolder(Protocol):
    """Where the endpoint a legacy SSE stream named is told (`_http.Inbox`)."""

    endpoint: str | None


QUOTE = 300  # bytes of a message quoted in an error
_HEAD = 4096  # bytes kept of a refused event's start (its id, whether it is a request)
_TAIL = 256  # ... and of its end (SDKs that write the id last: TypeScript)
#: two line ends in a row (CRLF, CR or LF each): the end of an SSE event
_BOUNDARY = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")
#: one line end (CRLF, CR or LF): where an SSE event's fields part
_LINE_END = re.compile(rb"\r\n|\r|\n")


class Events(httpx2.AsyncByteStream):
    """An SSE stream passed on one whole event at a time, each at most `limit` bytes (see module doc).

    Whole events, because an event past the limit is only known once part of it has come: the
    parser above must not have seen that part when the error event takes its place.
    """

    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        limit: int,
        refuse: Callable[[bytes, bytes | None], bytes | None],
        screen: Callable[[bytes], bytes | None] = lambda event: None,
    ) -> None:
        self.inner = inner
        self.limit = limit
        self.refuse = refuse
        self.screen = screen  # what replaces a whole event (`BoundedTransport._event_screen`), or None
        #: a POST's stream: the error event for its request if the stream ends without answering it
        self.unanswered: Callable[[str], bytes] | None = None
        self.resumable = False  # an event carried an id: the SDK resumes the stream with a GET
        self.answered = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        held: list[bytes] = []
        broke: str | None = None
        try:
            async for ready in self._whole_events(held):
                yield ready
        except httpx2.TransportError as exc:
            if self.unanswered is None:
                raise
            broke = f"its HTTP body broke off before it was complete ({type(exc).__name__}: {exc})"
        rest = b"".join(held)
        if self.unanswered is not None and not self.answered and not self.resumable:
            if rest:
                broke = broke or f"{len(rest)} bytes of an event were never ended by a blank line"
            yield self.unanswered(broke or "the stream ended with no event that answers the request")
        elif rest and broke is None:
            yield rest  # an event the stream ended in: the parser above decides what it is worth

    def _passed(self, event: bytes) -> bytes:
        """`event`, a whole one passed on; on a POST's stream, noted: whether it answers the request,
        or makes the stream resumable (an id)."""
        if self.unanswered is not None:
            if any(name == b"id" and value for name, value in _fields(event)):
                self.resumable = True
            data = event_data(event)
            if data is not None and b'"method"' not in data[:QUOTE] and (b'"result"' in data or b'"error"' in data):
                self.answered = True
        return event

    async def _whole_events(self, held: list[bytes]) -> AsyncIterator[bytes]:
        """Whole events, each bounded; what is left of an unfinished one stays in `held`."""
        size = 0
        skipping = False  # inside an event past the limit: dropped to its end
        replaced = False  # ... whose error event was already passed on
        head = tail = edge = b""
        async for chunk in self.inner:
            ready: list[bytes] = []
            start = 0
            # `edge`: the previous chunk's last bytes, for a line end split between two chunks
            ends = (
                [m.end() - len(edge) for m in _BOUNDARY.finditer(edge + chunk)]
                if b"\n" in chunk or b"\r" in chunk
                else []
            )
            for end in [e for e in ends if e > 0] + [-1]:
                piece = chunk[start:] if end < 0 else chunk[start:end]
                complete = end >= 0
                start = end
                if not skipping and size + len(piece) > self.limit:
                    head = _head([*held, piece])
                    held.clear()
                    size, skipping, tail = 0, True, b""
                    event = self.refuse(head, None)
                    if event is not None:
                        ready.append(self._passed(event))
                        replaced = True
                if skipping:
                    tail = (tail + piece)[-_TAIL:]
                    if complete:
                        event = None if replaced else self.refuse(head, tail)
                        if event is not None:
                            ready.append(self._passed(event))
                        skipping = replaced = False
                    continue
                held.append(piece)
                size += len(piece)
                if complete:
                    event = b"".join(held)
                    ready.append(self._passed(self.screen(event) or event))
                    held.clear()
                    size = 0
            edge = chunk[-3:]
            if ready:
                yield b"".join(ready)
        if skipping:
            held.clear()

    async def aclose(self) -> None:
        await self.inner.aclose()


class EndpointRefused(httpx2.SSEError, ServerStartError):
    """Legacy SSE's `endpoint` event is missing, not a URL, on another origin, or too large: the
    session cannot start. An SSEError, because that is what the SDK's SSE reader lets through at
    once; a ServerStartError, because that is what it means (and so the SDK's log of it is one
    line, not a traceback: `_logs`). `what` follows 'The MCP server "name"' in the failure; `tip`
    says what to do."""

    def __init__(self, server: str, what: str, tip: str) -> None:
        self.what = what
        self.tip = tip
        super().__init__(f'The MCP server "{server}" {what}. Tip: {tip}')


class Endpoint(httpx2.AsyncByteStream):
    """Legacy SSE's GET stream, checked for its `endpoint` event (where the client is to POST).

    Why here: given an endpoint on another origin the SDK refuses it rightly, but it hands its
    error to a stream nobody reads yet and hangs until `startup_timeout`, which then says only
    that the handshake did not complete; a stream that ends first fails with "Child exited
    without calling task_status.started()". An EndpointRefused says what the server sent.
    Relies on `Events`, which passes on whole events."""

    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        url: httpx2.URL,
        server: str,
        said: Callable[[str], None],
        inbox: EndpointHolder | None = None,
    ) -> None:
        self.inner = inner
        self.url = url
        self.server = server
        self.said = said  # records what the stream did wrong, without ending it
        self.inbox = inbox  # told the endpoint once it came

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = False
        async for chunk in self.inner:
            if not seen:
                endpoint = endpoint_in(chunk)
                if endpoint is not None:
                    self._check(endpoint)
                    seen = True
                    if self.inbox is not None:
                        self.inbox.endpoint = endpoint
                    chunk = _drop_endpoints(chunk, keep=1)
            elif (again := endpoint_in(chunk)) is not None:
                # the SDK takes one endpoint a stream: a second one crashed its reader ("called
                # 'started' twice") and the session with it, blamed on the server going away
                self.said(
                    f"the server sent a second `endpoint` event on its SSE stream at {self.url} "
                    f"({again!r:.200}); a stream has one endpoint, the first: this one was ignored"
                )
                chunk = _drop_endpoints(chunk)
            if chunk:
                yield chunk
        if not seen:
            raise EndpointRefused(
                self.server,
                f"closed its SSE stream at {self.url} before sending its `endpoint` event (the URL to POST "
                "requests to)",
                "is this a legacy SSE MCP endpoint? A streamable HTTP server is configured with "
                'transport = "streamable-http".',
            )

    def _check(self, endpoint: str) -> None:
        quoted = repr(endpoint[:300])
        try:
            joined = urljoin(str(self.url), endpoint)
            target, origin = urlparse(joined), urlparse(str(self.url))
            usable = not any(ord(c) < 0x21 or ord(c) == 0x7F for c in endpoint)
        except ValueError:  # a host that is no host ("[" opens an IPv6 address that never closes)
            usable = False
        if not usable:
            raise EndpointRefused(
                self.server,
                f"announced an endpoint that is not a URL on its SSE stream at {self.url}: {quoted}",
                "the `endpoint` event's data must be the path (or URL) to POST requests to. Fix the server.",
            )
        if (target.scheme, target.netloc) != (origin.scheme, origin.netloc):
            raise EndpointRefused(
                self.server,
                f"announced an endpoint on another origin than its SSE stream at {self.url}: {joined[:300]!r}; "
                "mcp-bdd (like the SDK) does not POST requests there",
                "the server must announce a path on the scheme, host and port the client used (behind a proxy: "
                "the proxy's); set the URL it announces in its own configuration.",
            )

    async def aclose(self) -> None:
        await self.inner.aclose()


def _events_of(chunk: bytes) -> list[bytes]:
    """Whole SSE events, each with its blank line (what `Events` passes on, one or several)."""
    events, start = [], 0
    for match in _BOUNDARY.finditer(chunk):
        events.append(chunk[start : match.end()])
        start = match.end()
    return [*events, chunk[start:]] if start < len(chunk) else events


def _drop_endpoints(chunk: bytes, keep: int = 0) -> bytes:
    """`chunk` without its endpoint events but the first `keep` (the stream's one endpoint)."""
    kept = []
    for event in _events_of(chunk):
        if endpoint_in(event) is not None:
            if keep == 0:
                continue
            keep -= 1
        kept.append(event)
    return b"".join(kept)


def endpoint_in(chunk: bytes) -> str | None:
    """The data of the first `endpoint` event in `chunk` (whole SSE events, or the start of one
    too large to keep), or None."""
    if b"endpoint" not in chunk:
        return None  # most chunks, once the stream runs: not parsed
    for event in _BOUNDARY.split(chunk):
        fields = _fields(event)
        if any(name == b"event" and value.decode("utf-8", "replace").strip() == "endpoint" for name, value in fields):
            return b"\n".join(value for name, value in fields if name == b"data").decode("utf-8", "replace")
    return None


def _fields(event: bytes) -> list[tuple[bytes, bytes]]:
    """An SSE event's fields as (name, value), as SSE parsers read them: one space after the colon
    is not the value's; blank lines and comments (a line that starts with a colon) are no fields.
    Split on SSE's own line ends only: str.splitlines() also splits on U+2028 inside JSON text."""
    fields = []
    for line in _LINE_END.split(event):
        if line and not line.startswith(b":"):
            name, _, value = line.partition(b":")
            fields.append((name, value[1:] if value.startswith(b" ") else value))
    return fields


def event_data(event: bytes) -> bytes | None:
    """The data of one whole SSE event if it is a `message` event with data (what the SDK parses as
    JSON-RPC), else None (an `endpoint` event, a keep-alive, a priming event with only an id)."""
    kind, data = b"message", []
    for name, value in _fields(event):
        if name == b"event":
            kind = value
        elif name == b"data":
            data.append(value)
    joined = b"\n".join(data)
    return joined if joined and kind == b"message" else None  # the SDK skips an empty one (a priming event)


def _head(pieces: list[bytes]) -> bytes:
    """The first `_HEAD` bytes of `pieces`, without joining them all."""
    out: list[bytes] = []
    size = 0
    for piece in pieces:
        out.append(piece[: _HEAD - size])
        size += len(out[-1])
        if size >= _HEAD:
            break
    return b"".join(out)
