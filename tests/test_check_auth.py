"""The `auth` group of `mcp-bdd check`, both ways, against real servers on loopback ports.

- the demo shop protected by the SDK's resource-server support, verifying tokens of the real
  `oauth` fake, passes the group (over streamable HTTP and SSE);
- the same shop unprotected gets one info finding ("not protected") and nothing else;
- tests/servers/broken_auth.py (a real MCP server behind a hand-written gate that gets OAuth
  wrong) gets a finding from each check;
- over stdio and in-memory the group is not applicable: a note, no finding.

The checked session itself carries a valid token (`--header`), exactly as a user checks a
protected server; the checks make their own requests without it, or with garbage.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp_bdd._net import free_port
from mcp_bdd.check import REGISTRY, Severity
from mcp_bdd.cli import main
from mcp_bdd.fakes import FakeAuthServer
from mcp_bdd.transcript import Transcript

ROOT = Path(__file__).resolve().parents[1]
AUTH_CHECKS = [i for i, s in REGISTRY.items() if s.group == "auth"]

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


@contextmanager
def _serving(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    """Run a server process until the block ends; ready once its port accepts (or fail with its stderr)."""
    proc = subprocess.Popen(
        argv, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                pass
            try:
                proc.wait(timeout=0.05)  # wakes at once if the server dies
            except subprocess.TimeoutExpired:
                pass
            else:
                raise AssertionError(f"{argv} exited {proc.returncode}: {proc.stderr.read().decode()[-3000:]}")  # type: ignore[union-attr]
            assert time.monotonic() < deadline, f"{argv} did not listen on {port} within 60 s"
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _shop(transport: str, port: int) -> list[str]:
    return [sys.executable, "-m", "mcp_bdd.serve", "demo.shop:create_server", "--transport", transport,
            "--port", str(port)]  # fmt: skip


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--only", "auth", "--json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.fixture
def auth() -> Iterator[FakeAuthServer]:
    server = FakeAuthServer("auth", transcript=Transcript(), options={"audience": "shop", "scopes": ["orders:read"]})
    yield server
    server.close()


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_the_protected_demo_shop_passes_the_auth_group(
    transport: str, auth: FakeAuthServer, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/" + ("mcp" if transport == "streamable-http" else "sse")
    env = {"AUTH_ISSUER": auth.issuer, "AUTH_AUDIENCE": "shop", "AUTH_RESOURCE": url}
    token = auth.issue(["orders:read"])
    with _serving(_shop(transport, port), port, env):
        code, data = _check(capsys, url, "--header", f"Authorization: Bearer {token}", "--fail-on", "low")
        # without a (valid) token the session cannot open: the report says why and how to give one
        for header, why in ([], "it asks for a token"), (["--header", "Authorization: Bearer x"], "was refused"):
            refused, unreachable = _check(capsys, url, *header)
            assert refused == 3 and unreachable["status"] == "unreachable", unreachable
            assert "The server answers 401 Unauthorized (WWW-Authenticate: Bearer" in unreachable["error"], unreachable
            assert why in unreachable["error"] and '--header "Authorization: Bearer <token>"' in unreachable["error"]
    assert sorted(data["checks"]) == sorted(AUTH_CHECKS) and data["transport"] == transport, data
    assert data["findings"] == [], json.dumps(data, indent=2)
    assert code == 0
    assert not any("not applicable" in n for n in data["notes"]), data["notes"]


@pytest.mark.parametrize("protocol", ["2026-07-28", "legacy"])
def test_an_unprotected_http_server_gets_the_info_finding_only(
    protocol: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both eras' opening requests (server/discover, initialize) are answered: the server asks for no token."""
    port, sarif = free_port(), tmp_path / "check.sarif"
    with _serving(_shop("streamable-http", port), port):
        code, data = _check(
            capsys, f"http://127.0.0.1:{port}/mcp", "--protocol", protocol, "--fail-on", "low", "--sarif", str(sarif)
        )
    schema_file = ROOT / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"
    if schema_file.exists():  # npm ci installs it; the info level is SARIF's "none"
        log = json.loads(sarif.read_text(encoding="utf-8"))
        jsonschema.Draft4Validator(json.loads(schema_file.read_text(encoding="utf-8"))).validate(log)
        assert [r["level"] for r in log["runs"][0]["results"]] == ["none"]
    assert data["protocol"] == ("2025-11-25" if protocol == "legacy" else protocol), data
    assert code == 0, json.dumps(data, indent=2)
    assert [(f["check"], f["severity"]) for f in data["findings"]] == [("auth.challenge", "info")], data
    assert "not protected" in data["findings"][0]["title"] and data["findings"][0]["details"].endswith("-> 200")


