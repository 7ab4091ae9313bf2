"""The `mcp-bdd` command, run as the real console script in throwaway projects.

Covers: init (green straight away, never overwrites), scaffold against the demo shop, probe
(healthy / changed / unreachable), run (two transports x two jobs -> one merged report; a
transport a server cannot serve reported once; Ctrl-C), usage errors, shards, the step catalog.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from behave_project import alive

from mcp_bdd.cli import main
from mcp_bdd.cli.matrix import _defines, assign_jobs, feature_units, parse_shard, select_shard, split_behave_args
from mcp_bdd.cli.scaffold import placeholder
from mcp_bdd.probe import tools_hash

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow

SHOP_CONFIG = """\
[project]
name = "shop-tests"
version = "0"

[tool.mcp-bdd]
server = "shop"

[tool.mcp-bdd.servers.shop]
app = "demo.shop:create_server"
env = { SHOP_DB = "${fake.shop.path}", PAYMENTS_URL = "${fake.payments.url}" }
"""

NAP_SERVER = '''\
import pathlib

import anyio
from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("nap")

    @server.tool()
    async def nap(seconds: float) -> str:
        """Sleep a while (and say so in napping.flag: tests wait for that, not for a guessed delay)."""
        if seconds:
            pathlib.Path(__file__).with_name("napping.flag").touch()
        await anyio.sleep(seconds)
        return "rested"

    return server
'''


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PATH"] = os.pathsep.join((str(BIN), env.get("PATH", "")))
    env.pop("MCP_BDD_DEBUG", None)
    return env


def cli(cwd: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    exe = BIN / "mcp-bdd"
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "mcp_bdd.cli"]
    return subprocess.run(
        [*argv, *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def behave(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "behave", "--no-color", "-f", "progress", *args],
        cwd=cwd, env=_env(), capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder after `mcp-bdd init` (the example server, since there is no server here)."""
    root = tmp_path_factory.mktemp("init")
    done = cli(root, "init")
    assert done.returncode == 0, done.stderr
    return root


# ---------------------------------------------------------------------------------------------
# init


def test_init_in_an_empty_folder_is_green_at_once(initialised: Path) -> None:
    for name in ("mcp-bdd.toml", "environment.py", "steps/mcp_steps.py", "features/example.feature",
                 "example_server.py", ".github/workflows/mcp-bdd.yml"):  # fmt: skip
        assert (initialised / name).is_file(), name
    assert (initialised / "environment.py").read_text() == "from mcp_bdd.environment import *  # noqa: F401,F403\n"
    assert 'app = "example_server:create_server"' in (initialised / "mcp-bdd.toml").read_text()
    run = behave(initialised, "features/")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 scenarios passed, 0 failed" in run.stdout


