"""Why a connect failed, in words: what happened and what to do (a part of `Session`).

A handshake fails in many ways that the SDK reports alike ("Connection closed", "Server
returned an error response", a timeout): a server that exited as it started, one that answered
HTTP 401 or a web page, a legacy SSE stream that never said where to post, a pinned protocol the
server does not speak. `ConnectFailures` reads the transcript of this connect and the server's
state, and says which, with a tip. What it does not cover: failures after the session opened
(`_session._met` and its helpers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_bdd._loop import ServerExited, as_exited, is_exit
from mcp_bdd._sdk import unsupported_version
from mcp_bdd._text import raised_at
from mcp_bdd.errors import raised
from mcp_bdd.servers import RunningServer, exit_0_tip, exit_at_start_tip
from mcp_bdd.session._hop import Stalled
from mcp_bdd.session._outcome import (
    CREDENTIALS_TIP,
    is_connection_closed,
    is_protocol_violation,
    made_up_tip,
    stands_in,
)
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from mcp_bdd.session._http import Inbox

__all__ = ["ConnectFailures", "content_type", "said_exit", "unfit_handshake"]


class ConnectFailures:
    """The connect-failure explanations of a session (a part of `Session`)."""

    name: str
    server: RunningServer
    transcript: Transcript
    protocol: str
    startup_timeout: float
    _inbox: Inbox | None

    def _connect_failure(self, cause: BaseException, elapsed: float, since: int) -> str:
        # the SDK says only "Server returned an error response" for an HTTP error: ours says which
        refused = self._http_refusal(since, cause)
        if refused is None:  # a server that answered over HTTP runs: only one that went quiet may be exiting
            self.server.settle()  # its exit code, once it has one, is quoted below
        what, tip = refused or self._not_connected(cause, since)
        return (
            f'The MCP server "{self.name}" {what} (after {elapsed:.2f} s).\n'
            + self.server.describe_death()
            + f"\n  Tip: {tip}"
        )

    def _refused_connect(
        self, status: int, answer: Mapping[str, object], cause: BaseException | None
    ) -> tuple[str, str]:
        """(what happened, tip) for a handshake refused with 401/403: the server's own reason when its
        body was a JSON-RPC error (the SDK raised it as the cause), and a tip that fits what was sent."""
        said = ""
        if isinstance(cause, MCPError) and not stands_in(cause.error):
            said = f": {cause.message!r}"  # the server's words (masked and escaped where printed)
        kind = content_type(answer)
        shown = f"HTTP {status} ({kind})" if kind else f"HTTP {status}"
        what = f"refused the connection with {shown} to {answer.get('method')} {answer.get('url')}{said}"
        sent = any(name.lower() in ("authorization", "cookie") for name in self.server.headers)
        if status == 403 or sent:
            return what, (
                "the server did not accept the credentials that were sent (a wrong or expired token, or one "
                "without the scope or role this server asks for): check the value in `headers` of its "
                "configuration, and where it comes from (an environment variable, a fake's token)."
            )
        return what, CREDENTIALS_TIP

    def _not_connected(self, cause: BaseException, since: int) -> tuple[str, str]:
        """(what happened, tip) for a handshake that failed without an HTTP error (`since`: the
        transcript entry of this connect)."""
        tip = self._start_tip()
        said = self._broken_handshake(cause) or self._handshake_unanswered(cause, tip)
        said = said or (self._handshake_error(cause, since, tip) if isinstance(cause, MCPError) else None)
        if said is not None:
            return said
        if is_exit(cause):  # its lifespan or a handler of the handshake called sys.exit()
            return f"exited as it started: {said_exit(as_exited(cause))}", exit_at_start_tip(self.name)
        if self.server.transport == "in-memory":
            return f"raised {raised(cause)} while starting", (
                "the app's own code failed (its lifespan, or a handler of the handshake): fix it where named. "
                "Run with -D transport=stdio to see the whole traceback on the server's stderr."
            )
        return f"could not be connected to: {type(cause).__name__}: {str(cause) or type(cause).__name__}", tip

    def _start_tip(self) -> str:
        """What to look at when a server did not connect, by how it was started."""
        if self.server.transport == "in-memory":
            return (
                "the app's factory or lifespan did not finish starting (does it wait for something that never "
                "comes?): fix it there; -D transport=stdio runs it as a process, with its stderr."
            )
        if not self.server.started:
            return "is the server running at that URL? Check `url` and `headers` in your configuration."
        return "check the server's stderr above; run the command by hand to see it start."

    def _broken_handshake(self, cause: BaseException) -> tuple[str, str] | None:
        """(what happened, tip) when the server answered the handshake with something unusable."""
        from mcp_bdd.session._sse_events import EndpointRefused  # httpx2 only for HTTP servers

        if isinstance(cause, MCPError) and is_protocol_violation(cause):
            return f"broke the protocol during the handshake ({cause.message})", made_up_tip(cause.error) or (
                "fix what the server sends in answer to the handshake (quoted above)."
            )
        if (version := unsupported_version(cause)) is not None:
            return f"answered initialize with protocolVersion {version!r}, a version the client did not offer", (
                f"a server answers with the version the client asked for ({', '.join(HANDSHAKE_PROTOCOL_VERSIONS)} "
                "are the ones this client speaks) or another one it supports, never one of its own making."
            )
        if unfit_handshake(cause):
            return f"answered the handshake with a result that does not fit the MCP schema: {cause}", (
                "fix the shape of the server's initialize result (serverInfo, capabilities: each an object)."
            )
        if isinstance(cause, EndpointRefused):
            return cause.what, cause.tip
        return None

    def _handshake_unanswered(self, cause: BaseException, tip: str) -> tuple[str, str] | None:
        """(what happened, tip) when no answer to the handshake came in time."""
        if isinstance(cause, Stalled):
            return f"could not be connected: {cause} (it is blocked)", (
                "an in-process server's tool, or its lifespan's teardown, that blocks holds the run's event loop "
                "(see the failure or the teardown warning before this one): run that server over stdio, or make "
                "its code await instead of blocking."
            )
        if not isinstance(cause, TimeoutError):
            return None
        if self.server.stdout_evidence():  # an answer written wrong never arrives as one
            tip = "fix what the server writes on stdout (quoted above); raise startup_timeout only if it is slow."
        if self.server.transport == "sse" and self._no_endpoint_came():
            return (
                f"opened its SSE stream but sent no `endpoint` event (the URL to POST requests to) within "
                f"startup_timeout = {self.startup_timeout:g} s"
            ), (
                "a legacy SSE MCP server sends `event: endpoint` first: is this URL an MCP endpoint, and of "
                'the legacy kind (a streamable HTTP server is configured with transport = "streamable-http")?'
            )
        return f"did not complete the MCP handshake within startup_timeout = {self.startup_timeout:g} s", tip

    def _handshake_error(self, cause: MCPError, since: int, tip: str) -> tuple[str, str]:
        """(what happened, tip) for a JSON-RPC error in the handshake: a closed connection, the
        pinned discover's error, or the server's refusal."""
        if is_connection_closed(cause):
            if self.server.started and self.server.returncode == 0:
                tip = exit_0_tip(self.server.transport)
            broken = self._broken_exchange(since)  # over SSE: a handshake POST whose connection broke
            return f"closed the connection during the handshake ({broken or f'{cause.code}: {cause.message}'})", tip
        if self.protocol in MODERN_PROTOCOL_VERSIONS:  # `_discover_pinned`
            return self._not_discovered(cause)
        return f"answered the handshake with a JSON-RPC error ({cause.code}: {cause.message})", (
            "the server refused to start the session: read its message and logs; if it does not speak "
            'this protocol version, set protocol = "legacy" (2025-11-25) or "2026-07-28" for it.'
        )

    def _not_discovered(self, cause: MCPError) -> tuple[str, str]:
        """(what happened, tip) for a pinned protocol's server/discover that got an error."""
        said = f"({cause.code}: {cause.message})"
        if cause.code == types.UNSUPPORTED_PROTOCOL_VERSION:
            data = cause.error.data if isinstance(cause.error.data, dict) else {}
            supported = data.get("supported")
            listed = f" (it supports {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
            return f"does not support protocol {self.protocol}{listed} {said}", (
                f'protocol = "{self.protocol}" pins that version: set protocol = "auto" to use one the server '
                "supports, or pin one of them."
            )
        tip = (
            f'protocol = "{self.protocol}" pins that version, and a server that speaks it answers server/discover; '
            "this one may speak only the 2025-11-25 handshake"
            if cause.code == types.METHOD_NOT_FOUND
            else f"read the server's message and logs; if it does not speak protocol {self.protocol}"
        )
        return f"answered server/discover at protocol {self.protocol} with an error {said}", (
            f'{tip}: set protocol = "auto" (probe, then fall back to the handshake) or "legacy" for it.'
        )

    def _http_refusal(self, since: int, cause: BaseException | None = None) -> tuple[str, str] | None:
        """(what happened, tip) when the URL's last answer to a handshake request was an HTTP error,
        or not what an MCP endpoint answers.

        Only this connect's answers (after the transcript entry `since`): an earlier connect's 401
        is not this one's cause. Over Streamable HTTP only the POSTs: the GET stream a client opens
        after `initialized` is refused with 405 by servers that do not offer one, routinely. Over
        SSE the GET that opens the stream comes first (`_sse_refusal`)."""
        sse = self.server.transport == "sse"
        answers = [
            i.payload
            for i in self.transcript.items
            if i.seq > since
            and i.method == "http"
            and i.server == self.name
            and (sse or i.payload.get("method") == "POST")
        ]
        if not answers:
            return None
        last = answers[-1]
        if sse:
            return self._sse_refusal(last)
        status, kind = _status(last), content_type(last)
        if status == 202:
            return None  # a request's POST accepted, not answered: the error _http made up for it says so
        what = (
            f"answered HTTP {status} ({kind or 'no content type'}) to {last.get('method')} {last.get('url')}: "
            "not an MCP endpoint's answer"
        )
        if status < 300 and kind not in ("application/json", "text/event-stream", ""):
            return what, (
                "an MCP endpoint answers with application/json or text/event-stream: this URL serves "
                "something else (a web page?). Check the path in `url`: Streamable HTTP servers usually serve /mcp."
            )
        if status < 400:
            return None
        if status in (401, 403):
            return self._refused_connect(status, last, cause)
        if status in (404, 405, 406, 415, 501):
            return what, (
                "check the path in `url`: Streamable HTTP servers usually serve /mcp "
                '(SSE servers /sse, with transport = "sse").'
            )
        return what, "the server failed on the request: read its logs."

    def _sse_refusal(self, answer: Mapping[str, object]) -> tuple[str, str] | None:
        """(what happened, tip) for an SSE connect whose last answer was not what an SSE server
        answers. The GET must open a `text/event-stream`: a Streamable HTTP endpoint (/mcp) asked
        for SSE answers 400, 405 or 406 instead. A POST's 2xx is only an acknowledgement (202
        "Accepted", in any content type: Express sends text/html): the message comes on the stream."""
        status, kind, url = _status(answer), content_type(answer), str(answer.get("url"))
        if answer.get("method") != "GET":
            if status < 400:
                return None
            what = f"answered HTTP {status} to POST {url}, a message sent where its SSE stream said"
            if status in (401, 403):  # the stream opened to anyone, the messages need credentials
                return what, CREDENTIALS_TIP
            return what, (
                "the server refused a message of this session: read its logs. Behind a proxy or with several "
                "workers, the session may live in another worker (sticky sessions)."
            )
        what = f"answered HTTP {status} to the GET that opens an SSE stream at {url}"
        if status in (401, 403):
            return what, CREDENTIALS_TIP
        if 300 <= status < 400:
            return f"{what}: a redirect to another origin, which an MCP client does not follow", (
                "point `url` at the address it redirects to."
            )
        if status < 300 and kind == "text/event-stream":
            return None
        if status < 300:
            return f"{what} with {kind or 'no content type'}: not an event stream", (
                "an SSE endpoint answers its GET with text/event-stream: this URL serves something else "
                "(a web page?). Check the path in `url`: SSE servers usually serve /sse."
            )
        what += ": not an SSE endpoint"
        if status in (400, 405, 406) and not url.rstrip("/").endswith("/sse"):
            return what, (
                "this URL looks like a Streamable HTTP endpoint (SSE servers usually serve /sse): connect "
                'without "over SSE" (a url server is Streamable HTTP unless its path ends in /sse), or point '
                "`url` at the server's SSE endpoint."
            )
        if status == 404:
            return what, "check the path in `url`: SSE servers usually serve /sse."
        return what, "the server did not open an event stream: read its logs; check `url` and `headers`."

    def _no_endpoint_came(self) -> bool:
        """Whether a legacy SSE stream opened and never said where to send the handshake."""
        return (
            self._inbox is not None
            and self._inbox.endpoint is None
            and any(
                i.method == "http" and i.payload.get("method") == "GET" and i.payload.get("status") == 200
                for i in self.transcript.items
            )
        )

    def _broken_exchange(self, since: int) -> str | None:
        """Why an HTTP server's connection closed under a request while it runs: what the transport
        recorded of the exchange that failed (`_http`: a response it could not parse), if anything."""
        failed = [
            i.payload
            for i in self.transcript.items
            if i.seq > since and i.method == "transport" and i.server == self.name and "request" in i.payload
        ]
        if not failed:
            return None
        return f"the HTTP exchange of the {failed[-1]['request']} request broke: {failed[-1]['message']}"


def content_type(answer: Mapping[str, object]) -> str:
    """The media type of a recorded HTTP answer (lower case, no parameters), or ""."""
    headers = answer.get("headers")
    kind = answer.get("content_type") or (headers.get("content-type", "") if isinstance(headers, dict) else "")
    return str(kind).split(";")[0].strip().lower()


def _status(answer: Mapping[str, object]) -> int:
    """The status of a recorded HTTP answer (`Session._record_http` records the server's number)."""
    status = answer.get("status", 0)
    return status if isinstance(status, int) else 0


def unfit_handshake(cause: BaseException) -> bool:
    """The SDK's own validation of the server's handshake answer failed; not a ValidationError of
    the server's code (an in-process lifespan's settings that lack a variable: its start failed)."""
    return isinstance(cause, ValidationError) and cause.title in ("InitializeResult", "DiscoverResult")


def said_exit(exc: ServerExited) -> str:
    """What in-process code did to exit, and where: `its code called sys.exit(2) (app.py:18, in leave)`."""
    return f"{exc}{raised_at(exc.exit)}"
