"""Auth: state in plain language how a protected HTTP server treats each kind of client.

The client's access token comes from the `oauth` fake (an authorization server issuing signed JWTs;
the fake called "auth" unless the configuration declares a single `oauth` fake under another
name) and is sent as `Authorization: Bearer ...` by the session's HTTP client. So the token steps
come before the server step: the server is then started and connected with that token.

The checks read the HTTP answers the session recorded (status, and an error's headers): a 401's
`WWW-Authenticate` pointing to RFC 9728 protected resource metadata, a 403 `insufficient_scope`;
and fetch the server's protected resource metadata at its well-known locations.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from mcp_bdd.check._discovery import challenge_params, challenge_problem, fetch_json, resource_metadata_locations
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.fakes import FakeAuthServer
from mcp_bdd.runtime import ScenarioState
from mcp_bdd.steps._base import StepContext, expected_text, json_object
from mcp_bdd.steps.fakes import given, then

__all__: list[str] = []


def _state(context: StepContext) -> ScenarioState:
    st: ScenarioState | None = getattr(context, "mcp", None)
    if st is None:
        raise UsageError(
            "mcp-bdd's hooks are not installed: add `from mcp_bdd.environment import *` to environment.py."
        )
    return st


def _auth(context: StepContext) -> FakeAuthServer:
    """The authorization server of the scenario: "auth", or the single declared `oauth` fake."""
    st = _state(context)
    declared = [
        name for name, value in st.config.fakes.items() if (value if isinstance(value, str) else value.kind) == "oauth"
    ]
    name = declared[0] if len(declared) == 1 else "auth"
    server: FakeAuthServer = st.fakes.get(name, "oauth")
    return server


def _claims(token: str) -> dict[str, object]:
    import jwt

    claims: dict[str, object] = jwt.decode(token, options={"verify_signature": False})
    return claims


def _current_token(context: StepContext) -> str:
    header = str(_state(context).client_headers.get("Authorization", ""))
    if not header.startswith("Bearer "):
        raise UsageError(
            f"{_state(context).location}: the client has no access token to change. Tip: authorize it first: "
            'Given the client is authorized with the scopes "orders:read"'
        )
    return header[len("Bearer ") :]


def _use(context: StepContext, token: str) -> None:
    st = _state(context)
    if st.sessions:
        raise UsageError(
            f"{st.location}: the client's token is set before the server step (the session sends it when it "
            "connects). Tip: move this step above Given the MCP server ... is running."
        )
    st.client_headers["Authorization"] = f"Bearer {token}"  # the fake registered it with mcp_bdd.secrets


@given("the client has no access token")
def step_no_token(context: StepContext) -> None:
    """Connect without an `Authorization` header (the default; this states it).

    Example: Given the client has no access token
    """
    _state(context).client_headers.pop("Authorization", None)


@given('the client is authorized with the scopes "{scopes:Q}"')
def step_authorized(context: StepContext, scopes: str) -> None:
    """Give the client an access token from the fake authorization server, with these scopes.

    Example: Given the client is authorized with the scopes "orders:read orders:write"
    """
    wanted = _state(context).interpolate(scopes).split()
    _use(context, _auth(context).issue(wanted))


@given("the client's access token has expired")
def step_expired(context: StepContext) -> None:
    """Replace the client's token with one like it that expired a minute ago.

    Example: Given the client's access token has expired
    """
    claims, auth = _claims(_current_token(context)), _auth(context)
    now = int(time.time())
    token = auth.issue(
        str(claims.get("scope") or "").split(),
        audience=_audience(claims.get("aud")),
        client_id=str(claims.get("client_id") or "mcp-bdd"),
        issued_at=now - auth.lifetime - 60,
    )
    _use(context, token)


def _audience(aud: object) -> str | list[str] | None:
    """A token's `aud` as it was: one resource, or several (RFC 7519 allows a list)."""
    if isinstance(aud, str):
        return aud
    if isinstance(aud, list) and all(isinstance(item, str) for item in aud):
        return [str(item) for item in aud]
    return None


@given('the client\'s access token is for the audience "{audience:Q}"')
def step_audience(context: StepContext, audience: str) -> None:
    """Replace the client's token with one like it issued for another audience (another resource).

    Example: Given the client's access token is for the audience "https://other.example.com"
    """
    claims, auth = _claims(_current_token(context)), _auth(context)
    token = auth.issue(
        str(claims.get("scope") or "").split(),
        audience=_state(context).interpolate(audience),
        client_id=str(claims.get("client_id") or "mcp-bdd"),
    )
    _use(context, token)


# ------------------------------------------------------------------------------------------------
# The HTTP answers


def _responses(context: StepContext) -> list[dict[str, object]]:
    return [
        dict(item.payload)
        for item in _state(context).transcript.items
        if item.kind == "info" and item.method == "http" and isinstance(item.payload, dict)
    ]


def _last(context: StepContext) -> dict[str, object]:
    responses = _responses(context)
    if not responses:
        raise UsageError(
            f"{_state(context).location}: no HTTP exchange happened in this scenario. Tip: the auth checks read "
            'what the session received over HTTP: connect first (When I connect to the MCP server "<name>") '
            "to a server that runs over HTTP (Streamable HTTP or SSE)."
        )
    return responses[-1]


def _headers(response: dict[str, object]) -> dict[str, str]:
    """The headers recorded of an HTTP answer (`Session._record_http`: for answers of 300 and above)."""
    return {str(k): str(v) for k, v in json_object(response.get("headers")).items()}


def _status(response: dict[str, object]) -> int:
    status = response.get("status", 0)
    return status if isinstance(status, int) else 0


