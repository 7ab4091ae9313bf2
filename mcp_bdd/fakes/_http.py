"""The fake HTTP service: a real HTTP server on 127.0.0.1 that answers from stubs.

The server under test talks to it over real sockets, so every HTTP client library works
unchanged. It is a small ASGI app (starlette's Request/Response) served by uvicorn inside the
run's event loop (the blocking portal's thread): no thread and no process per fake.

Cost matters because there is one fake per scenario that uses it. We bind the listening socket
ourselves, so `.url` is known before uvicorn runs and the kernel queues early connections, and
`_FakeServer` replaces the two parts of `uvicorn.Server` that poll every 100 ms (the main loop
and the graceful shutdown) with an event and an immediate, bounded shutdown. Creation plus
teardown then costs about a millisecond instead of ~200 ms.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import uvicorn
from anyio.abc import TaskStatus
from anyio.from_thread import BlockingPortal
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from mcp_bdd._text import did_you_mean
from mcp_bdd.errors import UsageError
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["METHODS", "FakeHttpService", "ReceivedRequest", "Stub", "split_target"]

#: The request methods a stub may name (anything else in a step is a typo).
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")

# How long teardown waits for in-flight handlers to notice the shutdown before cancelling them.
_SHUTDOWN_GRACE = 1.0


# uvicorn logs "Started server process" / "Finished server process" at INFO for every fake, which
# behave's log capture would show in every failing scenario. The flag is set in the fake's own
# task (and so in its connections' callbacks): only the fakes' INFO records are dropped, never
# their warnings and errors, nor anything of another uvicorn server in the process.
_IN_FAKE: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_bdd_fake_http", default=False)


class _QuietFakes(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not _IN_FAKE.get()


_uvicorn_logger = logging.getLogger("uvicorn.error")
if not any(isinstance(f, _QuietFakes) for f in _uvicorn_logger.filters):
    _uvicorn_logger.addFilter(_QuietFakes())


def split_target(target: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Split `/search?q=shoes` into the path and its query pairs; the path must start with "/"."""
    if not target.startswith("/"):
        raise UsageError(
            f'The path "{target}" must start with "/": write "/{target}". '
            "Paths of a fake HTTP service are relative to its ${fake.<name>.url}."
        )
    parts = urlsplit(target)
    return parts.path, tuple(parse_qsl(parts.query, keep_blank_values=True))


def check_method(method: str) -> str:
    """The upper-cased method, or a UsageError naming the methods a stub may use."""
    upper = method.upper()
    if upper not in METHODS:
        raise UsageError(f'"{method}" is not an HTTP method. {did_you_mean(upper, METHODS, "method")}')
    return upper


