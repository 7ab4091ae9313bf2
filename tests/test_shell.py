"""`mcp-bdd call` and `mcp-bdd list` against the demo servers (as configured, fakes included) and a real
third-party server (mcp-server-time from the dev extra), with probe's exit codes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from behave_project import REPO, Census, default_sigint

from mcp_bdd.cli import main
from mcp_bdd.failures import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")

CONFIG = f"""
server = "shop"

[servers.shop]
app = "demo.shop:create_server"
cwd = "{REPO}"

[servers.analytics]
app = "demo.analytics:create_server"
cwd = "{REPO}"
env = {{ WAREHOUSE_URL = "${{fake.warehouse.url}}" }}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "mcp-bdd.toml").write_text(textwrap.dedent(CONFIG))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(REPO))
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_call_coerces_arguments_by_the_schema(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "call", "shop", "add", "a=2", "b=3")
    assert code == EXIT_OK, err
    assert out.splitlines()[0] == "5"
    assert '"result": 5' in out

    code, out, err = _run(capsys, "call", "shop", "add", "a=2", "b=3", "--json")
    assert code == EXIT_OK, err
    result = json.loads(out)
    assert result["structuredContent"] == {"result": 5}
    assert result.get("isError") in (None, False)


def test_call_raw_json_values_and_usage_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "call", "shop", "echo", 'text:="quoted"')
    assert (code, out.strip()) == (EXIT_OK, "quoted"), err

    code, _, err = _run(capsys, "call", "shop", "add", "a=2", "b=two")
    assert code == EXIT_USAGE
    assert 'b=two: the argument "b" of "add" expects integer' in err

    code, _, err = _run(capsys, "call", "shop", "ad", "a=1")
    assert code == EXIT_USAGE
    assert 'has no tool "ad". Did you mean "add"?' in err

    code, _, err = _run(capsys, "call", "shop", "add", "a=1", "c=2")
    assert code == EXIT_USAGE
    assert 'has no argument "c"' in err

    code, _, err = _run(capsys, "call", "shop", "add", "a=1")
    assert code == EXIT_USAGE
    assert 'requires "b": add b=<integer>' in err

    code, _, err = _run(capsys, "call", "shop", "add", "a")
    assert code == EXIT_USAGE
    assert '"a" is not name=value' in err

    code, _, err = _run(capsys, "call", "shp", "add")
    assert code == EXIT_USAGE
    assert 'Did you mean "shop"?' in err


def test_a_failing_call_exits_1_and_shows_the_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "call", "shop", "get_order", "order_id=ORD-nope")
    assert code == EXIT_FAILED
    assert out.startswith("ERROR (the tool returned isError: true):")
    assert "ORD-nope" in out

    code, out, _ = _run(capsys, "call", "shop", "get_order", "order_id=ORD-nope", "--json")
    assert code == EXIT_FAILED
    assert json.loads(out)["isError"] is True


def test_call_reaches_the_configured_fakes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """${fake.warehouse.url} is a real fake HTTP service: unstubbed, it answers 404, and the tool says so."""
    code, out, _ = _run(capsys, "call", "analytics", "sales_summary")
    assert code == EXIT_FAILED
    assert "HTTP 404" in out


def test_server_text_cannot_drive_the_terminal(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "call", "shop", "echo", "text=hi\x1b[31mred\x07")
    assert code == EXIT_OK
    assert "\x1b" not in out and "\x07" not in out
    assert "hi\\x1b[31mred\\x07" in out


def test_list_tools_resources_templates_prompts(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "list", "shop", "tools")
    assert code == EXIT_OK, err
    assert "add a=<integer> b=<integer>" in out
    assert "import_catalog [count=<integer>]" in out

    code, out, _ = _run(capsys, "list", "shop", "resources", "--json")
    assert code == EXIT_OK
    assert "shop://catalog" in [r["uri"] for r in json.loads(out)]

    code, out, _ = _run(capsys, "list", "shop", "templates")
    assert code == EXIT_OK and "shop://docs/{topic}" in out

    code, out, _ = _run(capsys, "list", "shop", "prompts")
    assert code == EXIT_OK and "greeting name" in out

    code, _, err = _run(capsys, "list", "shop", "tool")
    assert code == EXIT_USAGE and 'Did you mean "tools"?' in err


