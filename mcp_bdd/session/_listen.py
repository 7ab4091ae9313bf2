"""2026-07-28 change notifications: `subscriptions/listen` streams held open for a session's life.

Why: on 2026-07-28 a server pushes list-changed and resource-updated notifications only on a
listen stream the client opened (there is no `resources/subscribe` and no unsolicited push).
The SDK tees every event of a stream to the client's `message_handler`, so holding a stream open
is all it takes: the events land in the session's timeline and transcript exactly like the
2025-11-25 notifications do, and the notification steps read one timeline in both eras.

When: "Notifications are collected from the moment the session opens" (steps.md). An event
that happens before a stream exists is lost (the protocol has no replay), so a session opens one
list-changed stream at connect time, for the kinds whose `listChanged` the server advertises.
It costs one request and a task to cancel; every session opens it, so a hook or a project's own
step that reads `session.timeline` sees the same notifications a vocabulary step does. Resource streams
are opened by "When I subscribe to the resource" (one stream per URI), as `resources/subscribe` would be.

Lifetime: each stream is a child task of the session's lifetime task group (entered and exited
in that task, as anyio requires), so closing the session ends every stream with it, and opening
one costs no thread hop of its own: the connect-time stream opens inside the handshake's own
portal call, a later one in one more. A stream the server drops is noted in the transcript.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from mcp_bdd.session._hop import hops
from mcp_bdd.session._outcome import Refusal
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus
    from anyio.from_thread import BlockingPortal
    from mcp import Client


class Session(Protocol):
    """What a listen stream needs of its session (a Protocol: no import of the session facade)."""

    name: str
    client: Client | None
    portal: BlockingPortal
    timeout: float
    transcript: Transcript
    streams: TaskGroup | None  # the lifetime's task group while the session is open
    refusals: dict[str, Refusal]  # kept by the HTTP transport for requests refused with 401/403

    @property
    def connected(self) -> bool: ...


__all__ = [
    "ListenFailed",
    "Listening",
    "Stream",
    "covers",
    "holding",
    "listen_for_changes",
    "listening",
    "open_stream",
]

#: Listen-stream kinds and the `Client.listen` keyword that asks for each.
KINDS = {"tools": "tools_list_changed", "prompts": "prompts_list_changed", "resources": "resources_list_changed"}
#: Longest wait for a server to acknowledge a stream opened at connect time.
CONNECT_ACK_LIMIT = 5.0


class ListenFailed(Exception):
    """A `subscriptions/listen` stream could not be opened (its message says why); `refusal`: the
    server refused it with HTTP 401/403 (the credentials' scope, not a missing feature)."""

    def __init__(self, message: str, refusal: Refusal | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal


@dataclass
class Stream:
    """One open listen stream: what was asked, what the server honored, how to end it."""

    kinds: tuple[str, ...]
    uris: tuple[str, ...]
    honored: dict[str, object] = field(default_factory=dict)
    scope: anyio.CancelScope | None = None  # created in the stream's task (it needs the event loop)
    running: bool = False  # its task is alive (set and cleared by the task itself)
    ended: str | None = None  # why the stream ended before the session did

    def honors(self, kind: str) -> bool:
        return bool(self.honored.get(_wire(KINDS[kind])))

    def honors_uri(self, uri: str) -> bool:
        subscribed = self.honored.get("resourceSubscriptions")
        return isinstance(subscribed, list) and uri in subscribed


@dataclass
class Listening:
    """A session's listen streams, and why the connect-time one is missing when it is."""

    streams: list[Stream] = field(default_factory=list)
    failure: str | None = None
    running: int = 0  # stream tasks alive in the session's task group, acknowledged or not yet


def holding(session: Session) -> bool:
    """Whether a listen stream's task is alive in the session's task group: what its close must cancel."""
    found = _BY_SESSION.get(session)
    return found is not None and found.running > 0


_BY_SESSION: weakref.WeakKeyDictionary[Session, Listening] = weakref.WeakKeyDictionary()


def listening(session: Session) -> Listening:
    found = _BY_SESSION.get(session)
    if found is None:
        found = _BY_SESSION[session] = Listening()
    return found


def _wire(keyword: str) -> str:
    head, *rest = keyword.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _advertised(session: Session) -> list[str]:
    assert session.client is not None
    caps = session.client.server_capabilities
    kinds: list[str] = []
    for kind in KINDS:
        capability = getattr(caps, kind, None) if caps is not None else None
        if capability is not None and getattr(capability, "list_changed", None):
            kinds.append(kind)
    return kinds


async def listen_for_changes(session: Session) -> None:
    """At connect (2026-07-28 only, in the event loop): one stream for every list change the server
    advertises; never raises."""
    kinds = _advertised(session)
    if not kinds:
        return
    _, error = await _open(session, kinds, (), min(session.timeout, CONNECT_ACK_LIMIT))
    if error is not None:
        listening(session).failure = str(error)


def covers(session: Session, kind: str) -> bool:
    """Whether a live stream of this session delivers `kind` ("tools" | "prompts" | "resources")."""
    return any(s.ended is None and s.honors(kind) for s in listening(session).streams)


def open_stream(
    session: Session,
    *,
    kinds: Sequence[str] = (),
    uris: Sequence[str] = (),
    ack_limit: float | None = None,
) -> Stream:
    """Open a listen stream and wait for the server's acknowledgment; raises ListenFailed."""
    if session.client is None or not session.connected or session.streams is None:
        raise ListenFailed(f'the session with "{session.name}" is not open')
    limit = ack_limit if ack_limit is not None else session.timeout
    opened: tuple[Stream, ListenFailed | None] = hops(session.portal).call(
        _open, session, tuple(kinds), tuple(uris), limit
    )
    stream, error = opened
    if error is not None:
        raise error
    return stream


async def _open(
    session: Session, kinds: Sequence[str], uris: Sequence[str], limit: float
) -> tuple[Stream, ListenFailed | None]:
    """Start one stream in the session's task group and wait for its acknowledgment (event loop)."""
    # `Client.listen`'s keyword arguments, named by the kinds asked for: untyped
    kwargs: dict[str, Any] = {KINDS[k]: True for k in kinds}
    if uris:
        kwargs["resource_subscriptions"] = list(uris)
    wire = {_wire(k): v for k, v in kwargs.items()}
    request = session.transcript.record("request", session.name, "subscriptions/listen", {"notifications": wire})
    stream = Stream(tuple(kinds), tuple(uris))
    assert session.streams is not None  # checked by `open_stream`, in this same hop
    honored, error = await session.streams.start(_hold, session, stream, kwargs, limit, request.seq)
    if error is not None:
        session.transcript.record(
            "error", session.name, "subscriptions/listen", {"message": str(error)}, related=request.seq
        )
        return stream, error
    session.transcript.record(
        "response", session.name, "subscriptions/listen", {"acknowledged": honored}, related=request.seq
    )
    stream.honored = honored
    listening(session).streams.append(stream)
    return stream, None


async def _hold(
    session: Session,
    stream: Stream,
    kwargs: dict[str, Any],
    limit: float,
    request_seq: int,
    *,
    task_status: TaskStatus[tuple[dict[str, object] | None, ListenFailed | None]],
) -> None:
    """Own one listen stream in one task: enter, report the ack, drain events until cancelled.

    Draining matters: the SDK keeps unconsumed events in a bounded backlog and declares the
    stream lost when it overflows. The events themselves are recorded by the session's
    message_handler (the SDK tees each one there), not here.
    """
    from mcp.client.subscriptions import SubscriptionLost

    assert session.client is not None
    client = session.client
    scope = stream.scope = anyio.CancelScope()
    started = False
    ended: str | None = None
    with scope, _running(session, stream):
        try:
            async with contextlib.AsyncExitStack() as stack:
                with anyio.fail_after(limit):
                    subscription = await stack.enter_async_context(client.listen(**kwargs))
                honored = subscription.honored.model_dump(by_alias=True, mode="json", exclude_none=True)
                started = True
                task_status.started((honored, None))
                async for _event in subscription:
                    pass
            ended = "the server closed the stream"
        except TimeoutError:
            if not started:
                task_status.started((None, ListenFailed(f"no acknowledgment within {limit:g} s")))
                return
            ended = "timed out"
        except SubscriptionLost as exc:
            ended = f"the stream was lost ({exc})"
        except Exception as exc:  # reported to the step (before the ack) or the transcript
            cause = f"{type(exc).__name__}: {exc}"
            if not started:
                refusal = Refusal.taken(exc, session.refusals)
                said = f"refused: {refusal.said()}" if refusal is not None else cause
                task_status.started((None, ListenFailed(said, refusal)))
                return
            ended = cause
    if ended is not None and not scope.cancel_called:
        stream.ended = ended
        session.transcript.record("info", session.name, "subscriptions/listen", {"ended": ended}, related=request_seq)


@contextlib.contextmanager
def _running(session: Session, stream: Stream) -> Iterator[None]:
    """The stream's task is alive: on the stream, and counted for its session's close (`holding`)."""
    held = listening(session)
    stream.running = True
    held.running += 1
    try:
        yield
    finally:
        held.running -= 1
        stream.running = False
