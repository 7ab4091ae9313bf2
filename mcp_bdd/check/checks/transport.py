"""The `transport` group: what the wire carries besides the checks' own requests.

Over stdio, stdout is the protocol channel: a line that is not JSON-RPC (a banner, a log line, a
pretty-printed answer) is dropped by lenient clients and breaks strict ones. The stdio framing
keeps such lines as evidence (`RunningServer.stdout_evidence`); this group makes a finding of them.

Over HTTP, a server on loopback is reachable from any web page the user's browser opens, by DNS
rebinding: a page of `evil.example` whose name is made to resolve to 127.0.0.1 posts to the
server, with `Host: evil.example` and `Origin: http://evil.example`. The MCP transport spec says
servers MUST validate the Origin header and SHOULD bind to localhost only; a 2xx answer to such a
request is the hole. The request is the opening one a client sends (initialize or
server/discover): it changes nothing on the server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from urllib.parse import urlsplit

from mcp_bdd.check._context import CheckContext
from mcp_bdd.check._finding import Problem
from mcp_bdd.check._registry import check
from mcp_bdd.check.checks.auth import _exchange

__all__ = ["FOREIGN_HOST", "FOREIGN_ORIGIN", "on_loopback"]

FOREIGN_HOST = "evil.example"
FOREIGN_ORIGIN = "http://evil.example"


@check(
    "transport.stdout-json",
    severity="medium",
    group="transport",
    rationale="A stdio server's stdout is the protocol: a line that is not JSON-RPC is lost or breaks the client.",
    late=True,
)
def stdout_json(ctx: CheckContext) -> Iterator[Problem]:
    """Over stdio, every line the server wrote on stdout during the run (its start and every check's
    request) was one JSON-RPC message: no banner, log line or pretty-printed answer. The lines are
    counted, and the first and last quoted (masked)."""
    server = ctx.session.server
    if server.transport != "stdio":
        return
    count = server.bad_stdout_lines()
    if count:
        yield Problem(
            title=f"the server wrote {count} line{'s' if count != 1 else ''} on stdout that "
            f"{'are' if count != 1 else 'is'} not JSON-RPC",
            details=server.stdout_evidence(),
            tip="write logs, banners and progress to stderr (print(..., file=sys.stderr), console.error): "
            "over stdio, stdout carries one JSON-RPC message per line and nothing else.",
        )


def on_loopback(url: str) -> bool:
    """Whether the URL's host is this machine: localhost, a *.localhost name, 127.0.0.0/8 or ::1."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@check(
    "transport.dns-rebinding",
    severity="high",
    group="transport",
    rationale="A loopback HTTP server that answers a foreign Host / Origin is open to any web page (DNS rebinding).",
)
def dns_rebinding(ctx: CheckContext) -> Iterator[Problem]:
    """For an HTTP server on loopback (localhost, 127.0.0.0/8, ::1): the opening request (initialize,
    or server/discover in the 2026-07-28 era; SSE: the stream's GET) sent with `Host: evil.example`
    and `Origin: http://evil.example` (the session's other headers kept) is refused — any 4xx. A 2xx
    answer is the finding. A server elsewhere is not checked (a note says so): its Host is routed by
    whatever fronts it."""
    server = ctx.session.server
    if not server.url or server.transport not in ("streamable-http", "sse"):
        return
    if not on_loopback(server.url):
        ctx.note_once("transport.dns-rebinding: not checked: the server is not on loopback")
        return
    kept = {k: v for k, v in (server.headers or {}).items() if k.lower() not in ("host", "origin")}
    forged = {**kept, "Host": FOREIGN_HOST, "Origin": FOREIGN_ORIGIN}
    answer = _exchange(ctx, server.url, server.transport, forged, f"Host: {FOREIGN_HOST}, Origin: {FOREIGN_ORIGIN}")
    if answer.status is None or not 200 <= answer.status < 300:
        said = answer.error or f"HTTP {answer.status}"
        ctx.note_once(f"transport.dns-rebinding: a foreign Host and Origin were refused ({said})")
        return
    yield Problem(
        title=f"the server answered HTTP {answer.status} to a request with a foreign Host and Origin ({FOREIGN_HOST})",
        details="a web page the user opens can reach a loopback server by DNS rebinding; the MCP transport spec "
        "says servers MUST validate the Origin header",
        call=answer.call(),
        tip="refuse requests whose Host is not the server's own (localhost, 127.0.0.1) or whose Origin is "
        "foreign, with 403 (the Python SDK: TransportSecuritySettings; the TypeScript SDK: "
        "allowedHosts / allowedOrigins, or createMcpExpressApp's host validation).",
    )
