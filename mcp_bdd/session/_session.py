"""`Session`: the synchronous facade over the async SDK client that the steps drive.

Why synchronous: behave runs each `async def` step in a new task, and an MCP session opened in
one task cannot be closed in another. So steps stay synchronous and every session is owned by one
task in the event loop of the run's anyio blocking portal (`_lifetime`), entered and exited
there; steps reach it by the hops of `_hop`, whose waits have deadlines even when the loop is blocked.

Why raw requests: a testing tool must see what the server sent. Requests go through
`ClientSession.send_request(..., TypeAdapter(dict))` so the SDK's own output-schema validation
cannot hide a bad result; steps validate `structuredContent` themselves when asked. Every
request and what came back is recorded in the scenario's transcript (`_send`).

Composed parts: `ClientSide` (the persona's server-to-client handlers), `Timeline`
(notifications), `_listen` (2026-07-28 listen streams); private SDK internals only via `mcp_bdd._sdk`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp import Client
from mcp.client.extension import ClientExtension, advertise
from mcp.shared.exceptions import MCPError
from mcp_types.methods import CACHEABLE_METHODS, is_input_required
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError

from mcp_bdd._loop import ServerExited, as_exited, is_exit
from mcp_bdd._sdk import (
    DISCOVER_TIMEOUT_SECONDS,
    Answer,
    RequestId,
    Transport,
    absorb_tool_listing,
    answer_key,
    restamp_log_level,
    run_input_required,
    send_stamped,
    unsupported_version,
    watch_repeated_answers,
)
from mcp_bdd._text import produced_by
from mcp_bdd.errors import (
    ExpectationFailed,
    ProtocolViolation,
    RequestRefused,
    RequestTimeout,
    ServerErrorResponse,
    ServerStartError,
    UsageError,
    raised,
)
from mcp_bdd.servers import (
    InMemoryServer,
    RunningServer,
    answer_after_202,
    answer_after_failed_post,
    repeated_answer,
)
from mcp_bdd.session._connect_failures import ConnectFailures, said_exit, unfit_handshake
from mcp_bdd.session._hop import STALL_GRACE, Hops, Stalled, hops
from mcp_bdd.session._listen import holding, listen_for_changes
from mcp_bdd.session._outcome import (
    Outcome,
    Refusal,
    dump,
    is_connection_closed,
    is_protocol_violation,
    made_up_tip,
    stands_in,
    unwrap,
)
from mcp_bdd.session._persona import ClientSide, HeaderDeviation, Persona
from mcp_bdd.session._rounds import InputRounds, rounds_allowed
from mcp_bdd.session._tasks import Request, asks_for_task, is_tasks_request, send_as_task, send_tasks_request
from mcp_bdd.session._timeline import Timeline
from mcp_bdd.transcript import Transcript, Weight

if TYPE_CHECKING:
    import httpx2
    from anyio.abc import TaskGroup, TaskStatus
    from anyio.from_thread import BlockingPortal
    from mcp.client.session import IncomingMessage
    from mcp.shared.dispatcher import ProgressFnT

    from mcp_bdd.session._http import Inbox

__all__ = ["HEADER_DEVIATIONS", "Session"]

#: the answer as sent, unvalidated. Left untyped: the SDK binds `send_request`'s result type to a
#: pydantic model, though it takes a TypeAdapter (this dict's) as well
_RAW: Any = TypeAdapter(dict[str, object])
#: the routing headers a client can get wrong on purpose (`Persona.header_deviation`), in words
HEADER_DEVIATIONS: dict[HeaderDeviation, str] = {
    "wrong-method": "an Mcp-Method header that does not match the body",
    "wrong-name": "an Mcp-Name header that does not match the body",
    "no-name": "no Mcp-Name header",
    "wrong-param": "Mcp-Param-* headers that do not match the arguments",
    "wrong-task-name": "an Mcp-Name header that does not match the task id",
}
#: the requests each deviation bends (the rest stay right): a call, a prompt, a read; or, for the
#: task id, the tasks requests that name a task (SEP-2663), so the task itself can be created
_BENT_METHODS = ("tools/call", "prompts/get", "resources/read")
_TASK_NAMED_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
_HINTS = ("ttlMs", "cacheScope")
T = TypeVar("T")
_MAX_PAGES = 1000


#: what to do about a request that got no answer in time, usually (`Session.timeout_tip`)
_SLOW = "raise `timeout` in [tool.mcp-bdd] (or -D timeout=30) if the server is just slow."


class Session(ClientSide, ConnectFailures):
    """One open MCP session with one server, driven from synchronous behave steps."""

    def __init__(
        self,
        name: str,
        server: RunningServer,
        *,
        portal: BlockingPortal,
        transcript: Transcript,
        timeout: float,
        startup_timeout: float,
        protocol: str,
        persona: Persona | None = None,
        log_level: str | None = None,
        max_message_bytes: int | None = None,
    ) -> None:
        self.name = name
        self.server = server
        self.portal = portal
        self.transcript = transcript
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.protocol = protocol
        self.persona = persona or Persona()
        self.log_level = log_level
        self.max_message_bytes = max_message_bytes  # HTTP answers are bounded as stdio lines are (_http)
        self.timeline = Timeline()
        self.client: Client | None = None
        self._cm: Future[None] | None = None  # the portal future of the session's lifetime task
        self.tools: list[dict[str, object]] | None = None
        #: the caching hints (`ttlMs`, `cacheScope`: 2026-07-28) of the last answer to each cacheable
        #: method, as sent: a listing's last page
        self.cache_hints: dict[str, dict[str, object]] = {}
        #: the `Mcp-Session-Id` a streamable HTTP server gave on 2025-11-25 (None: none, or another transport)
        self.http_session_id: str | None = None
        self.resources: list[dict[str, object]] | None = None
        self.templates: list[dict[str, object]] | None = None
        self.prompts: list[dict[str, object]] | None = None
        self.pages: dict[str, int] = {}
        self.sampling_asked = Timeline()  # the scripted server requests, each kind on its own (ClientSide)
        self.elicitation_asked = Timeline()
        self.roots_requests = 0
        self._stamped_level: str | None = None
        self._http_client: httpx2.AsyncClient | None = None
        self._accepted: dict[RequestId, str] = {}  # id (answer_key) -> method of each request answered with 202
        self._inbox: Inbox | None = None  # legacy SSE: the errors of requests whose POST failed
        self.refusals: dict[str, Refusal] = {}  # token -> a request refused with 401/403 (session._http)
        self.problems: list[str] = []  # usage errors raised inside callbacks, surfaced by the next step
        self.surface_dirty = True
        self.lost = False  # the connection closed under a request: the server went away
        self._stderr_at_connect = 0  # bytes of the server's stderr when the connect began
        #: progress notifications the SDK passed on, whatever their token (the ones a request asked for
        #: are in the timeline, from its callback): how many, and the first few, for a failure to quote
        self.progress_received = 0
        self.progress_first: list[dict[str, object]] = []
        #: the lifetime's task group while connected: 2026-07-28 listen streams run in it (see _listen)
        self.streams: TaskGroup | None = None

    # -- connecting ------------------------------------------------------------------------------
    @property
    def hops(self) -> Hops:
        """Into the portal's event loop, where the session lives (see `_hop` for why not the portal's calls)."""
        return hops(self.portal)

    @property
    def mode(self) -> str:
        return self.protocol

    def open(self) -> None:
        """Connect (handshake or discover) within `startup_timeout`; failures name the cause."""
        self._headers_can_bend()
        client = Client(
            self.server.target() if self.server.url is None else self._http_target(),
            mode=self.protocol,
            cache=None,
            # A callback is passed only when the scenario declared it: the client then advertises
            # exactly those capabilities (a server may offer more tools to a client that can sample).
            sampling_callback=self._on_sampling if self.persona.sampling_text is not None else None,
            elicitation_callback=self._on_elicitation if self.persona.elicits() else None,
            sampling_capabilities=self.persona.sampling_capabilities(),
            list_roots_callback=self._on_roots if self.persona.roots is not None else None,
            message_handler=self._on_message,
            log_level=self.log_level,  # type: ignore[arg-type]
            extensions=_extensions(self.persona),
        )
        self.client = client
        started = time.monotonic()
        self._stderr_at_connect = self.server.stderr_size()
        connect = self.transcript.record(
            "info",
            self.name,
            "connect",
            {"transport": self.server.transport, "protocol": self.protocol, "server": self.server.display},
        )
        try:
            future, said = self.hops.start(self._lifetime, client, started, deadline=self.startup_timeout + STALL_GRACE)
            error = said if isinstance(said, BaseException) else None  # what `_lifetime` started with
        except KeyboardInterrupt:
            self.server.stop()
            self._close_http_client()
            raise  # Ctrl-C (or SIGTERM) during the handshake stops the run, not just this step
        except BaseException as exc:
            error = exc
        if error is not None:
            cause = unwrap(error)
            elapsed = time.monotonic() - started
            self.transcript.record(
                "error",
                self.name,
                "connect",
                {"message": f"{type(cause).__name__}: {cause}"},
                duration_ms=elapsed * 1000,
            )
            message = self._connect_failure(cause, elapsed, connect.seq)  # before stop(): the exit code is its own
            self.server.stop()
            self._close_http_client()
            bad_output = self.server.evidence is not None and self.server.evidence.bad_lines > 0
            failure = ProtocolViolation if _broke_the_handshake(cause) or bad_output else ServerStartError
            raise failure(message) from None
        self._cm = future
        try:
            self._after_connect(started)
        except BaseException:
            self.close()  # a session that could not be set up must not outlive its scenario
            raise

    def _headers_can_bend(self) -> None:
        """A persona that gets a routing header wrong needs streamable HTTP, where headers exist."""
        bend = self.persona.header_deviation
        if bend is not None and self.server.transport != "streamable-http":
            self.server.stop()
            raise UsageError(
                f'The client is to send {HEADER_DEVIATIONS[bend]}, but "{self.name}" runs over '
                f"{self.server.transport}: routing headers exist only over streamable HTTP. Start it with "
                f'Given the MCP server "{self.name}" is running over streamable HTTP.'
            )

    def _after_connect(self, started: float) -> None:
        self._set_probe_noise_aside()
        self._record_unscripted_requests()
        if self.log_level is not None and self.is_legacy:
            self.set_log_level(self.log_level)

    def _set_probe_noise_aside(self) -> None:
        """protocol = "auto" asks `server/discover` first; a server of the 2025-11-25 era (an mcp<2
        Python server) may log a wall of validation errors for it before it answers the handshake.
        That stderr is no failure's cause: failures quote what comes after, and the run says once
        how to spare the probe."""
        assert self.client is not None
        if self.protocol != "auto" or self.client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return
        size = self.server.stderr_size()
        if size <= self._stderr_at_connect:
            return
        self.server.stderr_quoted_from = size
        self.transcript.record(
            "info", self.name, "discover probe", {"stderr_bytes_set_aside": size - self._stderr_at_connect}
        )
        self.server.probe_notice = (
            f'the MCP server "{self.name}" wrote {size - self._stderr_at_connect} bytes to its stderr while it '
            'answered the server/discover probe of protocol = "auto", then spoke the 2025-11-25 handshake (an '
            "mcp<2 server logs a validation error for the probe). Failures quote its stderr from after the "
            f'handshake. Tip: set protocol = "legacy" in [servers.{self.name}] to skip the probe.'
        )

    def _record_connected(self, client: Client, started: float) -> None:
        info = client.server_info
        self.transcript.record(
            "info",
            self.name,
            "connected",
            {
                "protocol": client.protocol_version,
                "server_info": dump(info) if info else None,
                "capabilities": dump(client.server_capabilities),
            },
            duration_ms=(time.monotonic() - started) * 1000,
        )

    async def _lifetime(self, client: Client, started_at: float, *, task_status: TaskStatus[object]) -> None:
        """Own the client for the session's whole life, in one task of the portal.

        Entering and exiting in the same task is what anyio requires; the deadline only guards the
        handshake (auto mode alone would wait 10 s on a hung server) and is lifted once connected.
        Listen streams are children of this task (`self.streams`): on 2026-07-28 change
        notifications flow only on them, so the connect-time one opens before the session is
        handed to the steps, in this same portal call, and all of them end before the client does.
        """
        self._closing = anyio.Event()
        started = False
        error: BaseException | None = None
        with anyio.CancelScope(deadline=anyio.current_time() + self.startup_timeout) as scope:
            try:
                async with client, anyio.create_task_group() as streams:
                    if self.protocol in MODERN_PROTOCOL_VERSIONS:
                        await _discover_pinned(client, self.protocol)
                    scope.deadline = math.inf
                    watch_repeated_answers(client.session, self._on_repeated_answer)
                    self._record_connected(client, started_at)
                    self.streams = streams
                    if client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
                        await listen_for_changes(self)
                    started = True
                    task_status.started(None)
                    await self._closing.wait()
                    self.streams = None
                    if holding(self):  # else a cancel only sends a CancelledError through this task
                        streams.cancel_scope.cancel()
            except Exception as exc:
                error = exc
            finally:
                self.streams = None
        if not started:
            task_status.started(error or TimeoutError(f"no handshake within {self.startup_timeout:g} s"))
        elif error is not None and not isinstance(unwrap(error), asyncio.CancelledError):
            raise error

    def _close_http_client(self) -> None:
        """The SDK does not close an httpx client it is given; we do, in the event loop."""
        if self._http_client is not None:
            client, self._http_client = self._http_client, None
            with contextlib.suppress(Exception):
                self.hops.call(client.aclose)

    def _http_target(self) -> Transport:
        import httpx2
        from mcp.client.sse import sse_client
        from mcp.client.streamable_http import streamable_http_client

        from mcp_bdd.session._http import Inbox, client_factory

        assert self.server.url is not None
        sse = self.server.transport == "sse"
        inbox = self._inbox = Inbox() if sse else None  # legacy SSE: a request whose POST failed gets its error there

        def refused(message: str, request: str | None = None) -> None:  # one that fails no request, or why one broke
            payload = {"message": message} if request is None else {"message": message, "request": request}
            self.transcript.record("error", self.name, "transport", payload)

        # every answer bounded by max_message_bytes, as stdio lines are (see _http); every answer's
        # status recorded, over both transports: the auth steps and a refused connect read them
        make = client_factory(
            server=self.name,
            limit=self.max_message_bytes,
            sse=sse,
            on_refused=refused,
            accepted=self._accepted,
            refusals=self.refusals,
            inbox=inbox,
        )
        hooks: dict[str, list[Callable[..., Awaitable[None]]]] = {"response": [self._record_http]}
        if self.persona.header_deviation is not None:
            hooks["request"] = [self._bend_routing_header]
        if inbox is not None:
            factory = functools.partial(make, event_hooks=hooks)
            return inbox.merged(
                sse_client(self.server.url, headers=self.server.headers or None, httpx_client_factory=factory)
            )
        http = make(
            headers=self.server.headers or None, timeout=httpx2.Timeout(self.timeout, read=300), event_hooks=hooks
        )
        self._http_client = http  # the SDK does not close a client it is given: close() does
        # one SSE event is bounded by max_message_bytes in _http, not by the SDK's fixed 1 MiB
        return streamable_http_client(self.server.url, http_client=http, max_sse_event_size=None)

    async def _bend_routing_header(self, request: httpx2.Request) -> None:
        """The persona's wrong routing header (2026-07-28: `Mcp-Method`, `Mcp-Name` mirror the body),
        on the requests that name something: a call, a prompt, a read (or a task, for the task
        id's deviation); the rest stay right."""
        bend = self.persona.header_deviation
        method = request.headers.get("mcp-method")
        bent = _TASK_NAMED_METHODS if bend == "wrong-task-name" else _BENT_METHODS
        if request.method != "POST" or bend is None or method not in bent:
            return
        if bend == "wrong-method":
            request.headers["mcp-method"] = "ping"
        elif bend in ("wrong-name", "wrong-task-name"):
            request.headers["mcp-name"] = "mcp-bdd-not-the-name"
        elif bend == "no-name":
            request.headers.pop("mcp-name", None)
        elif bend == "wrong-param":
            for name in [n for n in request.headers if n.lower().startswith("mcp-param-")]:
                request.headers[name] = "mcp-bdd-not-the-argument"
        self.transcript.record("info", self.name, "header", {"message": f"sent {HEADER_DEVIATIONS[bend]}"})

    async def _record_http(self, response: httpx2.Response) -> None:
        """Every HTTP answer's status (and an error's headers), for the auth steps (401, WWW-Authenticate)."""
        from mcp_bdd.session._http import SERVER_SENT  # loaded with the client (httpx2 only for HTTP servers)

        # what the server sent, also where mcp-bdd's transport stands in for its answer (a 202)
        sent = response.extensions.get(SERVER_SENT, {})
        if sent is None:
            return  # no answer came (a broken POST over SSE): the transcript's transport error says why
        request, status = response.request, sent.get("status", response.status_code)
        given = response.headers.get("mcp-session-id")
        if given is not None and self.http_session_id is None:  # the first one the server gave (2025-11-25)
            self.http_session_id = given[:1000]
        payload: dict[str, object] = {"method": request.method, "url": str(request.url), "status": status}
        kind = sent["content_type"] if "content_type" in sent else response.headers.get("content-type")
        if kind:
            payload["content_type"] = kind  # an HTML page where JSON should be names a wrong URL
        if status >= 300:
            headers = sent["headers"] if "headers" in sent else {k.lower(): v for k, v in response.headers.items()}
            payload["headers"] = {k: v for k, v in headers.items() if k != "set-cookie"}
        self.transcript.record("info", self.name, "http", payload)

    def close(self, *, hurry: bool = False) -> list[str]:
        """Close the session and stop the server; returns the problems (raises only on Ctrl-C).
        `hurry`: the run was interrupted, so a session's task that does not end (an in-process tool
        that shields itself from cancellation) is given 2 s, not 15, before the server is stopped."""
        problems: list[str] = []
        if self._cm is not None:
            future, self._cm = self._cm, None
            limit = 2 if self.hops.stalled or hurry else 15  # a stalled loop may never end it
            try:
                # wake the lifetime task without waiting for the wake-up itself: one hop, then one wait
                self.hops.soon(self._close_soon)
                # `exception`, not `result(timeout=)`: a TimeoutError it raises is the wait's, while the
                # lifetime's own (a teardown's fail_after) is returned, and said like any other failure below
                try:
                    error = future.exception(timeout=limit)
                except TimeoutError:
                    problems.append(self._did_not_close(limit))
                    error = None
                if error is not None:
                    raise error
            except BaseException as exc:
                cause = unwrap(exc)
                if isinstance(cause, KeyboardInterrupt):
                    raise  # Ctrl-C while closing: the run stops; the servers are reaped at its end
                if not isinstance(cause, asyncio.CancelledError | concurrent.futures.CancelledError):
                    problems.append(f'closing the session with "{self.name}": {raised(cause)}')
        self._close_http_client()
        self.server.stop()
        slow = self.server.slow_stop()
        if slow is not None:  # the teardown's evidence: why this scenario took seconds longer
            self.transcript.record("info", self.name, "slow stop", {"message": slow})
        return problems

    def _did_not_close(self, limit: float) -> str:
        """Why a close gave up waiting: the session's task did not end (for an in-process server, its
        lifespan's teardown or a task it started never returned, and may hold the run's loop)."""
        if self.server.transport == "in-memory":
            return (
                f'the session with "{self.name}" did not close within {limit:g} s: its lifespan\'s teardown (or a '
                "task it started) did not return; one that blocks (time.sleep, a synchronous client) holds the run's "
                "event loop, and the next scenario's server cannot start. Tip: make the teardown await with a time "
                "limit (anyio.fail_after), or run the server over stdio, where its process is stopped."
            )
        return (
            f'the session with "{self.name}" did not close within {limit:g} s: the run\'s event loop is busy or '
            "blocked (an in-process server or a fake that does not await); its server was stopped all the same."
        )

    async def _close_soon(self) -> None:
        self._closing.set()

    @property
    def connected(self) -> bool:
        return self._cm is not None

    @property
    def alive(self) -> bool:
        """Connected, the session's task still running, and (if we started one) its process too."""
        return not self.lost and self._cm is not None and not self._cm.done() and self.server.returncode is None

    def adopt_scenario(self, transcript: Transcript, log_level: str | None) -> None:
        """A feature/run-scoped session enters the next scenario: its records, its log level."""
        self.transcript = transcript
        self.surface_dirty = True  # so this scenario's report shows the server too
        self.timeline.clear()
        self.progress_received, self.progress_first = 0, []
        self.sampling_asked.clear()
        self.elicitation_asked.clear()
        if log_level is not None and log_level != self.log_level:
            self.set_log_level(log_level)
        elif log_level is None and self._stamped_level is not None:
            self._stamped_level = None  # the previous scenario's opt-in must not carry over
            self.log_level = None

    @property
    def protocol_version(self) -> str:
        assert self.client is not None
        return self.client.protocol_version

    @property
    def is_legacy(self) -> bool:
        return self.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS

    def require_legacy(self, what: str) -> None:
        if not self.is_legacy:
            raise UsageError(
                f"{what} does not exist in protocol {self.protocol_version} (the stateless 2026-07-28 era "
                f'has no ping, logging/setLevel or resources/subscribe). The server "{self.name}" negotiated '
                f'{self.protocol_version}; set protocol = "legacy" for it (or run with -D protocol=legacy) to use '
                "the 2025-11-25 handshake."
            )

    # -- callbacks (run in the portal's event loop) -------------------------------------------------
    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.transcript.record("error", self.name, "transport", {"message": str(message)})
            return
        method: str = getattr(message, "method", type(message).__name__)
        params: dict[str, object] = dump(getattr(message, "params", None)) or {}
        if method == "notifications/progress":
            self.progress_received += 1  # recorded by the request's progress callback, if its token is one
            if len(self.progress_first) < 3:
                self.progress_first.append(params)
            return
        weight = Weight(params)  # weighed once for both bounds
        item = self.transcript.record("notification", self.name, method, params, weight=weight)
        self.timeline.add(method, params, item.seq, weight)
        if method.endswith("/list_changed"):
            self.surface_dirty = True

    def _on_repeated_answer(self, request_id: RequestId, outcome: Answer) -> None:
        """A second answer to one request: evidence, as over stdio (servers/_framing); the first stands.
        Or, for a request the server answered with 202 (session/_http), its answer on the GET stream
        after the request failed; or the failure after that answer was taken (it came first)."""
        kind = "error" if isinstance(outcome, types.ErrorData) else "result"
        sent = dump(outcome) if isinstance(outcome, types.ErrorData) else outcome
        shown = json.dumps({"id": request_id, kind: sent}, ensure_ascii=False, default=str).encode()
        key = answer_key(request_id)
        accepted = self._accepted.pop(key, None)  # answered with 202
        failed = self._inbox.failed.pop(key, None) if self._inbox is not None else None  # SSE: its POST failed
        if accepted is None and failed is None:
            message = repeated_answer(shown)
        elif isinstance(outcome, types.ErrorData) and stands_in(outcome):  # mcp-bdd's error for it came second
            message = f"{outcome.message}\n  Its answer had come on the GET stream first, and was taken."
        elif failed is not None:
            message = answer_after_failed_post(failed, shown)
        else:
            message = answer_after_202(str(accepted), shown)
        self.transcript.record("error", self.name, "transport", {"message": message})

    # -- requests ----------------------------------------------------------------------------------
    def _run(self, fn: Callable[[], Awaitable[T]], limit: float | None = None) -> T:
        """`fn` in the event loop; its requests time out there after `limit` (default `timeout`).
        Past that, and `STALL_GRACE` more with no answer, the step stops waiting: the loop
        is blocked, or the cancelled request never lets go (see `_hop`)."""
        if self._cm is None or self.client is None:
            raise UsageError(f'The session with "{self.name}" is not open (did its server step fail?).')
        limit = limit if limit is not None else self.timeout
        try:
            return self.hops.call(fn, deadline=limit + STALL_GRACE, last_answer=self.transcript.last_answer)
        except Stalled:
            self.lost = True  # its requests may never end: not handed to another scenario
            raise RequestTimeout(self._stalled(limit)) from None

    def _stalled(self, limit: float) -> str:
        where = (
            "It runs in-process, where a tool that blocks — a synchronous loop or sleep, time.sleep() in an "
            "async tool — cannot be interrupted: the call cannot be cancelled, or the event loop stopped."
            if self.server.transport == "in-memory"
            else "The run's event loop is blocked (by an in-process server or a fake that does not await)."
        )
        return (
            f'The MCP server "{self.name}" did not answer within {limit:g} s, and {STALL_GRACE:g} s later the '
            f"request had still not ended although it was cancelled.\n  {where}\n"
            '  Tip: run it over stdio (-D transport=stdio, or transport = "stdio" for the server): there a '
            "timeout ends the call and teardown stops the process. In async tools, await (anyio.sleep, async "
            "clients) instead of blocking."
        )

    async def _send(
        self,
        request: Request,
        *,
        timeout: float | None = None,
        cancel_after: float | None = None,
        progress: bool = False,
        as_task: bool = False,
    ) -> Outcome:
        """Send one request, record it and what came back; never raises for server-side failures.
        `as_task`: a tools/call that asks for a task (as one with `params.task` does), answered with one."""
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        method, params = data["method"], data.get("params") or {}
        req = self.transcript.record("request", self.name, method, params)
        outcome = Outcome(method, params, seq=req.seq, server=self.name)
        limit = timeout if timeout is not None else self.timeout
        waited = cancel_after if cancel_after is not None else limit
        on_progress = self._progress_recorder(req.seq) if progress else None
        started = time.monotonic()
        bad_before = self.server.bad_stdout_lines()
        try:
            await self._exchange(request, outcome, waited, cancel_after is not None, on_progress, as_task)
        except BaseException as exc:
            if not await self._met(exc, outcome, (started, waited), bad_before):
                raise
        outcome.elapsed_ms = (time.monotonic() - started) * 1000
        self._record_answer(outcome, limit, cancel_after)
        return outcome

    def _progress_recorder(self, seq: int) -> ProgressFnT:
        """The progress callback of the request recorded as `seq`: each notification into the
        transcript and the timeline, tied to its request."""

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            payload: dict[str, object] = {"progress": progress}
            if total is not None:
                payload["total"] = total
            if message is not None:
                payload["message"] = message
            item = self.transcript.record("notification", self.name, "notifications/progress", payload, related=seq)
            self.timeline.add("notifications/progress", {**payload, "request": seq}, item.seq)

        return on_progress

    async def _exchange(
        self,
        request: Request,
        outcome: Outcome,
        waited: float,
        cancellable: bool,
        on_progress: ProgressFnT | None,
        as_task: bool,
    ) -> None:
        """The request and its answer into `outcome.raw`: within `waited` seconds (past it, a
        TimeoutError; `cancellable`: the request is cancelled then, and the outcome says so)."""
        assert self.client is not None
        if isinstance(self.server, InMemoryServer) and self.server.exit_code is not None:
            raise ServerExited(SystemExit(self.server.exit_code))  # as the connection to a process would be gone
        with anyio.move_on_after(waited) if cancellable else anyio.fail_after(waited) as scope:
            if as_task or asks_for_task(outcome.method, outcome.params):  # answered with a task (_tasks)
                outcome.raw = await send_as_task(self.client, request, on_progress)
            elif is_tasks_request(request, self.protocol_version):  # declares the extension per request
                outcome.raw = await send_tasks_request(self.client, request)
            else:
                outcome.raw = await self.client.session.send_request(request, _RAW, progress_callback=on_progress)
            if is_input_required(outcome.raw):
                outcome.raw = await self._drive_input_required(request, outcome, on_progress)
            _strictly_fits(outcome.method, outcome.raw)
            if outcome.method in CACHEABLE_METHODS and isinstance(outcome.raw, dict):
                self.cache_hints[outcome.method] = {k: outcome.raw[k] for k in _HINTS if k in outcome.raw}
        outcome.cancelled = cancellable and scope.cancelled_caught

    async def _met(self, exc: BaseException, outcome: Outcome, wait: tuple[float, float], bad_before: int) -> bool:
        """What the request met instead of an answer, into `outcome`; False for what must go on up
        (a cancellation from outside, Ctrl-C in behave's thread, a user's BaseException)."""
        if isinstance(exc, TimeoutError):
            self._timed_out(outcome, bad_before)
        elif isinstance(exc, MCPError):
            await self._answered_with_error(exc, outcome, wait, bad_before)
        elif isinstance(exc, (ValidationError, _Unfit)):
            outcome.raw = None
            outcome.protocol_violation = True  # an answer came, but not one the protocol allows
            outcome.exception = _asked_out_of_turn(outcome.method, exc) or (
                f"the server's {outcome.method} result does not fit the MCP schema: {exc}"
            )
        elif isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)):
            outcome.exception = f"the connection to the server was lost ({type(exc).__name__})"
        elif isinstance(exc, asyncio.CancelledError):
            if _cancelled_from_outside():
                return False
            # no one cancelled this request: an in-process handler raised it (a task of its own that was
            # cancelled, whose CancelledError it let through) and it ended the call with no answer
            outcome.exception = (
                "the server's code raised CancelledError while no one had cancelled the request: it let a "
                "cancellation of its own (a task it started, a cancel scope) escape its handler, and no answer came"
            )
        elif is_exit(exc):  # an in-process server's handler runs in this very task (or its worker thread)
            outcome.exception = self._exited(as_exited(exc))
        else:
            return False
        return True

    async def _answered_with_error(
        self, exc: MCPError, outcome: Outcome, wait: tuple[float, float], bad_before: int
    ) -> None:
        """A JSON-RPC error: the server's own, or one the SDK or mcp-bdd stood in with for something
        else (a timeout the client measured, a connection that closed, a refusal, a broken answer)."""
        if _client_timed_out(exc, *wait):  # (when the wait began, how long it was): only the client's own
            self._timed_out(outcome, bad_before)
        elif is_connection_closed(exc):
            # Not an answer from the server: it went away (crashed, exited) mid-request.
            self.lost = True  # a long-lived session must not be handed to the next scenario
            await anyio.to_thread.run_sync(self.server.settle)
            gone = self._gone(outcome.seq)
            outcome.exception = f"the connection closed before an answer came ({gone})\n" + self.server.describe_death()
        elif (refusal := Refusal.taken(exc, self.refusals)) is not None:  # 401/403: an answer, not a JSON-RPC error
            outcome.refusal = refusal
        elif is_protocol_violation(exc):
            outcome.protocol_violation = True
            tip = made_up_tip(exc.error)
            outcome.exception = exc.message + (f"\n  Tip: {tip}" if tip else "") + f"\n{self.server.describe_death()}"
        else:
            outcome.error = exc.error

    def _record_answer(self, outcome: Outcome, limit: float, cancel_after: float | None) -> None:
        """What came back for the request, in the transcript: its result, or why there is none."""
        if outcome.raw is not None:
            self.transcript.record(
                "response", self.name, outcome.method, outcome.raw, duration_ms=outcome.elapsed_ms, related=outcome.seq
            )
            return
        err: dict[str, object]
        if outcome.error is not None:
            err = dump(outcome.error)
        elif outcome.timed_out:
            err = {"message": f"no answer within {limit:g} s (timed out)"}
        elif outcome.cancelled:
            err = {"message": f"cancelled by the client after {cancel_after:g} s"}
        elif outcome.refusal is not None:
            err = {"message": f"refused: {outcome.refusal.said()}"}
        else:
            err = {"message": outcome.exception or "unknown failure"}
        self.transcript.record(
            "error", self.name, outcome.method, err, duration_ms=outcome.elapsed_ms, related=outcome.seq
        )

    def _gone(self, since: int) -> str:
        """Why the connection closed under the request made after transcript entry `since`."""
        server = self.server
        broken = self._broken_exchange(since) if server.returncode is None else None
        if broken is not None:
            return broken
        if server.returncode is not None or not server.started:
            return "the server went away"
        if server.url is None:
            return "the server closed its stdout but is still running: it can no longer answer"
        return "the server closed the HTTP connection but is still running"

    def _exited(self, exc: ServerExited) -> str:
        """An in-process server's code called sys.exit(): over stdio its process would have ended
        (`_loop`). So it ends here: the session is lost, and the server answers nothing more."""
        self.lost = True
        server = self.server
        if not isinstance(server, InMemoryServer):  # a handler of the client's own (a persona's) exited
            return f"in-process code {said_exit(exc)}: mcp-bdd stopped the request, not the run"
        if server.exit_code is not None:
            return "the server had exited (during an earlier request): nothing answers\n" + server.describe_death()
        server.exited(exc.code, said_exit(exc))
        return (
            "the connection closed before an answer came (the server went away)\n"
            + server.describe_death()
            + "\n  Tip: a server exits when it cannot go on; a tool that fails should raise an error (or "
            "return isError) instead, so the client gets an answer."
        )

    def _timed_out(self, outcome: Outcome, bad_before: int) -> None:
        """No answer in time. Lines on stdout that were not JSON-RPC, written while it waited, are
        then the likelier cause (an answer pretty-printed, a log line in its place) than a slow
        server: the failure quotes them (and the ones before, counted with them)."""
        outcome.timed_out = True
        outcome.stdout_evidence = self.server.stdout_evidence(since=bad_before)

    async def _drive_input_required(
        self, request: Request, outcome: Outcome, on_progress: ProgressFnT | None
    ) -> dict[str, object]:
        """2026-07-28 input-required rounds: answer the embedded requests, then resend, each round
        noted in `outcome.rounds` (and the transcript), with the persona's deviation if any."""
        assert self.client is not None and outcome.raw is not None
        low, rounds = self.client.session, InputRounds(self.persona.input_deviation)
        outcome.rounds = rounds.rounds
        if not rounds_allowed(outcome.method):
            raise _OutOfTurn(_OUT_OF_TURN.format(method=outcome.method))
        self._note_round(rounds, outcome.raw)
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)

        async def resend(responses: dict[str, object] | None, state: str | None) -> dict[str, object]:
            responses, state = rounds.resend(responses, state)

            def adjust(params: dict[str, object]) -> None:  # the first request carried neither
                if responses is not None:
                    params["inputResponses"] = responses
                if state is not None:
                    params["requestState"] = state

            raw = await send_stamped(low, {**data, "params": dict(data.get("params") or {})}, adjust, on_progress)
            asked = is_input_required(raw)  # a bool: its TypeGuard would retype `raw` as the SDK's model too
            if asked:
                self._note_round(rounds, raw)
            return raw

        return await run_input_required(low, outcome.raw, resend)

    def _note_round(self, rounds: InputRounds, raw: Mapping[str, object]) -> None:
        found = rounds.note(raw)
        self.transcript.record("info", self.name, "input required", {"message": found.describe()})

    def request(
        self,
        request: Request,
        *,
        timeout: float | None = None,
        cancel_after: float | None = None,
        progress: bool = False,
        as_task: bool = False,
    ) -> Outcome:
        async def send() -> Outcome:
            return await self._send(
                request, timeout=timeout, cancel_after=cancel_after, progress=progress, as_task=as_task
            )

        return self._run(send, cancel_after or timeout)

    def check(self, outcome: Outcome) -> dict[str, object]:
        """The raw result of a request that had to succeed, or a clear failure."""
        self.raise_problems()
        if outcome.ok and outcome.raw is not None:
            return outcome.raw
        if outcome.timed_out:
            raise RequestTimeout(
                f'{outcome.method} to "{self.name}" got no answer within {outcome.elapsed_ms / 1000:.2f} s '
                f"(timeout = {self.timeout:g} s).\n"
                + self.server.describe_death()
                + "\n  Tip: "
                + self.timeout_tip(outcome)
            )
        if outcome.protocol_violation:
            raise ProtocolViolation(
                f'{outcome.method} to "{self.name}" got an answer that breaks the protocol: {outcome.exception}\n'
                "  Tip: fix the server's output; the lines above show what it sent instead of one JSON-RPC message."
            )
        if outcome.refusal is not None:
            raise RequestRefused(
                f'{outcome.method} to "{self.name}" was refused',
                actual=outcome.refusal.said(),
                exchange=produced_by(self.transcript.items, self.name),
                tip=outcome.refusal.tip,
            )
        raise ServerErrorResponse(
            f'{outcome.method} to "{self.name}" failed',
            actual=outcome.describe(),
            exchange=produced_by(self.transcript.items, self.name),
            tip="the server rejected the request; see the error above."
            if outcome.error is not None
            else "the server may have crashed: see its stderr.\n" + self.server.describe_death(),
        )

    def timeout_tip(self, outcome: Outcome, usual: str = _SLOW) -> str:
        """What to do about a request that got no answer in time: the `usual` (raise the timeout),
        unless the server process had exited and only a helper holding its stdout kept the wait going,
        or it wrote lines on stdout that were not JSON-RPC (an answer among them never counts as one)."""
        if self.server.started and self.server.returncode is not None:  # yet no end of its stdout came
            return (
                "the server process had exited, but a process it started still holds its stdout open, so no "
                "answer could come: a wrapper (sh -c, npx, uv run) should exec the server or wait for it, and "
                "a helper it starts should not inherit its stdout."
            )
        if outcome.stdout_evidence:
            return (
                "fix what the server writes on stdout first (quoted above): an answer written as anything but "
                "one JSON-RPC message per line never arrives as one. Raise `timeout` only if it is also slow."
            )
        return usual

    def raise_problems(self) -> None:
        if self.problems:
            text, self.problems = "\n".join(self.problems), []
            raise UsageError(text)

    # -- typed helpers ----------------------------------------------------------------------------------
    def list_all(self, kind: str) -> list[dict[str, object]]:
        """Follow nextCursor to the end; a repeated cursor or an endless listing is a clear failure."""
        return self._run(lambda: self._list_pages(kind))

    async def _list_pages(self, kind: str) -> list[dict[str, object]]:
        """Every page of a listing, kept as the session's view of `kind` (in the event loop: one
        portal call however many pages)."""
        request_type, key = {
            "tools": (types.ListToolsRequest, "tools"),
            "resources": (types.ListResourcesRequest, "resources"),
            "templates": (types.ListResourceTemplatesRequest, "resourceTemplates"),
            "prompts": (types.ListPromptsRequest, "prompts"),
        }[kind]
        items: list[dict[str, object]] = []
        cursor: str | None = None
        seen: set[str] = set()
        pages = 0
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            raw = self.check(await self._send(request_type(params=params)))
            pages += 1
            listed = raw.get(key)
            items.extend(listed if isinstance(listed, list) else [])  # its shape the SDK's validation checked
            cursor = _cursor(raw.get("nextCursor"))
            if not cursor:
                break
            if cursor in seen:
                raise ExpectationFailed(
                    f'The server "{self.name}" repeated the cursor {cursor!r} while listing {kind} '
                    f"(page {pages + 1}): the listing would never end.",
                    tip="the server's pagination is broken: each nextCursor must lead forward.",
                )
            seen.add(cursor)
            if pages >= _MAX_PAGES:
                raise ExpectationFailed(
                    f'Listing {kind} on "{self.name}" did not end after {_MAX_PAGES} pages.',
                    tip="the server keeps returning nextCursor; check its pagination.",
                )
        if kind == "tools":
            with contextlib.suppress(Exception):
                assert self.client is not None
                absorb_tool_listing(self.client.session, items)  # the SDK's own handlers share this state
        self.pages[kind] = pages
        setattr(self, kind, items)  # tools | resources | templates | prompts
        self.surface_dirty = True
        return items

    def listing(self, kind: str) -> list[dict[str, object]]:
        """The last listing of `kind` (tools, resources, templates, prompts), fetched if none was taken yet."""
        cached = {
            "tools": self.tools,
            "resources": self.resources,
            "templates": self.templates,
            "prompts": self.prompts,
        }[kind]
        return cached if cached is not None else self.list_all(kind)

    def tool_list(self) -> list[dict[str, object]]:
        return self.listing("tools")

    def tool_named(self, name: str) -> dict[str, object] | None:
        for tool in self.tool_list():
            if tool.get("name") == name:
                return tool
        return None

    def call_tool(
        self,
        name: str,
        arguments: dict[str, object] | Callable[[dict[str, object] | None], dict[str, object]] | None,
        *,
        timeout: float | None = None,
        cancel_after: float | None = None,
    ) -> Outcome:
        """Call a tool. `arguments` may be a function of the tool as listed (None when the server
        does not list it), e.g. a table coerced by its inputSchema: then the listing (when none
        was taken yet), the arguments and the call take one portal call, as the SDK's own
        `call_tool` does, instead of one each."""

        async def call() -> Outcome:
            args: dict[str, object] | None
            if callable(arguments):
                listed = self.tools if self.tools is not None else await self._list_pages("tools")
                args = arguments(next((t for t in listed if t.get("name") == name), None))
            else:
                args = arguments
                await self._learn_param_headers()
            request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=args))
            return await self._send(request, timeout=timeout, cancel_after=cancel_after, progress=True)

        return self._run(call, cancel_after if cancel_after is not None else timeout)

    async def _learn_param_headers(self) -> None:
        """On 2026-07-28 over streamable HTTP, a client mirrors each argument a tool marks with
        `x-mcp-header` as an `Mcp-Param-*` header, and the server refuses a call without it (-32020).
        The SDK knows a tool's marks only once it saw the tool listed: so a call made before any
        listing (arguments given as JSON) lists the tools first, as the SDK's own call_tool does.
        A listing that fails is left to the call to show: its answer says what went wrong."""
        modern = self.client is not None and self.client.protocol_version in MODERN_PROTOCOL_VERSIONS
        if self.tools is None and modern and self.server.transport == "streamable-http":
            with contextlib.suppress(Exception):
                await self._list_pages("tools")

    def call_tool_many(self, name: str, argument_sets: list[dict[str, object]]) -> list[Outcome]:
        async def run() -> list[Outcome]:
            await self._learn_param_headers()
            results: list[Outcome | None] = [None] * len(argument_sets)

            async def one(i: int, args: dict[str, object]) -> None:
                request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=args))
                results[i] = await self._send(request, progress=True)

            async with anyio.create_task_group() as tg:
                for i, args in enumerate(argument_sets):
                    tg.start_soon(one, i, args)
            return [r for r in results if r is not None]

        return self._run(run)

    def ping(self) -> Outcome:
        return self.request(types.PingRequest(params=None))

    def set_log_level(self, level: str) -> None:
        self.log_level = level
        if self.client is None or not self.connected:
            return
        if self.is_legacy:
            outcome = self.request(types.SetLevelRequest(params=types.SetLevelRequestParams(level=level)))  # type: ignore[arg-type]
            self.check(outcome)
        else:
            self._stamp_log_level(level)

    def _stamp_log_level(self, level: str) -> None:
        """2026-07-28: log messages are an opt-in stamped into each request's `_meta`, read at each request."""
        assert self.client is not None
        self._stamped_level = level
        restamp_log_level(self.client.session, lambda: self._stamped_level)

    def surface(self) -> dict[str, object]:
        """Identity and surface as seen so far, for the report's catalog and coverage map."""
        assert self.client is not None
        info = self.client.server_info
        return {
            "server": self.name,
            "name": info.name if info else None,
            "version": info.version if info else None,
            "protocol": self.client.protocol_version,
            "transport": self.server.transport,
            "command": self.server.display,
            "capabilities": dump(self.client.server_capabilities),
            "instructions": self.client.instructions,
            "tools": self.tools,
            "resources": self.resources,
            "resource_templates": self.templates,
            "prompts": self.prompts,
            "listing pages": dict(self.pages),
        }


