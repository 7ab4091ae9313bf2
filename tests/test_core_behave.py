"""Meta-tests: a temporary user project, behave in a subprocess, assertions on what users see."""

from __future__ import annotations

import base64
import gc
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from behave_project import REPO, SHOP, Run, alive, make_project, printed, python_cmd, run_behave, start_behave

from mcp_bdd.report.model import load_run, walk_scenarios
from mcp_bdd.transcript import SERVER_MIME, TRANSCRIPT_MIME

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

# A scenario that passes: placed after a broken one, it shows whether the run went on.
HEALTHY = """
          Scenario: healthy
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a | b |
              | 1 | 1 |
            Then the tool call succeeds
"""


def test_passing_and_failing_scenarios_are_counted_and_explained(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        SHOP,
        {
            "calc.feature": """
        Feature: calculator
          Scenario: adds
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a | b |
              | 2 | 3 |
            Then the tool call succeeds
            And the result at "$.result" is 5
            And the result is:
              \"\"\"json
              {"result": "#integer"}
              \"\"\"

          Scenario: wrong expectation
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a | b |
              | 2 | 3 |
            Then the result at "$.result" is 6

          Scenario: unknown tool
            Given the MCP server "shop" is running
            When I call the tool "ad"
            Then the tool call succeeds
        """
        },
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 1, "failed": 2, "error": 0, "skipped": 0}
    assert "Expected result to be 6, but it was 5" in run.stdout  # the plain sentence comes first
    assert "Expected:" in run.stdout and "6" in run.stdout and "Actual:" in run.stdout
    assert "tools/call" in run.stdout  # the MCP exchange is quoted
    assert 'Did you mean "add"?' in run.stdout
    assert run.returncode == 1


def test_same_features_run_cold_over_stdio_and_sse(tmp_path: Path) -> None:
    """Without the pool, each server is started from scratch. The pooled legs (in-memory, stdio,
    Streamable HTTP, SSE) are test_features' own."""
    root = make_project(
        tmp_path,
        SHOP,
        {
            "t.feature": """
        Feature: transports
          Scenario: a round trip
            Given the MCP server "shop" is running
            When I call the tool "echo" with:
              | text  |
              | hello |
            Then the result text is "hello"
        """
        },
    )
    for transport in ("stdio", "sse"):
        run = run_behave(root, "-D", f"transport={transport}", "-D", "pool=false")
        assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, (
            transport,
            run.output[-2000:],
        )


def test_unknown_config_key_fails_before_any_scenario(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        SHOP + "timout = 3\n",
        {
            "a.feature": """
        Feature: x
          Scenario: y
            Given the MCP server "shop" is running
        """
        },
    )
    run = run_behave(root)
    assert run.returncode != 0
    assert 'unknown key "timout"' in run.output and 'Did you mean "timeout"?' in run.output
    assert "mcp-bdd.toml" in run.output


def test_server_key_of_the_wrong_kind_is_named(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        '[servers.x]\ncommand = ["true"]\nheaders = { A = "b" }\n',
        {
            "a.feature": """
        Feature: x
          Scenario: y
            Given the MCP server "x" is running
        """
        },
    )
    run = run_behave(root)
    assert "`headers` only applies to `url` servers" in run.output


def test_usage_errors_say_where_and_what_to_do(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        SHOP,
        {
            "u.feature": """
        Feature: usage errors
          Scenario: malformed JSON
            Given the MCP server "shop" is running
            When I call the tool "add" with arguments:
              \"\"\"json
              {"a": 1,
               "b": }
              \"\"\"

          Scenario: unknown variable
            Given the MCP server "shop" is running
            Given the variable "user" is "alice"
            When I call the tool "echo" with:
              | text      |
              | ${usr}    |

          Scenario: table that does not fit the schema
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a   | c |
              | one | 2 |

          Scenario: bad type in the table
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a   | b |
              | one | 2 |

          Scenario: undefined step
            Given the MCP server "shop" is running
            When I cal the tool "add"
        """
        },
    )
    run = run_behave(root)
    out = run.output
    assert "Malformed JSON in the doc string at line 2, column" in out
    assert 'unknown variable "${usr}". Did you mean "user"?' in out
    assert 'has no argument "c"' in out
    assert 'The argument "a" expects integer' in out
    assert "features/u.feature:" in out  # where
    assert "Traceback" not in run.stdout  # our errors replace Python tracebacks
    assert "Closest phrases of the step vocabulary" in out
    assert 'I call the tool "<tool>"' in out  # the phrase with placeholders, not parse types


