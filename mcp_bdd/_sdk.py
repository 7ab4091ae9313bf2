"""Every use of the `mcp` SDK's private internals, in one place, so an SDK upgrade touches one file.

Why each is needed (mcp 2.3):
- `TransportStreams` (mcp.client._transport): the stream pair a custom transport yields to
  `Client`; our stdio transport (servers/_pipes.py) is one.
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
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.client._input_required import run_input_required_driver
from mcp.client._transport import TransportStreams
from mcp.client.session import DISCOVER_TIMEOUT_SECONDS, ClientRequestContext
from mcp.shared.dispatcher import coerce_request_id
from mcp_types.methods import is_input_required

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "DISCOVER_TIMEOUT_SECONDS",
    "ClientRequestContext",
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

Dispatch = Callable[[ClientRequestContext, Any], Awaitable[Any]]


def intercept_input_requests(low: Any, wrap: Callable[[Dispatch], Dispatch]) -> Dispatch:
    """Replace the session's server-to-client request door with `wrap(original)`; returns the original."""
    original: Dispatch = low.dispatch_input_request
    low.dispatch_input_request = wrap(original)
    return original


def absorb_tool_listing(low: Any, tools: list[dict[str, Any]]) -> None:
    """Tell the SDK about tools we listed ourselves (call in the event loop's thread)."""
    listing = types.ListToolsResult.model_validate({"tools": tools}, by_name=False)
    low._absorb_tool_listing(listing, complete=True)


def restamp_log_level(low: Any, level: Callable[[], str | None]) -> None:
    """Stamp `level()` (read at each request) into every request's `_meta`; a request's own wins."""
    if getattr(low, "_mcp_bdd_stamp", False):
        return
    inner = low._stamp

    def stamp(data: dict[str, Any], opts: Any) -> None:
        chosen = level()
        if chosen is not None:
            data.setdefault("params", {}).setdefault("_meta", {}).setdefault(types.LOG_LEVEL_META_KEY, chosen)
        inner(data, opts)

    low._stamp = stamp
    low._mcp_bdd_stamp = True


async def send_stamped(
    low: Any,
    data: dict[str, Any],
    adjust: Callable[[dict[str, Any]], None],
    on_progress: Any = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Send the request `data` as the SDK sends its own (its `_meta` stamped: log level, client
    capabilities), then changed by `adjust(params)`, and return the raw answer, unvalidated.
    `headers`: HTTP headers beyond the stamp's, e.g. the `Mcp-Name` of a tasks request, which
    `send_request` adds from the request type's `name_param` and the stamp does not."""
    opts: dict[str, Any] = {}
    low._stamp(data, opts)
    if headers:
        opts.setdefault("headers", {}).update(headers)
    params: dict[str, Any] = data.setdefault("params", {})
    adjust(params)
    if on_progress is not None:
        opts["on_progress"] = on_progress
    raw: dict[str, Any] = await low._dispatcher.send_raw_request(data["method"], params, opts)
    return raw


Resend = Callable[[dict[str, Any] | None, str | None], Awaitable[dict[str, Any]]]


async def run_input_required(low: Any, first_raw: dict[str, Any], resend: Resend) -> dict[str, Any]:
    """Answer the embedded requests of an input-required result, and `resend(responses, state)`
    (the responses as JSON) until a final result; the raw final result."""
    first = types.InputRequiredResult.model_validate(first_raw, by_name=False)

    async def dispatch(key: str, inner: Any) -> Any:
        ctx = ClientRequestContext(session=low, request_id=key, meta=None)
        return await low.dispatch_input_request(ctx, inner)

    async def retry(responses: Any, state: str | None) -> Any:
        answers = None if responses is None else {k: _json(v) for k, v in responses.items()}
        result = await resend(answers, state)
        if is_input_required(result):
            return types.InputRequiredResult.model_validate(result, by_name=False)
        return result

    final: dict[str, Any] = await run_input_required_driver(first, dispatch=dispatch, retry=retry)
    return final


def _json(value: Any) -> Any:
    dumped = value.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(value, "model_dump") else value
    return dumped


def answer_key(request_id: Any) -> Any:
    """A request id as the SDK matches an answer to its request: "7" and 7 are one id."""
    return coerce_request_id(request_id)


#: answered request ids remembered per session, to tell a second answer from a late one
_ANSWERED = 4096


def watch_repeated_answers(low: Any, on_repeated: Callable[[Any, Any], None]) -> None:
    """Call `on_repeated(request_id, outcome)` for every answer to a request the server had already
    answered (JSON-RPC allows one response per request); the SDK keeps dropping it. An answer to a
    request that was cancelled or timed out here, never answered, is late, not repeated: not said.

    Only sessions that read JSON-RPC messages have the door. Over stdio the transport already
    takes a second answer out as evidence (servers/_framing.py); over SSE every answer comes
    through here; over Streamable HTTP only the standalone GET stream's do (the SDK stops reading
    a POST's stream at its first answer, and gives any answer on it that POST's id). Call it in
    the event loop's thread, once connected: the handshake's own answer is not watched."""
    dispatcher: Any = getattr(low, "_dispatcher", None)
    resolve = getattr(dispatcher, "_resolve_pending", None)
    if resolve is None or getattr(dispatcher, "_mcp_bdd_answered", None) is not None:
        return
    # id -> the waiter its answer went to (its send stream, weakly: a finished request's waiter
    # holds its progress callback and more): a request sent again with an id of the caller's
    # choosing, one answered before, has a new waiter, and its answer is its first
    answered: dict[Any, weakref.ref[Any]] = {}
    dispatcher._mcp_bdd_answered = answered

    def resolve_once(request_id: Any, outcome: Any) -> None:
        key = answer_key(request_id) if request_id is not None else None
        waiter = dispatcher._pending.get(key) if key is not None else None
        if key in answered and (waiter is None or answered[key]() is waiter.send):
            _tell(on_repeated, request_id, outcome)
            return
        if waiter is not None:
            answered.pop(key, None)  # moved to the end: the oldest are forgotten first
            answered[key] = weakref.ref(waiter.send)
            if len(answered) > _ANSWERED:
                del answered[next(iter(answered))]
        resolve(request_id, outcome)

    dispatcher._resolve_pending = resolve_once


def _tell(on_repeated: Callable[[Any, Any], None], request_id: Any, outcome: Any) -> None:
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
