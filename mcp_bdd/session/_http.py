"""HTTP answers bounded by `max_message_bytes`, as stdio lines are (servers/_framing.py).

Why: httpx2 reads a JSON body whole, so a server that answered a POST with an endless chunked
`application/json` body made the client buffer it until `startup_timeout` ended the wait
(1.2 GB in 8 s); and the SDK cut every SSE event at its own fixed 1 MiB, however large the
limit (Streamable HTTP lets us lift that cap, legacy SSE does not: `SDK_SSE_EVENT_CAP`). Every
response a session's HTTP client gets passes through `BoundedTransport` instead:

- The answer to a JSON-RPC request (a Streamable HTTP POST) is read here, up to the limit,
  before the SDK sees it. Past the limit the connection is dropped, and the SDK gets a JSON-RPC
  error for that request instead, marked as a protocol violation (`PROTOCOL_MARK`): the step
  fails at once with a ProtocolViolation that says what to raise, and the transcript has it.
- An SSE stream is long-lived: a limit on its total would end every long session. It is
  forwarded one whole event at a time instead, each bounded by its bytes since the last blank
  line. An event past the limit is dropped to its end, and the request it answered (the POST's
  own, or the id it shows at its start or its end) gets the same error event in its place; an
  event that answers nothing the client waits for (a notification) is recorded and skipped.
- Any other body (a DELETE's, a legacy SSE POST's 202) is counted as it is read, and raises
  `MessageTooLarge` past the limit.
- A Streamable HTTP POST that carries a request and gets `202 Accepted` will get no answer on
  it: 202 acknowledges a notification or a response. The SDK then made up an error that read as
  the server's ("JSON-RPC error -32600: server answered a request with 202 Accepted", and the
  tip "the server rejected the call"). The request gets a protocol-violation error that says
  what happened and what to do instead, and its id is kept (`accepted`): the answer such a
  server sends later on its GET stream (the HTTP+SSE transport's way) is told apart from a
  second answer. The transcript keeps the status and content type the server sent (`SERVER_SENT`).
- So with every other answer to a request's POST that is no JSON-RPC answer, for which the SDK
  made up an error code of its own (`_no_answer`); and a POST whose response cannot be parsed is
  recorded with its cause, since the SDK says only "Connection closed".
- A same-origin 307 or 308 (a trailing-slash redirect) is left to the SDK to follow, but not round
  a loop: one back to a URL the request was sent to already, or past the client's `max_redirects`
  (where the SDK gave up and made up a -32600 of its own), stands as the request's answer, a
  protocol violation naming the route (`_loop`).

Memory stays about the limit: what is held of one message, plus one read. The limit counts
what a message holds, not what crossed the wire: a gzip or deflate body is inflated here, one
64 KiB piece at a time, before it is counted (httpx2 would inflate it whole: 1 MiB of gzipped
zeros is 1 GiB). Other codings (br, zstd: only when their modules are installed) are counted
compressed. A body that does not inflate fails its request as a protocol violation too.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import ssl
import uuid
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp.shared.message import SessionMessage

from mcp_bdd._sdk import RequestId, TransportStreams, answer_key, redirect_target
from mcp_bdd._text import size_text
from mcp_bdd.config import Config
from mcp_bdd.errors import ProtocolViolation
from mcp_bdd.servers import ID_VALUE, NON_JSON_NUMBER, NON_JSON_NUMBER_FIX, PROTOCOL_MARK, holds_non_json_number
from mcp_bdd.session._outcome import REFUSAL_MARK, Refusal
from mcp_bdd.session._sse_events import QUOTE, Endpoint, EndpointRefused, Events, endpoint_in, event_data

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectSendStream

__all__ = [
    "ACCEPTED_KEEP",
    "DEFAULT_LIMIT",
    "SDK_SSE_EVENT_CAP",
    "SERVER_SENT",
    "BoundedTransport",
    "Inbox",
    "MessageTooLarge",
    "client_factory",
]

DEFAULT_LIMIT: int = Config.model_fields["max_message_bytes"].default
#: `mcp.client.sse` reads its stream with the SDK's default `max_event_size` and offers no way to
#: change it: over legacy SSE no event larger than this can arrive, whatever the limit says
SDK_SSE_EVENT_CAP = 1024 * 1024
_SAID = 120  # bytes of a body that was no answer, quoted in the failure itself
_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's own client's, for a factory call that names none
_SSE = "text/event-stream"
#: a request's POST refused for its credentials: the server's answer, not a broken one (`Refusal`)
_REFUSALS = (401, 403)
#: `response.extensions[SERVER_SENT]`: the status, content type and headers the server sent, where
#: a response stands in for its answer ({"status": 202, "content_type": "text/plain", "headers": {...}});
#: None where it stands in for no answer at all (a POST whose connection broke, `_post_broke`)
SERVER_SENT = "mcp_bdd.server_sent"
#: request ids kept of those a server accepted with 202 (to name their late answers), and refusals
#: kept for their requests (`_keep`)
ACCEPTED_KEEP = 4096
#: the id of a JSON-RPC message as one of its first keys (no object or array opened before it) ...
_FIRST_ID = re.compile(rb'data: ?\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"id"\s*:\s*' + ID_VALUE)
#: ... or as the last key of the outermost object
_LAST_ID = re.compile(rb'"id"\s*:\s*' + ID_VALUE + rb"\s*\}\s*$")
#: an SSE event's `retry:` field (milliseconds; its line ends in CR, LF or both), and the least
#: mcp-bdd lets the SDK wait before reconnecting
_RETRY = re.compile(rb"(?:^|[\r\n])retry: ?(\d+)(?=[\r\n]|$)")
MIN_RETRY_MS = 250
#: `request.extensions[_ROUTE]`: the URLs a POST was sent to before this one, redirect by redirect
#: (httpx2 hands a request's extensions on to the request that follows its redirect), to tell a loop
_ROUTE = "mcp_bdd.route"
_ROUTE_SHOWN = 4  # URLs named of a route, before its last
_MAX_REDIRECTS = 20  # httpx2's default `max_redirects`, for a transport not built by `client_factory`

_K = TypeVar("_K")
_V = TypeVar("_V")


class Refused(Protocol):
    """Records what the transport refused, or why a request's exchange broke (`request`: its method)."""

    def __call__(self, message: str, request: str | None = None) -> None: ...