def test_a_server_that_cannot_start_fails_its_scenario_and_the_next_runs(tmp_path: Path) -> None:
    config = (
        SHOP
        + f"""
        [servers.broken]
        command = {python_cmd("demo.broken")}
        cwd = "{REPO}"
        startup_timeout = 5
    """
    )
    root = make_project(
        tmp_path,
        config,
        {
            "s.feature": """
        Feature: start failures
          Scenario: broken
            Given the MCP server "broken" is running

          Scenario: connect is recorded
            When I connect to the MCP server "broken"
            Then the connection fails with an error mentioning "boom"

        """
            + HEALTHY
        },
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 2, "failed": 0, "error": 1, "skipped": 0}, run.output[-3000:]
    assert "demo.broken" in run.stdout  # the command
    assert "Exit code: 3" in run.stdout
    assert "boom: database unreachable" in run.stdout  # its stderr


def test_hung_server_fails_at_startup_timeout(tmp_path: Path) -> None:
    config = f"""
        [servers.hang]
        command = {python_cmd("demo.hang")}
        cwd = "{REPO}"
        startup_timeout = 1.5
    """
    root = make_project(
        tmp_path,
        config,
        {
            "h.feature": """
        Feature: hang
          Scenario: hangs
            Given the MCP server "hang" is running
        """
        },
    )
    run = run_behave(root)
    assert run.counts()["error"] == 1
    assert "did not complete the MCP handshake within startup_timeout = 1.5 s" in run.stdout


def test_hung_request_fails_at_timeout_naming_method_and_time(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        SHOP + "timeout = 1\n",
        {
            "t.feature": """
        Feature: slow
          Scenario: too slow
            Given the MCP server "shop" is running over stdio
            When I call the tool "slow" with:
              | seconds |
              | 300     |
            Then the tool call succeeds
            # the session is still usable and closes cleanly afterwards
          Scenario: times out on purpose
            Given the MCP server "shop" is running
            When I call the tool "slow" with a timeout of 0.2 seconds with:
              | seconds |
              | 5       |
            Then the tool call times out
            And the server still responds
        """
        },
    )
    run = run_behave(root)  # the call sleeps 300 s: waiting for it would exceed run_behave's limit
    assert run.counts() == {"passed": 1, "failed": 1, "error": 0, "skipped": 0}, run.output[-3000:]
    assert "tools/call timed out after 1.0" in run.stdout


def test_crash_mid_call_fails_clearly(tmp_path: Path) -> None:
    config = f"""
        [servers.crash]
        command = {python_cmd("demo.crash")}
        cwd = "{REPO}"
        timeout = 5
    """
    root = make_project(
        tmp_path,
        config,
        {
            "c.feature": """
        Feature: crash
          Scenario: crash
            Given the MCP server "crash" is running
            When I call the tool "hello"
            Then the tool call succeeds
            When I call the tool "crash"
            Then the tool call succeeds
        """
        },
    )
    run = run_behave(root)
    assert run.counts()["failed"] == 1
    assert "crash: exiting mid-call" in run.stdout or "Connection closed" in run.stdout


FORMATTER_WITH_A_BUG = """
from behave.formatter.base import Formatter


class Buggy(Formatter):
    name = "buggy"

    def result(self, step):
        if step.name.startswith("I call the tool"):  # a call was made: the in-memory server's worker thread runs
            raise RuntimeError("the formatter has a bug")
"""


