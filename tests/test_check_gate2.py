"""The gate, round two (issue 52): a 3 MB result and a ~1,500-token tool definition, a banner on a
stdio server's stdout, a loopback HTTP server that answers a foreign Host and Origin, a crashing
tool that may write (found only when called, offered the scoped way), a slow tool that reports
progress (alive, not hung), a call without `arguments` / with `arguments: null`, a read-only tool
that resets a password, and the JUnit and Markdown outputs.

Against tests/servers/gate2_server.py: standard library only, over stdio, or over HTTP in a thread.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from servers import gate2_server
from servers.gate2_server import PLANTED

from mcp_bdd.check._command import CheckCommand, run_check_command
from mcp_bdd.check._finding import Finding
from mcp_bdd.check._formats import junit_xml, markdown
from mcp_bdd.check._registry import Severity
from mcp_bdd.check._runner import CheckReport
from mcp_bdd.check.checks.budget import tool_tokens
from mcp_bdd.check.checks.quality import changes_something
from mcp_bdd.check.checks.transport import on_loopback

ROOT = Path(__file__).resolve().parents[1]
GATE2 = [sys.executable, str(ROOT / "tests" / "servers" / "gate2_server.py")]

pytestmark = pytest.mark.slow


def _run(command: CheckCommand) -> tuple[int, str]:
    out = StringIO()
    code = run_check_command(command, out)
    return code, out.getvalue()


def _found(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["check"], f["target"]) for f in data["findings"]]


@pytest.fixture(scope="module")
def stdio_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run over stdio, the write tool allowed by name (the list form), with every output."""
    folder = tmp_path_factory.mktemp("gate2")
    command = CheckCommand(
        target=GATE2, as_json=True, call_timeout=0.5, progress_cap=15.0, allow_writes=["save_note"],
        junit=folder / "check.xml", markdown=folder / "check.md",
    )  # fmt: skip
    code, out = _run(command)
    data = json.loads(out)
    data["_exit"], data["_folder"] = code, folder
    return data


@pytest.mark.parametrize(("check_id", "target"), PLANTED, ids=[f"{c}@{t}" for c, t in PLANTED])
def test_every_planted_defect_is_found(stdio_run: dict[str, Any], check_id: str, target: str) -> None:
    assert (check_id, target) in _found(stdio_run), _found(stdio_run)


def test_a_slow_tool_that_reports_progress_is_not_hung(stdio_run: dict[str, Any]) -> None:
    """slow_job runs 1.5 s with progress every 0.1 s; the call timeout is 0.5 s. It was filed as hung."""
    assert not [f for f in stdio_run["findings"] if f["target"] == "tool slow_job"], stdio_run["findings"]
    assert any(n.startswith("tool slow_job: answered after") and "progress" in n for n in stdio_run["notes"])


