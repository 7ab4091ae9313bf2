"""Every use of the `mcp` SDK's private internals, in one place, so an SDK upgrade touches one file.

Why each is needed (mcp 2.3):
- `TransportStreams`, `Transport` (mcp.client._transport): the stream pair a custom transport
  yields to `Client`, and the transport itself; our stdio transport (servers/_pipes.py) is one,
  and so is the HTTP one a session builds.
- `ClientSession.dispatch_input_request`: the one door every server-to-client request
  (sampling, elicitation, roots) comes through; wrapping it answers requests the scenario did
  not script with a clear error, and records them.
- `ClientSession._absorb_tool_listing`: the SDK validates `structuredContent` against the
  output schemas of the tools it has *listed itself*; a listing we paged through ourselves is
  handed to it so its view matches ours.
- `ClientSession._stamp`: on 2026-07-28 the log level is stamped into each request's `_meta` at
  connect time, with no public way to change it on a live session.
- `run_input_required_driver` (mcp.client._input_required): 2026-07-28 input-required rounds for
  requests sent with `send_request` (the SDK drives them only for its own typed calls).
- `JSONRPCDispatcher._resolve_pending`: the one place every answer a JSON-RPC session reads
  reaches; the SDK drops a second answer to one request at debug level, like a late one.
- `ClientSession._stamp` and `._dispatcher.send_raw_request` (`send_stamped`): a task-augmented
  tools/call must not be validated as a CallToolResult, and on 2026-07-28 declares the Tasks
  extension for that one call; so it is stamped as the SDK stamps requests and sent raw.
- `DISCOVER_TIMEOUT_SECONDS` (mcp.client.session): the fixed wait the SDK gives `server/discover`;
  only a -32001 after it is the SDK's own timeout (a server may answer -32001 itself).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import mcp_types as types
from mcp.client._input_required import run_input_required_driver
from mcp.client._transport import Transport, TransportStreams
from mcp.client.session import DISCOVER_TIMEOUT_SECONDS, ClientRequestContext, ClientSession
from mcp.shared.dispatcher import CallOptions, ProgressFnT, coerce_request_id
from mcp_types.methods import is_input_required

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "DISCOVER_TIMEOUT_SECONDS",
    "ClientRequestContext",
    "Transport",
    "TransportStreams",
    "absorb_tool_listing",
    "answer_key",
    "intercept_input_requests",
    "redirect_target",
    "restamp_log_level",
    "run_input_required",
    "send_stamped",
    "unsupported_version",
    "watch_repeated_answers",
]

#: the session's server-to-client request door (`ClientSession.dispatch_input_request`)
Dispatch = Callable[[ClientRequestContext, types.InputRequest], Awaitable[types.InputResponse | types.ErrorData]]
#: a request's id, and an answer as the SDK's dispatcher resolves it: the raw result, or the error
RequestId = int | str
Answer = dict[str, object] | types.ErrorData


def intercept_input_requests(low: ClientSession, wrap: Callable[[Dispatch], Dispatch]) -> Dispatch:
    """Replace the session's server-to-client request door with `wrap(original)`; returns the original."""
    original: Dispatch = low.dispatch_input_request
    setattr(low, "dispatch_input_request", wrap(original))  # noqa: B010 - a method: mypy refuses the assignment
    return original


def absorb_tool_listing(low: ClientSession, tools: list[dict[str, object]]) -> None:
    """Tell the SDK about tools we listed ourselves (call in the event loop's thread)."""
    listing = types.ListToolsResult.model_validate({"tools": tools}, by_name=False)
    low._absorb_tool_listing(listing, complete=True)


def restamp_log_level(low: ClientSession, level: Callable[[], str | None]) -> None:
    """Stamp `level()` (read at each request) into every request's `_meta`; a request's own wins."""
    if getattr(low, "_mcp_bdd_stamp", False):
        return
    inner = low._stamp

    def stamp(data: dict[str, object], opts: CallOptions) -> None:
        chosen = level()
        if chosen is not None:
            params = data.setdefault("params", {})
            meta = params.setdefault("_meta", {}) if isinstance(params, dict) else None
            if isinstance(meta, dict):
                meta.setdefault(types.LOG_LEVEL_META_KEY, chosen)
        inner(data, opts)

    low._stamp = stamp
    setattr(low, "_mcp_bdd_stamp", True)  # noqa: B010 - a mark of ours: the SDK's class has no such field


async def send_stamped(
    low: ClientSession,
    data: dict[str, object],
    adjust: Callable[[dict[str, object]], None],
    on_progress: ProgressFnT | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, object]:
    """Send the request `data` as the SDK sends its own (its `_meta` stamped: log level, client
    capabilities), then changed by `adjust(params)`, and return the raw answer, unvalidated.
    `headers`: HTTP headers beyond the stamp's, e.g. the `Mcp-Name` of a tasks request, which
    `send_request` adds from the request type's `name_param` and the stamp does not."""
    opts: CallOptions = {}
    low._stamp(data, opts)
    if headers:
        opts.setdefault("headers", {}).update(headers)
    params = data.setdefault("params", {})
    if not isinstance(params, dict):  # the request's own params are always an object
        raise TypeError(f"params of {data.get('method')} is {type(params).__name__}, not an object")
    adjust(params)
    if on_progress is not None:
        opts["on_progress"] = on_progress
    raw: dict[str, object] = await low._dispatcher.send_raw_request(str(data["method"]), params, opts)
    return raw


Resend = Callable[[dict[str, object] | None, str | None], Awaitable[dict[str, object]]]