@pytest.mark.parametrize("transport", ["stdio", "in-memory"])
def test_a_crash_inside_behave_ends_the_run_and_its_servers(tmp_path: Path, transport: str) -> None:
    """An exception that escapes behave's runner (a formatter's bug; behave's own `captured`
    formatter raises on some steps) skips after_scenario and after_all. The process used to print
    the traceback and hang for good, its stdio server still running: CI waited for its job timeout."""
    config = f"""
        [servers.shop]
        command = {python_cmd("demo.shop")}
        cwd = "{REPO}"
    """
    if transport == "in-memory":
        config = SHOP
    root = make_project(tmp_path, config, {"a.feature": "Feature: a\n" + HEALTHY})
    (root / "buggy_formatter.py").write_text(FORMATTER_WITH_A_BUG)  # importable: `python -m` puts cwd on sys.path
    try:
        run = run_behave(root, "-f", "buggy_formatter:Buggy", timeout=120)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"behave did not exit after the formatter's crash; it printed:\n{exc.stdout!r}\n{exc.stderr!r}")
    assert run.returncode != 0 and "the formatter has a bug" in run.stderr, run.output


@pytest.mark.parametrize(
    ("signum", "transport"),
    [(signal.SIGINT, "stdio"), (signal.SIGTERM, "streamable HTTP")],
    ids=["sigint-stdio", "sigterm-http"],
)
def test_a_signal_mid_run_leaves_no_server(tmp_path: Path, signum: signal.Signals, transport: str) -> None:
    # The call outlasts any delay in seeing the server start (the census walks every process, and
    # under load that is slow): the signal must land mid-call, never after a run that had ended.
    root = make_project(
        tmp_path,
        "timeout = 600\n" + SHOP,
        {
            "s.feature": f"""
        Feature: interrupted
          Scenario: long
            Given the MCP server "shop" is running over {transport}
            When I call the tool "slow" with:
              | seconds |
              | 300     |
        """
        },
    )
    proc = start_behave(root)

    def forked_server_up() -> bool:  # the zygote has forked the scenario's server
        try:
            procs = psutil.Process(proc.pid).children(recursive=True)
            return any("--zygote" in " ".join(p.parent().cmdline()) for p in procs if p.parent())
        except psutil.Error:
            return False

    deadline = time.monotonic() + 120
    while not forked_server_up():
        assert time.monotonic() < deadline and proc.poll() is None, "the server never started"
        time.sleep(0.05)
    proc.send_signal(signum)
    proc.wait(timeout=30)
    if signum == signal.SIGINT:
        assert proc.returncode != 0, printed(root)


STUBBORN_APP = """
import contextlib
import pathlib

import anyio
from mcp.server.mcpserver import MCPServer


@contextlib.asynccontextmanager
async def lifespan(server):
    yield {}
    await anyio.sleep(300)  # a teardown that waits on something that never comes


def create() -> MCPServer:
    server = MCPServer("stubborn", lifespan=lifespan)

    @server.tool()
    async def hold() -> str:
        \"\"\"Wait five minutes.\"\"\"
        pathlib.Path(MARKER).touch()
        await anyio.sleep(300)
        return "done"

    return server
"""


def test_ctrl_c_mid_call_ends_the_run_and_writes_the_report_within_seconds(tmp_path: Path) -> None:
    """Ctrl-C mid-call on an in-process server whose lifespan's teardown never returns: the
    session's close, which waits 15 s for a teardown in a normal run, waits 2 s once the user
    stopped the run, so behave ends and the report is written within seconds, even under load."""
    marker, report = tmp_path / "hold-started", tmp_path / "report.html"
    config = '[servers.stubborn]\napp = "stubborn_app:create"\n'
    root = make_project(
        tmp_path,
        "timeout = 600\n" + config,
        {
            "s.feature": """
        Feature: interrupted mid-call
          Scenario: a call to a server whose teardown never ends
            Given the MCP server "stubborn" is running
            When I call the tool "hold"
        """
        },
    )
    (root / "stubborn_app.py").write_text(f"MARKER = {str(marker)!r}\n" + STUBBORN_APP)
    proc = start_behave(
        root, "-D", f"mcp_bdd.report={report}", "-f", "plain", "-f", "mcp_bdd.report:LivingDocFormatter"
    )
    deadline = time.monotonic() + 120
    while not marker.exists():  # the call is in flight, inside the shield
        assert time.monotonic() < deadline and proc.poll() is None, printed(root)
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("behave was still running 60 s after Ctrl-C; " + printed(root))
    took = time.monotonic() - interrupted
    assert proc.returncode != 0 and "ABORTED: By user." in printed(root), printed(root)
    assert report.exists(), "no report after Ctrl-C; " + printed(root)
    assert took < 14, f"behave took {took:.1f} s to stop after Ctrl-C (the 15 s close wait); " + printed(root)