def test_a_broken_protected_server_gets_each_finding(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = [sys.executable, str(ROOT / "tests" / "servers" / "broken_auth.py"), str(port)]
    with _serving(server, port):
        code, data = _check(capsys, url, "--header", "Authorization: Bearer good-token")
    assert code == 1, data
    found = {(f["check"], f["severity"], f["title"]) for f in data["findings"]}
    expected = {
        ("auth.challenge", "high", "the 401 does not point to the protected resource metadata: "
                                   "no WWW-Authenticate header"),
        ("auth.resource-metadata", "medium",
         'the protected resource metadata names another resource ("https://elsewhere.example/mcp")'),
        ("auth.authorization-server", "medium", "the authorization server's metadata does not name jwks_uri"),
        ("auth.bad-token", "high", "a garbage token made the server fail (500)"),
        ("auth.bad-token", "high", 'an unsigned JWT (alg "none") made the server fail (500)'),
        ("auth.bad-token", "high", "the answer to a garbage token leaks a stack trace"),
    }  # fmt: skip
    assert expected <= found, json.dumps(data["findings"], indent=2)
    assert {f["check"] for f in data["findings"]} == set(AUTH_CHECKS)
    # the evidence: the exact exchange, and the token the check made up (never a real one) shown
    crash = next(f for f in data["findings"] if f["title"].startswith("a garbage token made"))
    assert crash["call"]["response"]["status"] == 500 and "Traceback" in crash["call"]["response"]["body"]
    assert crash["call"]["params"]["sent"] == "a garbage token"
    assert "good-token" not in json.dumps(data)
    metadata = next(f for f in data["findings"] if f["check"] == "auth.authorization-server")
    assert f'"token_endpoint": "http://127.0.0.1:{port}/token"' in metadata["details"]  # public: shown, not masked


def test_the_root_well_known_location_and_the_challenge_are_judged_as_the_steps_judge_them() -> None:
    from mcp_bdd.check._discovery import as_metadata_locations, challenge_problem, resource_metadata_locations

    assert resource_metadata_locations("http://h:1/mcp/") == [
        "http://h:1/.well-known/oauth-protected-resource/mcp",
        "http://h:1/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_locations("http://h:1") == ["http://h:1/.well-known/oauth-protected-resource"]
    assert as_metadata_locations("https://a.example/tenant")[0] == (
        "https://a.example/.well-known/oauth-authorization-server/tenant"
    )
    good = 'Bearer error="invalid_token", resource_metadata="http://h:1/.well-known/oauth-protected-resource/mcp"'
    assert challenge_problem(good, "http://h:1/mcp") is None
    assert challenge_problem(good, "http://h:2/mcp") == "resource_metadata points to another origin (http://h:1)"
    assert challenge_problem('Basic realm="x"', "http://h:1/mcp") == "the challenge is not a Bearer challenge"
    assert challenge_problem("Bearer", "http://h:1/mcp") == "the challenge has no resource_metadata parameter"
    assert Severity.INFO < Severity.LOW and Severity.INFO.sarif_level == "none"


@pytest.mark.parametrize("transport", ["in-memory", "stdio"])
def test_stdio_and_in_memory_are_not_applicable(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mcp-bdd.toml").write_text(f'[servers.shop]\napp = "demo.shop:create_server"\ncwd = "{ROOT}"\n')
    monkeypatch.chdir(tmp_path)
    code, data = _check(capsys, "shop", "--transport", transport, "--fail-on", "low")
    assert code == 0 and data["findings"] == [] and data["transport"] == transport, data
    assert (
        f"auth: not applicable: the server runs over {transport} (OAuth protects HTTP transports only)."
        in (data["notes"])
    )


def test_a_metadata_document_that_trickles_is_given_up_on(tmp_path: Path) -> None:
    """A server that sends a metadata document's body a byte at a time never trips the client's
    timeout (it bounds each read); `mcp-bdd check` and the protected-resource-metadata step waited
    with no limit. Each location now has `within` seconds to answer whole."""
    import http.server
    import threading

    import httpx2

    from mcp_bdd.check._discovery import fetch_json

    done = threading.Event()

    class Trickle(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"resource": "')
            for _ in range(600):  # a minute at most: on the old code the test fails instead of hanging
                if done.wait(0.1):
                    return
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:  # the client gave up: what it must do
                    return

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/.well-known/oauth-protected-resource"
        with httpx2.Client(timeout=5, trust_env=False) as client:
            fetch = fetch_json(client, [url], within=1.0)
    finally:
        done.set()
        server.shutdown()
        server.server_close()
    assert fetch.document is None
    assert fetch.attempts == [(url, 200, "its body did not come whole within 1 s")], fetch.attempts
