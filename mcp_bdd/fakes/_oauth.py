"""The fake OAuth authorization server: real metadata, keys and signed JWT access tokens on loopback.

A protected MCP server (OAuth 2.1 resource server, as the MCP authorization spec describes it)
verifies bearer tokens against an authorization server's keys. This fake is that authorization
server, per scenario, on a free 127.0.0.1 port:

- RFC 8414 metadata at `/.well-known/oauth-authorization-server` (also served as
  `/.well-known/openid-configuration`, where some verifiers look);
- the public keys as a JWKS at `/jwks` (one EC P-256 key made per fake; tokens are ES256 JWTs);
- a token endpoint (`/token`, client credentials grant; `resource` (RFC 8707) or `audience`
  selects the audience, `scope` the scopes);
- dynamic client registration (RFC 7591) at `/register`;
- a record of every token it issued (`issued`): claims only — a token is a secret.

Steps mint tokens directly (`issue`), through the same code as the token endpoint, so a scenario
states "the client is authorized with the scopes ..." without a login dance. Options in
[tool.mcp-bdd.fakes]: `audience` (default "mcp"), `scopes` (the scopes it may grant; default any)
and `lifetime` (seconds, default 3600).

Served by the standard library's threading HTTP server: the token endpoint computes every answer
(the HTTP fake's stub server answers from fixed stubs), and nothing here needs the event loop.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from mcp_bdd.errors import UsageError
from mcp_bdd.secrets import remember
from mcp_bdd.transcript import Transcript

__all__ = ["FakeAuthServer", "IssuedToken"]

_MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class IssuedToken:
    """What the fake issued (never the token itself)."""

    jti: str
    client_id: str
    audience: str | list[str]
    scopes: tuple[str, ...]
    issued_at: int
    expires_at: int
    via: str  # "step" or "token endpoint"


@dataclass
class _Client:
    client_id: str
    client_secret: str
    metadata: dict[str, object] = field(default_factory=dict)


class FakeAuthServer:
    """An OAuth 2.1 authorization server on a free loopback port, issuing signed JWT access tokens.

    Placeholder attributes: `url` and `issuer` (the same: `http://127.0.0.1:PORT`), `port`,
    `metadata_url`, `jwks_url`, `token_url`, `registration_url`, `audience`.
    """

    kind = "oauth"
    ATTRS: tuple[str, ...] = (
        "url",
        "issuer",
        "port",
        "metadata_url",
        "jwks_url",
        "token_url",
        "registration_url",
        "audience",
    )
    OPTIONS: tuple[str, ...] = ("audience", "scopes", "lifetime")

    def __init__(self, name: str, *, transcript: Transcript, options: Mapping[str, object] | None = None) -> None:
        import jwt
        from cryptography.hazmat.primitives.asymmetric import ec

        options = dict(options or {})
        self.name = name
        self._transcript = transcript
        self.audience = str(options.get("audience") or "mcp")
        scopes = options.get("scopes")
        if isinstance(scopes, str):
            scopes = scopes.split()
        if scopes is not None and not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)):
            raise UsageError(f'[tool.mcp-bdd.fakes.{name}]: scopes is a list, e.g. scopes = ["orders:read"].')
        self.scopes: tuple[str, ...] | None = tuple(map(str, scopes)) if isinstance(scopes, list) else None
        lifetime = options.get("lifetime", 3600)
        if not isinstance(lifetime, int) or lifetime <= 0:
            raise UsageError(f"[tool.mcp-bdd.fakes.{name}]: lifetime is a number of seconds, e.g. lifetime = 3600.")
        self.lifetime = lifetime
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.kid = uuid.uuid4().hex[:16]
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self._key.public_key()))
        self._jwk = {**jwk, "kid": self.kid, "use": "sig", "alg": "ES256"}
        self._lock = threading.Lock()
        self.issued: list[IssuedToken] = []
        self.clients: dict[str, _Client] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = False
        self._server.block_on_close = True  # server_close() waits for requests in flight
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"fake oauth {name}", daemon=True)
        self._thread.start()

    # -- placeholders ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return self.url

    @property
    def metadata_url(self) -> str:
        return self.url + "/.well-known/oauth-authorization-server"

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    @property
    def token_url(self) -> str:
        return self.url + "/token"

    @property
    def registration_url(self) -> str:
        return self.url + "/register"

    # -- documents -------------------------------------------------------------------------------
    def metadata(self) -> dict[str, object]:
        """RFC 8414 authorization server metadata."""
        return {
            "issuer": self.issuer,
            "token_endpoint": self.token_url,
            "jwks_uri": self.jwks_url,
            "registration_endpoint": self.registration_url,
            "scopes_supported": list(self.scopes or ()),
            "response_types_supported": [],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
        }

    def jwks(self) -> dict[str, object]:
        return {"keys": [self._jwk]}

    # -- tokens ----------------------------------------------------------------------------------
    def issue(
        self,
        scopes: Sequence[str] = (),
        *,
        audience: str | list[str] | None = None,
        client_id: str = "mcp-bdd",
        lifetime: int | None = None,
        issued_at: int | None = None,
        via: str = "step",
    ) -> str:
        """A signed JWT access token (ES256) with these scopes and audience; recorded in `issued`."""
        import jwt

        unknown = [s for s in scopes if self.scopes is not None and s not in self.scopes]
        if unknown:
            raise UsageError(
                f'The fake authorization server "{self.name}" cannot grant the scope "{unknown[0]}": '
                f"it grants {', '.join(self.scopes or ()) or 'no scopes'} (scopes = [...] in "
                f"[tool.mcp-bdd.fakes.{self.name}])."
            )
        now = int(time.time()) if issued_at is None else issued_at
        expires = now + (self.lifetime if lifetime is None else lifetime)
        aud = audience if audience is not None else self.audience
        jti = uuid.uuid4().hex
        claims = {
            "iss": self.issuer,
            "sub": client_id,
            "aud": aud,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "nbf": now,
            "exp": expires,
            "jti": jti,
        }
        token: str = jwt.encode(claims, self._key, algorithm="ES256", headers={"kid": self.kid, "typ": "at+jwt"})
        remember(token)  # a credential: masked in every output from now on
        record = IssuedToken(jti, client_id, aud, tuple(scopes), now, expires, via)
        with self._lock:
            self.issued.append(record)
        self._transcript.record(
            "fake",
            self.name,
            "token issued",
            {"client_id": client_id, "audience": aud, "scopes": list(scopes), "expires_at": expires, "via": via},
        )
        return token

    def register(self, metadata: Mapping[str, object]) -> dict[str, object]:
        """RFC 7591 dynamic client registration: a new client id and secret."""
        client = _Client("client-" + uuid.uuid4().hex[:12], secrets.token_urlsafe(24), dict(metadata))
        remember(client.client_secret)  # a credential, as the tokens it buys: masked in every output from now on
        with self._lock:
            self.clients[client.client_id] = client
        self._transcript.record(
            "fake", self.name, "client registered", {"client_id": client.client_id, "metadata": dict(metadata)}
        )
        return {
            **dict(metadata),
            "client_id": client.client_id,
            "client_secret": client.client_secret,
            "client_id_issued_at": int(time.time()),
            "client_secret_expires_at": 0,
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": str(metadata.get("token_endpoint_auth_method") or "client_secret_post"),
        }

    def close(self) -> None:
        """Stop serving: the port is free when this returns."""
        with contextlib.suppress(Exception):
            self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def __repr__(self) -> str:
        return f"<FakeAuthServer {self.name!r} {self.url}>"


def _handler(fake: FakeAuthServer) -> type[BaseHTTPRequestHandler]:
    """The request handler class of one fake (the standard library's server makes one per request)."""
    return type("Handler", (_Handler,), {"fake": fake})


class _Handler(BaseHTTPRequestHandler):
    """The authorization server's endpoints: metadata, JWKS, client registration, tokens."""

    protocol_version = "HTTP/1.1"
    fake: FakeAuthServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: object, headers: Mapping[str, str] | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(raw)))
        # one request per connection: nothing is left open (or served) after close()
        self.send_header("Connection", "close")
        self.close_connection = True
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(raw)

    def _error(self, status: int, error: str, description: str) -> None:
        self._send(status, {"error": error, "error_description": description})

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(length, _MAX_BODY))

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.fake._transcript.record("fake", self.fake.name, f"GET {path}")
        if path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            self._send(200, self.fake.metadata())
        elif path == "/jwks":
            self._send(200, self.fake.jwks())
        else:
            self._error(404, "not_found", f"{path} is not served by this authorization server")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        self.fake._transcript.record("fake", self.fake.name, f"POST {path}")
        if path == "/register":
            self._register(body)
        elif path == "/token":
            self._token(body)
        else:
            self._error(404, "not_found", f"{path} is not served by this authorization server")

    def _register(self, body: bytes) -> None:
        try:
            metadata = json.loads(body or b"{}")
        except ValueError:
            self._error(400, "invalid_client_metadata", "the body is not JSON")
            return
        if not isinstance(metadata, dict):
            self._error(400, "invalid_client_metadata", "the body is not a JSON object")
            return
        self._send(201, self.fake.register(metadata))

    def _token(self, body: bytes) -> None:
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") != "client_credentials":
            self._error(400, "unsupported_grant_type", "this fake grants client_credentials only")
            return
        client = self._client(form)
        if client is None:
            self._error(401, "invalid_client", "unknown client or wrong secret (register at /register)")
            return
        scopes = (form.get("scope") or "").split()
        try:
            token = self.fake.issue(
                scopes,
                audience=form.get("resource") or form.get("audience"),
                client_id=client.client_id,
                via="token endpoint",
            )
        except UsageError as exc:
            self._error(400, "invalid_scope", str(exc))
            return
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": self.fake.lifetime}
        self._send(200, {**answer, "scope": " ".join(scopes)})

    def _client(self, form: Mapping[str, str]) -> _Client | None:
        """The registered client whose id and secret the request gives (form or Basic auth), or None."""
        client_id, secret = form.get("client_id"), form.get("client_secret")
        basic = self.headers.get("Authorization", "")
        if basic.lower().startswith("basic "):
            with contextlib.suppress(ValueError):
                client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
        client = self.fake.clients.get(client_id or "")
        if client is None or not secrets.compare_digest(client.client_secret, secret or ""):
            return None
        return client
