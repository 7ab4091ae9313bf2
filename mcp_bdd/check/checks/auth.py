"""The `auth` group: does an HTTP server protected by OAuth behave as MCP clients need?

A client without a token must get 401 with a `WWW-Authenticate` challenge naming the server's
RFC 9728 protected resource metadata; that metadata names authorization servers whose RFC 8414
metadata names the token endpoint and keys; a garbage token is refused with 401, never accepted
and never a crash. The checks make their own HTTP requests to the session's URL, with the
session's headers minus `Authorization` (or with a garbage one), so the checked session itself
may carry a valid token (`--header "Authorization: Bearer ..."`).

A server that answers without a token is not protected: one info finding, no failure. Over
stdio and in-memory there is no HTTP, hence nothing to check (a note says so).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_bdd.check._context import CheckContext
from mcp_bdd.check._discovery import (
    MAX_BODY,
    MetadataFetch,
    as_metadata_locations,
    challenge_params,
    challenge_problem,
    fetch_json,
    resource_metadata_locations,
)
from mcp_bdd.check._finding import Call, Problem, bounded
from mcp_bdd.check._registry import check
from mcp_bdd.check._severity import Severity
from mcp_bdd.check.checks.poisoning import stack_trace

if TYPE_CHECKING:
    import httpx2

__all__: list[str] = []

#: Tokens no authorization server issued: plain garbage, an unsigned JWT (alg "none"), broken JWT segments.
BAD_TOKENS = {
    "a garbage token": "mcp-bdd-check-not-a-token",
    'an unsigned JWT (alg "none")': "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJtY3AtYmRkIiwic2NvcGUiOiIqIn0.",
    "a JWT with broken segments": "eyJ.e30.%%%",
}
_MAX_SERVERS = 5  # authorization servers checked per metadata document


@dataclass
class Answer:
    """One HTTP exchange the auth checks made (status, headers, the start of the body)."""

    method: str
    url: str
    sent: str  # the token sent, described: "no token", "a garbage token", ...
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    error: str = ""  # the connection failed

    def call(self) -> Call:
        response: dict[str, object] = {"status": self.status, "headers": self.headers}
        if self.body:
            response["body"] = self.body
        return Call(
            method=f"HTTP {self.method}",
            params=bounded({"url": self.url, "sent": self.sent}),
            response=bounded(response) if self.status is not None else None,
            note=bounded(self.error) if self.error else None,
        )


@dataclass
class Probe:
    """What the auth checks learn once: whether the server is protected, and its metadata."""

    url: str
    transport: str
    headers: dict[str, str]  # the session's headers without Authorization
    unauthenticated: Answer
    metadata: MetadataFetch | None = None  # RFC 9728, when the server is protected
    hint: str | None = None  # the metadata URL a valid 401 challenge names

    @property
    def protected(self) -> bool:
        return self.unauthenticated.status in (401, 403)


def _client(ctx: CheckContext) -> httpx2.Client:
    import httpx2

    timeout = max(1.0, min(float(ctx.session.timeout), 10.0))
    return httpx2.Client(timeout=timeout, trust_env=False, follow_redirects=False)


def _exchange(ctx: CheckContext, url: str, transport: str, headers: dict[str, str], sent: str) -> Answer:
    """One MCP-shaped request (streamable HTTP: POST the opening request; SSE: GET the stream) with `headers`.

    A 2xx body is never read (an SSE stream does not end); an error's is, up to MAX_BODY. A
    session the server opened for us is deleted again.
    """
    import httpx2

    if transport == "sse":
        method, content = "GET", None
        headers = {**headers, "Accept": "text/event-stream"}
    else:
        method = "POST"
        # the request the session itself opened with: the legacy handshake, or the 2026-07-28 discovery
        envelope = {"io.modelcontextprotocol/protocolVersion": ctx.protocol,
                    "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip
        message: dict[str, object] = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                                   "params": {"_meta": envelope}}  # fmt: skip
        if ctx.legacy:
            message["method"] = "initialize"
            message["params"] = {
                "protocolVersion": ctx.protocol,
                "capabilities": {},
                "clientInfo": {"name": "mcp-bdd-check", "version": "0"},
            }
        content = json.dumps(message)
        headers = {
            **headers,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": ctx.protocol,
            **({} if ctx.legacy else {"Mcp-Method": "server/discover"}),  # 2026-07-28 routing header
        }
    answer = Answer(method, url, sent)
    with _client(ctx) as client:
        try:
            with client.stream(method, url, headers=headers, content=content) as response:
                answer.status = response.status_code
                answer.headers = {k.lower(): v for k, v in response.headers.items() if k.lower() != "set-cookie"}
                if response.status_code >= 300:
                    body = b""
                    for chunk in response.iter_bytes():
                        body += chunk
                        if len(body) > MAX_BODY:
                            break
                    answer.body = body[:MAX_BODY].decode("utf-8", "replace")
            session_id = answer.headers.get("mcp-session-id")
            if session_id and answer.status is not None and answer.status < 300:
                client.delete(url, headers={**headers, "Mcp-Session-Id": session_id})
        except httpx2.HTTPError as exc:
            answer.error = f"{type(exc).__name__}: {exc}"[:500]
    return answer


def _without_authorization(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != "authorization"}


def _probe(ctx: CheckContext) -> Probe | None:
    """Learn once (shared by the group's checks) what the server does without a token; None over stdio."""
    if "auth" in ctx.shared:
        found: Probe | None = ctx.shared["auth"]
        return found
    server = ctx.session.server
    probe: Probe | None = None
    if not server.url or server.transport not in ("streamable-http", "sse"):
        ctx.note_once(
            f"auth: not applicable: the server runs over {server.transport} (OAuth protects HTTP transports only)."
        )
    else:
        headers = _without_authorization(dict(server.headers or {}))
        answer = _exchange(ctx, server.url, server.transport, headers, "no token")
        probe = Probe(server.url, server.transport, headers, answer)
        if probe.protected:
            header = probe.unauthenticated.headers.get("www-authenticate", "")
            if challenge_problem(header, server.url) is None:
                probe.hint = challenge_params(header)["resource_metadata"]
            with _client(ctx) as client:
                locations = [*([probe.hint] if probe.hint else []), *resource_metadata_locations(server.url)]
                probe.metadata = fetch_json(client, locations)
    ctx.shared["auth"] = probe
    return probe


def _shown(document: dict[str, object]) -> str:
    """Public metadata as sent (its `token_endpoint` is no secret: only secret shapes are masked, by Finding)."""
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return text if len(text) <= 2000 else f"{text[:2000]}… ({len(text)} characters in all)"


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


@check(
    "auth.challenge",
    severity="high",
    group="auth",
    rationale="A client without a token learns where to get one only from a 401 naming the resource metadata.",
)
def challenge(ctx: CheckContext) -> Iterator[Problem]:
    """A request without an `Authorization` header (the session's other headers kept) gets 401 with
    `WWW-Authenticate: Bearer resource_metadata="..."` pointing to a well-known URL on the server's
    origin (RFC 9728 §5.1, the MCP authorization spec). A server that answers it is reported as not
    protected (info: no failure); a 403 without a token, or a crash, is a finding."""
    probe = _probe(ctx)
    if probe is None:
        return
    answer = probe.unauthenticated
    target = f"server {probe.url}"
    if answer.status is None:
        yield Problem(
            title="a request without a token got no answer",
            target=target,
            details=answer.error,
            call=answer.call(),
            tip="the session connected, the same request without Authorization did not: is a proxy in between?",
        )
    elif answer.status >= 500:
        yield Problem(
            title=f"a request without a token made the server fail ({answer.status})",
            target=target,
            call=answer.call(),
            tip="refuse a request without a token with 401 before handling it, never with a server error.",
        )
    elif answer.status == 403:
        yield Problem(
            title="a request without a token is refused with 403, not 401",
            target=target,
            call=answer.call(),
            severity=Severity.MEDIUM,
            tip="a client starts the OAuth flow on 401 only (RFC 6750 §3.1: 403 is for insufficient scope).",
        )
    elif answer.status != 401:
        yield Problem(
            title="the server is not protected: it answers a request without an Authorization header",
            target=target,
            details=f"{answer.method} {answer.url} without a token -> {answer.status}",
            severity=Severity.INFO,
            tip="if it should be protected, make it an OAuth resource server (the MCP SDK: AuthSettings and a "
            "TokenVerifier); if it sits behind a gateway that checks tokens, check the gateway's URL instead.",
        )
    else:
        problem = challenge_problem(answer.headers.get("www-authenticate", ""), probe.url)
        if problem is not None:
            yield Problem(
                title=f"the 401 does not point to the protected resource metadata: {problem}",
                target=target,
                call=answer.call(),
                tip='answer 401 with WWW-Authenticate: Bearer resource_metadata="<origin>/.well-known/'
                'oauth-protected-resource<path>" (RFC 9728 §5.1); the SDK does when AuthSettings has '
                "resource_server_url.",
            )


@check(
    "auth.resource-metadata",
    severity="high",
    group="auth",
    rationale="Clients find the authorization server through the RFC 9728 protected resource metadata.",
)
def resource_metadata(ctx: CheckContext) -> Iterator[Problem]:
    """A protected server serves its protected resource metadata (RFC 9728): at the URL its 401 names,
    and at a well-known location (`/.well-known/oauth-protected-resource` path-inserted before the
    server's path, or at the root) for clients that look before they are refused. It is a JSON object
    whose `resource` is the server's URL and whose `authorization_servers` is a non-empty list of
    URLs."""
    probe = _probe(ctx)
    if probe is None or not probe.protected or probe.metadata is None:
        return
    fetch = probe.metadata
    if fetch.document is None:
        yield Problem(
            title="no protected resource metadata is served (RFC 9728)",
            target=f"server {probe.url}",
            details=fetch.shown(),
            tip="serve a JSON object with resource and authorization_servers at "
            f"{resource_metadata_locations(probe.url)[0]} (the SDK does when AuthSettings has resource_server_url).",
        )
        return
    assert fetch.url is not None
    yield from _metadata_location_problems(ctx, probe, fetch)
    yield from _metadata_content_problems(fetch.document, fetch.url, probe.url)


def _metadata_location_problems(ctx: CheckContext, probe: Probe, fetch: MetadataFetch) -> Iterator[Problem]:
    """The metadata was found, but not at the URL the 401 names, or not at a well-known location."""
    target = f"server {probe.url}"
    wells = resource_metadata_locations(probe.url)
    if probe.hint and fetch.url != probe.hint:
        yield Problem(
            title="the URL the 401 names serves no protected resource metadata",
            target=target,
            details=fetch.shown(),
            tip=f"serve the metadata at {probe.hint}, or name {fetch.url} in the challenge.",
        )
    if fetch.url not in wells:
        with _client(ctx) as client:
            well = fetch_json(client, wells)
        if well.document is None:
            yield Problem(
                title="the protected resource metadata is not at a well-known location",
                target=target,
                details=well.shown(),
                severity=Severity.MEDIUM,
                tip=f"clients that look before they are refused try {' and '.join(wells)} (RFC 9728 §3.1).",
            )


def _metadata_content_problems(document: dict[str, object], served_at: str, server_url: str) -> Iterator[Problem]:
    """RFC 9728 §2 and §3.3: `resource` is the server's own URL, `authorization_servers` a non-empty
    list of URLs."""
    target = f"server {server_url}"
    where = f"GET {served_at} -> 200\n{_shown(document)}"
    resource = document.get("resource")
    servers = document.get("authorization_servers")
    missing = [k for k, ok in (("resource", isinstance(resource, str) and resource),
                               ("authorization_servers", isinstance(servers, list) and servers
                                and all(isinstance(s, str) and s.startswith(("https://", "http://")) for s in servers)))
               if not ok]  # fmt: skip
    if missing:
        yield Problem(
            title="the protected resource metadata lacks " + " and ".join(f'a valid "{k}"' for k in missing),
            target=target,
            details=where,
            tip='RFC 9728 §2: "resource" is the server\'s URL; "authorization_servers" lists the issuer URLs '
            "of the authorization servers that issue its tokens.",
        )
    elif isinstance(resource, str) and not _same_url(resource, server_url):
        yield Problem(
            title=f'the protected resource metadata names another resource ("{resource}")',
            target=target,
            details=where,
            severity=Severity.MEDIUM,
            tip=f'RFC 9728 §3.3: "resource" must be the URL clients use ({server_url}), or they must not trust it.',
        )


@check(
    "auth.authorization-server",
    severity="high",
    group="auth",
    rationale="A client gets a token only from an authorization server whose RFC 8414 metadata it can read.",
)
def authorization_server(ctx: CheckContext) -> Iterator[Problem]:
    """Each authorization server the protected resource metadata lists (up to 5) serves RFC 8414
    metadata (`/.well-known/oauth-authorization-server`, or OpenID Connect discovery) naming its
    `issuer` (the same URL), a `token_endpoint` and a `jwks_uri` (the keys tokens are verified with)."""
    probe = _probe(ctx)
    if probe is None or probe.metadata is None or probe.metadata.document is None:
        return
    servers = probe.metadata.document.get("authorization_servers")
    if not isinstance(servers, list):
        return
    for issuer in [s for s in servers if isinstance(s, str) and s.startswith(("https://", "http://"))][:_MAX_SERVERS]:
        target = f"authorization server {issuer}"
        with _client(ctx) as client:
            fetch = fetch_json(client, as_metadata_locations(issuer))
        if fetch.document is None:
            yield Problem(
                title="the authorization server's metadata cannot be read (RFC 8414)",
                target=target,
                details=fetch.shown(),
                tip="serve its metadata at " + as_metadata_locations(issuer)[0] + "; is the issuer URL right?",
            )
            continue
        document = fetch.document
        where = f"GET {fetch.url} -> 200\n{_shown(document)}"
        missing = [k for k in ("issuer", "token_endpoint", "jwks_uri") if not isinstance(document.get(k), str)
                   or not document.get(k)]  # fmt: skip
        if missing:
            yield Problem(
                title="the authorization server's metadata does not name " + ", ".join(missing),
                target=target,
                details=where,
                severity=Severity.HIGH if set(missing) - {"jwks_uri"} else Severity.MEDIUM,
                tip="RFC 8414 §2: issuer and token_endpoint let a client get a token; jwks_uri lets the server "
                "(and anyone) verify it.",
            )
        elif not _same_url(str(document["issuer"]), issuer):
            yield Problem(
                title=f'the authorization server\'s metadata names another issuer ("{document["issuer"]}")',
                target=target,
                details=where,
                tip="RFC 8414 §3.3: the issuer in the metadata must be the URL it was fetched for, "
                "or a client must not use it.",
            )


@check(
    "auth.bad-token",
    severity="high",
    group="auth",
    rationale="A token no authorization server issued must be refused with 401: accepting it opens the server.",
)
def bad_token(ctx: CheckContext) -> Iterator[Problem]:
    """A protected server refuses tokens it cannot verify (a garbage string, an unsigned JWT with
    `alg: none`, a JWT with broken segments) with 401 (RFC 6750 §3.1 `invalid_token`): never 2xx
    (accepted), never 5xx (a crash), and the error body carries no stack trace."""
    probe = _probe(ctx)
    if probe is None or not probe.protected:
        return
    target = f"server {probe.url}"
    for what, token in BAD_TOKENS.items():
        answer = _exchange(ctx, probe.url, probe.transport, {**probe.headers, "Authorization": f"Bearer {token}"}, what)
        if answer.status is None:
            yield Problem(
                title=f"a request with {what} got no answer",
                target=target,
                details=answer.error,
                call=answer.call(),
                tip="the server must answer a bad token with 401, not drop the connection.",
            )
            continue
        if answer.status < 300:
            yield Problem(
                title=f"the server accepted {what} ({answer.status})",
                target=target,
                call=answer.call(),
                tip="verify every token's signature (never alg none), issuer, audience and expiry; "
                "anything unverifiable is 401.",
            )
        elif answer.status >= 500:
            yield Problem(
                title=f"{what} made the server fail ({answer.status})",
                target=target,
                call=answer.call(),
                tip="a token verifier must return 'no valid token' for anything it cannot parse, never raise.",
            )
        elif answer.status != 401:
            yield Problem(
                title=f"{what} is refused with {answer.status}, not 401",
                target=target,
                call=answer.call(),
                severity=Severity.MEDIUM,
                tip='answer 401 with WWW-Authenticate: Bearer error="invalid_token" (RFC 6750 §3.1): a client '
                "gets a new token on 401 only.",
            )
        if stack_trace(answer.body):
            yield Problem(
                title=f"the answer to {what} leaks a stack trace",
                target=target,
                call=answer.call(),
                tip="log the exception on the server; answer with a short error, never the trace.",
            )