class MessageTooLarge(ProtocolViolation):
    """A response body (or one SSE event) grew past `max_message_bytes`: refused, not read whole."""


class BoundedTransport(httpx2.AsyncBaseTransport):
    """A transport whose responses never hold more than `limit` bytes of one message.

    `answers_on_post`: a POST's body is the answer to the request it carries (Streamable HTTP);
    over legacy SSE every answer comes on the GET stream, and a POST's body is only counted.
    `on_refused(message, request=None)` records a refusal that fails no request (the transcript's
    "transport" error), or names the request whose exchange failed (the SDK then says only that
    the connection closed).
    `accepted` gets the id (`answer_key`) and method of every request the server answered with 202;
    `refusals` each request's POST refused with 401/403, by the token its stand-in error carries;
    `inbox` (legacy SSE) the errors of requests whose POST failed, for the session's read stream.
    `max_redirects`: the client's, as many redirects in a row as the SDK follows.
    """

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        *,
        server: str,
        limit: int,
        answers_on_post: bool,
        on_refused: Refused,
        accepted: dict[RequestId, str] | None = None,
        refusals: dict[str, Refusal] | None = None,
        inbox: Inbox | None = None,
        max_redirects: int = _MAX_REDIRECTS,
    ) -> None:
        self.inner = inner
        self.inbox = inbox
        self.max_redirects = max_redirects
        self.accepted = accepted if accepted is not None else {}
        self.refusals = refusals if refusals is not None else {}
        self.server = server
        self.limit = limit
        self.answers_on_post = answers_on_post
        self.event_limit = limit if answers_on_post else min(limit, SDK_SSE_EVENT_CAP)
        self.on_refused = on_refused

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        carried = _request_message(request) if self.answers_on_post else {}
        answers = _request_id(carried)
        try:
            response = await self.inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if not self.answers_on_post and request.method == "POST":
                broke = self._post_broke(request, exc)
                if broke is not None:
                    return broke
            elif answers is not None:  # the SDK says only "Connection closed": the transcript says why
                self.on_refused(_post_broke_text(request, exc), request=str(carried["method"]))
            raise
        stream = _inflated(response)
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        followed = request.method == "POST" and self._followed(request, response)
        if not self.answers_on_post and request.method == "POST" and response.status_code >= 300 and not followed:
            failed = await self._post_failed(request, response, stream, kind)
            if failed is not None:
                return failed
        if answers is not None and response.status_code == 202:
            return await self._answer_accepted(response, stream, answers, str(carried["method"]))
        if answers is not None and _not_an_answer(response.status_code, kind) and not followed:
            return await self._no_answer(request, response, stream, answers, str(carried["method"]), kind)
        if kind == _SSE:
            events = Events(
                stream, self.event_limit, self._event_refusal(request, answers), self._event_screen(answers)
            )
            if answers is not None and self.answers_on_post:
                events.unanswered = self._stream_ended(request, answers, str(carried["method"]))
            legacy_get = not self.answers_on_post and request.method == "GET"
            response.stream = (
                Endpoint(events, request.url, self.server, self.on_refused, self.inbox) if legacy_get else events
            )
        elif answers is not None and kind == "application/json":
            return await self._read_answer(request, response, stream, answers)
        else:
            response.stream = _Counted(stream, self.limit, lambda: self._refuse(request, "body"))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def message(self, request: httpx2.Request, what: str, limit: int) -> str:
        """What was refused, where, and what to do: raise the limit, or fix the server.

        `what`: "answer" (the body that answers a request), "body" (any other), "event" (one SSE event)."""
        url = _public(request.url)
        amount = f"more than {size_text(limit)}"
        if what == "event":
            said = f'The server "{self.server}" sent an SSE event of {amount} on {request.method} {url}'
        else:
            said = f'The server "{self.server}" answered {request.method} {url} with {amount}'
        if limit < self.limit:
            return (
                f"{said}: the SDK's SSE client accepts no larger event, whatever max_message_bytes says "
                f"({size_text(self.limit)}). Serve it over streamable HTTP for larger messages; otherwise the "
                "server never ends its event."
            )
        return (
            f"{said} (max_message_bytes = {self.limit}): mcp-bdd stopped reading there rather than hold it "
            "all. If a message that large is expected, raise max_message_bytes in [tool.mcp-bdd] (or -D "
            f"max_message_bytes=N); otherwise the server never ends its {'event' if what == 'event' else 'answer'}."
        )

    def _followed(self, request: httpx2.Request, response: httpx2.Response) -> bool:
        """Whether the SDK follows this answer to a POST (`redirect_target`) and it leads on, not
        round a loop (`_loop`); the request that follows then carries the route so far (`_ROUTE`)."""
        if redirect_target(request, response) is None or _loop(request, response, self.max_redirects) is not None:
            return False
        request.extensions[_ROUTE] = _route(request)
        return True

    def _refuse(self, request: httpx2.Request, what: str) -> str:
        message = self.message(request, what, self.limit)
        self.on_refused(message)
        return message

    async def _read_answer(
        self, request: httpx2.Request, response: httpx2.Response, stream: httpx2.AsyncByteStream, answers: RequestId
    ) -> httpx2.Response:
        """The whole answer, or past the limit, a JSON-RPC error for `answers` (the request's id) in its place."""
        chunks: list[bytes] = []
        size = 0
        message = ""
        try:
            async for chunk in stream:
                size += len(chunk)
                if size > self.limit:
                    message = self.message(request, "answer", self.limit)
                    break
                chunks.append(chunk)
            else:
                why = _not_a_response(b"".join(chunks))
                if why is None:
                    response.stream = _Read(chunks, stream)
                    return response
                method = _request_message(request).get("method", request.method)
                message = (
                    f'The server "{self.server}" answered the {method} request with JSON that is no JSON-RPC '
                    f"answer: {why}"
                )
        except httpx2.DecodingError as exc:
            message = f"The server {self.server!r} answered {request.method} {request.url} with {exc}"
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            raise
        with anyio.CancelScope(shield=True):
            await stream.aclose()  # unread: the connection is dropped, not drained
        head = b"".join(chunks[:2])[:QUOTE]
        return _stand_in(response, _error(answers, message, head), response.status_code, response.extensions)

    async def _answer_accepted(
        self, response: httpx2.Response, stream: httpx2.AsyncByteStream, answers: RequestId, method: str
    ) -> httpx2.Response:
        """A request answered with 202 Accepted: an error for it in the answer's place (module doc)."""
        with anyio.CancelScope(shield=True):
            await stream.aclose()  # "Accepted", or nothing: no answer is in it
        _keep(self.accepted, answer_key(answers), method)
        message = (
            f"answered the {method} request with HTTP 202 Accepted, which acknowledges a notification or a "
            "response: a request's answer must come back on its own POST, as a JSON body or an SSE stream "
            "(Streamable HTTP)"
        )
        if method != "initialize":  # no GET stream before the session is initialized
            message += ". Any answer it sends later, on its GET stream, reaches no waiting request"
        tip = (
            "that is how the older HTTP+SSE transport answers: a server ported from it must return the "
            'result in the POST\'s response; a server that only speaks HTTP+SSE is reached with transport = "sse" '
            "and its /sse URL."
        )
        body = _error(answers, f'The server "{self.server}" {message}.', b"", code=types.INVALID_REQUEST, tip=tip)
        return _answered_for(response, body)

    async def _no_answer(
        self,
        request: httpx2.Request,
        response: httpx2.Response,
        stream: httpx2.AsyncByteStream,
        answers: RequestId,
        method: str,
        kind: str,
    ) -> httpx2.Response:
        """A request's POST answered with something other than a JSON-RPC answer: an HTTP error
        without a JSON-RPC error in its body, a redirect, a web page. The SDK made up a JSON-RPC
        error of its own for it (-32603 "Server returned an error response", -32600 "Unexpected
        content type: text/html", -32601 "Not Found"), which read as the server's, and which "the
        request is rejected with error code -32603" accepted. The request gets an error marked as
        a protocol violation instead, naming the status, the content type and the body's first
        bytes; an HTTP error whose body is a JSON-RPC error is the server's answer, and kept."""
        chunks = await self._head(stream, kind)
        body = b"".join(chunks)
        if self._server_error(kind, body):
            response.stream = _Read(chunks, stream)  # a spec-correct server's error, at any status
            return response
        return _answered_for(response, self._error_for(request, response, body, answers, method, kind))

    async def _post_failed(
        self, request: httpx2.Request, response: httpx2.Response, stream: httpx2.AsyncByteStream, kind: str
    ) -> httpx2.Response | None:
        """Legacy SSE: a request's POST answered with an HTTP error (a 401/403, a 404 for a session
        the server forgot, a 500). The SDK's sender raises on it and stops for good: the request
        waited its whole timeout for an answer that could not come on the GET stream, and every
        later one failed as "connection lost". The request's error goes onto the session's read
        stream at once instead (`inbox`), as over Streamable HTTP, and the sender gets a 200 it
        lets pass; so does the POST of a notification or of the client's answer to a server's
        request, which fails no request, recorded as a transport error. None: no inbox."""
        if self.inbox is None or not self.inbox.open:
            return None
        carried = _request_message(request)
        answers = _request_id(carried)
        body = b"".join(await self._head(stream, kind))
        if answers is None:  # a notification, or the client's answer: nothing waits for it
            what, _ = _what_came(request, response, kind, legacy=True, budget=self.max_redirects)
            said = f". Its body begins: {body[:_SAID].decode('utf-8', 'replace')!r}" if body.strip() else ""
            self.on_refused(f'The server "{self.server}" answered the POST of {_posted(carried)} with {what}{said}')
        elif self._server_error(kind, body):
            self.inbox.put(_for_request(body, answers))  # the server's own error, for this request
        else:
            method = str(carried["method"])
            self.inbox.fail(answers, method, self._error_for(request, response, body, answers, method, kind))
        return _answered_for(response, b"")

    def _post_broke(self, request: httpx2.Request, exc: httpx2.TransportError) -> httpx2.Response | None:
        """Legacy SSE: a POST whose connection broke (reset, closed without an answer, refused). The
        SDK's sender raises and stops for good, as on an HTTP error (`_post_failed`): the request
        waited its whole timeout, where over Streamable HTTP it fails at once. It fails at once here
        too, as the SDK fails it there ("Connection closed", the cause recorded for the session to
        name), and the sender gets a response that stands for nothing the server sent (`SERVER_SENT`
        None), so a server still running answers the next request. None: no inbox."""
        if self.inbox is None or not self.inbox.open:
            return None
        carried = _request_message(request)
        answers = _request_id(carried)
        if answers is None:  # a notification, or the client's answer: nothing waits for it
            url = _public(request.url)
            failed = f"{type(exc).__name__}: {exc}"
            self.on_refused(f'The POST of {_posted(carried)} to the server "{self.server}" ({url}) failed: {failed}')
        else:
            method = str(carried["method"])
            self.on_refused(_post_broke_text(request, exc), request=method)
            closed = {"code": types.CONNECTION_CLOSED, "message": "Connection closed"}  # as the SDK's own
            self.inbox.fail(answers, method, _jsonrpc_error(answers, closed))
        return httpx2.Response(200, request=request, extensions={SERVER_SENT: None})

    async def _head(self, stream: httpx2.AsyncByteStream, kind: str) -> list[bytes]:
        """The start of a body that is no answer: all of a JSON one up to the limit (it may be the
        server's own JSON-RPC error, `_server_error`), enough of any other to quote."""
        return await _head_of(stream, self.limit if kind == "application/json" else QUOTE)

    def _server_error(self, kind: str, body: bytes) -> bool:
        """Whether an HTTP answer that is no JSON-RPC answer by its status is still the server's own
        JSON-RPC error (a spec-correct server's error, at any status), kept as the answer."""
        return kind == "application/json" and len(body) <= self.limit and _is_error_answer(body)

    def _error_for(
        self,
        request: httpx2.Request,
        response: httpx2.Response,
        body: bytes,
        answers: RequestId,
        method: str,
        kind: str,
    ) -> bytes:
        """The error a request gets for an HTTP answer that is none: a refusal (401/403), or one
        marked as a protocol violation naming the status, the content type and the body's start."""
        if response.status_code in _REFUSALS:  # the server's answer: said as what it is, not as a broken one
            refusal = Refusal(
                response.status_code,
                response.headers.get("www-authenticate", "")[:QUOTE],
                body[:QUOTE].decode("utf-8", "replace"),
            )
            message = f'The server "{self.server}" refused the {method} request: {refusal.said()}'
            return _jsonrpc_error(
                answers, {"code": types.INVALID_REQUEST, "message": message, "data": self._kept(refusal)}
            )
        what, tip = _what_came(request, response, kind, legacy=not self.answers_on_post, budget=self.max_redirects)
        message = f'The server "{self.server}" answered the {method} request with {what}: not a JSON-RPC answer'
        if body.strip():
            message += f". Its body begins: {body[:_SAID].decode('utf-8', 'replace')!r}"
        return _error(answers, message, body[:QUOTE], code=types.INVALID_REQUEST, tip=tip)

    def _kept(self, refusal: Refusal) -> dict[str, str]:
        """The stand-in error's data: a token only this transport knows, under which `refusal` is
        kept for the session (`Refusal.taken`). A server can write the mark into an error of its
        own; it cannot guess the token, so its error is never taken for a refusal."""
        token = uuid.uuid4().hex
        _keep(self.refusals, token, refusal)  # taken as each request fails: only a cancelled one stays
        return {"mcp_bdd": REFUSAL_MARK, "token": token}

    def _event_screen(self, answers: RequestId | None) -> Callable[[bytes], bytes | None]:
        """`screen(event)` for an SSE stream, the screen every whole event passes: what to pass on in
        its place, or None for the event as it is. A `retry:` below MIN_RETRY_MS is raised to it. A
        `message` event the SDK cannot read becomes an error event for the request it answers
        (`answers`, the POST's own request; else the id in it): the SDK made up a -32700 "Failed to
        parse SSE message" for it on a POST's stream (taken for the server's error), and on legacy
        SSE's stream dropped it, and the request waited out its timeout."""

        said_retry = False

        def screen(event: bytes) -> bytes | None:
            nonlocal said_retry
            retry = _RETRY.search(event)
            if retry is not None and int(retry.group(1)) < MIN_RETRY_MS:
                # `retry: 1` and a stream that ends: the SDK reconnected 1,700 times in 5 s, at full CPU
                if not said_retry:  # once a stream: a server may prime every event with it
                    said_retry = True
                    self.on_refused(
                        f"the server asked to reconnect its SSE stream after {int(retry.group(1))} ms; mcp-bdd "
                        f"waits {MIN_RETRY_MS} ms (a stream that ends at once would be reopened in a busy loop)"
                    )
                event = event[: retry.start(1)] + str(MIN_RETRY_MS).encode() + event[retry.end(1) :]
            data = event_data(event)
            why = None if data is None else _not_a_message(data)
            if data is None or why is None:
                return event if retry is not None else None
            request_id = answers if answers is not None or b'"method"' in data[:QUOTE] else _id_of(event)
            message = f'The server "{self.server}" sent an SSE message event that is no JSON-RPC message: {why}'
            if request_id is None:
                self.on_refused(message)
                return event if retry is not None else None
            return b"event: message\ndata: " + _error(request_id, message, data[:QUOTE]) + b"\n\n"

        return screen

    def _stream_ended(self, request: httpx2.Request, answers: RequestId, method: str) -> Callable[[str], bytes]:
        """`unanswered(cause)` for a POST's SSE stream: the error event for its request when the stream
        ends without answering it. The SDK made up a -32000 "SSE stream ended without a response" for
        that, which read as the server's own error (and passed "rejected with error code -32000")."""

        def unanswered(cause: str) -> bytes:
            message = (
                f'The server "{self.server}" ended the SSE stream answering {method} (POST {_public(request.url)}) '
                f"without an answer: {cause}."
            )
            self.on_refused(message, request=method)
            tip = (
                "a POST's event stream must carry the JSON-RPC answer to its request, each event ended by a blank "
                "line, and end only after it; check the server's SSE writer (and any proxy between, which may cut "
                "or buffer streams)."
            )
            return (
                b"event: message\ndata: " + _error(answers, message, b"", code=types.INTERNAL_ERROR, tip=tip) + b"\n\n"
            )

        return unanswered

    def _event_refusal(
        self, request: httpx2.Request, answers: RequestId | None
    ) -> Callable[[bytes, bytes | None], bytes | None]:
        """`refuse(head, tail)` for an SSE stream: the error event that replaces an event past the
        limit, or None. Called with the event's start (tail None) when it passes the limit, and
        again with its end when it ends, if the first call returned None."""
        limit = self.event_limit

        def refuse(head: bytes, tail: bytes | None) -> bytes | None:
            message = self.message(request, "event", limit)
            if not self.answers_on_post and endpoint_in(head) is not None:
                raise EndpointRefused(
                    self.server,
                    f"sent an `endpoint` event of more than {size_text(limit)} on GET {request.url}",
                    "legacy SSE's endpoint event names the URL to POST requests to: a few bytes. Fix the server.",
                )
            request_id: object = answers
            if request_id is None and b'"method"' not in head:  # a request or a notification answers nothing
                request_id = _id_of(head) if tail is None else _id_of(tail, last=True)
            if request_id is None:
                if tail is None:
                    self.on_refused(message)
                return None
            return b"event: message\ndata: " + _error(request_id, message, head[:QUOTE]) + b"\n\n"

        return refuse


