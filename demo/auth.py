"""OAuth protection for the demo servers' HTTP transports: the SDK's own resource-server support.

`protection_from_env()` returns the `MCPServer` keyword arguments that make a server an OAuth 2.1
resource server when `AUTH_ISSUER` is set (read when the factory runs):

- ``AUTH_ISSUER``: the authorization server (its RFC 8414 metadata names the JWKS);
- ``AUTH_AUDIENCE``: the audience a token must be for (default ``mcp``);
- ``AUTH_SCOPES``: scopes every request needs, space-separated (a token with fewer: 403);
- ``AUTH_RESOURCE``: this server's own URL (``http://127.0.0.1:${port}/mcp``), announced in its
  RFC 9728 protected resource metadata and in the ``WWW-Authenticate`` header of a 401.

Tokens are JWTs verified against the issuer's published keys (PyJWT): signature, issuer,
audience and expiry. Anything wrong is "no valid token" (401); missing scopes are refused by the
SDK with 403 ``insufficient_scope``. Over stdio there is no HTTP, hence no protection.
"""

from __future__ import annotations

import os
from typing import Any

import httpx2
import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings


class JwtVerifier:
    """The SDK's TokenVerifier for JWT access tokens signed with the issuer's published keys."""

    def __init__(self, issuer: str, audience: str) -> None:
        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self._keys: dict[str, Any] | None = None

    async def _jwks(self) -> dict[str, Any]:
        if self._keys is None:
            async with httpx2.AsyncClient(timeout=5, trust_env=False) as client:
                meta = (await client.get(f"{self.issuer}/.well-known/oauth-authorization-server")).json()
                keys = (await client.get(meta["jwks_uri"])).json()["keys"]
            self._keys = {key.get("kid", ""): key for key in keys}
        return self._keys

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            keys = await self._jwks()
            kid = jwt.get_unverified_header(token).get("kid", "")
            key = jwt.PyJWK(keys[kid])
            claims = jwt.decode(
                token,
                key,
                algorithms=["ES256", "RS256"],
                audience=self.audience,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, httpx2.HTTPError, KeyError, ValueError):
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("sub") or ""),
            scopes=str(claims.get("scope") or "").split(),
            expires_at=int(claims["exp"]),
            resource=self.audience,
            subject=claims.get("sub"),
        )


def protection_from_env() -> dict[str, Any]:
    """`auth=` and `token_verifier=` for MCPServer when AUTH_ISSUER is set, else nothing."""
    issuer = os.environ.get("AUTH_ISSUER", "")
    if not issuer:
        return {}
    audience = os.environ.get("AUTH_AUDIENCE") or "mcp"
    return {
        "auth": AuthSettings(
            issuer_url=issuer,
            resource_server_url=os.environ.get("AUTH_RESOURCE") or None,
            required_scopes=os.environ.get("AUTH_SCOPES", "").split() or None,
            validate_token_resource=False,  # JwtVerifier checks the audience itself
        ),
        "token_verifier": JwtVerifier(issuer, audience),
    }