#: the MCP Apps extension as a client advertises it (SEP-1865): its id, and the one content type it renders
APPS_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"


def _extensions(persona: Persona) -> list[ClientExtension] | None:
    """The extensions the client advertises in its capabilities: MCP Apps when the scenario said the
    client supports them (a server may then bind UIs to its tools), else none, as a plain client."""
    if not persona.apps:
        return None
    return [advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})]


async def _discover_pinned(client: Client, version: str) -> None:
    """`protocol = "2026-07-28"`: the SDK adopts a pinned version without asking the server, and
    so with no capabilities at all: every step that reads one ("subscribe to the resource", the
    connect-time listen stream, the checks) would say the server lacks it. One server/discover at
    that version gets what the server declares; a server that does not answer it does not speak
    the version, and says so as a handshake error (`_not_discovered`). The SDK gives up on the
    discover after a fixed 10 s; a server slower to start is asked again, for as long as
    `startup_timeout` allows (the connect's own deadline ends it)."""
    session = client.session
    while True:
        asked = time.monotonic()
        try:
            raw = await session.send_discover(version)
        except MCPError as exc:
            if _client_timed_out(exc, asked, DISCOVER_TIMEOUT_SECONDS):
                continue
            raise
        session.adopt(types.DiscoverResult.model_validate(raw))
        return