#: the headers that describe a body, dropped from a response whose body is replaced
_BODY_HEADERS = (b"content-length", b"content-encoding", b"transfer-encoding", b"content-type")


def _stand_in(response: httpx2.Response, body: bytes, status: int, extensions: Mapping[str, object]) -> httpx2.Response:
    """`response` with a JSON `body` of mcp-bdd's in place of the server's (its other headers kept)."""
    headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _BODY_HEADERS]
    headers.append((b"content-type", b"application/json"))
    return httpx2.Response(status, headers=headers, content=body, extensions=extensions)


class Inbox:
    """Messages for a session's read stream that no server stream carries: over legacy SSE, the
    error of a request whose POST failed (`BoundedTransport._post_failed`, `_post_broke`). Open
    while `merged` runs: it merges them with what the SDK's SSE client reads. `failed`: the id
    (`answer_key`) and method of each request it failed with an error of mcp-bdd's, so that the
    server's own answer to it on the GET stream, before or after, is not "answered twice"."""

    def __init__(self) -> None:
        self._send: MemoryObjectSendStream[SessionMessage | Exception] | None = None
        self._tasks: TaskGroup | None = None
        self.failed: dict[RequestId, str] = {}
        #: the `endpoint` event's data once it came (`Endpoint`): a handshake that then timed out
        #: waited for its answer, not for the endpoint
        self.endpoint: str | None = None

    @property
    def open(self) -> bool:
        return self._send is not None

    def fail(self, request_id: RequestId, method: str, error: bytes) -> None:
        """Deliver mcp-bdd's `error` for a request whose POST failed, remembering it (`failed`)."""
        _keep(self.failed, answer_key(request_id), method)
        self.put(error)

    def put(self, message: bytes) -> None:
        """Deliver `message` (never blocking the transport); dropped if the stream ended meanwhile."""
        if self._send is None or self._tasks is None:
            return
        parsed = types.jsonrpc_message_adapter.validate_json(message, by_name=False)
        self._tasks.start_soon(_deliver, self._send, SessionMessage(parsed))

    @contextlib.asynccontextmanager
    async def merged(self, transport: AbstractAsyncContextManager[TransportStreams]) -> AsyncIterator[TransportStreams]:
        """`transport` (the SDK's sse_client) with this inbox's messages among what it reads. When
        the server's stream ends, so does the merged one (the inbox closes with it): a request
        waiting then fails at once as "connection closed", as it did before the merge."""
        async with transport as (read, write):
            send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

            async def pump() -> None:
                # the session's reader may stop first (its dispatcher closes `receive` as it ends,
                # before the transport exits): what the server sends then has no one to go to
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    async with send:
                        async for message in read:
                            await send.send(message)
                await self._close()

            async with anyio.create_task_group() as tasks, receive:
                self._send, self._tasks = send.clone(), tasks
                tasks.start_soon(pump)
                try:
                    yield receive, write
                finally:
                    await self._close()
                    tasks.cancel_scope.cancel()

    async def _close(self) -> None:
        send, self._send = self._send, None
        if send is not None:
            await send.aclose()