def test_ctrl_c_during_a_handshake_stops_the_run(tmp_path: Path) -> None:
    """Ctrl-C while a server is still connecting stops the run; it is not a start failure of that
    scenario, after which the next scenarios would go on running."""
    started = tmp_path / "mute-started"
    mute = json.dumps(
        [sys.executable, "-c", f"import pathlib, sys; pathlib.Path({str(started)!r}).touch(); sys.stdin.read()"]
    )
    root = make_project(
        tmp_path,
        f"startup_timeout = 600\n{SHOP}\n[servers.mute]\ncommand = {mute}\n",
        {
            "s.feature": """
        Feature: interrupted while connecting
          Scenario: a server that never answers the handshake
            Given the MCP server "mute" is running
        """
            + HEALTHY
        },
    )
    proc = start_behave(root)
    deadline = time.monotonic() + 120
    while not started.exists():  # the server runs and the handshake waits for its answer
        assert time.monotonic() < deadline and proc.poll() is None, printed(root)
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert proc.returncode != 0, printed(root)
    assert "0 scenarios passed" in printed(root), printed(root)


def test_ctrl_c_during_a_teardown_stops_the_run(tmp_path: Path) -> None:
    """Ctrl-C while a scenario's server is being stopped stops the run: the next scenario does not
    start, and the server, its stop cut short, is still stopped before the run ends. The server
    ignores EOF and SIGTERM, so its stop waits out both grace periods (3 s); it sends the Ctrl-C
    itself when its stdin closes, so the signal lands inside that stop however loaded the machine."""
    eof_log, behave_pid = tmp_path / "eof.log", tmp_path / "behave.pid"
    hostile = [sys.executable, str(REPO / "tests" / "servers" / "hostile.py"), "--stubborn"]
    hostile += ["--eof-log", str(eof_log), "--interrupt-on-eof", str(behave_pid)]
    feature = """
        Feature: interrupted while tearing down
          Scenario: a server that is slow to stop
            Given the MCP server "hostile" is running
            When I call the tool "echo" with:
              | text |
              | hi   |
            Then the tool call succeeds
        """
    config = f'{SHOP}\n[servers.hostile]\ncommand = {json.dumps(hostile)}\nprotocol = "legacy"\n'
    root = make_project(tmp_path, config, {"s.feature": feature + HEALTHY})
    proc = start_behave(root, "-f", "plain")
    behave_pid.write_text(f"{proc.pid}\n")
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("behave did not stop after the Ctrl-C; " + printed(root))
    assert proc.returncode != 0 and "ABORTED: By user." in printed(root), printed(root)
    assert "Scenario: healthy" not in printed(root), printed(root)  # the run stopped there
    assert eof_log.exists(), "the server's stop never began: " + printed(root)
    server = int(eof_log.read_text().split()[0])
    assert not alive(server), f"the server {server} outlived the run; " + printed(root)