def _client_timed_out(exc: MCPError, started: float, limit: float) -> bool:
    """Whether the SDK gave up waiting (its -32001, after the time it allows), not the server: a
    server may answer -32001 itself ("Session expired", the TypeScript SDK's "Session not found"),
    at once, and its words are then its error, never a timeout. The SDK's own wait is never
    shorter than the one mcp-bdd set (`limit`), so only a -32001 after it is the client's."""
    return exc.code == types.REQUEST_TIMEOUT and time.monotonic() - started >= limit * 0.95


def _cursor(value: object) -> str | None:
    """A listing's `nextCursor` (the SDK's validation let only a string or nothing through)."""
    return value if isinstance(value, str) else None


def _cancelled_from_outside() -> bool:
    """Whether the running task was asked to stop (by a timeout's scope, Ctrl-C's cancel, the end of
    its session): a CancelledError it meets otherwise came out of the code it called."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


class _Unfit(ValueError):
    """A result the SDK's (lax) validation let through that the schema does not allow."""


class _OutOfTurn(_Unfit):
    """An input-required answer to a request that may not have one (SEP-2322)."""


_OUT_OF_TURN = (
    'the server answered {method} "input required": only tools/call, prompts/get, resources/read and '
    "tasks/result may be answered so (SEP-2322)"
)