def test_a_third_party_server_as_a_command(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "call", "get_current_time", "timezone=UTC", "--json", "--", TIME_SERVER)
    assert code == EXIT_OK, err
    assert json.loads(out)["structuredContent"]["timezone"] == "UTC"

    code, out, _ = _run(capsys, "list", "tools", "--", TIME_SERVER, "--local-timezone", "UTC")
    assert code == EXIT_OK
    assert "get_current_time timezone=<string>" in out
    assert "convert_time" in out

    code, out, _ = _run(capsys, "call", "get_current_time", "timezone=Nowhere/X", "--", TIME_SERVER)
    assert code == EXIT_FAILED
    assert "Invalid timezone" in out


def test_an_unreachable_server_exits_3(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "list", "tools", "--", str(project / "no-such-server"))
    assert code == EXIT_UNREACHABLE
    assert "UNREACHABLE" in err and "could not be started" in err

    code, out, _ = _run(capsys, "call", "anything", "--json", "--", str(project / "no-such-server"))
    assert code == EXIT_UNREACHABLE
    assert json.loads(out)["status"] == "unreachable"


SECRETIVE = """
import os
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field


def create_server() -> MCPServer:
    server = MCPServer("vault")
    token = os.environ["API_TOKEN"]

    @server.tool(description=f"Create an API key (signed with {token}).")
    def create_api_key(
        api_key: Annotated[str, Field(description="The new key; see https://vault.example/keys")], label: str
    ) -> str:
        return label

    @server.tool(description="Rotate a token.", annotations=ToolAnnotations(readOnlyHint=True))
    def rotate_token(token_id: str) -> str:
        return token_id

    return server
"""


def test_names_that_look_secret_are_shown_whole_and_secrets_still_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vault's tools are called `create_api_key` and take an `api_key`: mcp-bdd's own sentences about
    them (list, call, contract, check) must not read as `NAME: value` and hide the words that follow,
    while the token the server was given and quotes is still masked."""
    (tmp_path / "vault_server.py").write_text(SECRETIVE)
    (tmp_path / "mcp-bdd.toml").write_text(
        f'[servers.vault]\napp = "vault_server:create_server"\ncwd = "{tmp_path}"\n'
        'env = { API_TOKEN = "tok-4f9a-77c1e2" }\n'
    )
    monkeypatch.chdir(tmp_path)

    code, out, err = _run(capsys, "list", "vault", "tools")
    assert code == EXIT_OK, err
    assert "create_api_key api_key=<string> label=<string>" in out
    assert "signed with ****" in out and "tok-4f9a" not in out

    code, _, err = _run(capsys, "call", "vault", "create_api_key", "label=x")
    assert code == EXIT_USAGE
    assert 'requires "api_key": add api_key=<string>.' in err

    contract = tmp_path / "vault.json"
    assert _run(capsys, "contract", "update", str(contract), "vault")[0] == EXIT_OK
    data = json.loads(contract.read_text())
    data["tools"]["rotate_token"]["description"] = "An older text."
    data["tools"]["delete_secret"] = {"name": "delete_secret", "description": "Was here."}
    contract.write_text(json.dumps(data))
    code, out, err = _run(capsys, "contract", "verify", str(contract), "vault")
    assert code == EXIT_FAILED, err
    assert '[breaking] tool "delete_secret": removed' in out
    assert '[routing] tool "rotate_token": description changed' in out

    code, out, err = _run(capsys, "check", "vault", "--only", "poisoning.urls,honest.missing-argument")
    assert '"inputSchema.properties.api_key.description": https://vault.example/keys' in out, out + err
    assert '"create_api_key": not annotated readOnlyHint: true' in out
    assert "tok-4f9a" not in out + err


def test_a_call_that_times_out_once_connected_says_timeout_and_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server answered the handshake and the listing; only the call got no answer in time. It
    said UNREACHABLE and exited 3 ("could not be started or reached"), which sends a user to check
    a URL that works."""
    hostile = [sys.executable, str(REPO / "tests" / "servers" / "hostile.py")]
    code, _, err = _run(capsys, "call", "hang", "--timeout", "2", "--", *hostile)
    assert code == EXIT_FAILED, err
    assert err.startswith("TIMEOUT: ") and "tools/call timed out after 2" in err and "UNREACHABLE" not in err, err