def test_a_silent_tool_is_still_hung(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a progress token the same tool reports nothing: silent past the call timeout, it is hung
    (the wait is extended by progress, never by the cap alone)."""
    monkeypatch.setenv("GATE2_SLOW_S", "3")
    code, out = _run(CheckCommand(target=GATE2, as_json=True, only=["honest.valid-calls"], call_timeout=0.5,
                                  progress_cap=0.5))  # fmt: skip
    hung = [f for f in json.loads(out)["findings"] if f["target"] == "tool slow_job"]
    assert code == 1 and hung and "hung" in hung[0]["title"], out


def test_arguments_left_out_and_null(stdio_run: dict[str, Any]) -> None:
    """No `arguments` is a valid call (high when it crashes); `arguments: null` is not (low)."""
    bare = {f["title"]: f for f in stdio_run["findings"] if f["check"] == "honest.no-arguments"
            and f["target"] == "tool bare_call"}  # fmt: skip
    left_out = next(f for t, f in bare.items() if t.startswith("a call with no arguments object"))
    null = next(f for t, f in bare.items() if t.startswith('a call with "arguments": null'))
    assert left_out["severity"] == "high" and "arguments" not in left_out["call"]["params"]
    assert null["severity"] == "low" and null["call"]["params"]["arguments"] is None
    # a tool that reads a missing or null `arguments` as none has no finding
    assert not [f for f in stdio_run["findings"] if f["check"] == "honest.no-arguments"
                and f["target"] == "tool huge_page"]  # fmt: skip


def test_a_write_tool_is_called_only_when_named(stdio_run: dict[str, Any]) -> None:
    """--allow-writes save_note: its crash is found; erase_all (destructive) is still left out, with why."""
    assert ("honest.valid-calls", "tool save_note") in _found(stdio_run)
    assert "save_note" not in stdio_run["skipped"]
    assert "and annotated destructiveHint: true: it may destroy data" in stdio_run["skipped"]["erase_all"]


def test_the_summary_says_what_was_not_called_and_how_to_call_it() -> None:
    """Without --allow-writes the crash in save_note is not found: the summary says which tools were
    left out, why, and the scoped flag that calls them."""
    code, out = _run(CheckCommand(target=GATE2, only=["honest.valid-calls"], call_timeout=0.5, progress_cap=15.0))
    assert code == 0 and "tool save_note" not in out, out
    assert (
        '"save_note": not annotated readOnlyHint: true (readOnlyHint: false): it writes (--allow-writes=save_note calls it)'
        in out
    )
    assert '"erase_all": not annotated readOnlyHint: true, and annotated destructiveHint: true' in out
    assert "the ones that may write: --allow-writes=save_note\n" in out
    assert "(against a server whose data may be lost): --allow-writes=save_note,erase_all\n" in out
    assert "; 2 tools not called; " in out


def test_junit_and_markdown(stdio_run: dict[str, Any]) -> None:
    folder: Path = stdio_run["_folder"]
    suite = ET.parse(folder / "check.xml").getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == set(stdio_run["checks"]) and suite.get("tests") == str(len(cases))
    assert cases["honest.valid-calls"].find("failure") is not None
    assert cases["schemas.input-valid"].find("failure") is None
    assert cases["quality.context-budget"].find("system-out") is not None  # low: below --fail-on, kept
    md = (folder / "check.md").read_text(encoding="utf-8")
    assert md.startswith("## mcp-bdd check: ❌ findings") and "| high |" in md
    assert "`transport.stdout-json`" in md and "gate2 0.1.0" in md
    assert "the destructive ones too" in md and ": --allow-writes=erase\\_all\n" in md


def test_markdown_is_appended_to_the_step_summary_only_when_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step output\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    only = ["protocol.identity"]
    _run(CheckCommand(target=GATE2, only=only))  # not asked: not written
    assert summary.read_text(encoding="utf-8") == "earlier step output\n"
    _run(CheckCommand(target=GATE2, only=only, markdown=summary))
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step output\n## mcp-bdd check: ✅ passed")


def test_outputs_escape_and_mask_what_the_server_sent() -> None:
    hostile = "x|</td><script>alert(1)</script>](http://e.example) password=hunter2secret\x1b[31m"
    report = CheckReport(target="t", transport="stdio", server={"name": hostile}, protocol="p", seed=0,
                         checks=["quality.descriptions"])  # fmt: skip
    report.findings.append(Finding(check="quality.descriptions", group="quality", severity=Severity.HIGH,
                                   title=hostile, target=f"tool {hostile}", details=hostile, tip=""))  # fmt: skip
    md = markdown(report, fail_on=Severity.MEDIUM)
    assert "<script>" not in md and "](http" not in md and "hunter2secret" not in md
    assert all(line.count("|") - line.count("\\|") in (0, 3, 5) for line in md.splitlines() if line.startswith("|"))
    xml = junit_xml(report, fail_on=Severity.MEDIUM)
    root = ET.fromstring(xml)  # well-formed despite the escape character
    assert "hunter2secret" not in xml and root.find("testcase/failure") is not None


@pytest.fixture
def http_server(request: pytest.FixtureRequest) -> Iterator[str]:
    server, url = gate2_server.serve_http(protected=request.param)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("http_server", [False], indirect=True)
def test_a_loopback_server_that_answers_a_foreign_host_is_found(http_server: str) -> None:
    code, out = _run(CheckCommand(target=[http_server], as_json=True, only=["transport"]))
    data = json.loads(out)
    found = [f for f in data["findings"] if f["check"] == "transport.dns-rebinding"]
    assert code == 1 and found and found[0]["severity"] == "high", out
    assert "evil.example" in json.dumps(found[0]["call"])
    assert not [f for f in data["findings"] if f["check"] == "transport.stdout-json"]  # not over HTTP


@pytest.mark.parametrize("http_server", [True], indirect=True)
def test_a_loopback_server_that_refuses_a_foreign_host_passes(http_server: str) -> None:
    code, out = _run(CheckCommand(target=[http_server], as_json=True, only=["transport"]))
    data = json.loads(out)
    assert code == 0 and data["findings"] == [], out
    assert any("a foreign Host and Origin were refused (HTTP 403)" in n for n in data["notes"])


def test_loopback_and_token_estimate() -> None:
    assert on_loopback("http://127.0.0.1:8000/mcp") and on_loopback("http://localhost/mcp")
    assert on_loopback("http://[::1]:3000/mcp") and on_loopback("http://app.localhost/mcp")
    assert not on_loopback("https://mcp.example.com/mcp") and not on_loopback("http://10.0.0.2/mcp")
    tool = {"name": "t", "description": "d" * 100, "inputSchema": {"type": "object"}, "annotations": {"x": 1}}
    # {"name":"t","description":"ddd…","inputSchema":{"type":"object"}}: 161 characters, / 4 rounded up
    assert tool_tokens(tool) == 41


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("reset_password", "Looks up the account."),
        ("account", "Resets the user's password and emails it."),
        ("notify", "This tool sends an email to the team."),
        ("updateUser", "Changes a user."),
        ("tokens", "Revoke an API token."),
        ("flags", "Set the feature flag for a tenant."),
    ],
)
def test_a_change_in_name_or_description_is_seen(name: str, description: str) -> None:
    assert changes_something(name, description)


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("get_settings", "Gets the settings of the workspace."),
        ("git_log", "Shows the commit logs. Use git_reset to undo changes."),
        ("history", "Update history of a package, newest first."),
        ("list_posts", "Returns the posts. Posts are listed newest first."),
        ("setup_guide", "Setup guide for the CLI."),
        ("read_graph", "Read the entire knowledge graph"),
        ("get_current_time", "Get current time in a specific timezones"),
    ],
)
def test_a_read_is_not_taken_for_a_change(name: str, description: str) -> None:
    assert changes_something(name, description) is None


def test_the_new_options_parse_into_the_command() -> None:
    """The options mcp_bdd/cli adds with one call (`add_gate_arguments`) reach CheckCommand."""
    import argparse

    from mcp_bdd.check._command import add_gate_arguments, gate_arguments

    parser = argparse.ArgumentParser()
    add_gate_arguments(parser)
    args = parser.parse_args(["--progress-cap", "12", "--max-result-bytes", "5000", "--max-tool-tokens", "300",
                              "--max-catalog-tokens", "900", "--junit", "j.xml", "--markdown", "m.md"])  # fmt: skip
    command = CheckCommand(**gate_arguments(args))
    assert (command.progress_cap, command.max_result_bytes, command.max_tool_tokens, command.max_catalog_tokens) == (
        12.0, 5000, 300, 900
    )  # fmt: skip
    assert command.junit == Path("j.xml") and command.markdown == Path("m.md")
    defaults = CheckCommand(**gate_arguments(parser.parse_args([])))
    assert defaults.progress_cap == 30.0 and defaults.junit is None


def test_the_command_line_takes_every_new_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mcp-bdd check` itself: --allow-writes repeated with tool names, the size and budget limits,
    the progress cap, JUnit and Markdown files (they were options of CheckCommand only)."""
    from mcp_bdd.cli import main

    junit, summary = tmp_path / "check.xml", tmp_path / "check.md"
    argv = ["check", "--json", "--only", "honest.valid-calls,quality.result-size", "--call-timeout", "0.5",
            "--progress-cap", "15", "--max-result-bytes", "1000", "--allow-writes", "other",
            "--allow-writes=save_note", "--junit", str(junit), "--markdown", str(summary), "--", *GATE2]  # fmt: skip
    main(argv)
    found = _found(json.loads(capsys.readouterr().out))
    assert ("honest.valid-calls", "tool save_note") in found, found  # called: named by the second flag
    assert any(check == "quality.result-size" for check, _ in found), found  # the 1,000-byte limit
    assert junit.read_text().startswith("<?xml") and "save\\_note" in summary.read_text()  # Markdown-escaped