async def _deliver(send: MemoryObjectSendStream[SessionMessage | Exception], message: SessionMessage) -> None:
    """One inbox message onto the merged stream; gone with it if the stream ended first."""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        await send.send(message)


async def _head_of(stream: httpx2.AsyncByteStream, limit: int) -> list[bytes]:
    """A body's pieces up to a little past `limit` bytes, the stream closed (not drained)."""
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in stream:
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                break
    except httpx2.HTTPError:
        pass  # what came is quoted; the body's own fault does not matter here
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()
    return chunks


def _for_request(error: bytes, request_id: RequestId) -> bytes:
    """A server's JSON-RPC error, given the id of the request it answers (a server may send null)."""
    message = json.loads(error)
    return json.dumps({**message, "id": request_id}).encode()


def _answered_for(response: httpx2.Response, body: bytes) -> httpx2.Response:
    """A 200 with mcp-bdd's `body` where the server gave no answer (a 202, a redirect, a web page),
    keeping what the server sent for the transcript (`SERVER_SENT`)."""
    sent = {
        "status": response.status_code,
        "content_type": response.headers.get("content-type"),
        "headers": {k.lower(): v for k, v in response.headers.items()},  # the auth steps read them
    }
    # not its reason phrase either: the stand-in is a 200
    extensions = {k: v for k, v in response.extensions.items() if k != "reason_phrase"} | {SERVER_SENT: sent}
    return _stand_in(response, body, 200, extensions)