@pytest.mark.realworld
def test_mcp_server_time_from_pypi_over_stdio(tmp_path: Path) -> None:
    exe = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    assert exe, "mcp-server-time is installed by the dev extra"
    root = make_project(
        tmp_path,
        f'[servers.time]\ncommand = ["{exe}", "--local-timezone", "UTC"]\n',
        {
            "t.feature": """
        Feature: time
          Scenario: current time in a zone
            Given the MCP server "time" is running
            When I list the tools
            Then the tools include:
              | name             |
              | get_current_time |
              | convert_time     |
            And the tool "get_current_time" requires the arguments:
              | name     |
              | timezone |
            When I call the tool "get_current_time" with:
              | timezone      |
              | Europe/Warsaw |
            Then the tool call succeeds
            And the result at "$.timezone" is "Europe/Warsaw"
            And the result contains:
              \"\"\"json
              {"datetime": "#datetime", "is_dst": "#boolean"}
              \"\"\"

          Scenario: an unknown zone is an error
            Given the MCP server "time" is running
            When I call the tool "get_current_time" with:
              | timezone |
              | Mars/Olympus |
            Then the tool call fails with an error mentioning "timezone"
        """
        },
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 2, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


def test_every_scenario_gets_a_fresh_forked_server(tmp_path: Path) -> None:
    """The zygote pool forks a new process per scenario: state never leaks between scenarios."""
    server = tmp_path / "counter_server.py"
    server.write_text(
        "import os\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "def create_server():\n"
        "    server = MCPServer('counter')\n"
        "    calls = []\n"
        "    @server.tool()\n"
        "    def bump() -> dict:\n"
        "        calls.append(1)\n"
        "        return {'calls': len(calls), 'pid': os.getpid(), 'tag': os.environ.get('TAG')}\n"
        "    return server\n"
    )
    scenario = """
          Scenario: first call in a fresh server {n}
            Given the MCP server "counter" is running
            When I call the tool "bump"
            And I call the tool "bump"
            Then the result at "$.calls" is 2
            And the result at "$.tag" is "t-{n}"
            When I remember the result at "$.pid" as "pid"
    """
    config = (
        f'[servers.counter]\napp = "counter_server:create_server"\ncwd = "{tmp_path}"\nenv = {{ TAG = "t-${{n}}" }}\n'
    )
    # the per-scenario env value comes from a scenario variable set before the server step
    body = "Feature: isolation\n"
    for i in range(3):
        body += scenario.replace("{n}", str(i)).replace(
            "            Given the MCP server",
            f'            Given the variable "n" is "{i}"\n            Given the MCP server',
        )
    features = {"c.feature": body}
    root = make_project(tmp_path / "project", config, features)
    run = run_behave(root, "-D", "transport=stdio")
    assert run.counts() == {"passed": 3, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


def test_unknown_server_names_fail_before_any_scenario_runs(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        SHOP,
        {
            "a.feature": """
        Feature: typo
          Scenario: fine
            Given the MCP server "shop" is running
          Scenario: typo
            Given the MCP server "shpo" is running
          Scenario: typo in an outcome step
            Given the MCP server "shop" is running
            Then the tool call on "shoop" succeeds
          Scenario Outline: placeholders are left to run time
            Given the MCP server "<name>" is running
            Examples:
              | name |
              | shop |
    """
        },
    )
    run = run_behave(root)
    assert run.returncode != 0
    assert 'features/a.feature:6: Given the MCP server "shpo" is running' in run.output
    assert 'unknown server "shpo". Did you mean "shop"?' in run.output
    assert 'features/a.feature:9: Then the tool call on "shoop" succeeds' in run.output, run.output[-3000:]
    assert "1 scenario passed" not in run.stdout  # nothing ran


USER_ATTACHING_HOOKS = """
import mcp_bdd.environment as mcp_bdd_hooks
from mcp_bdd.environment import *  # noqa: F401,F403


def before_scenario(context, scenario):
    mcp_bdd_hooks.before_scenario(context, scenario)
    context.attach("text/plain", b"note from before_scenario")


def after_scenario(context, scenario):
    context.attach("text/plain", b"note from after_scenario")
    mcp_bdd_hooks.after_scenario(context, scenario)
"""


def test_a_users_own_attachments_in_hooks_do_not_break_behaves_json(tmp_path: Path) -> None:
    """behave's json formatter raised IndexError for an attachment a user's after_scenario made
    after a passing scenario, or a before_scenario before the steps existed: the green scenario
    became a hook error. The user's attachments now go where mcp-bdd's own go."""
    feature = "Feature: notes\n" + HEALTHY
    root = make_project(tmp_path, SHOP, {"n.feature": feature})
    (root / "environment.py").write_text(USER_ATTACHING_HOOKS)
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain")
    assert run.counts()["passed"] == 1, run.output[-3000:]
    steps = json.loads((root / "behave.json").read_text())[0]["elements"][0]["steps"]
    texts = [[e["data"] for e in step.get("embeddings", []) if e["mime_type"] == "text/plain"] for step in steps]
    encoded = {
        note: base64.b64encode(note.encode()).decode()
        for note in ("note from before_scenario", "note from after_scenario")
    }
    assert encoded["note from before_scenario"] in texts[0], texts
    assert encoded["note from after_scenario"] in texts[-1], texts


def test_each_scenario_attaches_its_servers_last_view_once_and_the_reports_show_it(tmp_path: Path) -> None:
    """A server's identity and listings are attached once a scenario, as it ends (they were attached
    after every step that changed them): the last view, with the tools a step listed, under the last
    step that ran, failed or not; the living doc's catalog and coverage map have them."""
    feature = """
        Feature: the surface
          Scenario: lists the tools, then fails
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a | b |
              | 2 | 3 |
            Then the result at "$.result" is 6
            And the tool call succeeds

          Scenario: lists the tools, and passes
            Given the MCP server "shop" is running
            When I call the tool "add" with:
              | a | b |
              | 2 | 3 |
            Then the result at "$.result" is 5
    """
    root = make_project(tmp_path, SHOP, {"s.feature": feature})
    formats = ["-f", "json", "-o", "behave.json", "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "doc.html"]
    run = run_behave(root, *formats, "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 1, "error": 0, "skipped": 0}, run.output[-3000:]
    for element in json.loads((root / "behave.json").read_text())[0]["elements"]:
        surfaces = [
            (at, json.loads(base64.b64decode(e["data"])))
            for at, step in enumerate(element["steps"])
            for e in step.get("embeddings", [])
            if e["mime_type"] == SERVER_MIME
        ]
        assert [at for at, _ in surfaces] == [2], (element["name"], surfaces)  # once, under the last step that ran
        surface = surfaces[0][1]
        assert surface["server"] == "shop" and surface["capabilities"]["tools"] is not None, surface
        assert "add" in [tool["name"] for tool in surface["tools"] or []], surface
    report = load_run(json.loads((root / "doc.json").read_text()))
    [server] = report.servers
    assert server.server == "shop" and "add" in [tool["name"] for tool in server.tools or []], server


FORMATTER_WITHOUT_ATTACHMENTS = """
from behave.formatter.base import Formatter


class NoEvidence(Formatter):
    name = "no-evidence"

    def embedding(self, mime_type, data):
        raise ValueError("this formatter takes no attachments")
"""


def test_a_formatter_that_cannot_take_attachments_is_named_once_and_the_others_still_get_them(
    tmp_path: Path,
) -> None:
    """behave's `context.attach` stops at the first formatter that raises. mcp-bdd hands its
    evidence to each formatter on its own: a formatter whose `embedding` raises (listed first, so
    it comes before the others) fails no scenario, is named once on stderr however often it
    raised, and behave's json and the living doc still get every scenario's traffic."""
    feature = "Feature: evidence\n" + HEALTHY + HEALTHY.replace("Scenario: healthy", "Scenario: healthy again")
    root = make_project(tmp_path, SHOP, {"e.feature": feature})
    (root / "no_evidence.py").write_text(FORMATTER_WITHOUT_ATTACHMENTS)  # importable: `python -m` puts cwd on sys.path
    formats = ["-f", "no_evidence:NoEvidence", "-o", "none.txt", "-f", "json", "-o", "behave.json"]
    formats += ["-f", "mcp_bdd.report:LivingDocFormatter", "-o", "doc.html"]
    run = run_behave(root, *formats, "-f", "plain")
    assert run.returncode == 0 and run.counts()["passed"] == 2, run.failures()
    named = "mcp-bdd: the NoEvidence formatter could not take mcp-bdd's evidence (ValueError: this formatter takes"
    assert run.stderr.count(named) == 1, run.output[-3000:]
    assert "could not take" not in run.stderr.replace(named, ""), run.stderr[-3000:]  # no other formatter named
    calls = {"name": "add", "arguments": {"a": 1, "b": 1}}
    for element in json.loads((root / "behave.json").read_text())[0]["elements"]:
        embedded = [
            json.loads(base64.b64decode(e["data"]))
            for step in element["steps"]
            for e in step.get("embeddings", [])
            if e["mime_type"].startswith(TRANSCRIPT_MIME)
        ]
        requests = [x["payload"] for exchanges in embedded for x in exchanges if x["kind"] == "request"]
        assert calls in requests, (element["name"], embedded, run.output[-3000:])
    report = load_run(json.loads((root / "doc.json").read_text()))
    scenarios = [s for feature in report.features for s in walk_scenarios(feature.children)]
    assert [s.name for s in scenarios] == ["healthy", "healthy again"], run.output[-3000:]
    for scenario in scenarios:
        requests = [x.payload for step in scenario.steps for x in step.evidence.exchanges if x.kind == "request"]
        assert calls in requests, (scenario.name, requests, run.output[-3000:])


RUN_WATCHING_HOOKS = """
import gc
import io
import logging
import signal
import traceback

import behave.capture
import behave.model
import behave.runner

import mcp_bdd.environment as mcp_bdd_hooks
from mcp_bdd.environment import *  # noqa: F401,F403

{tuned}


def _say(when):
    print(f"{{when}}: frozen {{gc.get_freeze_count()}} thresholds {{gc.get_threshold()}}")
    print(f"{{when}}: the module {{behave.runner.traceback is traceback}}")
    adapted = [
        behave.model.traceback is not traceback,
        behave.capture.StringIO is not io.StringIO,
        getattr(logging.getLogRecordFactory(), "mcp_bdd_guard", False),
        signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL,
    ]
    print(f"{{when}}: adapted {{adapted}}")


def before_scenario(context, scenario):
    mcp_bdd_hooks.before_scenario(context, scenario)
    _say("during the run")


def after_all(context):
    mcp_bdd_hooks.after_all(context)
    _say("after the run")
"""


def _watch_a_run(tmp_path: Path, tuned: str = "") -> Run:
    """A passing run whose hooks print the GC's settings and behave's `traceback` during and after it."""
    root = make_project(tmp_path, SHOP, {"n.feature": "Feature: watched\n" + HEALTHY})
    (root / "environment.py").write_text(RUN_WATCHING_HOOKS.format(tuned=tuned))
    run = run_behave(root, "--no-capture", "-f", "plain")
    assert run.counts()["passed"] == 1, run.failures()
    return run


def _printed(run: Run, when: str) -> tuple[str, str]:
    """(GC settings, whether behave.runner.traceback is the standard library's) at `when`."""
    gc_line = run.stdout.split(f"{when}: frozen ")[1].split("\n")[0]
    module = run.stdout.split(f"{when}: the module ")[1].split("\n")[0]
    return gc_line, module


def test_behave_and_the_gc_stay_as_the_project_set_them_during_a_run(tmp_path: Path) -> None:
    """mcp-bdd runs in the project's process beside its in-process server: it leaves the GC's
    thresholds, its freeze and behave's module globals alone (design.md: nothing is patched for speed)."""
    run = _watch_a_run(tmp_path, "gc.set_threshold(5000, 20, 20)")
    assert _printed(run, "during the run") == ("0 thresholds (5000, 20, 20)", "True"), run.stdout[-3000:]
    assert _printed(run, "after the run") == ("0 thresholds (5000, 20, 20)", "True"), run.stdout[-3000:]


def test_behave_is_adapted_for_the_run_only(tmp_path: Path) -> None:
    """Step tracebacks, capture buffers, the log guard and SIGTERM are mcp-bdd's during the run
    (`_behave`), and the process's own again after it: a project that runs behave in-process
    (`behave.__main__.main`, a test runner) gets its process back."""
    run = _watch_a_run(tmp_path)
    assert "during the run: adapted [True, True, True, True]" in run.stdout, run.stdout[-3000:]
    assert "after the run: adapted [False, False, False, False]" in run.stdout, run.stdout[-3000:]


def test_another_behave_version_gets_a_warning_naming_both() -> None:
    from mcp_bdd.hooks._behave import version_warning

    assert version_warning("1.3.3") is None
    said = version_warning("1.4.0")
    assert said is not None and "behave 1.3" in said and "behave 1.4.0" in said and '"behave>=1.3,<1.4"' in said


def test_the_gc_keeps_the_interpreters_own_thresholds_during_a_run(tmp_path: Path) -> None:
    run = _watch_a_run(tmp_path)
    assert _printed(run, "during the run") == (f"0 thresholds {gc.get_threshold()}", "True"), run.stdout[-3000:]


@pytest.mark.parametrize("hiding", ["steps/mcp.py", "mcp/__init__.py"])
def test_a_project_file_named_mcp_is_named_as_what_hides_the_sdk(tmp_path: Path, hiding: str) -> None:
    """A steps module called mcp.py (or a package `mcp` of the project's own) is what Python
    imports as `mcp`: without a word, behave says only "'mcp' is not a package"."""
    root = make_project(tmp_path, SHOP, {"n.feature": "Feature: hidden\n" + HEALTHY})
    if hiding == "steps/mcp.py":
        (root / "steps" / "mcp_steps.py").rename(root / "steps" / "mcp.py")
    else:
        (root / "mcp").mkdir()
        (root / "mcp" / "__init__.py").write_text("VERSION = 'mine'\n")
    run = run_behave(root, "-f", "plain")
    assert run.returncode != 0, run.output[-2000:]
    assert f"ModuleNotFoundError: {root / hiding} hides the MCP SDK" in run.output, run.output[-2000:]
    assert "Tip: rename it" in run.output, run.output[-2000:]
    assert "Traceback" not in run.output, run.output[-2000:]  # the message says it all: no trace after it


OWN_STEPS_ONLY = """
from behave import given, then


@given('the MCP server "{name}" is running')
def own_server(context, name):
    context.mcp.current_server = name  # the project's own step, with the vocabulary's very words


@then('the current server is "{name}"')
def own_check(context, name):
    assert context.mcp.current_server == name, context.mcp.current_server
"""


def test_mcp_bdds_hooks_serve_a_project_that_defines_all_its_steps_itself(tmp_path: Path) -> None:
    """A project may take mcp-bdd's hooks (context.mcp, teardown, reports) and write every step
    itself. The hooks must not import the vocabulary on its behalf: importing any of it registers
    all of it with behave, mid-run, and a project step with the same words is then ambiguous (the
    undefined-step hint must not do that at the first typo)."""
    root = make_project(
        tmp_path,
        SHOP,
        {
            "own.feature": """
        Feature: own steps
          Scenario: own server step
            Given the MCP server "shop" is running
            Then the current server is "shop"
          Scenario: a typo of a vocabulary step
            Given the MCP server "shop" is runing
          Scenario: still the project's step
            Given the MCP server "shop" is running
            Then the current server is "shop"
    """
        },
    )
    (root / "steps" / "mcp_steps.py").write_text(OWN_STEPS_ONLY)
    run = run_behave(root, "-f", "plain")
    assert "AmbiguousStep" not in run.output and "HOOK-ERROR" not in run.output, run.output[-3000:]
    assert "2 scenarios passed, 0 failed, 1 error" in run.output, run.output[-3000:]  # the typo: undefined
    assert "1 undefined" in run.output, run.output[-3000:]