@dataclass(frozen=True)
class Stub:
    """One canned answer: `method path[?query]` -> status, body, headers (maybe late, maybe none)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    drop: bool = False

    @property
    def key(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        return self.method, self.path, tuple(sorted(self.query))

    @property
    def target(self) -> str:
        if not self.query:
            return self.path
        return self.path + "?" + "&".join(f"{k}={v}" for k, v in self.query)

    def matches(self, method: str, path: str, query: Iterable[tuple[str, str]]) -> bool:
        # The stub's query pairs must all be present; the request may carry more.
        return method == self.method and path == self.path and set(self.query) <= set(query)

    def describe(self) -> str:
        outcome = "drop the connection" if self.drop else str(self.status)
        delay = f" after {self.delay:g} s" if self.delay else ""
        return f"{self.method} {self.target} -> {outcome}{delay}"


@dataclass(frozen=True)
class ReceivedRequest:
    """A request the fake received, as the verification steps and failure messages see it."""

    method: str
    path: str
    query: str  # raw query string, without "?"
    headers: Mapping[str, str]  # names lower-cased
    body: str
    status: int | None  # None: the connection was dropped
    stub: str | None  # `Stub.describe()` of the stub that answered; None: unstubbed (404)
    at: float = field(default_factory=time.time)

    @property
    def target(self) -> str:
        return f"{self.path}?{self.query}" if self.query else self.path

    @property
    def query_pairs(self) -> list[tuple[str, str]]:
        return parse_qsl(self.query, keep_blank_values=True)

    def json(self) -> Any:
        """The body parsed as JSON (raises ValueError when it is not JSON)."""
        return json.loads(self.body)

    def describe(self, limit: int = 300) -> str:
        outcome = "dropped" if self.status is None else str(self.status)
        body = self.body if len(self.body) <= limit else f"{self.body[:limit]}… ({len(self.body)} chars)"
        text = f"{self.method} {self.target} -> {outcome}"
        return f"{text}  body: {body}" if body else text

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": dict(self.headers),
            "body": self.body,
            "status": self.status,
            "stub": self.stub,
        }


class FakeHttpService:
    """A real HTTP server on a free 127.0.0.1 port that answers from stubs and records every request.

    Placeholder attributes: `url` (`http://127.0.0.1:PORT`) and `port`.
    """

    kind = "http"
    ATTRS: tuple[str, ...] = ("url", "port")

    def __init__(self, name: str, *, portal: BlockingPortal, transcript: Transcript) -> None:
        self.name = name
        self._portal = portal
        self._transcript = transcript
        self._lock = threading.Lock()  # stubs/requests are touched from the behave and portal threads
        self._arrived = threading.Condition(self._lock)  # notified on each request: "receives ... within"
        self._stubs: dict[tuple[str, str, tuple[tuple[str, str], ...]], Stub] = {}
        self._requests: list[ReceivedRequest] = []
        self._closed = False

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            # As uvicorn does when it binds: connections the fake closed linger in TIME_WAIT, which
            # must not keep the port from being bound again once the fake is gone.
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._sock.bind(("127.0.0.1", 0))
            self._sock.listen(128)
            self._sock.setblocking(False)
            self.port: int = self._sock.getsockname()[1]
            self._app = _App(self)
            config = uvicorn.Config(
                self._app,
                interface="asgi3",
                lifespan="off",
                http="h11",
                ws="none",
                log_config=None,  # never reconfigure the user's logging
                access_log=False,
                proxy_headers=False,
                server_header=False,
            )
            self._server = _FakeServer(config, self._app)
            self._future: Future[None]
            self._future, _ = portal.start_task(self._serve, name=f"fake HTTP service {name}")
        except BaseException:
            self._sock.close()
            raise

    # -- placeholders -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- stubs ------------------------------------------------------------------------------------
    def stub(
        self,
        method: str,
        target: str,
        *,
        status: int = 200,
        body: object = b"",  # str, bytes, or anything json.dumps writes
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        delay: float = 0.0,
        drop: bool = False,
    ) -> Stub:
        """Answer `method target` (target: path with an optional `?query`) from now on.

        A later stub for the same method, path and query replaces the earlier one, so a scenario
        can override its Background. A body that is not str/bytes is sent as JSON; a str body that
        parses as JSON is sent as `application/json`, an HTML document as `text/html`, an XML one
        as `application/xml`, other text as `text/plain`. A `content-type` header always wins.
        """
        path, query = split_target(target)
        if not 100 <= status <= 599:
            raise UsageError(f"{status} is not an HTTP status code (100-599).")
        if delay < 0:
            raise UsageError(f"A delay cannot be negative (got {delay:g} seconds).")
        raw, content_type = _encode_body(body)
        pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
        if content_type and not any(k.lower() == "content-type" for k, _ in pairs):
            pairs.insert(0, ("content-type", content_type))
        new = Stub(check_method(method), path, query, status, raw, tuple(pairs), delay, drop)
        with self._lock:
            self._stubs.pop(new.key, None)  # re-insert: the listing shows the newest last
            self._stubs[new.key] = new
        return new

    def amend(self, method: str, target: str, **changes: Any) -> Stub:
        """Change an existing stub (headers are added to its own); UsageError if there is none."""
        path, query = split_target(target)
        key = (check_method(method), path, tuple(sorted(query)))
        with self._lock:
            old = self._stubs.get(key)
            if old is None:
                known = [s.describe() for s in self._stubs.values()]
                raise UsageError(
                    f'The fake HTTP service "{self.name}" has no stub for {key[0]} {target} to change. '
                    + (f"Its stubs: {'; '.join(known)}. " if known else "It has no stubs yet. ")
                    + f'Tip: stub it first: Given the fake HTTP service "{self.name}" responds to '
                    f'{key[0]} "{target}" with status 200'
                )
            if "headers" in changes:
                extra = changes["headers"]
                extra_pairs = list(extra.items()) if isinstance(extra, Mapping) else list(extra)
                names = {k.lower() for k, _ in extra_pairs}
                changes["headers"] = tuple([(k, v) for k, v in old.headers if k.lower() not in names] + extra_pairs)
            new = replace(old, **changes)
            self._stubs[key] = new
            return new

    def reset(self) -> None:
        """Forget every stub and recorded request (a shared fake starting a new scenario)."""
        with self._lock:
            self._stubs.clear()
            self._requests.clear()

    @property
    def stubs(self) -> list[Stub]:
        with self._lock:
            return list(self._stubs.values())

    def _find_stub(self, method: str, path: str, query: list[tuple[str, str]]) -> Stub | None:
        with self._lock:
            candidates = [s for s in self._stubs.values() if s.matches(method, path, query)]
        # The most specific stub wins (most query pairs); among equals, the newest.
        return max(reversed(candidates), key=lambda s: len(s.query), default=None)

    # -- what it received ---------------------------------------------------------------------
    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    def wait_for(self, arrived: Callable[[list[ReceivedRequest]], bool], timeout: float) -> bool:
        """Block until `arrived(the requests so far)` holds, at most `timeout` seconds; whether it did.

        Woken by each request as it is recorded (no polling): a step waits for a server that calls
        on its own schedule exactly as long as it takes, and no longer than `timeout`.
        """
        with self._arrived:
            return self._arrived.wait_for(lambda: arrived(list(self._requests)), timeout)

    def _record(self, request: ReceivedRequest) -> None:
        with self._arrived:
            self._requests.append(request)
            self._arrived.notify_all()
        self._transcript.record("fake", self.name, f"{request.method} {request.target}", request.to_json())

    # -- lifecycle ------------------------------------------------------------------------------
    async def _serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        _IN_FAKE.set(True)
        self._server.on_started = task_status.started
        await self._server.serve(sockets=[self._sock])

    def close(self) -> None:
        """Stop the server: the port is free and no connection is left open when this returns."""
        if self._closed:
            return
        self._closed = True
        try:
            self._portal.call(self._server.request_exit)
            self._future.result(timeout=10)
        finally:
            self._sock.close()  # uvicorn closes it too; closing twice is harmless

    def __repr__(self) -> str:
        return f"<FakeHttpService {self.name!r} {self.url}>"


def _encode_body(body: object) -> tuple[bytes, str | None]:
    if isinstance(body, bytes):
        return body, ("application/octet-stream" if body else None)
    if isinstance(body, str):
        if not body:
            return b"", None
        try:
            json.loads(body)
        except ValueError:
            return body.encode(), _text_type(body)
        return body.encode(), "application/json"
    return json.dumps(body).encode(), "application/json"


_HTML = re.compile(r"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|(?:html|head|body)[\s>])", re.IGNORECASE | re.DOTALL)
_XML = re.compile(r"\s*<(?:\?xml[\s?]|[A-Za-z_][\w.:-]*[\s/>])")


def _text_type(body: str) -> str:
    """The content type a person means by a text body: an HTML page, an XML document, else plain text.

    Why sniff: a stub of a web page or an XML API written as a doc string should reach the server
    under test as what it is, without an extra headers step (servers branch on the content type).
    """
    if _HTML.match(body):
        return "text/html; charset=utf-8"
    if _XML.match(body) and body.rstrip().endswith(">"):
        return "application/xml; charset=utf-8"
    return "text/plain; charset=utf-8"


#: the bytes of a request body the fake keeps (the rest is counted): a 400 MB upload from the server
#: under test took 2 GB of behave's memory, and kept 900 MB of it for the scenario
BODY_KEPT = 16 * 1024 * 1024


async def _kept_body(request: Request) -> str:
    """A request's body as text, its first `BODY_KEPT` bytes; past that, what is left is counted."""
    kept: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        if size < BODY_KEPT:
            kept.append(chunk[: BODY_KEPT - size])
        size += len(chunk)
    text = b"".join(kept).decode("utf-8", errors="replace")
    if size > BODY_KEPT:
        text += f"… ({size} bytes in all; the fake keeps the first {BODY_KEPT // (1024 * 1024)} MiB)"
    return text