def _asked_out_of_turn(method: str, exc: BaseException) -> str | None:
    """The violation in words when the answer the SDK could not validate was an input-required one
    (the SDK validates a listing's answer itself, before the session sees it)."""
    if isinstance(exc, _OutOfTurn):
        return str(exc)
    inputs = [e.get("input") for e in exc.errors()] if isinstance(exc, ValidationError) else []
    asked = any(is_input_required(i) for i in inputs)
    return _OUT_OF_TURN.format(method=method) if asked else None


def _strictly_fits(method: str, raw: object) -> None:
    """What the SDK's validation coerces, checked as the schema says: a tools/call result's
    `isError` is a boolean. The SDK reads `"isError": "false"` as False, while mcp-bdd's steps read
    it as set, so "Then the tool call returns an error result" passed on it; a strict client
    rejects the answer. Raises `_Unfit`."""
    if method == "tools/call" and isinstance(raw, dict) and not isinstance(raw.get("isError", False), bool):
        flag = raw["isError"]
        raise _Unfit(f"isError is {json.dumps(flag, default=str)[:80]} ({type(flag).__name__}), not true or false")


def _broke_the_handshake(cause: BaseException) -> bool:
    """Whether a failed connect is the server's answer breaking the protocol (not a server that
    could not start): an answer mcp-bdd could not use, one that does not fit the schema, or a
    protocol version the client never offered."""
    return is_protocol_violation(cause) or unfit_handshake(cause) or unsupported_version(cause) is not None
