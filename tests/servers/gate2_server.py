"""A server with the gate's second round of planted defects, in the standard library alone.

Newline-delimited JSON-RPC on stdio (the 2025-11-25 handshake), or the same answers over HTTP
(`serve_http`: a ThreadingHTTPServer on loopback, for the DNS-rebinding check). What it plants,
each named in PLANTED with the check that must find it:

- a banner on stdout before the first message (stdio): not JSON-RPC;
- `huge_page`: a 3 MB result; `thinker`: a definition of ~1,500 tokens;
- `save_note`: not read-only, and it crashes (-32603): found only with `--allow-writes=save_note`;
  `erase_all`: destructive, never called. Neither keeps any state: nothing here can be changed;
- `reset_password`: annotated read-only, though its description says it resets a password;
- `bare_call`: answers -32603 to a call with no `arguments` (which the spec allows) and to
  `arguments: null`;
- `slow_job`: runs `SLOW_S` seconds, reporting progress every 0.1 s when asked (a progress token):
  slow by design, not hung;
- over HTTP: any Host and Origin are answered (`GATE2_PROTECTED=1`: a foreign one gets 403).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: (check id, target) pairs the check must report on this server (over stdio, `--allow-writes=save_note`)
PLANTED: list[tuple[str, str]] = [
    ("transport.stdout-json", "server"),
    ("quality.result-size", "tool huge_page"),
    ("quality.context-budget", "tool thinker"),
    ("honest.valid-calls", "tool save_note"),
    ("quality.annotations", "tool reset_password"),
    ("honest.no-arguments", "tool bare_call"),
]
SLOW_S = float(os.environ.get("GATE2_SLOW_S", "1.5"))
BANNER = "gate2 server 0.1 starting (debug build)"
READ_ONLY = {"readOnlyHint": True}
EMPTY = {"type": "object", "properties": {}}
THINKING = (
    "A detailed tool for dynamic and reflective problem-solving through thoughts. Each thought can build on, "
    "question or revise previous insights as understanding deepens. "
) * 40  # ~6,000 characters: one definition of ~1,500 tokens

TOOLS: list[dict[str, Any]] = [
    {"name": "huge_page", "description": "Returns the whole archive page as one text.", "inputSchema": EMPTY,
     "annotations": READ_ONLY},
    {"name": "thinker", "description": THINKING, "inputSchema": EMPTY, "annotations": READ_ONLY},
    {"name": "save_note", "description": "Saves a note for later (it crashes on every call).",
     "inputSchema": EMPTY, "annotations": {"readOnlyHint": False, "destructiveHint": False}},
    {"name": "erase_all", "description": "Erases every note; destructive, so never called by a check.",
     "inputSchema": EMPTY, "annotations": {"readOnlyHint": False, "destructiveHint": True}},
    {"name": "reset_password", "description": "Resets the user's password and emails the new one to them.",
     "inputSchema": EMPTY, "annotations": READ_ONLY},
    {"name": "bare_call", "description": "Reports the server's uptime; it needs an arguments object.",
     "inputSchema": EMPTY, "annotations": READ_ONLY},
    {"name": "slow_job", "description": "Runs a long report, with progress, and returns its summary.",
     "inputSchema": EMPTY, "annotations": READ_ONLY},
]  # fmt: skip


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _slow(params: dict[str, Any], notify: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    token = (params.get("_meta") or {}).get("progressToken")
    steps = max(1, int(SLOW_S / 0.1))
    for step in range(steps):
        time.sleep(0.1)  # the server's work, not a test's wait
        if token is not None:
            progress = {"progressToken": token, "progress": step + 1, "total": steps}
            notify({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
    return _text("report done")


def call(params: dict[str, Any], notify: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A tools/call's result, or {"error": ...} for a JSON-RPC error."""
    name = params.get("name")
    if name == "huge_page":
        return _text("x" * 3_000_000)
    if name == "save_note":
        return {"error": {"code": -32603, "message": "boom: the note store is not open"}}
    if name == "bare_call" and not isinstance(params.get("arguments"), dict):
        return {"error": {"code": -32603, "message": "Cannot read properties of undefined (reading 'verbose')"}}
    if name == "slow_job":
        return _slow(params, notify)
    if name in {t["name"] for t in TOOLS}:
        return _text("ok")
    return {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}


def answer(request: dict[str, Any], notify: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    result: dict[str, Any]
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "gate2", "version": "0.1.0"}}  # fmt: skip
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "ping":
        result = {}
    elif method == "tools/call":
        result = call(request.get("params") or {}, notify)
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    if "error" in result:
        return {"jsonrpc": "2.0", "id": rid, "error": result["error"]}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    print(BANNER, flush=True)  # the planted fault: a log line where only JSON-RPC may go
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line), _write)
            if reply is not None:
                _write(reply)


class _Handler(BaseHTTPRequestHandler):
    protected = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _foreign(self) -> bool:
        host = (self.headers.get("Host") or "").split(":")[0]
        origin = self.headers.get("Origin")
        local = ("127.0.0.1", "localhost", "[::1]")
        return host not in local or (origin is not None and not any(f"//{h}" in origin for h in local))

    def _send(self, status: int, body: bytes = b"", kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.protected and self._foreign():
            self._send(403, b'{"error": "forbidden host or origin"}')
            return
        reply = answer(json.loads(body), lambda message: None)
        self._send(202) if reply is None else self._send(200, json.dumps(reply).encode())

    def do_GET(self) -> None:
        self._send(405)

    def do_DELETE(self) -> None:
        self._send(405)


def serve_http(protected: bool = False) -> tuple[ThreadingHTTPServer, str]:
    """The same server over HTTP on a free loopback port, in a daemon thread: (server, its /mcp URL)."""
    handler = type("Handler", (_Handler,), {"protected": protected})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/mcp"


if __name__ == "__main__":
    main()
