"""OAuth discovery of a protected MCP server, once for the auth steps and the `auth` checks.

A client that gets a 401 reads the `WWW-Authenticate` challenge for the RFC 9728 metadata URL,
or tries the well-known locations (path-inserted, then root); the metadata names authorization
servers, whose RFC 8414 metadata names the token endpoint and keys. The steps and the checks
judge the same answers, so the rules live here and nowhere else.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "MAX_BODY",
    "MetadataFetch",
    "as_metadata_locations",
    "challenge_params",
    "challenge_problem",
    "fetch_json",
    "refused_for_token",
    "resource_metadata_locations",
]

#: Largest metadata document read (a server may send anything).
MAX_BODY = 256 * 1024
#: seconds a metadata document may take to arrive whole (a document is a few hundred bytes)
WITHIN = 10.0
_PARAM = re.compile(r'(\w+)="([^"]*)"')
_PRM = "/.well-known/oauth-protected-resource"


def challenge_params(header: str) -> dict[str, str]:
    """The auth-params of a `WWW-Authenticate: Bearer k="v", ...` challenge, names lower-cased."""
    return {k.lower(): v for k, v in _PARAM.findall(header)}


def challenge_problem(header: str, url: str) -> str | None:
    """Why a 401's challenge does not point a client to the server's RFC 9728 metadata, or None.

    It must be a Bearer challenge whose `resource_metadata` is a well-known URL on the server's
    own origin (RFC 9728 §5.1): a client follows it to find the authorization server.
    """
    if not header:
        return "no WWW-Authenticate header"
    if not header.lower().startswith("bearer"):
        return "the challenge is not a Bearer challenge"
    metadata = challenge_params(header).get("resource_metadata", "")
    if not metadata:
        return "the challenge has no resource_metadata parameter"
    here, there = urlsplit(url), urlsplit(metadata)
    if (there.scheme, there.netloc) != (here.scheme, here.netloc):
        return f"resource_metadata points to another origin ({there.scheme}://{there.netloc})"
    if not there.path.startswith(_PRM):
        return f"resource_metadata is not under {_PRM}"
    return None


def resource_metadata_locations(url: str) -> list[str]:
    """RFC 9728 §3.1 well-known URLs of the resource `url`: path-inserted, then the root one."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    locations = [f"{origin}{_PRM}{path}"]
    if path:
        locations.append(f"{origin}{_PRM}")
    return locations


def as_metadata_locations(issuer: str) -> list[str]:
    """Where an authorization server's metadata lives: RFC 8414 §3.1 (path-inserted), then OpenID
    Connect Discovery (path-inserted and path-appended), the order MCP clients try."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    found = [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]
    return list(dict.fromkeys(found))


@dataclass
class MetadataFetch:
    """The first location that served a JSON object, and every attempt (for the failure message)."""

    url: str | None = None
    document: dict[str, Any] | None = None  # steps/auth.py reads it as it is; object needs narrowing there
    attempts: list[tuple[str, int | None, str]] = field(default_factory=list)  # (url, status, note)

    def shown(self) -> str:
        lines = []
        for url, status, note in self.attempts:
            lines.append(
                f"  GET {url} -> {status if status is not None else 'no answer'}{f' ({note})' if note else ''}"
            )
        return "\n".join(lines)


def fetch_json(
    client: httpx2.Client, locations: list[str], headers: dict[str, str] | None = None, *, within: float = WITHIN
) -> MetadataFetch:
    """GET each location in turn until one answers 200 with a JSON object.

    Bodies are read up to `MAX_BODY`, each within `within` seconds: the client's timeout bounds
    each read, not the body, and a server that trickles a byte every second would be read for
    days. A location that cannot be reached, or answers too slowly, is an attempt, not an error.
    """
    import json

    import httpx2

    fetch = MetadataFetch()
    for location in dict.fromkeys(locations):
        deadline = time.monotonic() + within
        try:
            with client.stream("GET", location, headers=headers) as answer:
                status = answer.status_code
                body = b""
                if status == 200:
                    for chunk in answer.iter_bytes():
                        body += chunk
                        if len(body) > MAX_BODY or time.monotonic() > deadline:
                            break
        except httpx2.HTTPError as exc:
            fetch.attempts.append((location, None, f"{type(exc).__name__}: {exc}"[:300]))
            continue
        if status != 200:
            fetch.attempts.append((location, status, ""))
            continue
        if len(body) <= MAX_BODY and time.monotonic() > deadline:
            fetch.attempts.append((location, status, f"its body did not come whole within {within:g} s"))
            continue
        if len(body) > MAX_BODY:
            fetch.attempts.append((location, status, f"larger than {MAX_BODY // 1024} KiB"))
            continue
        try:
            document = json.loads(body)
        except ValueError:
            fetch.attempts.append((location, status, "not JSON"))
            continue
        if not isinstance(document, dict):
            fetch.attempts.append((location, status, "not a JSON object"))
            continue
        fetch.attempts.append((location, status, ""))
        fetch.url, fetch.document = location, document
        return fetch
    return fetch


def refused_for_token(url: str, headers: dict[str, str], timeout: float = 5.0) -> str | None:
    """The `WWW-Authenticate` of a 401 the server at `url` answers a plain GET with (`""` if none), or
    None when it does not ask for a token: why a connection failed, told by the server, not guessed
    from an error text. The body of any answer is never read (a 200 may be an endless SSE stream)."""
    import httpx2

    try:
        with (
            httpx2.Client(timeout=timeout, trust_env=False, follow_redirects=False) as client,
            client.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as answer,
        ):
            if answer.status_code == 401:
                return str(answer.headers.get("www-authenticate", ""))
    except httpx2.HTTPError:
        return None
    return None
