"""A Streamable HTTP server's words are never the SDK's (issue: hostile servers, round two).

A hostile server written with the standard library only answers the handshake properly, then
answers `tools/call` in a way the test names by the URL's path:
- `cut-chunked`: an SSE stream whose chunked body breaks off mid-event (no final chunk);
- `no-blank-line`: an SSE stream whose one event is never ended by a blank line;
- `expired`: a JSON-RPC error -32001 of its own, at once ("Session expired: log in again").
The SDK made up "-32000 SSE stream ended without a response" for the first two, which read as
the server's error, and took the third for a timeout of its own.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from behave_project import Run, make_project, run_behave

from mcp_bdd._net import free_port

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

ANSWER = b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": "LAST-WORD"}]}}'


#: paths whose every POST is refused with a JSON-RPC error in the body: (HTTP status, the server's reason)
REFUSING = {
    "unauthorized": (401, "Unauthorized: Missing bearer token"),
    "forbidden": (403, "Forbidden: token revoked"),
}


class _Faulty(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        message: dict[str, Any] = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path.strip("/") in REFUSING:
            status, reason = REFUSING[self.path.strip("/")]
            error = {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32001, "message": reason}}
            self._send(status, "application/json", json.dumps(error).encode())
        elif "id" not in message:
            self._send(202, "text/plain", b"")
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "faulty", "version": "1"},
            }
            self._send(
                200, "application/json", json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            )
        elif message["method"] == "tools/list":
            tools = [{"name": "report", "inputSchema": {"type": "object"}}]
            self._send(
                200,
                "application/json",
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}}).encode(),
            )
        else:
            self._fault(self.path.strip("/"), message["id"])

    def _fault(self, mode: str, request_id: int) -> None:
        if mode == "expired":
            error = {"code": -32001, "message": "Session expired: log in again"}
            self._send(
                200, "application/json", json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
            )
        elif mode == "no-blank-line":
            self._send(200, "text/event-stream", b"event: message\ndata: " + ANSWER % request_id + b"\n")
        else:  # cut-chunked: half an event, and the connection closes without the last chunk
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            piece = b"event: message\ndata: " + (ANSWER % request_id)[:30]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            self.close_connection = True

    def do_GET(self) -> None:
        self._send(405, "text/plain", b"")

    def do_DELETE(self) -> None:
        self._send(200, "text/plain", b"")


@pytest.fixture(scope="module")
def faulty() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Faulty)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _scenario(name: str, server: str, then: str) -> str:
    return f"""
  Scenario: {name}
    Given the MCP server "{server}" is running
    When I call the tool "report"
    Then {then}
"""


FEATURE = "Feature: a faulty HTTP server\n" + "".join(
    [
        _scenario("cut: not the server's error", "cut-chunked", "the request is rejected with error code -32000"),
        _scenario(
            "no blank line: not the server's error", "no-blank-line", "the request is rejected with error code -32000"
        ),
        _scenario("expired: the server's own code", "expired", "the request is rejected with error code -32001"),
        _scenario("expired: no timeout", "expired", "the tool call times out"),
        _scenario("no token", "unauthorized", "the tool call succeeds"),
        _scenario("a revoked token", "forbidden", "the tool call succeeds"),
    ]
)


@pytest.fixture(scope="module")
def run(faulty: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    config = "".join(
        f'[servers.{mode}]\nurl = "{faulty}/{mode}"\nprotocol = "legacy"\ntimeout = 30\n\n'
        for mode in ("cut-chunked", "no-blank-line", "expired", "unauthorized")
    )
    config += f'[servers.forbidden]\nurl = "{faulty}/forbidden"\nprotocol = "legacy"\n'
    config += 'headers = { Authorization = "Bearer revoked-token-1234" }\n'

    root = make_project(tmp_path_factory.mktemp("faulty"), config, {"f.feature": FEATURE})
    started = time.monotonic()
    run = run_behave(root, "-f", "plain", "--no-capture")
    # every fault fails its call at once: a run that waited for a request's timeout (30 s) did not see it
    assert time.monotonic() - started < 30, run.output[-3000:]
    return run


def _failure_of(run: Run, scenario: str) -> str:
    """What behave printed for one scenario (plain format), up to the next."""
    text = run.output.split(f"Scenario: {scenario}")[1]
    return text.split("Scenario:")[0]


@pytest.mark.parametrize(
    ("scenario", "cause"),
    [
        ("cut: not the server's error", "its HTTP body broke off before it was complete"),
        ("no blank line: not the server's error", "bytes of an event were never ended by a blank line"),
    ],
)
def test_an_sse_stream_that_ends_unanswered_is_a_protocol_violation_that_names_the_cause(
    run: Run, scenario: str, cause: str
) -> None:
    said = _failure_of(run, scenario)
    assert "failed" in said and cause in said, run.output[-4000:]
    assert "ended the SSE stream answering tools/call" in said, said
    assert "SSE stream ended without a response" not in said, said  # the SDK's words, never shown as the server's


def test_a_servers_own_minus_32001_is_its_error_not_a_timeout(run: Run) -> None:
    assert "passed" in _failure_of(run, "expired: the server's own code").split("\n")[3], run.output[-4000:]
    said = _failure_of(run, "expired: no timeout")
    assert "failed" in said and "Session expired: log in again" in said, said
    assert "timed out" not in said, said
    assert run.counts() == {"passed": 1, "failed": 3, "error": 2, "skipped": 0}, run.failures()


def test_a_refused_handshake_keeps_the_servers_reason_and_a_tip_that_fits_what_was_sent(run: Run) -> None:
    """A 401 or 403 whose body is a JSON-RPC error: the server's reason is said; a 401 with nothing
    sent asks for credentials, a 403 (or any refusal of credentials that were sent) says they were
    not accepted."""
    none = _failure_of(run, "no token")
    assert "refused the connection with HTTP 401" in none and "Unauthorized: Missing bearer token" in none, none
    assert "not an MCP endpoint's answer" not in none and "the server wants credentials" in none, none
    revoked = _failure_of(run, "a revoked token")
    assert "refused the connection with HTTP 403" in revoked and "Forbidden: token revoked" in revoked, revoked
    assert "did not accept the credentials that were sent" in revoked, revoked
    assert "revoked-token-1234" not in run.output, revoked  # a secret, masked wherever it is printed
