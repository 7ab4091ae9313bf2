"""The demo shop over Streamable HTTP behind a gateway that refuses `subscriptions/listen` with 403
insufficient_scope, as an API gateway does for a token that may call tools but not listen: every
other request reaches the shop.

    python tests/servers/listen_gate.py PORT
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: what the gateway answers a listen request with
REFUSAL = b'{"detail": "listening needs the scope notifications:listen"}'
CHALLENGE = b'Bearer error="insufficient_scope", scope="notifications:listen"'


class ListenGate:
    """ASGI middleware: reads each POST's body, answers 403 to a listen request, replays the rest."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        if method == "subscriptions/listen":
            headers = [(b"content-type", b"application/json"), (b"www-authenticate", CHALLENGE)]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            return await send({"type": "http.response.body", "body": REFUSAL})
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return dict(await receive())
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


def main() -> None:
    from pathlib import Path

    import uvicorn

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: demo, mcp_bdd
    from demo.shop import create_server
    from mcp_bdd.apps import http_app

    app = ListenGate(http_app(create_server(), "streamable-http", "127.0.0.1"))
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
