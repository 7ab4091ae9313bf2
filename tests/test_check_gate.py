"""What `mcp-bdd check` says about itself: its summary's words and time, the checks it accepts by
name, a tip that shows its placeholder as written, and an output it could not write.

Against tests/servers/catalog.py (a stdio server of the standard library only) and, for the token
tip, a hand-written HTTP endpoint that asks for a token (issues 50 and 52)."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mcp_bdd.cli import main

ROOT = Path(__file__).resolve().parents[1]
CATALOG = [sys.executable, str(ROOT / "tests" / "servers" / "catalog.py")]

pytestmark = pytest.mark.slow


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    said = capsys.readouterr()
    return code, said.out, said.err


def test_the_summary_counts_in_words_and_times_the_whole_run(capsys: pytest.CaptureFixture[str]) -> None:
    """`1 tool calls` beside `Not called (3 tools)`, and 0.07 s printed for a 7.5 s run: the time
    was the checks' alone, without starting and stopping the server."""
    started = time.monotonic()
    code, out, _ = _check(capsys, "--only", "protocol.unknown-names,honest.valid-calls", "--", *CATALOG, "--tools", "1")
    wall = time.monotonic() - started
    assert code == 0, out
    assert "surface:   1 tool, 0 resources, 0 resource templates, 0 prompts, 1 tool call\n" in out
    assert "\nNot called (1 tool):\n" in out and "\n0 findings (" in out
    shown = float(re.findall(r"; (\d+\.\d\d) s\n", out)[-1])
    assert shown >= 0.8 * wall, (shown, wall)


def test_contract_is_a_check_the_selection_knows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--only contract` and `--only contract.matches` were usage errors ("the identical ASCII name
    differs in accents") although `--list` shows both."""
    contract = tmp_path / "contract.json"
    assert main(["contract", "update", str(contract), "--", *CATALOG, "--tools", "2"]) == 0
    capsys.readouterr()
    grown = [*CATALOG, "--tools", "3"]
    for only in ("contract", "contract.matches"):
        code, out, err = _check(capsys, "--only", only, "--contract", str(contract), "--json", "--", *grown)
        data = json.loads(out)
        assert code == 0 and data["checks"] == ["contract.matches"], out + err
        assert [(f["check"], f["target"]) for f in data["findings"]] == [("contract.matches", "tool create_order_2")]
    # without a contract, it is said what the check needs; never a claim about accents
    code, _, err = _check(capsys, "--only", "contract", "--", *grown)
    assert code == 2 and "compares the server's surface with a contract file: give it with --contract FILE" in err
    assert "Unicode" not in err and "looks the same" not in err
    # --skip contract leaves the comparison out; SARIF describes the check it ran
    code, out, _ = _check(capsys, "--only", "protocol.identity", "--skip", "contract", "--contract", str(contract),
                          "--json", "--", *grown)  # fmt: skip
    assert code == 0 and "contract.matches" not in json.loads(out)["checks"]
    sarif = tmp_path / "check.sarif"
    assert main(["check", "--only", "contract", "--contract", str(contract), "--sarif", str(sarif), "--", *grown]) == 0
    rules = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["contract.matches"]


class _AsksForAToken(BaseHTTPRequestHandler):
    """Every request refused with 401 and a challenge that echoes the token it was sent."""

    def do_POST(self) -> None:
        sent = self.headers.get("Authorization", "none")
        self.send_response(401)
        self.send_header("WWW-Authenticate", f'Bearer error="invalid_token", error_description="refused: {sent}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def token_asking_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AsksForAToken)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


def test_the_token_tip_shows_its_placeholder_and_masks_the_real_token(
    token_asking_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tip read `--header "Authorization: ****"`: the secret masking took the placeholder for a token."""
    code, out, _ = _check(capsys, token_asking_url, "--timeout", "10")
    assert code == 3 and "it asks for a token." in out, out
    assert 'Tip: pass a valid one: --header "Authorization: Bearer <token>"' in out
    secret = "s3cr3t-t0ken-4f9a2c"
    code, out, _ = _check(capsys, token_asking_url, "--timeout", "10", "--header", f"Authorization: Bearer {secret}")
    assert code == 3 and "the token given was refused." in out, out
    assert '--header "Authorization: Bearer <token>"' in out and secret not in out


def test_a_sarif_or_contract_file_that_could_not_be_written_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("out").write_text("a file where a folder would go\n", encoding="utf-8")
    code, out, err = _check(capsys, "--only", "protocol.identity", "--sarif", "out/x.sarif", "--", *CATALOG)
    assert code == 2 and out.startswith("passed: catalog 1.0.0") and "SARIF:" not in out
    assert "the SARIF report was not written to out/x.sarif: out is a file, not a folder." in err
    assert "Tip: give --sarif a file in a folder you may write to" in err and "Errno" not in err
    assert main(["contract", "update", "out/c.json", "--", *CATALOG]) == 2
    assert "the contract was not written to out/c.json: out is a file, not a folder." in capsys.readouterr().err