def trusted_context() -> ssl.SSLContext:
    """What the sessions' HTTP clients verify servers' certificates with: one context per source
    of trusted certificates (`SSL_CERT_FILE`, `SSL_CERT_DIR`, as they are when the session starts),
    shared, as an SSLContext is meant to be. Loading the system's CA bundle costs more CPU than
    the rest of an HTTP session's start, and every scenario starts one."""
    return _context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()  # reads the same two variables


def client_factory(
    *,
    server: str,
    limit: int | None,
    sse: bool,
    on_refused: Refused,
    accepted: dict[RequestId, str] | None = None,
    refusals: dict[str, Refusal] | None = None,
    inbox: Inbox | None = None,
) -> Callable[..., httpx2.AsyncClient]:
    """`make(headers=, timeout=, auth=, event_hooks=)`: an httpx2 client whose every transport is a
    `BoundedTransport` (the shape of the SDK's `httpx_client_factory`).

    Wrapped after the client is built, not passed as `transport=`: httpx2 turns off the proxies
    of the environment (HTTPS_PROXY, NO_PROXY) for a client given its own transport, and a
    remote server behind a proxy must stay reachable.
    """

    def wrap(inner: httpx2.AsyncBaseTransport, max_redirects: int) -> httpx2.AsyncBaseTransport:
        return BoundedTransport(
            inner,
            server=server,
            limit=limit or DEFAULT_LIMIT,
            answers_on_post=not sse,
            on_refused=on_refused,
            accepted=accepted,
            refusals=refusals,
            inbox=inbox,
            max_redirects=max_redirects,
        )

    def make(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        event_hooks: dict[str, list[Callable[..., Awaitable[None]]]] | None = None,
    ) -> httpx2.AsyncClient:
        client = httpx2.AsyncClient(
            headers=headers, timeout=timeout or _TIMEOUT, auth=auth, event_hooks=event_hooks, verify=trusted_context()
        )
        client._transport = wrap(client._transport, client.max_redirects)
        client._mounts = {
            pattern: None if t is None else wrap(t, client.max_redirects) for pattern, t in client._mounts.items()
        }
        return client

    return make