NODE_SERVER = ["node", str(REPO / "tests" / "node_server" / "server.mjs")]


@pytest.mark.skipif(
    shutil.which("node") is None or not (REPO / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(),
    reason="node and this repo's node_modules (npm ci) are needed",
)
def test_a_listing_the_server_does_not_offer_is_empty_not_unreachable(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The TypeScript SDK's server declares only `tools` and answers prompts/list with -32601: that
    printed `UNREACHABLE ... JSON-RPC error -32601: Method not found` and exited 3 ("could not be
    started or reached") for a server that answered. A listing the server does not offer is empty."""
    for kind in ("prompts", "templates", "resources"):
        code, out, err = _run(capsys, "list", kind, "--", *NODE_SERVER)
        assert (code, out, err) == (EXIT_OK, f"(no {kind})\n", ""), (kind, out, err)
    code, out, err = _run(capsys, "list", "prompts", "--json", "--", *NODE_SERVER)
    assert (code, json.loads(out)) == (EXIT_OK, []), err
    code, out, _ = _run(capsys, "list", "tools", "--", *NODE_SERVER)
    assert code == EXIT_OK and "add_note text=<string>" in out


DECLARES_PROMPTS = f"""
import sys

sys.path.insert(0, {str(REPO / "tests" / "servers")!r})
import raw_server

answer = raw_server.answer


def declaring_prompts(request):
    reply = answer(request)
    if request.get("method") == "initialize":
        reply["result"]["capabilities"]["prompts"] = {{}}
    return reply


raw_server.answer = declaring_prompts
raw_server.main()
"""


def test_a_listing_answered_with_method_not_found_is_empty(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A server that declares `prompts` and still answers prompts/list with -32601 has none either."""
    (project / "declares_prompts.py").write_text(DECLARES_PROMPTS)
    code, out, err = _run(capsys, "list", "prompts", "--", sys.executable, str(project / "declares_prompts.py"))
    assert (code, out, err) == (EXIT_OK, "(no prompts)\n", "")


# ---------------------------------------------------------------------------------------------
# messages that point the right way (issue 50, item 6)


def test_call_and_list_without_a_server_name_use_the_default_server(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`server = "shop"` is configured: `call add ...` said `Unknown server "add" ... Servers are
    configured under [tool.mcp-bdd.servers.<name>] in .../mcp-bdd.toml`, and `list tools` said
    `say what to list` although "tools" was said."""
    code, out, err = _run(capsys, "call", "add", "a=2", "b=3")
    assert (code, out.splitlines()[0]) == (EXIT_OK, "5"), err
    code, out, err = _run(capsys, "list", "tools")
    assert code == EXIT_OK and "add a=<integer> b=<integer>" in out, err
    code, out, err = _run(capsys, "list", "analytics", "tools")  # a server named first still wins
    assert code == EXIT_OK and "sales_summary" in out, err


def test_an_unknown_server_is_shown_in_the_form_of_the_file_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two servers, no default: the first word must be a server, and the message names the table as
    the file in use writes it ([servers.<name>] in mcp-bdd.toml, [tool.mcp-bdd.servers.<name>] in
    pyproject.toml)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mcp-bdd.toml").write_text(textwrap.dedent(CONFIG).replace('server = "shop"\n', ""))
    code, _, err = _run(capsys, "call", "add", "a=2")
    assert code == EXIT_USAGE
    assert err.startswith('mcp-bdd: error: Unknown server "add". Available servers: "analytics", "shop". '), err
    assert f"Servers are configured under [servers.<name>] in {tmp_path / 'mcp-bdd.toml'}" in err
    assert "tool.mcp-bdd" not in err
    code, _, err = _run(capsys, "list", "tools")
    assert code == EXIT_USAGE and "Say which server: mcp-bdd list SERVER tools" in err, err

    (tmp_path / "mcp-bdd.toml").unlink()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mcp-bdd.servers.shop]\napp = "demo.shop:create_server"\n'
        '[tool.mcp-bdd.servers.analytics]\napp = "demo.analytics:create_server"\n'
    )
    code, _, err = _run(capsys, "call", "add", "a=2")
    assert code == EXIT_USAGE and "Servers are configured under [tool.mcp-bdd.servers.<name>] in " in err, err


DESK = """\
from mcp.server.mcpserver import MCPServer

import requestz

mcp = MCPServer("desk")
"""


def test_a_server_modules_own_failing_import_names_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said `Cannot import "desk" ... No module named 'requestz'. The module must be importable from
    the project root`: desk.py was found; the import on its line 3 failed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "desk.py").write_text(DESK)
    (tmp_path / "mcp-bdd.toml").write_text('[servers.desk]\napp = "desk:mcp"\n')
    code, _, err = _run(capsys, "list", "desk", "tools")
    assert code == EXIT_UNREACHABLE
    assert 'Importing "desk" (from app = "desk:mcp") failed at desk.py:3: No module named \'requestz\'.' in err
    assert "Tip: install requestz in the environment mcp-bdd runs in" in err
    assert "must be importable from the project root" not in err

    (tmp_path / "mcp-bdd.toml").write_text('[servers.desk]\napp = "nodesk:mcp"\n')  # the module itself is missing
    code, _, err = _run(capsys, "list", "desk", "tools")
    assert code == EXIT_UNREACHABLE
    assert (
        f'Cannot import "nodesk" (from app = "nodesk:mcp"): No module named \'nodesk\'. The module must be importable from the project root {tmp_path}.'
        in err
    )


#: `_spawn` watched: whether the MCP SDK was imported when each server process was started
SPAWN_SPY = """
import sys

import mcp_bdd.servers._start as start

spawned = []
real = start._spawn


def spy(*args, **kwargs):
    spawned.append("mcp" in sys.modules)
    return real(*args, **kwargs)


start._spawn = spy
from mcp_bdd.cli import main

code = main(sys.argv[1:])
print("spawned, the SDK imported:", spawned)
sys.exit(code)
"""


@pytest.mark.parametrize(
    "verb", [["list", "tools"], ["call", "get_current_time", "timezone=UTC"]], ids=["list", "call"]
)
def test_a_command_server_starts_before_the_sdk_is_imported(verb: list[str], tmp_path: Path) -> None:
    """Issue 50: a one-shot command imported the MCP SDK (0.55 s) before it started its server (0.8 s
    for a Python one), so the two added up. The server is started first, and boots while the SDK
    is imported; the session takes that process (one start), not a second one."""
    done = subprocess.run(
        [sys.executable, "-c", SPAWN_SPY, *verb, "--", TIME_SERVER],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "spawned, the SDK imported: [False]" in done.stdout, done.stdout + done.stderr


#: a server that says it has started, then never answers
def _output_or_stacks(proc: subprocess.Popen[str], timeout: float) -> str:
    """The command's output once it exits; if it does not within `timeout`, every thread's stack
    (`-X faulthandler` prints them on SIGABRT), so that a hang says where it waits."""
    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        output = proc.communicate(timeout=30)[0]
        raise AssertionError(f"still running {timeout:g} s after the signal; its threads:\n{output}") from None


NEVER_ANSWERS = """
import pathlib, sys, time
pathlib.Path(sys.argv[1]).write_text("up")
time.sleep(600)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_a_one_shot_command_stopped_while_its_server_starts_leaves_nothing(
    signum: signal.Signals, tmp_path: Path, no_leftover_processes: Census
) -> None:
    """The server is started ahead of the session now: Ctrl-C (exit 130) or `kill -9` of `mcp-bdd
    list` while it waits for the server still stops the server, and removes the run's files."""
    (tmp_path / "server.py").write_text(NEVER_ANSWERS)
    flag, scratch = tmp_path / "up.flag", tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-X", "faulthandler", "-m", "mcp_bdd.cli", "list", "tools", "--timeout", "300", "--",
         sys.executable, str(tmp_path / "server.py"), str(flag)],
        cwd=tmp_path, env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, preexec_fn=default_sigint,  # a suite started in the background ignores SIGINT, and so would it
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not flag.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[0] if proc.poll() else ""
        time.sleep(0.05)
    proc.send_signal(signum)
    output = _output_or_stacks(proc, timeout=60)
    assert proc.returncode == (130 if signum == signal.SIGINT else -signal.SIGKILL), output
    while (left := no_leftover_processes.left()) or list(scratch.iterdir()):  # after kill -9: the lifeline's work
        assert time.monotonic() < deadline, f"left behind: {left}, files {list(scratch.iterdir())}\n{output}"
        time.sleep(0.05)
