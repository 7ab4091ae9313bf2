"""The oauth fake and the auth steps: a real authorization server on loopback, real signed tokens.

Unit tests talk to the fake over HTTP as a client or a resource server would (metadata, JWKS,
dynamic registration, the token endpoint) and verify its tokens with PyJWT; behave runs check
the four classic cases against the demo shop protected by the SDK's own resource-server support.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import jwt
import pytest
from behave_project import REPO, make_project, run_behave

from mcp_bdd.errors import UsageError
from mcp_bdd.fakes import FakeAuthServer
from mcp_bdd.secrets import MASK, mask
from mcp_bdd.transcript import Transcript


@pytest.fixture
def auth() -> Iterator[FakeAuthServer]:
    server = FakeAuthServer("auth", transcript=Transcript(), options={"audience": "shop", "scopes": ["a", "b"]})
    yield server
    server.close()


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=5, trust_env=False) as c:
        yield c


def _verify(auth: FakeAuthServer, client: httpx2.Client, token: str, audience: str = "shop") -> dict[str, object]:
    meta = client.get(auth.metadata_url).json()
    keys = client.get(meta["jwks_uri"]).json()["keys"]
    key = jwt.PyJWK(next(k for k in keys if k["kid"] == jwt.get_unverified_header(token)["kid"]))
    claims: dict[str, object] = jwt.decode(token, key, algorithms=["ES256"], audience=audience, issuer=meta["issuer"])
    return claims


def test_metadata_names_every_endpoint_on_loopback(auth: FakeAuthServer, client: httpx2.Client) -> None:
    meta = client.get(auth.url + "/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == auth.issuer == f"http://127.0.0.1:{auth.port}"
    assert meta["token_endpoint"] == auth.token_url
    assert meta["registration_endpoint"] == auth.registration_url
    assert meta["scopes_supported"] == ["a", "b"]
    assert client.get(auth.url + "/.well-known/openid-configuration").json() == meta
    assert client.get(auth.url + "/nope").status_code == 404


def test_a_registered_client_gets_a_signed_token_that_verifies(auth: FakeAuthServer, client: httpx2.Client) -> None:
    registered = client.post(auth.registration_url, json={"client_name": "cli"})
    assert registered.status_code == 201
    creds = registered.json()
    answer = client.post(
        auth.token_url,
        data={
            "grant_type": "client_credentials",
            "client_id": creds["client_id"],
            "client_secret": creds["client_secret"],
            "scope": "a",
            "resource": "https://mcp.example.com/mcp",
        },
    )
    assert answer.status_code == 200, answer.text
    # the secret it was given is a credential: masked wherever the evidence goes (it was not)
    assert mask(f"registered: {creds}").count(MASK) == 1 and creds["client_secret"] not in mask(str(creds))
    body = answer.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    claims = _verify(auth, client, body["access_token"], audience="https://mcp.example.com/mcp")
    assert claims["scope"] == "a" and claims["client_id"] == creds["client_id"]
    assert [(t.client_id, t.scopes, t.via) for t in auth.issued] == [(creds["client_id"], ("a",), "token endpoint")]


def test_the_token_endpoint_refuses_what_it_should(auth: FakeAuthServer, client: httpx2.Client) -> None:
    creds = client.post(auth.registration_url, json={}).json()
    base = {
        "grant_type": "client_credentials",
        "client_id": creds["client_id"],
        "client_secret": creds["client_secret"],
    }
    assert client.post(auth.token_url, data={**base, "client_secret": "wrong"}).json()["error"] == "invalid_client"
    assert client.post(auth.token_url, data={**base, "grant_type": "password"}).json()["error"] == (
        "unsupported_grant_type"
    )
    refused = client.post(auth.token_url, data={**base, "scope": "admin"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_scope"
    assert auth.issued == []


def test_issued_tokens_carry_the_claims_asked_for(auth: FakeAuthServer, client: httpx2.Client) -> None:
    token = auth.issue(["a", "b"])
    claims = _verify(auth, client, token)
    assert claims["scope"] == "a b" and claims["iss"] == auth.issuer
    expired = auth.issue(["a"], issued_at=int(time.time()) - 7200)
    with pytest.raises(jwt.ExpiredSignatureError):
        _verify(auth, client, expired)
    other = auth.issue(["a"], audience="elsewhere")
    with pytest.raises(jwt.InvalidAudienceError):
        _verify(auth, client, other)
    with pytest.raises(UsageError, match='cannot grant the scope "c"'):
        auth.issue(["c"])


def test_issued_tokens_are_masked_like_every_other_secret(auth: FakeAuthServer) -> None:
    from mcp_bdd.secrets import mask

    token = auth.issue(["a"])
    assert token not in mask(f"the server echoed Authorization: Bearer {token} and {token}")


def test_close_frees_the_port(auth: FakeAuthServer, client: httpx2.Client) -> None:
    url = auth.metadata_url
    assert client.get(url).status_code == 200
    auth.close()
    with pytest.raises(httpx2.ConnectError):
        client.get(url)


# ------------------------------------------------------------------------------------------------
# behave (features/auth, the four classic cases, runs with the rest of features/: tests/test_features.py)


CONFIG = f"""
[fakes]
auth = {{ kind = "oauth", audience = "shop" }}