async def run_input_required(low: ClientSession, first_raw: dict[str, object], resend: Resend) -> dict[str, object]:
    """Answer the embedded requests of an input-required result, and `resend(responses, state)`
    (the responses as JSON) until a final result; the raw final result."""
    first = types.InputRequiredResult.model_validate(first_raw, by_name=False)

    async def dispatch(key: str, inner: types.InputRequest) -> types.InputResponse | types.ErrorData:
        ctx = ClientRequestContext(session=low, request_id=key, meta=None)
        return await low.dispatch_input_request(ctx, inner)

    async def retry(
        responses: types.InputResponses | None, state: str | None
    ) -> dict[str, object] | types.InputRequiredResult:
        answers: dict[str, object] | None = None if responses is None else {k: _json(v) for k, v in responses.items()}
        result = await resend(answers, state)
        if is_input_required(result):
            return types.InputRequiredResult.model_validate(result, by_name=False)
        return result

    final: dict[str, object] = await run_input_required_driver(first, dispatch=dispatch, retry=retry)
    return final


def _json(value: types.InputResponse) -> dict[str, object]:
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


def answer_key(request_id: RequestId) -> RequestId:
    """A request id as the SDK matches an answer to its request: "7" and 7 are one id."""
    return coerce_request_id(request_id)


#: answered request ids remembered per session, to tell a second answer from a late one
_ANSWERED = 4096


def watch_repeated_answers(low: ClientSession, on_repeated: Callable[[RequestId, Answer], None]) -> None:
    """Call `on_repeated(request_id, outcome)` for every answer to a request the server had already
    answered (JSON-RPC allows one response per request); the SDK keeps dropping it. An answer to a
    request that was cancelled or timed out here, never answered, is late, not repeated: not said.

    Only sessions that read JSON-RPC messages have the door. Over stdio the transport already
    takes a second answer out as evidence (servers/_framing.py); over SSE every answer comes
    through here; over Streamable HTTP only the standalone GET stream's do (the SDK stops reading
    a POST's stream at its first answer, and gives any answer on it that POST's id). Call it in
    the event loop's thread, once connected: the handshake's own answer is not watched."""
    dispatcher = low._dispatcher
    resolve = getattr(dispatcher, "_resolve_pending", None)
    pending = getattr(dispatcher, "_pending", None)  # JSONRPCDispatcher's; an in-memory one has neither
    if resolve is None or pending is None or getattr(dispatcher, "_mcp_bdd_answered", None) is not None:
        return
    # id -> the waiter its answer went to (its send stream, weakly: a finished request's waiter
    # holds its progress callback and more): a request sent again with an id of the caller's
    # choosing, one answered before, has a new waiter, and its answer is its first
    answered: dict[RequestId, weakref.ref[object]] = {}
    setattr(dispatcher, "_mcp_bdd_answered", answered)  # noqa: B010 - a mark of ours, as in restamp_log_level

    def resolve_once(request_id: RequestId | None, outcome: Answer) -> None:
        if request_id is None:  # an error for no request in particular
            resolve(request_id, outcome)
            return
        key = answer_key(request_id)
        waiter = pending.get(key)
        if key in answered and (waiter is None or answered[key]() is waiter.send):
            _tell(on_repeated, request_id, outcome)
            return
        if waiter is not None:
            answered.pop(key, None)  # moved to the end: the oldest are forgotten first
            answered[key] = weakref.ref(waiter.send)
            if len(answered) > _ANSWERED:
                del answered[next(iter(answered))]
        resolve(request_id, outcome)

    setattr(dispatcher, "_resolve_pending", resolve_once)  # noqa: B010 - a method: mypy refuses the assignment


def _tell(on_repeated: Callable[[RequestId, Answer], None], request_id: RequestId, outcome: Answer) -> None:
    """It runs in the SDK's read loop: an exception there would end the session, not the report."""
    try:
        on_repeated(request_id, outcome)
    except Exception:
        logging.getLogger(__name__).exception("recording a second answer to request %r failed", request_id)


def redirect_target(request: httpx2.Request, response: httpx2.Response) -> httpx2.URL | None:
    """Where the SDK's HTTP transports follow this answer to `request`, or None: a 307 or 308 that
    stays on the endpoint's origin (a trailing-slash redirect) is no answer of its own. They follow
    such redirects one after another, up to the client's `max_redirects`, round a loop too, and then
    make up a -32600 that "rejected with error code -32600" took for the server's: mcp-bdd stops a
    loop itself (session/_http)."""
    import httpx2
    from mcp.shared._httpx_utils import _within_origin

    location = response.headers.get("location")
    if response.status_code not in (307, 308) or not location:
        return None
    try:
        target = request.url.join(location)
    except httpx2.InvalidURL:
        return None
    if target.userinfo and target.userinfo != request.url.userinfo:
        return None
    return target if _within_origin(request.url, target) else None


#: how the SDK's `ClientSession.initialize` refuses a protocolVersion the client did not offer: a
#: bare RuntimeError is its only signal, so its words are read here, in the one module an SDK
#: upgrade touches (a test of a server that answers 1999-01-01 notices when they change)
_UNSUPPORTED = "Unsupported protocol version from the server: "


def unsupported_version(exc: BaseException) -> str | None:
    """The protocolVersion a server answered `initialize` with that the SDK refused, or None."""
    said = str(exc)
    return said[len(_UNSUPPORTED) :] if isinstance(exc, RuntimeError) and said.startswith(_UNSUPPORTED) else None