#: the codings inflated here (httpx2 names gzip's old alias too), and how much of one message
#: one step of inflating yields at most
_INFLATE_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}
_PIECE = 64 * 1024


def _inflated(response: httpx2.Response) -> httpx2.AsyncByteStream:
    """The response's body stream, inflated here when it is gzip or deflate (its coding headers
    removed, so httpx2 does not inflate it again)."""
    stream = response.stream
    assert isinstance(stream, httpx2.AsyncByteStream)
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding not in _INFLATE_WBITS:
        return stream
    del response.headers["content-encoding"]
    response.headers.pop("content-length", None)
    return _Inflate(stream, coding)


class _Inflate(httpx2.AsyncByteStream):
    """A gzip or deflate body inflated one bounded piece at a time: the limits downstream count
    what the message holds, and stop reading long before a small bomb has grown whole."""

    def __init__(self, inner: httpx2.AsyncByteStream, coding: str) -> None:
        self.inner = inner
        self.coding = coding

    async def __aiter__(self) -> AsyncIterator[bytes]:
        inflater = zlib.decompressobj(_INFLATE_WBITS[self.coding])
        first = True
        try:
            async for chunk in self.inner:
                if first and self.coding == "deflate" and not _zlib_header(chunk):
                    inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send it
                first = False
                data = chunk
                while data:
                    piece = inflater.decompress(data, _PIECE)
                    data = inflater.unconsumed_tail
                    if piece:
                        yield piece
            rest = inflater.flush()
        except zlib.error as exc:
            raise httpx2.DecodingError(f"a {self.coding} body that does not inflate ({exc})") from exc
        if rest:
            yield rest

    async def aclose(self) -> None:
        await self.inner.aclose()


