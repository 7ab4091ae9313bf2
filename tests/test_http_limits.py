"""HTTP responses are bounded by `max_message_bytes`, as stdio lines are (mcp_bdd/session/_http.py).

A real hostile HTTP server runs in the test process, on 127.0.0.1 with a free port: it answers
the handshake properly, then answers `tools/list` with an endless (or a merely huge) body. The
run behave makes is measured from the outside: it fails at once (long before its timeouts),
says why and what to raise, and its peak memory grows by far less than what the server sent.
"""

from __future__ import annotations

import http.server
import json
import queue
import threading
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from behave_project import make_project, run_behave

from mcp_bdd._net import free_port
from mcp_bdd.servers import PROTOCOL_MARK
from mcp_bdd.session._http import DEFAULT_LIMIT, BoundedTransport, MessageTooLarge, client_factory, trusted_context
from mcp_bdd.session._sse_events import Events

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

MIB = 1024 * 1024
#: what an endless answer sends at most before it stalls (keeping its connection open): a client
#: that buffers it all grows by this much, and then waits for its timeout
CAP = 192 * MIB
CHUNK = b'"a":' * 16384  # 64 KiB of JSON that never closes


class _Hostile(http.server.BaseHTTPRequestHandler):
    """An MCP endpoint (2025-11-25 handshake) whose answers to `tools/list` are the test's subject.

    Streamable HTTP: POST /<mode> with mode `endless-json` (an endless chunked application/json
    body), `endless-event` (one text/event-stream event whose data line never ends), `big` (a valid result of
    3 MiB, in one JSON body) or `big-event` (the same result as one SSE event). `/endless-handshake`
    answers the handshake itself endlessly; `gzip-bomb` answers with 192 KiB of gzip that inflate to
    192 MiB. Legacy SSE: GET /sse/<mode>, messages POSTed to
    /messages/<n> and answered on the GET stream.
    """

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def _message(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        return data

    def _head(self, status: int, ctype: str | None = None, length: int | None = None) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _json(self, body: bytes) -> None:
        self._head(200, "application/json", len(body))
        self.wfile.write(body)

    def _endless(self, first: bytes, chunked: bool = True) -> None:
        """`first`, then CHUNK after CHUNK until the client hangs up (or CAP bytes, then stall)."""
        sent = 0
        try:
            for piece in (first, *(CHUNK for _ in range(CAP // len(CHUNK)))):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
            self.wfile.flush()
            self.server.stop.wait()
        except OSError:
            pass  # the client hung up: what it refused to read was never sent
        finally:
            self.server.sent.append(sent)
            self.server.hung_up.set()
        self.close_connection = True

    def do_POST(self) -> None:
        mode = self.path.strip("/")
        message = self._message()
        if mode.startswith("messages/"):  # legacy SSE: the answer goes on the GET stream
            self._head(202, length=0)
            self.server.outbox.put(message)
            return
        if "id" not in message:
            self._head(202, length=0)
        elif message.get("method") == "initialize" and mode != "endless-handshake":
            self._json(json.dumps(_answer(message)).encode())
        elif mode in ("endless-json", "endless-handshake"):
            self._head(200, "application/json")
            self._endless(b'{"jsonrpc": "2.0", "id": %d, "result": {' % message["id"])
        elif mode == "endless-event":
            self._head(200, "text/event-stream")
            self._endless(b'event: message\ndata: {"jsonrpc": "2.0", "id": %d, "result": {' % message["id"])
        elif mode == "gzip-bomb":
            head = b'{"jsonrpc": "2.0", "id": %d, "result": {"tools": [{"name": "' % message["id"]
            body = _compressed("gzip", [head, b"0" * MIB, b'"}]}}'], repeat=CAP // MIB)
            self.send_response(200)
            for name, value in (("Content-Type", "application/json"), ("Content-Encoding", "gzip")):
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)  # all of it: the answer is small on the wire, huge inflated
            self.server.sent.append(len(body))
            self.server.hung_up.set()
        elif mode == "big":
            self._json(json.dumps(_answer(message)).encode())
        elif mode == "big-event":
            body = b"event: message\ndata: " + json.dumps(_answer(message)).encode() + b"\n\n"
            self._head(200, "text/event-stream", len(body))
            self.wfile.write(body)

    def do_GET(self) -> None:
        if not self.path.startswith("/sse/"):
            self._head(405, length=0)
            return
        mode = self.path.removeprefix("/sse/")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # no length, no chunking: the stream ends when the connection does
        if mode in BAD_ENDPOINTS:
            self.wfile.write(BAD_ENDPOINTS[mode])
            self.wfile.flush()
            if mode != "endpoint-never":
                self.server.stop.wait()  # the stream stays open: only the client can tell what is wrong
            self.close_connection = True
            return
        self.wfile.write(b"event: endpoint\ndata: /messages/1\n\n")
        self.wfile.flush()
        while not self.server.stop.is_set():
            try:
                message = self.server.outbox.get(timeout=0.5)
            except queue.Empty:
                continue
            if "id" not in message:
                continue
            if message.get("method") != "initialize" and mode == "endless":
                self._endless(b'event: message\ndata: {"jsonrpc": "2.0", "id": %d, "result": {' % message["id"], False)
                return
            try:
                self.wfile.write(b"event: message\ndata: " + json.dumps(_answer(message)).encode() + b"\n\n")
                self.wfile.flush()
            except OSError:
                return

    def do_DELETE(self) -> None:
        self._head(200, length=0)


#: legacy SSE streams whose `endpoint` event cannot be used (`endpoint-never`: the stream ends first)
BAD_ENDPOINTS = {
    "endpoint-elsewhere": b"event: endpoint\ndata: http://127.0.0.1:9/messages/1\n\n",
    "endpoint-not-a-url": b"event: endpoint\ndata: http://[evil\x1b[2Jhost/messages\n\n",
    "endpoint-huge": b"event: endpoint\ndata: /" + b"m" * (2 * MIB) + b"\n\n",
    "endpoint-never": b": a comment, then the end of the stream\n\n",
}


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    """A proper answer: the handshake's, or a 3 MiB tool listing."""
    if message["method"] == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-http", "version": "1"},
        }
    else:
        tool = {"name": "wide", "description": "x" * (3 * MIB), "inputSchema": {"type": "object"}}
        result = {"tools": [tool]}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up on an answer it refused is what the tests want

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Hostile)
        self.stop = threading.Event()  # ends stalled answers and SSE streams
        self.hung_up = threading.Event()
        self.sent: list[int] = []  # bytes each endless answer got out before the client hung up
        self.outbox: queue.Queue[dict[str, Any]] = queue.Queue()


@pytest.fixture
def hostile() -> Iterator[_Server]:
    server = _Server(free_port())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join()


#: the project's environment.py, wrapping mcp-bdd's hooks to measure the run's memory: the SDK is
#: imported before the baseline, so what the peak adds is what the run buffered. The peak is the
#: process's own high-water mark (VmHWM), not getrusage's ru_maxrss: Linux carries that across
#: exec from the process that forked it, so behave started by a big pytest worker "peaked" at the
#: worker's size (253 MiB in a full `make test`, whatever the run did)
MEASURED_ENVIRONMENT = """
import json

import httpx2  # noqa: F401
import mcp  # noqa: F401

from mcp_bdd import environment as _mcp
from mcp_bdd.environment import *  # noqa: F401,F403


def _status_kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def before_all(context):
    context.rss_base = _status_kib("VmRSS")
    _mcp.before_all(context)


def after_all(context):
    try:
        _mcp.after_all(context)
    finally:
        peak = _status_kib("VmHWM")
        with open("rss.json", "w") as out:
            json.dump({"base_kib": context.rss_base, "peak_kib": peak}, out)
"""

LIST_TOOLS = """
Feature: a hostile HTTP server
  Scenario: its tool listing
    Given the MCP server "hostile" is running
    When I list the tools
"""


TIMEOUT = 60  # both timeouts: a run that waits for either has not refused anything


def project(tmp_path: Path, url: str, extra: str = "", transport: str = "streamable-http") -> Path:
    config = (
        f"timeout = {TIMEOUT}\nstartup_timeout = {TIMEOUT}\n{extra}"
        f'[servers.hostile]\nurl = "{url}"\ntransport = "{transport}"\nprotocol = "legacy"\n'
    )
    root = make_project(tmp_path, config, {"h.feature": LIST_TOOLS})
    (root / "environment.py").write_text(MEASURED_ENVIRONMENT)
    return root


def growth_mib(root: Path) -> float:
    """How far the run's peak memory rose above its RSS once the SDK was imported."""
    rss = json.loads((root / "rss.json").read_text())
    return (rss["peak_kib"] - rss["base_kib"]) / 1024


@pytest.mark.parametrize(
    ("path", "transport", "said"),
    [
        ("/endless-json", "streamable-http", "answered POST {url} with more than 1 MiB"),
        ("/endless-event", "streamable-http", "sent an SSE event of more than 1 MiB on POST {url}"),
        ("/endless-handshake", "streamable-http", "answered POST {url} with more than 1 MiB"),
        ("/gzip-bomb", "streamable-http", "answered POST {url} with more than 1 MiB"),
        ("/sse/endless", "sse", "sent an SSE event of more than 1 MiB on GET {url}"),
    ],
)
def test_an_endless_answer_is_refused_at_once_with_bounded_memory(
    path: str, transport: str, said: str, hostile: _Server, tmp_path: Path
) -> None:
    """The probe's 1.2 GB in 8 s: an answer that never ends fails its request (or the handshake)
    at once, names the server, the URL, the limit and the key to raise, and the run's memory
    grows by about the limit, not by what the server sent."""
    url = f"http://127.0.0.1:{hostile.server_address[1]}{path}"
    root = project(tmp_path, url, "max_message_bytes = 1048576\n", transport)
    started = time.monotonic()
    run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(tmp_path / "doc.html"), "-f", "plain")
    took = time.monotonic() - started
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert "ProtocolViolation" in run.output, run.failures()
    assert said.format(url=url) + " (max_message_bytes = 1048576)" in run.output, run.failures()
    assert "raise max_message_bytes in [tool.mcp-bdd] (or -D max_message_bytes=N)" in run.output, run.failures()
    assert took < TIMEOUT, f"failed only after {took:.1f} s: the timeout ended the wait, not the limit"
    assert growth_mib(root) < 64, f"the run grew by {growth_mib(root):.0f} MiB (the server sent up to {CAP // MIB})"
    assert hostile.hung_up.wait(30), "the client never hung up on the endless answer"
    assert max(hostile.sent) < CAP, hostile.sent  # the client stopped reading long before the end
    report = json.loads((tmp_path / "doc.json").read_text())
    errors = [e for e in _exchanges(report) if e["kind"] == "error" and "max_message_bytes" in json.dumps(e)]
    assert errors, "the refusal is not in the transcript"


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("endpoint-elsewhere", "announced an endpoint on another origin than its SSE stream at {url}"),
        (
            "endpoint-not-a-url",
            "announced an endpoint that is not a URL on its SSE stream at {url}: 'http://[evil\\x1b",
        ),
        ("endpoint-huge", "sent an `endpoint` event of more than 1 MiB on GET {url}"),
        ("endpoint-never", "closed its SSE stream at {url} before sending its `endpoint` event"),
    ],
)
def test_a_legacy_sse_endpoint_that_cannot_be_used_fails_the_start_at_once(
    mode: str, said: str, hostile: _Server, tmp_path: Path
) -> None:
    """The SDK refuses such an endpoint but hands its error to a stream nobody reads yet: the
    start waited out startup_timeout and said only that the handshake did not complete."""
    url = f"http://127.0.0.1:{hostile.server_address[1]}/sse/{mode}"
    root = project(tmp_path, url, transport="sse")
    started = time.monotonic()
    run = run_behave(root, "-f", "plain")
    took = time.monotonic() - started
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert f'The MCP server "hostile" {said.format(url=url)}' in run.output, run.failures()
    assert "is the server running at that URL" not in run.output, run.failures()
    assert "\x1b" not in run.output, run.failures()
    assert took < TIMEOUT, f"failed only after {took:.1f} s: startup_timeout ended the wait"
    # the SDK logs the refusal too: one line, not a traceback into mcp-bdd's own check
    assert "Traceback" not in run.output and "Encountered SSE exception: The MCP server" in run.output, run.output