[servers.open]                 # the same shop, unprotected
app = "demo.shop:create_server"
cwd = "{REPO}"
transport = "streamable-http"

[servers.secure]
app = "demo.shop:create_server"
cwd = "{REPO}"
transport = "streamable-http"
env = {{ AUTH_ISSUER = "${{fake.auth.issuer}}", AUTH_AUDIENCE = "shop", AUTH_RESOURCE = "http://127.0.0.1:${{port}}/mcp" }}
"""


@pytest.mark.usefixtures("no_leftover_processes")
def test_failures_say_what_the_server_answered(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        CONFIG,
        {
            "f.feature": """
        Feature: wrong expectations
          Scenario: an open server does not refuse anyone
            Given the client has no access token
            When I connect to the MCP server "open"
            Then the server answers 401 with a WWW-Authenticate header pointing to its resource metadata

          Scenario: a valid token is not refused for scope
            Given the client is authorized with the scopes "x"
            When I connect to the MCP server "secure"
            Then the request is refused for insufficient scope

          Scenario: the token is set after the server started
            Given the MCP server "open" is running
            And the client is authorized with the scopes "x"
    """
        },
    )
    run = run_behave(root)
    out = run.output
    assert run.counts() == {"passed": 0, "failed": 2, "error": 1, "skipped": 0}, out[-4000:]
    assert "The server did not answer 401 Unauthorized" in out and "-> 200" in out, out[-4000:]
    assert "The request was not refused for insufficient scope" in out, out[-4000:]
    assert "the client's token is set before the server step" in out, out[-4000:]


def test_a_token_for_a_server_without_http_is_a_usage_error(tmp_path: Path) -> None:
    """ "Given the client is authorized ..." before a server that runs over stdio or in-memory: the
    token went nowhere (no HTTP header carries it) and the scenario passed on what it never tested.
    It is a usage error naming the server and its transport, with the tip to test it over HTTP."""
    config = CONFIG + f'\n[servers.local]\napp = "demo.shop:create_server"\ncwd = "{REPO}"\ntransport = "in-memory"\n'
    feature = """
        Feature: a token with nowhere to go
          Scenario: authorized, over no HTTP
            Given the client is authorized with the scopes "orders:read"
            Given the MCP server "local" is running
    """
    run = run_behave(make_project(tmp_path, config, {"t.feature": feature}))
    assert run.counts() == {"passed": 0, "failed": 0, "error": 1, "skipped": 0}, run.output[-3000:]
    said = 'the client holds an access token (Given the client is authorized ...), but the server "local", the only'
    assert said in run.stdout and 'give the server transport = "streamable-http"' in run.stdout, run.stdout