def _zlib_header(data: bytes) -> bool:
    """Whether `data` starts as RFC 1950 says (deflate, and a header check that divides by 31)."""
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


class _Read(httpx2.AsyncByteStream):
    """A body read ahead (within the limit): its chunks, then the end; closing closes the connection's stream."""

    def __init__(self, chunks: list[bytes], inner: httpx2.AsyncByteStream) -> None:
        self.chunks = chunks
        self.inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks, self.chunks = self.chunks, []
        for chunk in chunks:
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Counted(httpx2.AsyncByteStream):
    """A body passed on as it comes, until it grows past `limit`: then `MessageTooLarge`."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, refused: Callable[[], str]) -> None:
        self.inner = inner
        self.limit = limit
        self.refused = refused

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self.inner:
            size += len(chunk)
            if size > self.limit:
                raise MessageTooLarge(self.refused())
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def _not_an_answer(status: int, kind: str) -> bool:
    """Whether a request's POST got something the SDK would make up an error for: a redirect, an
    HTTP error (unless its body is a JSON-RPC error, looked at in `_no_answer`), a 2xx that is
    neither JSON nor an SSE stream. 401 and 403 too: mcp-bdd gives the SDK no OAuth flow that
    would answer them (credentials are `headers`), so they stand in as a `Refusal`."""
    return status >= 300 or kind not in ("application/json", _SSE)


def _keep(table: dict[_K, _V], key: _K, value: _V) -> None:
    """Keep `value` under `key` as the newest entry of `table`, dropping the oldest past
    ACCEPTED_KEEP: what the transport remembers per request is bounded whatever a server does."""
    table.pop(key, None)
    table[key] = value
    if len(table) > ACCEPTED_KEEP:
        del table[next(iter(table))]


def _is_error_answer(body: bytes) -> bool:
    """Whether `body` is a JSON-RPC error, as the SDK reads one at an HTTP error status."""
    try:
        return isinstance(types.jsonrpc_message_adapter.validate_json(body, by_name=False), types.JSONRPCError)
    except ValueError:
        return False


def _what_came(
    request: httpx2.Request, response: httpx2.Response, kind: str, *, legacy: bool, budget: int
) -> tuple[str, str]:
    """(what the server answered, in words; what to do about it). `legacy`: a POST over HTTP+SSE,
    whose URL the server named in its `endpoint` event (with the session in its query), not `url`.
    `budget`: the client's `max_redirects` (`_loop`)."""
    status = response.status_code
    what = f"HTTP {status} ({kind or 'no content type'})"
    if 300 <= status < 400:
        loop = _loop(request, response, budget)
        if loop is not None:
            return loop
        try:
            location = str(_public(request.url.join(response.headers.get("location", ""))))
        except httpx2.InvalidURL:
            location = repr(response.headers.get("location", "")[:200])  # quoted, not parsed
        return f"HTTP {status}, a redirect to {location}", (
            "the server's `endpoint` event names a POST URL that redirects, and a client follows only a "
            "same-origin 307 or 308: the server must announce the URL it serves (behind a proxy: mind its "
            "mount path or root_path)."
            if legacy
            else "an MCP client does not follow a redirect of its POST: set `url` to the address the server "
            "redirects to (Streamable HTTP servers usually serve /mcp; mind a trailing slash)."
        )
    if status == 404 and (legacy or request.headers.get("mcp-session-id")):
        return f"{what}, for a session it had opened", (
            "the server does not serve the POST URL its `endpoint` event named. Either it no longer knows that "
            "session (the session_id in the URL): it restarted or forgot it, or another worker got the POST "
            "(HTTP+SSE needs sticky sessions: each POST must reach the worker that holds the GET stream); or, "
            "behind a proxy, the path it announces is not the one the proxy serves (mind its mount path or "
            "root_path)."
            if legacy
            else "the server no longer knows the session (its Mcp-Session-Id): it restarted, expired the session, "
            "or another worker got the request (sticky sessions). A session lasts until the client ends it."
        )
    if status >= 500:
        return what, "the server failed on the request: read its logs (the first bytes of its answer are quoted)."
    if status >= 400:
        return what, (
            "a server that refuses a request answers with a JSON-RPC error in an application/json body, so the "
            "client can tell why; read its logs for this one."
        )
    return what, (
        "the answer to a request is application/json or text/event-stream: this URL serves something else "
        "(a web page?). Check the path in `url`: Streamable HTTP servers usually serve /mcp."
    )


def _loop(request: httpx2.Request, response: httpx2.Response, budget: int) -> tuple[str, str] | None:
    """(what the server answered, in words; what to do about it) when `response` redirects a POST
    round a loop, else None. A loop goes back to a URL the request was sent to already (`_route`:
    the SDK would send it there again, and the same redirects would follow), or on past `budget` redirects
    in a row, where the SDK stops following and makes up a -32600 of its own ("Redirect to ... not
    followed"), which "rejected with error code -32600" took for the server's error."""
    if not 300 <= response.status_code < 400:
        return None
    try:
        target = request.url.join(response.headers.get("location", ""))
    except httpx2.InvalidURL:
        return None
    route, status = _route(request), response.status_code
    if target in route and len(route) == 1:
        return f"HTTP {status}, a redirect back to the URL it was sent to ({_public(target)}), a loop", (
            "the server (or a proxy before it) redirects its endpoint to itself: fix that routing rule."
        )
    if target in route:
        return f"HTTP {status}, a redirect back to a URL it was sent to before, a loop: {_shown(route, target)}", (
            "the server (or a proxy before it) redirects its endpoint round a loop (often one rule adds a "
            "trailing slash and another takes it away): fix those routing rules."
        )
    if len(route) > budget and redirect_target(request, response) is not None:
        what = f"a redirect after {len(route) - 1} in a row, as many as the client follows"
        return f"HTTP {status}, {what}: {_shown(route, target)}", (
            "the server (or a proxy before it) redirects its endpoint on and on without answering: fix that "
            "routing rule."
        )
    return None