def _shown(response: dict[str, object]) -> str:
    headers = _headers(response)
    lines = [f"  {response.get('method')} {response.get('url')} -> {response.get('status')}"]
    lines += [f"    {k}: {v}" for k, v in headers.items()]
    return "\n".join(lines)


@then("the server answers 401 with a WWW-Authenticate header pointing to its resource metadata")
def step_401(context: StepContext) -> None:
    """Check that the last HTTP answer refused the client with 401 and an RFC 9728 resource metadata URL.

    Example:
        Given the client has no access token
        When I connect to the MCP server "shop-secure"
        Then the server answers 401 with a WWW-Authenticate header pointing to its resource metadata
    """
    response = _last(context)
    header = _headers(response).get("www-authenticate", "")
    if response.get("status") != 401:
        raise ExpectationFailed(
            "The server did not answer 401 Unauthorized",
            expected="401 with WWW-Authenticate: Bearer resource_metadata=...",
            actual=response.get("status"),
            details=_shown(response),
            tip="A protected server refuses a request without a valid token before any MCP message is handled.",
        )
    url = urlsplit(str(response.get("url")))
    problem = challenge_problem(header, str(response.get("url")))
    if problem is not None:
        raise ExpectationFailed(
            "The 401 does not point to the server's protected resource metadata",
            expected=f'WWW-Authenticate: Bearer resource_metadata="{url.scheme}://{url.netloc}'
            f'/.well-known/oauth-protected-resource{url.path}"',
            actual=header or "(no WWW-Authenticate header)",
            details=f"  {problem}\n" + _shown(response),
            tip="RFC 9728 §5.1: the challenge names the metadata URL, so a client can find the authorization server.",
        )


@then("the request is refused for insufficient scope")
def step_403(context: StepContext) -> None:
    """Check that the last HTTP answer was 403 with `error="insufficient_scope"` (RFC 6750 §3.1).

    Example:
        Given the client is authorized with the scopes "orders:read"
        When I connect to the MCP server "shop-secure"
        Then the request is refused for insufficient scope
    """
    response = _last(context)
    header = _headers(response).get("www-authenticate", "")
    if response.get("status") != 403 or challenge_params(header).get("error") != "insufficient_scope":
        raise ExpectationFailed(
            "The request was not refused for insufficient scope",
            expected='403 with WWW-Authenticate: Bearer error="insufficient_scope"',
            actual=f"{response.get('status')} {header}".strip(),
            details=_shown(response),
        )


@then("the last HTTP response has status {status:d}")
def step_http_status(context: StepContext, status: int) -> None:
    """Check the status of the last HTTP answer the session received.

    Example: Then the last HTTP response has status 401
    """
    response = _last(context)
    if response.get("status") != status:
        raise ExpectationFailed(
            f"The last HTTP response has status {response.get('status')}, not {status}",
            expected=status,
            actual=response.get("status"),
            details=_shown(response),
        )


@then('the last HTTP response has the header "{name:Q}" containing "{text:Q}"')
def step_http_header(context: StepContext, name: str, text: str) -> None:
    """Check a header of the last HTTP answer (kept for answers of 300 and above; names ignore case).

    Example: Then the last HTTP response has the header "WWW-Authenticate" containing "invalid_token"
    """
    st = _state(context)
    needle = expected_text(context, text)
    response, key = _last(context), st.interpolate(name).lower()
    value = _headers(response).get(key)
    if value is None or needle not in value:
        raise ExpectationFailed(
            f'The last HTTP response has no header "{key}" containing "{needle}"',
            expected=f"{key}: ...{needle}...",
            actual=value if value is not None else "(no such header)",
            details=_shown(response),
            tip="Headers are kept for answers of 300 and above (errors, redirects)."
            if _status(response) < 300
            else None,
        )


@then('the server\'s protected resource metadata names the authorization server "{issuer:Q}"')
def step_resource_metadata(context: StepContext, issuer: str) -> None:
    """Fetch the server's RFC 9728 metadata (path-inserted well-known URL, then the root one).

    It must name the authorization server and the server's own URL as the resource.

    Example: Then the server's protected resource metadata names the authorization server "${fake.auth.issuer}"
    """
    import httpx2

    from mcp_bdd.steps._common import current_session

    st = _state(context)
    wanted = st.interpolate(issuer).rstrip("/")
    session = current_session(context)
    url = session.server.url
    if not url:
        raise UsageError(
            f'{st.location}: the server "{session.name}" runs over {session.server.transport}: protected resource '
            'metadata is served over HTTP. Tip: give it transport = "streamable-http".'
        )
    with httpx2.Client(timeout=5, trust_env=False) as client:
        fetch = fetch_json(client, resource_metadata_locations(url))
    for location, status, _ in fetch.attempts:
        st.transcript.record("info", session.name, "http", {"method": "GET", "url": location, "status": status})
    document = fetch.document
    if document is not None:
        servers = [str(s).rstrip("/") for s in document.get("authorization_servers") or []]
        resource = str(document.get("resource") or "").rstrip("/")
        if wanted in servers and resource == url.rstrip("/"):
            return
        raise ExpectationFailed(
            "The protected resource metadata does not name the expected authorization server and resource",
            expected={"resource": url, "authorization_servers": [wanted]},
            actual=document,
            details=fetch.shown(),
        )
    raise ExpectationFailed(
        "The server serves no protected resource metadata (RFC 9728)",
        expected="200 with JSON at one of the well-known locations",
        details=fetch.shown(),
        tip="The SDK serves it when AuthSettings has resource_server_url (the server's own URL).",
    )