class _App:
    """The ASGI app: match a stub, record the request, answer (or wait, or hang up)."""

    def __init__(self, service: FakeHttpService) -> None:
        self.service = service
        self.closing: asyncio.Event | None = None  # created in the loop by _FakeServer.main_loop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off; websockets are disabled
            return
        request = Request(scope, receive)
        body = await _kept_body(request)
        method, path, query = request.method, request.url.path, request.url.query
        stub = self.service._find_stub(method, path, parse_qsl(query, keep_blank_values=True))
        headers = {k.lower(): v for k, v in request.headers.items()}
        # Recorded on arrival, before any delay: a scenario that checks "received 1 request"
        # right after the server under test gave up waiting must see it.
        self.service._record(
            ReceivedRequest(
                method=method,
                path=path,
                query=query,
                headers=headers,
                body=body,
                status=None if stub is not None and stub.drop else (stub.status if stub else 404),
                stub=stub.describe() if stub else None,
            )
        )
        if stub is None:
            known = [s.describe() for s in self.service.stubs]
            target = f"{path}?{query}" if query else path
            await JSONResponse(
                {
                    "error": f'The fake HTTP service "{self.service.name}" has no stub for {method} {target}',
                    "stubs": known,
                },
                status_code=404,
            )(scope, receive, send)
            return
        if stub.delay and not await self._sleep(stub.delay):
            await self._hang_up(scope)  # the fake is shutting down: do not hold teardown for the delay
            return
        if stub.drop:
            await self._hang_up(scope)
            return
        await Response(stub.body, status_code=stub.status, headers=dict(stub.headers))(scope, receive, send)

    async def _sleep(self, seconds: float) -> bool:
        """Wait `seconds`; False when the fake started shutting down meanwhile."""
        if self.closing is None:
            await asyncio.sleep(seconds)
            return True
        try:
            await asyncio.wait_for(self.closing.wait(), timeout=seconds)
        except TimeoutError:
            return True
        return False

    async def _hang_up(self, scope: Scope) -> None:
        """Close this request's connection without a response (the client sees it dropped)."""
        client = tuple(scope.get("client") or ())
        connections = self.service._server.server_state.connections
        for connection in list(connections):
            if tuple(getattr(connection, "client", None) or ()) == client:
                connection.transport.abort()
                # connection_lost runs on the next loop iterations; once it has, uvicorn knows the
                # client is gone and does not log "returned without starting response" / send a 500.
                for _ in range(10):
                    if connection not in connections:
                        break
                    await asyncio.sleep(0)
                return