def _route(request: httpx2.Request) -> tuple[httpx2.URL, ...]:
    """The URLs a POST was sent to, redirect by redirect, this one last (`_ROUTE`)."""
    return (*request.extensions.get(_ROUTE, ()), request.url)


def _shown(route: Sequence[httpx2.URL], target: httpx2.URL) -> str:
    """A redirect route and where it leads, as it may be shown: its first URLs and its last, each
    without credentials or query (`_public`) and cut short; never a long route whole."""
    urls = [str(_public(url))[:QUOTE] for url in (*route, target)]
    if len(urls) > _ROUTE_SHOWN + 1:
        urls[_ROUTE_SHOWN:-1] = [f"... {len(urls) - _ROUTE_SHOWN - 1} more"]
    return " -> ".join(urls)


def _public(url: httpx2.URL) -> httpx2.URL:
    """`url` as it may be shown: without its credentials or query (either may carry a token)."""
    return url.copy_with(userinfo=b"", query=None)


def _post_broke_text(request: httpx2.Request, exc: httpx2.TransportError) -> str:
    """What the transcript says of a request's POST whose connection broke (`Session._gone` reads it)."""
    return f"POST {_public(request.url)} failed: {type(exc).__name__}: {exc}"


def _posted(carried: dict[str, object]) -> str:
    """What a POST that no request waits for carried: a notification, or the client's answer."""
    return f"a {carried['method']} notification" if "method" in carried else "the client's answer"


def _request_id(message: dict[str, object]) -> RequestId | None:
    """The id of a JSON-RPC request (`_request_message`), or None (a notification, a GET, a DELETE)."""
    request_id = message.get("id")
    return request_id if isinstance(request_id, int | str) and not isinstance(request_id, bool) else None


def _request_message(request: httpx2.Request) -> dict[str, object]:
    """The JSON-RPC request (or notification) a POST carries; {} for anything else."""
    if request.method != "POST":
        return {}
    try:
        # a POST that follows a redirect carries its first's body as a stream, unread: read here
        # when that is bytes in memory (the SDK's JSON), which the transport below reads again
        content = request.read() if isinstance(request.stream, httpx2.ByteStream) else request.content
        message = json.loads(content)
    except (httpx2.RequestNotRead, ValueError):
        return {}
    return message if isinstance(message, dict) and "method" in message else {}


def _id_of(event: bytes, *, last: bool = False) -> object:
    """The id of a JSON-RPC response in an SSE event that cannot be parsed whole: the top-level one,
    written first (or, `last`, closing the message), never one inside its result; None when none
    is there, or it is not valid JSON (`0123`)."""
    found = (_LAST_ID if last else _FIRST_ID).search(event)
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None


def _not_a_message(data: bytes) -> str | None:
    """Why an SSE message event's data is no JSON-RPC message the SDK can read, or None."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(data, by_name=False)
    except ValueError:
        return _not_a_response(data)
    if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
        return _no_json_number(data)
    return None  # a request or notification: as over stdio, only an answer fails on NaN


def _not_a_response(body: bytes) -> str | None:
    """Why a JSON answer to a request is not one the SDK can read, or None. The SDK would make up a
    -32700 "Failed to parse JSON response" for it, which reads as the server's own error (and
    "Then the request is rejected with error code -32700" passed on an empty body)."""
    try:
        types.jsonrpc_message_adapter.validate_json(body, by_name=False)
        return _no_json_number(body)
    except ValueError as refused:
        said = str(refused).splitlines()[0][:200]
    if not body.strip():
        return "the body is empty"
    try:
        data = json.loads(body)
    except RecursionError:
        return "it is nested too deep to parse"
    except ValueError:
        return "it is not JSON"
    if isinstance(data, list):
        return "it is a JSON-RPC batch (an array): MCP answers each request with one message"
    return f"it does not fit the JSON-RPC schema (the SDK said: {said})"


def _no_json_number(answer: bytes) -> str | None:
    """Why an answer the SDK reads is no JSON all the same (`holds_non_json_number`), or None."""
    return f"it holds {NON_JSON_NUMBER} ({NON_JSON_NUMBER_FIX})" if holds_non_json_number(answer) else None


def _error(
    request_id: object, message: str, head: bytes, *, code: int = types.PARSE_ERROR, tip: str | None = None
) -> bytes:
    """A JSON-RPC error for `request_id`, marked as one mcp-bdd made up for an unusable answer
    (with what to do about it, `tip`, where the failure's own tip would be too general)."""
    data: dict[str, object] = {"mcp_bdd": PROTOCOL_MARK, "first_bytes": head.decode("utf-8", "replace")}
    if tip:
        data["tip"] = tip
    return _jsonrpc_error(request_id, {"code": code, "message": message, "data": data})


def _jsonrpc_error(request_id: object, error: dict[str, object]) -> bytes:
    """A JSON-RPC error message for `request_id`, as bytes on the wire."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