def test_init_never_overwrites_without_force(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    server = tmp_path / "mysrv.py"
    server.write_text("from mcp.server.mcpserver import MCPServer\n\nmcp = MCPServer('mine')\n")
    first = cli(tmp_path, "init")
    assert first.returncode == 0, first.stderr
    pyproject = (tmp_path / "pyproject.toml").read_text()
    assert '[tool.mcp-bdd.servers.mysrv]\napp = "mysrv:mcp"' in pyproject  # detected, appended to pyproject
    assert not (tmp_path / "example_server.py").exists()
    assert cli(tmp_path, "init").returncode == 0  # same content again: nothing to overwrite

    feature = tmp_path / "features" / "example.feature"
    feature.write_text("Feature: mine\n")
    refused = cli(tmp_path, "init", "--command", "mcp-server-time")
    assert refused.returncode == 2
    assert "features/example.feature" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert feature.read_text() == "Feature: mine\n" and (tmp_path / "pyproject.toml").read_text() == pyproject

    forced = cli(tmp_path, "init", "--command", "mcp-server-time", "--force")
    assert forced.returncode == 0, forced.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.count("[tool.mcp-bdd]") == 1 and 'command = ["mcp-server-time"]' in text
    assert "mysrv" not in text and 'name = "x"' in text


# ---------------------------------------------------------------------------------------------
# scaffold


def test_scaffold_writes_starter_features_from_the_demo_shop(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SHOP_CONFIG)
    done = cli(tmp_path, "scaffold")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "features" / "generated"
    tool = (out / "tools" / "create_order.feature").read_text()
    assert 'Given the MCP server "shop" is running' in tool
    assert re.search(r"\| product_id \| quantity \|\n\s+\| example\s+\| 1\s+\|", tool), tool
    assert "@wip\n  Scenario: Calling create_order" in tool
    logo = (out / "resources" / "logo.feature").read_text()
    assert 'Then the resource MIME type is "image/png"' in logo and "the resource is binary" in logo
    prompt = (out / "prompts" / "greeting.feature").read_text()
    assert 'When I get the prompt "greeting" with:' in prompt
    assert all(re.fullmatch(r"[a-z0-9_-]+\.feature", p.name) for p in out.rglob("*.feature"))

    (out / "tools" / "echo.feature").write_text("Feature: edited by a human\n")
    again = cli(tmp_path, "scaffold")
    assert again.returncode == 2 and "--force" in again.stderr
    # Only the edited file is in the way: every other file would be written exactly as it is.
    assert re.findall(r"^  (\S+\.feature)$", again.stderr, re.M) == ["features/generated/tools/echo.feature"]
    assert (out / "tools" / "echo.feature").read_text() == "Feature: edited by a human\n"

    # What needs no human already passes against the server.
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    run = behave(tmp_path, "--tags", "not @wip", "features/generated")
    assert run.returncode == 0, run.stdout[-3000:]
    assert re.search(r"^[1-9]\d* scenarios passed, 0 failed", run.stdout, re.M), run.stdout[-500:]
    # ...and every phrase scaffold writes, @wip or not, is in the step vocabulary.
    dry = behave(tmp_path, "--dry-run", "features/generated")
    assert "undefined" not in dry.stdout, dry.stdout[-3000:]


def test_a_plain_behave_run_after_scaffold_is_green(tmp_path: Path) -> None:
    """The @wip scenarios scaffold writes (placeholder arguments, "TODO" texts) turned a plain
    `behave features/` red. scaffold now writes behave's `default_tags = not @wip`: a plain run
    skips them, and `--tags @wip` still runs them."""
    (tmp_path / "pyproject.toml").write_text(SHOP_CONFIG)
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    done = cli(tmp_path, "scaffold")
    assert done.returncode == 0, done.stderr
    assert "merged     pyproject.toml" in done.stdout, done.stdout
    assert "Plain runs leave them out" in done.stdout, done.stdout
    run = behave(tmp_path, "features/")
    assert run.returncode == 0, run.stdout[-3000:]
    assert re.search(r"^[1-9]\d* scenarios passed, 0 failed, [1-9]\d* skipped", run.stdout, re.M), run.stdout[-500:]
    wip = behave(tmp_path, "--tags", "@wip", "features/generated/prompts")
    assert re.search(r"^0 scenarios passed, [1-9]\d* failed", wip.stdout, re.M), wip.stdout[-500:]
    again = cli(tmp_path, "scaffold", "--force")  # the setting is there: kept, not written twice
    assert "kept       pyproject.toml" in again.stdout, again.stdout
    assert (tmp_path / "pyproject.toml").read_text().count("default_tags") == 1


def test_placeholders_follow_the_schema() -> None:
    assert placeholder({"type": "integer", "minimum": 5}) == 5
    assert placeholder({"type": "string", "format": "email"}) == "user@example.com"
    assert placeholder({"type": "string", "enum": ["b", "a"]}) == "b"
    assert placeholder({"anyOf": [{"type": "null"}, {"type": "boolean"}]}) is True
    assert placeholder({"type": "array", "items": {"type": "number"}}) == [1.5]


# ---------------------------------------------------------------------------------------------
# probe


def test_probe_healthy_changed_and_dead(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SHOP_CONFIG)
    healthy = cli(tmp_path, "probe", "--server", "shop", "--save-baseline", "surface.json")
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert healthy.stdout.startswith("healthy: shop 1.0.0")
    digest = re.search(r"tools sha256: ([0-9a-f]{64})", healthy.stdout)
    assert digest is not None
    saved = json.loads((tmp_path / "surface.json").read_text())
    assert saved["tools_sha256"] == digest.group(1) == tools_hash(list(saved["tools"].values()))

    saved["tools"].pop("echo")
    saved["tools"]["create_order"]["description"] = "an older description"
    saved["tools"]["retired_tool"] = {"name": "retired_tool"}
    (tmp_path / "old.json").write_text(json.dumps(saved))
    # a configured server by name, as check / contract / call read it (it used to be run as a command)
    changed = cli(tmp_path, "probe", "shop", "--transport", "stdio", "--baseline", "old.json", "--json")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    result = json.loads(changed.stdout)
    assert result["status"] == "changed" and result["transport"] == "stdio"
    assert result["tools_sha256"] == digest.group(1)  # the same surface over another transport: same hash
    assert result["changes"] == [
        "+ tool added: echo",
        "- tool removed: retired_tool",
        "~ tool changed: create_order (description)",
    ]

    dead = cli(tmp_path, "probe", f"http://127.0.0.1:{_dead_port()}/mcp", "--timeout", "5")
    assert dead.returncode == 3, dead.stdout + dead.stderr
    assert dead.stdout.startswith("UNREACHABLE:") and "Traceback" not in dead.stdout + dead.stderr


def test_probe_with_a_pinned_protocol_names_a_server_that_does_not_speak_it(tmp_path: Path) -> None:
    """`--protocol 2026-07-28` against a server with only the 2025-11-25 handshake (the raw test
    server answers server/discover -32601): said as what it is, with the setting to change."""
    raw = Path(__file__).parent / "servers" / "raw_server.py"
    run = cli(tmp_path, "probe", "--protocol", "2026-07-28", "--", sys.executable, str(raw))
    assert run.returncode == 3 and run.stdout.startswith("UNREACHABLE:"), run.stdout + run.stderr
    assert "answered server/discover at protocol 2026-07-28 with an error (-32601: Method not found" in run.stdout, (
        run.stdout
    )
    assert 'set protocol = "auto" (probe, then fall back to the handshake) or "legacy"' in run.stdout, run.stdout


def test_a_pinned_protocol_waits_for_a_server_slower_than_the_sdks_discover_timeout(tmp_path: Path) -> None:
    """The SDK gives server/discover a fixed 10 s; a pinned session asks again within startup_timeout.
    (The server reads nothing for 11 s: the first discover waits in its stdin all that time.)"""
    slow = (
        "import runpy, sys, time; time.sleep(11); "
        "sys.argv = ['mcp_bdd.serve', 'demo.shop:create_server', '--transport', 'stdio']; "
        "runpy.run_module('mcp_bdd.serve', run_name='__main__')"
    )
    run = cli(tmp_path, "probe", "--protocol", "2026-07-28", "--timeout", "120", "--", sys.executable, "-c", slow,
              timeout=240)  # fmt: skip
    assert run.returncode == 0 and run.stdout.startswith("healthy: shop"), run.stdout + run.stderr


def _dead_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again: nothing listens there


# ---------------------------------------------------------------------------------------------
# run


def test_run_two_transports_two_jobs_one_report(initialised: Path, no_leftover_processes: None) -> None:
    (initialised / "features" / "more.feature").write_text(
        textwrap.dedent("""\
        Feature: More greetings
          Scenario: Greeting Grace
            Given the MCP server "example" is running
            When I call the tool "greet" with:
              | name  |
              | Grace |
            Then the result text is "Hello, Grace!"
        """)
    )
    done = cli(initialised, "run", "--transport", "in-memory,stdio", "--jobs", "2", "--title", "Matrix")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[ok] in-memory: 3 passed" in done.stdout and "[ok] stdio: 3 passed" in done.stdout
    reports = initialised / "reports"
    legs = reports / "living-doc.legs"
    assert sorted(p.name for p in (legs / "stdio").glob("job-*.json")) == ["job-1.json", "job-2.json"]
    for leg in ("in-memory", "stdio"):
        run = json.loads((legs / f"{leg}.json").read_text())
        assert run["label"] == leg and len(run["features"]) == 2
    html = (reports / "living-doc.html").read_text()
    assert "<title>Matrix</title>" in html and "in-memory" in html and "stdio" in html
    junit = (reports / "junit.xml").read_text()
    assert 'tests="6" failures="0"' in junit and "[stdio] More greetings" in junit


def test_run_reports_an_unservable_transport_once(tmp_path: Path, no_leftover_processes: None) -> None:
    (tmp_path / "mcp-bdd.toml").write_text('[servers.time]\ncommand = ["mcp-server-time"]\n')
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (tmp_path / "features").mkdir()
    scenarios = "".join(
        f'  Scenario: Clock {i}\n    Given the MCP server "time" is running\n    Then the server still responds\n'
        for i in range(3)
    )
    (tmp_path / "features" / "time.feature").write_text("Feature: Time\n" + scenarios)
    done = cli(tmp_path, "run", "--transport", "in-memory")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.count("cannot be run over in-memory") == 1
    assert "(3 scenarios not run on this leg)" in done.stdout and "it can serve stdio" in done.stdout


def test_a_workers_configuration_error_is_told_by_its_run_file_not_by_its_output(
    tmp_path: Path, no_leftover_processes: None
) -> None:
    """A feature that names no configured server stops the worker's run before it starts: exit 2,
    the reason on the console and in the report. Decided by the error's kind, which the worker's
    run file now carries: a failing step that merely prints the words is an ordinary failure
    (exit 1). The leg's report used to keep no trace of why nothing ran."""
    (tmp_path / "mcp-bdd.toml").write_text('[servers.nap]\napp = "nap_server:create_server"\n')
    (tmp_path / "nap_server.py").write_text(NAP_SERVER)
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "mcp_steps.py").write_text(
        "from behave import then\nfrom mcp_bdd.steps import *  # noqa: F401,F403\n\n"
        '@then("it prints a look-alike and fails")\n'
        "def _look_alike(context):\n"
        '    print("mcp-bdd configuration error: only words in a step\'s output")\n'
        '    raise AssertionError("an ordinary failure")\n'
    )
    (tmp_path / "features").mkdir()
    feature = tmp_path / "features" / "f.feature"
    feature.write_text('Feature: F\n  Scenario: S\n    Given the MCP server "nap" is running\n'
                       "    Then it prints a look-alike and fails\n")  # fmt: skip
    done = cli(tmp_path, "run", "--transport", "in-memory", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "configuration error" not in done.stdout.replace("usage or configuration error", ""), done.stdout

    feature.write_text('Feature: F\n  Scenario: S\n    Given the MCP server "nosuch" is running\n')
    done = cli(tmp_path, "run", "--transport", "in-memory", timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "configuration error: Features name servers that are not configured" in done.stdout, done.stdout
    run = json.loads((tmp_path / "reports" / "living-doc.legs" / "in-memory.json").read_text())
    assert run["error_kind"] == "config" and 'unknown server "nosuch"' in run["error_message"], run
    html = (tmp_path / "reports" / "living-doc.html").read_text()
    assert "the run did not start" in html and 'unknown server "nosuch"' in html
    junit = (tmp_path / "reports" / "junit.xml").read_text()  # CI reads an error, not an empty file
    assert 'errors="1"' in junit and "(before_all)" in junit and 'unknown server "nosuch"' in junit, junit


def test_a_worker_ended_by_something_else_is_named_not_filed_as_a_usage_error(
    tmp_path: Path, no_leftover_processes: None
) -> None:
    """An in-process tool that calls os._exit(3) ends behave before it writes its report. The run
    said "usage or configuration error — exit 2" (and, had the leg no problem, "no scenario ran"):
    it now says that the worker died, how, and what usually does that; exit 1."""
    (tmp_path / "mcp-bdd.toml").write_text('transport = "in-memory"\n[servers.app]\napp = "dying:create_server"\n')
    (tmp_path / "dying.py").write_text(
        "import os\nfrom mcp.server.mcpserver import MCPServer\n\n\ndef create_server():\n"
        '    server = MCPServer("dying")\n\n    @server.tool()\n    def die() -> str:\n        os._exit(3)\n\n'
        "    return server\n"
    )
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "f.feature").write_text(
        'Feature: F\n  Scenario: S\n    Given the MCP server "app" is running\n    When I call the tool "die"\n'
    )
    done = cli(tmp_path, "run", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "behave died during the run (exit code 3) without writing a report" in done.stdout, done.stdout
    assert "os._exit() in an in-process server" in done.stdout, done.stdout
    assert "mcp-bdd run: a worker died" in done.stdout, done.stdout
    assert "no scenario ran" not in done.stdout and "usage or configuration error" not in done.stdout, done.stdout


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_every_worker_and_keeps_the_partial_report(
    signum: signal.Signals, tmp_path: Path, no_leftover_processes: None
) -> None:
    """Ctrl-C, or SIGTERM (a CI runner cancelling the job, `docker stop`), sent to `mcp-bdd run`
    alone while a worker's call is in flight: every worker and its servers stop (the census), the
    run exits 130 and keeps the partial report."""
    (tmp_path / "nap_server.py").write_text(NAP_SERVER)
    (tmp_path / "mcp-bdd.toml").write_text('[servers.nap]\napp = "nap_server:create_server"\n')
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (tmp_path / "features").mkdir()
    for name, seconds in (("quick", "0"), ("slow", "600")):
        (tmp_path / "features" / f"{name}.feature").write_text(
            f'Feature: {name}\n  Scenario: Napping\n    Given the MCP server "nap" is running over stdio\n'
            f'    When I call the tool "nap" with:\n      | seconds |\n      | {seconds} |\n'
            "    Then the tool call succeeds\n"
        )
    exe = BIN / "mcp-bdd"
    proc = subprocess.Popen(
        [str(exe), "run", "--jobs", "2"], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    flag = tmp_path / "napping.flag"  # the slow call is in flight
    deadline = time.monotonic() + 120
    while not flag.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[0] if proc.poll() else ""
        time.sleep(0.05)
    running = {p: _cmdline(p) for p in psutil.Process(proc.pid).children(recursive=True)}  # workers, servers
    assert any("behave" in line for line in running.values()), running  # the slow worker, at least
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=60)  # the nap lasts 600 s: only a prompt stop ends in time
    left = [line for p, line in running.items() if alive(p.pid)]
    assert not left, f"still running after mcp-bdd run ended: {left}\nmcp-bdd run printed:\n{output}"
    assert proc.returncode == 130, output
    assert "interrupted" in output and "Napping: error: ABORTED" in output, output
    assert (tmp_path / "reports" / "living-doc.html").is_file()  # the partial report, from what finished


def _cmdline(process: psutil.Process) -> str:
    try:
        return f"{process.pid}: {' '.join(process.cmdline())}"
    except psutil.Error:
        return f"{process.pid}: (gone)"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def test_run_shows_a_workers_configuration_error_whole(tmp_path: Path) -> None:
    """It showed `! configuration error: Features name servers that are not configured (nothing was
    run):` and stopped there — the server it could not find and the ones configured were cut."""
    assert cli(tmp_path, "init").returncode == 0
    (tmp_path / "features" / "typo.feature").write_text(
        'Feature: A typo\n  Scenario: The wrong name\n    Given the MCP server "exampel" is running\n'
    )
    done = cli(tmp_path, "run")
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stdout[done.stdout.index("! configuration error: Features name servers that are not configured") :]
    assert 'unknown server "exampel". Did you mean "example"?' in said, done.stdout
    assert f"Configured servers: example (in {tmp_path / 'mcp-bdd.toml'})" in said, done.stdout


def test_unknown_transport_lists_the_valid_ones(initialised: Path) -> None:
    done = cli(initialised, "run", "--transport", "stdio,carrier-pigeon")
    assert done.returncode == 2
    assert "carrier-pigeon" in done.stderr
    assert "Valid transports: in-memory, stdio, streamable-http, sse" in done.stderr
    assert "Traceback" not in done.stderr
    assert cli(initialised, "run", "--shard", "3/2").returncode == 2


# ---------------------------------------------------------------------------------------------
# pure parts and small commands (in-process)


def test_shards_are_deterministic_and_cover_everything(tmp_path: Path) -> None:
    for i in range(7):
        path = tmp_path / "features" / f"area{i % 3}" / f"f{i}.feature"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("Feature: f\n" + "  Scenario: s\n    Given x\n" * (i + 1))
    units = feature_units(["features"], tmp_path)
    assert units == sorted(units) and len(units) == 7
    shards = [select_shard(list(reversed(units)), k, 3) for k in (1, 2, 3)]
    assert sorted(u for s in shards for u in s) == units  # a partition...
    assert shards == [select_shard(units, k, 3) for k in (1, 2, 3)]  # ...independent of input order
    assert shards[0] == [
        "features/area0/f0.feature",
        "features/area1/f1.feature",
        "features/area2/f5.feature",
    ]
    assert parse_shard("2/3") == (2, 3)
    jobs = assign_jobs(units, 2, tmp_path)
    assert sorted(u for j in jobs for u in j) == units and jobs == assign_jobs(units, 2, tmp_path)
    assert split_behave_args(["-t", "@smoke", "features/a.feature", "-D", "x=1", "--no-capture"]) == (
        ["-t", "@smoke", "-D", "x=1", "--no-capture"],
        ["features/a.feature"],
    )


def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (
        [],
        ["init"],
        ["scaffold"],
        ["run"],
        ["probe"],
        ["steps"],
        ["report"],
        ["report", "merge"],
    ):
        assert main([*command, "--help"]) == 0, command


def test_bare_probe_uses_the_default_server_as_check_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcp-bdd probe` printed the top-level usage and `probe needs a URL, -- COMMAND ARGS, or --server
    NAME` while `mcp-bdd check` checked the default server."""
    monkeypatch.chdir(tmp_path)
    assert main(["probe"]) == 2  # nothing configured: say what to probe
    err = capsys.readouterr().err
    assert "Say what to probe: a URL, -- COMMAND ARGS, or --server NAME (servers: none are configured in" in err
    assert "usage:" not in err
    (tmp_path / "pyproject.toml").write_text(SHOP_CONFIG)
    assert main(["probe"]) == 0
    assert capsys.readouterr().out.startswith("healthy: shop 1.0.0")


def test_the_exit_codes_in_the_docs_are_the_commands_own() -> None:
    """docs/cli.md's table, "the same for every command", had no 5 (nothing ran)."""
    import mcp_bdd.cli._main

    assert mcp_bdd.cli._main.__doc__ is not None
    codes = re.findall(r"^ +(\d+)  ", mcp_bdd.cli._main.__doc__, re.M)
    assert codes == ["0", "1", "2", "3", "5", "130"]
    documented = re.findall(r"^\| (\d+) \|", (ROOT / "docs" / "cli.md").read_text(), re.M)
    assert documented == codes


def test_steps_catalog_in_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["steps", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "(`mcp_bdd.steps.tools`)" in out
    assert '- **When** `I call the tool "<tool>" with:`' in out
    assert "```gherkin" in out


def test_the_users_userdata_is_read_in_every_spelling_behave_takes() -> None:
    """`mcp-bdd run` reads the history folder from the user's -D, as behave would (the last one wins)."""
    options = ["-D", "a=1", "-Db=2", "--define", "c=3", "--define=d=4=x", "-t", "@x", "-D", "a=5", "-Dflag"]
    assert _defines(options) == {"a": "5", "b": "2", "c": "3", "d": "4=x"}
    assert _defines(["--define=h=one", "-D", "h=two"]) == {"h": "two"}
    assert _defines(["-D"]) == {}