class _FakeServer(uvicorn.Server):
    """uvicorn.Server without its 100 ms polls: an event ends the main loop, shutdown is immediate."""

    def __init__(self, config: uvicorn.Config, app: _App) -> None:
        super().__init__(config)
        self.app = app
        self.on_started: Callable[[], object] = lambda: None
        self._exit: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._exit = asyncio.Event()
        self.app.closing = asyncio.Event()
        await self.on_tick(0)  # sets the Date header once, as uvicorn does every second
        self.on_started()
        if not self.should_exit:
            await self._exit.wait()

    def request_exit(self) -> None:
        """Ask the server to stop; runs in the loop thread (through `portal.call`)."""
        self.should_exit = True
        if self._exit is not None:
            self._exit.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Order: stop accepting first (so nothing new arrives), then wake handlers that sleep in a
        # stub's delay (they hang up their own connection), then close idle keep-alive
        # connections, and only then wait, briefly, for what is still running.
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        if self.app.closing is not None:
            self.app.closing.set()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        deadline = time.monotonic() + _SHUTDOWN_GRACE
        while self.server_state.tasks and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        for task in list(self.server_state.tasks):
            task.cancel()
        for connection in list(self.server_state.connections):
            connection.transport.abort()
        while self.server_state.connections and time.monotonic() < deadline + 0.5:
            await asyncio.sleep(0)
        for server in self.servers:
            await server.wait_closed()