def _exchanges(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield from node.get("exchanges", [])
        for value in node.values():
            yield from _exchanges(value)
    elif isinstance(node, list):
        for value in node:
            yield from _exchanges(value)


def test_a_large_event_within_the_limit_arrives_whole(hostile: _Server, tmp_path: Path) -> None:
    """3 MiB in one SSE event: past the SDK's own 1 MiB, within max_message_bytes (128 MiB)."""
    root = project(tmp_path, f"http://127.0.0.1:{hostile.server_address[1]}/big-event")
    run = run_behave(root)
    assert run.counts()["passed"] == 1, run.failures()


def test_the_limit_can_be_set_for_one_run(hostile: _Server, tmp_path: Path) -> None:
    """-D max_message_bytes reaches the HTTP client as it reaches the stdio framing."""
    url = f"http://127.0.0.1:{hostile.server_address[1]}/big"
    root = project(tmp_path, url)
    run = run_behave(root, "-D", "max_message_bytes=2097152")
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert f"answered POST {url} with more than 2 MiB (max_message_bytes = 2097152)" in run.output, run.failures()


# -- the transport on its own: SSE framing cut anywhere, what replaces a refused event or body ----


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _events(data: bytes, cut: int, limit: int, answers: Any = None) -> tuple[list[bytes], list[str]]:
    """What `Events` passes on of `data` read `cut` bytes at a time, and what it recorded."""
    refusals: list[str] = []
    transport = BoundedTransport(
        httpx2.MockTransport(lambda r: httpx2.Response(200)),
        server="s",
        limit=limit,
        answers_on_post=True,
        on_refused=refusals.append,
    )
    refuse = transport._event_refusal(httpx2.Request("GET", "http://127.0.0.1:9/sse"), answers)
    stream = Events(_Chunks([data[i : i + cut] for i in range(0, len(data), cut)]), limit, refuse)

    async def read() -> list[bytes]:
        return [chunk async for chunk in stream]

    return anyio.run(read), refusals


SMALL = b'event: message\r\ndata: {"jsonrpc": "2.0", "id": 1, "result": {}}\r\n\r\n: ping\n\ndata: a\rdata: b\r\r'
LAST = b'id: 4\ndata: {"jsonrpc": "2.0", "method": "notifications/x"}\n\n'


def _error_events(out: list[bytes]) -> list[dict[str, Any]]:
    found = []
    for line in b"".join(out).split(b"\n"):
        if line.startswith(b"data: {") and b'"mcp_bdd"' in line:
            found.append(json.loads(line[6:]))
    return found


def test_sse_events_pass_unchanged_and_whole_wherever_the_stream_is_cut() -> None:
    data = SMALL + LAST
    for cut in range(1, len(data) + 1):
        out, refusals = _events(data, cut, 1024)
        assert b"".join(out) == data, cut
        assert all(chunk.endswith((b"\n", b"\r")) for chunk in out), (cut, out)
        assert refusals == []


@pytest.mark.parametrize(
    ("big", "answered"),
    [
        (b'data: {"jsonrpc": "2.0", "id": 7, "result": {"x": "' + b"y" * 9000 + b'"}}\n\n', 7),  # id first
        (b'data: {"result": {"id": 3, "x": "' + b"y" * 9000 + b'"}, "jsonrpc": "2.0", "id": "b"}\n\n', "b"),  # last
        (
            b'data: {"jsonrpc": "2.0", "id": 5, "method": "roots/list", "params": {"x": "' + b"y" * 9000 + b'"}}\n\n',
            None,
        ),
        (b'data: {"jsonrpc": "2.0", "method": "notifications/x", "params": {"x": "' + b"y" * 9000 + b'"}}\n\n', None),
    ],
    ids=["id-first", "id-last", "server-request", "notification"],
)
def test_an_event_past_the_limit_becomes_an_error_for_the_request_it_answers(big: bytes, answered: Any) -> None:
    """Only an answer fails a request (a server's own request 5 is not the client's request 5);
    the stream goes on after the refused event, which nothing ever passes on."""
    for cut in (700, 4096, len(big)):
        out, refusals = _events(SMALL + big + LAST, cut, 4096)
        data = b"".join(out)
        assert data.startswith(SMALL) and data.endswith(LAST) and b"y" * 400 not in data  # quoted, not passed on
        errors = _error_events(out)
        assert [e["id"] for e in errors] == ([answered] if answered is not None else [])
        for error in errors:
            assert "sent an SSE event of more than 4 KiB on GET http://127.0.0.1:9/sse" in error["error"]["message"]
        assert len(refusals) == (0 if answered == 7 else 1)  # recorded when no request fails with it at once


def test_an_endless_event_on_a_requests_own_stream_fails_that_request_at_once() -> None:
    endless = b'data: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"x": "' + b"y" * (1 << 20)
    out, refusals = _events(SMALL + endless, 65536, 4096, answers=12)
    assert [e["id"] for e in _error_events(out)] == [12]
    assert refusals == []


def test_an_answer_past_the_limit_becomes_a_json_rpc_error_and_another_body_raises() -> None:
    refusals: list[str] = []
    big = b"{" + b" " * 8000 + b"}"
    json_type = {"content-type": "application/json"}
    transport = BoundedTransport(
        httpx2.MockTransport(
            lambda r: httpx2.Response(200, headers=json_type, stream=_Chunks([big[:5000], big[5000:]]))
        ),
        server="s",
        limit=4096,
        answers_on_post=True,
        on_refused=refusals.append,
    )

    async def exchange() -> tuple[Any, Exception | None]:
        async with httpx2.AsyncClient(transport=transport) as client:
            answer = await client.post("http://127.0.0.1:9/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "x"})
            try:
                await client.delete("http://127.0.0.1:9/mcp")
            except MessageTooLarge as exc:
                return answer.json(), exc
            return answer.json(), None

    answer, raised = anyio.run(exchange)
    assert answer["id"] == 3 and answer["error"]["data"]["mcp_bdd"] == PROTOCOL_MARK, answer
    assert "answered POST http://127.0.0.1:9/mcp with more than 4 KiB" in answer["error"]["message"]
    assert raised is not None and "answered DELETE http://127.0.0.1:9/mcp with more than 4 KiB" in str(raised)
    assert refusals == [str(raised)]  # the answer failed its request; the DELETE's body failed nothing


def _compressed(coding: str, parts: list[bytes], repeat: int = 1) -> bytes:
    """`parts` (the middle one `repeat` times) as a gzip, zlib-wrapped or raw deflate body."""
    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[coding]
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    out = [packer.compress(parts[0])]
    out += [packer.compress(parts[1]) for _ in range(repeat)]
    return b"".join([*out, packer.compress(parts[2]), packer.flush()])


def _post_answer(body: bytes, coding: str, limit: int) -> dict[str, Any]:
    """What the SDK would read of a POST answered with `body` under Content-Encoding `coding`."""
    headers = {"content-type": "application/json", "content-encoding": coding.removeprefix("raw-")}
    transport = BoundedTransport(
        httpx2.MockTransport(lambda r: httpx2.Response(200, headers=headers, stream=_Chunks([body]))),
        server="s",
        limit=limit,
        answers_on_post=True,
        on_refused=lambda message: None,
    )

    async def exchange() -> dict[str, Any]:
        async with httpx2.AsyncClient(transport=transport) as client:
            answer = await client.post("http://127.0.0.1:9/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "x"})
            data: dict[str, Any] = answer.json()
            return data

    return anyio.run(exchange)


def test_a_gzip_bomb_is_counted_as_it_inflates_and_refused_early() -> None:
    """256 KiB on the wire that inflate to 256 MiB: the limit counts what the answer holds, so it is
    refused after 1 MiB, and memory never holds much more (httpx2 inflated it whole before)."""
    bomb = _compressed("gzip", [b'{"jsonrpc": "2.0", "id": 3, "result": {"x": "', b"0" * MIB, b'"}}'], repeat=256)
    assert len(bomb) < MIB // 2
    tracemalloc.start()
    try:
        answer = _post_answer(bomb, "gzip", limit=MIB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer["error"]["data"]["mcp_bdd"] == PROTOCOL_MARK, answer
    assert "answered POST http://127.0.0.1:9/mcp with more than 1 MiB" in answer["error"]["message"]
    assert peak < 16 * MIB, f"peak {peak / MIB:.0f} MiB while refusing a 256 MiB answer"


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate"])
def test_a_compressed_answer_within_the_limit_arrives_whole(coding: str) -> None:
    text = "é" * 300_000  # 600 KB of UTF-8: inflated past a few 64 KiB pieces
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"x": text}}, ensure_ascii=False).encode()
    answer = _post_answer(_compressed(coding, [body[:10], body[10:-10], body[-10:]]), coding, limit=MIB)
    assert answer == {"jsonrpc": "2.0", "id": 3, "result": {"x": text}}


def test_a_body_that_does_not_inflate_fails_its_request_saying_so() -> None:
    answer = _post_answer(b"\x1f\x8b\x08\x00" + b"not gzip at all" * 10, "gzip", limit=MIB)
    assert answer["id"] == 3 and answer["error"]["data"]["mcp_bdd"] == PROTOCOL_MARK, answer
    assert "answered POST http://127.0.0.1:9/mcp with a gzip body that does not inflate" in answer["error"]["message"]


def test_the_environments_proxies_still_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx2 ignores HTTPS_PROXY for a client given its own transport: ours are wrapped instead."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    client = client_factory(server="s", limit=None, sse=False, on_refused=print)()
    proxied = client._transport_for_url(httpx2.URL("https://mcp.example.com/mcp"))
    direct = client._transport_for_url(httpx2.URL("http://127.0.0.1:9/mcp"))
    assert isinstance(proxied, BoundedTransport) and isinstance(direct, BoundedTransport)
    assert proxied is not direct and proxied.limit == DEFAULT_LIMIT
    anyio.run(client.aclose)


def test_the_sessions_clients_share_one_tls_context_per_certificate_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each client loaded the system's CA bundle again: more CPU than the rest of an HTTP
    session's start. They share one now, and SSL_CERT_FILE set later still counts."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    make = client_factory(server="s", limit=None, sse=False, on_refused=print)
    first, second = make(), make()
    for client in (first, second):
        transport = client._transport
        assert isinstance(transport, BoundedTransport) and isinstance(transport.inner, httpx2.AsyncHTTPTransport)
        assert transport.inner._pool._ssl_context is trusted_context()
        anyio.run(client.aclose)
    system = trusted_context()
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))  # a source of its own: a context of its own
    own = trusted_context()
    assert own is not system and trusted_context() is own
    monkeypatch.delenv("SSL_CERT_DIR")
    assert trusted_context() is system


def test_over_legacy_sse_an_event_past_the_sdks_own_cap_says_the_limit_cannot_help() -> None:
    transport = BoundedTransport(
        httpx2.MockTransport(lambda r: httpx2.Response(200)),
        server="s",
        limit=DEFAULT_LIMIT,
        answers_on_post=False,
        on_refused=print,
    )
    assert transport.event_limit == 1024 * 1024
    message = transport.message(httpx2.Request("GET", "http://u:p@127.0.0.1:9/sse?k=v"), "event", transport.event_limit)
    assert message.startswith('The server "s" sent an SSE event of more than 1 MiB on GET http://127.0.0.1:9/sse:')
    assert "accepts no larger event, whatever max_message_bytes says (128 MiB)" in message
