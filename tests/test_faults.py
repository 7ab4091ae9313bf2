"""Hostile and buggy servers (tests/servers/hostile.py): each fault is met with a clear message,
and nothing is left running (the census counts processes by a marker in their environment,
grandchildren included)."""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from behave_project import (
    REPO,
    Census,
    Run,
    alive,
    behave_env,
    make_project,
    printed,
    run_behave,
    run_captured,
    start_behave,
)

from mcp_bdd._text import tail
from mcp_bdd.report.render import unpack

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

HOSTILE = str(REPO / "tests" / "servers" / "hostile.py")


def hostile(*flags: str, name: str = "hostile", extra: str = "") -> str:
    argv = ", ".join(json.dumps(a) for a in [sys.executable, HOSTILE, *flags])
    return f'[servers.{name}]\ncommand = [{argv}]\nprotocol = "legacy"\n{extra}'


def call_scenario(title: str, tool: str, heading: str, value: str) -> str:
    """A scenario that starts the hostile server and calls `tool` with one argument."""
    return f"""
  Scenario: {title}
    Given the MCP server "hostile" is running
    When I call the tool "{tool}" with:
      | {heading} |
      | {value} |
    Then the tool call succeeds
"""


CALL_ECHO = "\nFeature: echo" + call_scenario("one call", "echo", "text", "hi")


#: the echo scenario with a second call (the first call's second answer comes before it)
CALL_ECHO_TWICE = (
    CALL_ECHO
    + """    When I call the tool "echo" with:
      | text  |
      | again |
    Then the tool call succeeds
"""
)


@dataclass
class SharedRun:
    """One behave run of many features, each a case of a parametrised test (as in
    test_surface_steps): `statuses` says how a feature's scenarios ended (behave's json),
    `printed` what behave printed under it (its plain output, from its heading to the next)."""

    run: Run
    cases: dict[str, list[str]]
    seconds: dict[str, float]  # each feature's steps, as behave timed them

    def statuses(self, feature: str) -> list[str]:
        assert feature in self.cases, f"no feature {feature!r} in the run\n" + self.run.output[-3000:]
        return self.cases[feature]

    def printed(self, feature: str) -> str:
        self.statuses(feature)
        body = re.split(r"^\d+ features? passed", self.run.stdout, flags=re.M)[0]
        sections = re.split(r"^(?=Feature: )", body, flags=re.M)
        (section,) = [s for s in sections if s.startswith(f"Feature: {feature}\n")]
        return section


def shared_run(root: Path, env: dict[str, str] | None = None) -> SharedRun:
    """behave once over `root`'s features, counting the processes it leaves: a module fixture runs
    it before the test's own census starts."""
    out = root / "behave.json"
    argv = [sys.executable, "-m", "behave", "--no-color", "-f", "json", "-o", str(out), "-f", "plain", "features/"]
    census = Census()
    done = run_captured(argv, cwd=root, env=env, timeout=300)
    leftovers = census.left()
    assert not leftovers, "processes left behind:\n" + "\n".join(leftovers)
    run = Run(done.returncode, done.stdout, done.stderr)
    features = json.loads(out.read_text()) if out.exists() else []
    cases = {f["name"]: [e.get("status", "") for e in f.get("elements", [])] for f in features}
    seconds = {
        f["name"]: sum(
            (step.get("result") or {}).get("duration", 0.0)
            for e in f.get("elements", [])
            for step in e.get("steps", [])
        )
        for f in features
    }
    return SharedRun(run, cases, seconds)


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    """Wait for a condition another process brings about (a file, a process) — with a roomy deadline."""
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout} s"
        time.sleep(0.05)


@pytest.mark.parametrize("helper", ["--grandchild", "--detached"])
def test_a_servers_own_helper_process_does_not_outlive_a_green_run(helper: str, tmp_path: Path) -> None:
    """Defect 1: the server exits on EOF at once; its `sleep 600` helper used to survive, and so
    did one that left the server's session (`--detached`: setsid, as Node's `detached: true`)."""
    root = make_project(tmp_path, hostile(helper), {"g.feature": CALL_ECHO})
    run = run_behave(root)
    assert run.counts()["passed"] == 1, run.output[-3000:]


def test_a_daemon_that_left_the_session_and_cleared_its_environment_does_not_outlive_the_run(tmp_path: Path) -> None:
    """fork, setsid, fork, exec with an empty environment: no group, session or mark finds it.
    The server is a child subreaper, so the daemon stays its descendant and dies with it."""
    pidfile = tmp_path / "daemon.pid"
    root = make_project(tmp_path, hostile("--daemon", str(pidfile)), {"g.feature": CALL_ECHO})
    run = run_behave(root)
    alive = _kill_if_still_sleeping(int(pidfile.read_text()))
    assert run.counts()["passed"] == 1, run.output[-3000:]
    assert not alive, f"the daemon {pidfile.read_text()} outlived the run"


@pytest.mark.parametrize(
    ("flags", "tool"), [(("--die-at-start",), "echo"), ((), "die")], ids=["dies-at-start", "crashes-mid-call"]
)
def test_a_daemon_of_a_command_server_that_died_first_does_not_outlive_the_run(
    flags: tuple[str, ...], tool: str, tmp_path: Path
) -> None:
    """The case the server's own subreaper could not cover: a `command` server that dies first
    passed its env-cleared daemon up to the test process, hence to init. Its keeper
    (servers/_keeper.py) adopts it and kills it as it reaps the server."""
    pidfile = tmp_path / "daemon.pid"
    root = make_project(
        tmp_path,
        hostile("--daemon", str(pidfile), *flags),
        {"c.feature": "\nFeature: dies" + call_scenario("dies", tool, "text", "x")},
    )
    run = run_behave(root)
    alive = _kill_if_still_sleeping(int(pidfile.read_text()))
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert not alive, f"the daemon {pidfile.read_text()} outlived the run"


def test_a_daemon_of_a_command_server_dies_with_a_killed_run(tmp_path: Path) -> None:
    """`kill -9` of behave kills the server at once (PR_SET_PDEATHSIG), before any stop: its
    env-cleared daemon, in no session or group of the run's and with no mark, went to init. The
    keeper gets SIGTERM instead, and kills everything below it."""
    pidfile = tmp_path / "daemon.pid"
    feature = """
Feature: killed
  Scenario: waits
    Given the MCP server "hostile" is running
    When I call the tool "hang"
"""
    root = make_project(tmp_path, hostile("--daemon", str(pidfile), extra="timeout = 300\n"), {"k.feature": feature})
    proc = start_behave(root)
    _wait_for(lambda: pidfile.exists() and pidfile.read_text().isdigit(), 120, "the server's daemon starting")
    daemon = psutil.Process(int(pidfile.read_text()))
    everything = psutil.Process(proc.pid).children(recursive=True)  # the lifeline too: it ends last
    assert proc.poll() is None, printed(root)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _gone, alive = psutil.wait_procs([daemon, *everything], timeout=30)
    if daemon in alive:
        daemon.kill()  # no census can see it (no environment): cleaned up here
    assert not alive, [p.cmdline() for p in alive]


CRASHING_APP = """
import os

from mcp.server.mcpserver import MCPServer

from tests.servers.hostile import daemonize


def create_server():
    server = MCPServer("crasher")

    @server.tool()
    def leave_a_daemon(pidfile: str, crash: bool = True) -> str:
        \"\"\"Double-fork a `sleep 600` daemon with an empty environment, then die (or not).\"\"\"
        daemonize(pidfile)  # the daemon is now this server's (a child subreaper)
        if crash:
            os._exit(3)
        return "started"

    return server
"""


@pytest.mark.parametrize(
    ("scope", "crash", "then"),
    [("scenario", "true", "fails"), ("run", "false", "succeeds")],
    ids=["crashed-first", "alive-at-the-end"],
)
def test_a_daemon_of_a_forked_server_does_not_outlive_the_run(
    scope: str, crash: str, then: str, tmp_path: Path
) -> None:
    """The server keeps what its helpers orphan, and its stop kills them; but a server that
    crashes first passes them up the tree. Before, a daemon that had also left its session and
    cleared its environment went to init and survived; the zygote now adopts and kills it. So
    too at the end of the run, when the zygote kills the servers still running (a run-scoped one)
    and their daemons come up to it."""
    pidfile = tmp_path / "daemon.pid"
    feature = f"""
Feature: daemon
  Scenario: the server starts a daemon
    Given the MCP server "app" is running
    When I call the tool "leave_a_daemon" with:
      | pidfile   | crash   |
      | {pidfile} | {crash} |
    Then the tool call {then}
"""
    config = f'scope = "{scope}"\n[servers.app]\napp = "crashing_app:create_server"\n'
    root = make_project(tmp_path, config, {"c.feature": feature})
    (root / "crashing_app.py").write_text(CRASHING_APP)
    run = run_behave(root, "-D", "transport=stdio")
    alive = _kill_if_still_sleeping(int(pidfile.read_text()))
    assert run.counts()["passed"] == 1, run.failures()
    assert not alive, f"the daemon {pidfile.read_text()} outlived the run"


def _kill_if_still_sleeping(pid: int) -> bool:
    """Whether the daemon `pid` (a `sleep 600`) is still alive; if so it is killed here, since no
    census can see it (no environment). Told by its command line: its pid may have been reused."""
    try:
        daemon = psutil.Process(pid)
        argv = daemon.cmdline()
        alive = daemon.status() != psutil.STATUS_ZOMBIE and argv[1:] == ["600"] and Path(argv[0]).name == "sleep"
        if alive:
            daemon.kill()
    except psutil.NoSuchProcess:
        alive = False
    return alive


HELPER_APP = """
import subprocess

from mcp.server.mcpserver import MCPServer


def create_server():
    server = MCPServer("helper")

    @server.tool()
    def start_helper() -> str:
        \"\"\"Start a daemon in a session of its own.\"\"\"
        subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return "started"

    return server
"""


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_a_forked_app_servers_detached_helper_does_not_outlive_its_scenario(transport: str, tmp_path: Path) -> None:
    """An `app` server forked from the pre-imported process: the mark reaches what it starts."""
    feature = """
Feature: helper
  Scenario: the server starts a daemon
    Given the MCP server "app" is running
    When I call the tool "start_helper"
    Then the tool call succeeds
"""
    config = f'transport = "{transport}"\n[servers.app]\napp = "helper_app:create_server"\n'
    root = make_project(tmp_path, config, {"h.feature": feature})
    (root / "helper_app.py").write_text(HELPER_APP)
    run = run_behave(root)
    assert run.counts()["passed"] == 1, run.output[-3000:]


@pytest.mark.parametrize("helper", ["--grandchild", "--detached"])
def test_a_stubborn_server_and_its_helper_die_with_a_killed_run(helper: str, tmp_path: Path) -> None:
    """Defect 2: `kill -9` of behave; the stdio server ignores EOF and SIGTERM and has a helper
    (in its session, or in one of its own)."""
    feature = """
Feature: killed
  Scenario: waits
    Given the MCP server "hostile" is running
    When I call the tool "echo" with:
      | text |
      | hi   |
    Then I receive a "notifications/never" notification within 300 seconds
"""
    root = make_project(tmp_path, hostile("--stubborn", helper), {"k.feature": feature})
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = start_behave(root, env={"TMPDIR": str(temp)})

    def server_and_helper() -> bool:
        try:
            found = [
                p for p in psutil.Process(proc.pid).children(recursive=True) if "hostile.py" in " ".join(p.cmdline())
            ]
        except psutil.NoSuchProcess:
            return False
        # the keeper (the server's parent: servers/_keeper.py) names it in its command line too
        return any(c.name() == "sleep" for p in found for c in p.children())

    _wait_for(server_and_helper, 120, "the server and its helper starting")
    server = next(p for p in psutil.Process(proc.pid).children(recursive=True) if "hostile.py" in " ".join(p.cmdline()))
    members = [server, *server.children(recursive=True)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _gone, alive = psutil.wait_procs(members, timeout=30)
    assert not alive, [p.cmdline() for p in alive]
    # and the run's temporary directory (server logs, fakes' files) goes with them
    _wait_for(lambda: not any(temp.glob("mcp-bdd-*")), 30, "the run's temporary directory being removed")


def test_mcp_bdd_run_killed_takes_its_workers_and_their_servers_along(tmp_path: Path) -> None:
    """Defect 2, `mcp-bdd run`: kill -9 of the parent orphaned both workers and their servers."""
    feature = """
Feature: killed matrix
  Scenario: waits
    Given the MCP server "hostile" is running
    Then I receive a "notifications/never" notification within 300 seconds
"""
    root = make_project(tmp_path, hostile("--stubborn", "--grandchild"), {"k.feature": feature})
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_bdd.cli", "run", "--transport", "stdio", "features/"],
        cwd=root,
        env=behave_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def servers() -> list[psutil.Process]:
        try:
            procs = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return [p for p in procs if "hostile.py" in " ".join(p.cmdline()) and p.children()]

    _wait_for(lambda: bool(servers()), 120, "the worker's server starting")
    everything = psutil.Process(proc.pid).children(recursive=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _gone, alive = psutil.wait_procs(everything, timeout=30)
    assert not alive, [p.cmdline() for p in alive]


#: a key of many lines with a quote, a backslash and a non-ASCII letter: every one of them is
#: escaped in JSON and in a repr, where the plain value never matched (it leaked past line one)
PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nq"uo\\te-é-0123456789\n-----END PRIVATE KEY-----'


#: a backslash and both quotes: a failure's sentence quotes, as JSON, a repr of the result's
#: text, where each is escaped twice (a backslash became four, and the token leaked)
QUOTED = "a\\b'Wd9Xr4L\"p8"


@pytest.mark.parametrize("token", ["tok-9f8e7d6c5b4a", PEM, QUOTED], ids=["plain", "multi-line", "quoted"])
def test_a_token_the_server_echoes_is_masked_in_console_html_json_and_junit(token: str, tmp_path: Path) -> None:
    """Defect 3: the value of a secret env var, echoed in a result (as text, and as a key of its
    structured content), a notification and on stderr; and quoted by two kinds of failure."""
    feature = """
Feature: secrets
  Scenario: the server repeats the token
    Given the MCP server "hostile" is running
    When I call the tool "secret"
    Then the result text contains "something else"

  Scenario: a failure quotes the result that repeats it
    Given the MCP server "hostile" is running
    When I call the tool "secret" with:
      | short |
      | true  |
    Then the tool call fails
"""
    config = hostile(extra=f"env = {{ API_TOKEN = {json.dumps(token)} }}\n")  # a TOML basic string
    root = make_project(tmp_path, config, {"s.feature": feature})
    out = tmp_path / "out"
    # behave pairs each -o with the -f of the same rank: the console formatter comes last, on stdout
    formats = ["-f", "mcp_bdd.report:LivingDocFormatter", "-f", "mcp_bdd.report:JUnitFormatter"]
    formats += ["-f", "mcp_bdd.report:CucumberMessagesFormatter", "-f", "mcp_bdd.report:CucumberJsonFormatter"]
    paths = [str(out / name) for name in ("doc.html", "junit.xml", "run.ndjson", "cucumber.json")]
    run = run_behave(root, *formats, "-f", "pretty", *(arg for path in paths for arg in ("-o", path)))
    assert run.counts()["failed"] == 2, run.output[-3000:]
    assert "the token is ****" in run.output, run.output[-3000:]
    assert token not in run.output, run.output[-3000:]
    html = (out / "doc.html").read_text()
    html += json.dumps(unpack(html), ensure_ascii=False)  # the page's packed (gzipped) data too
    data = (out / "doc.json").read_text()
    junit = (out / "junit.xml").read_text()
    cucumber = (out / "run.ndjson").read_text() + (out / "cucumber.json").read_text()
    cucumber += "".join(base64.b64decode(b64).decode() for b64 in re.findall(r'"data": ?"([A-Za-z0-9+/=]+)"', cucumber))
    shown = [("console", run.output), ("html", html), ("json", data), ("junit", junit), ("cucumber", cucumber)]
    for name, text in shown:
        for piece in _pieces(token):
            assert piece not in text, f"{piece!r} of the token leaked into the {name} output"
    # the notification and the stderr tail were recorded (masked), not dropped
    assert "notifications/message" in data and "debug: using token ****" in data


LEAKY_APP = """
import logging
import os

from mcp.server.mcpserver import MCPServer


def create():
    server = MCPServer("leaky")
    token = os.environ["API_TOKEN"]  # an in-memory factory reads its environment when it runs

    @server.tool()
    def leak() -> str:
        print(f"the server prints {token}")
        logging.getLogger("leaky").warning("the server logs %s", token)
        return "done"

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server
"""


def test_what_an_in_process_server_prints_or_logs_is_masked(tmp_path: Path) -> None:
    """An `app` server runs in behave's process: what it prints or logs is captured by behave and
    shown with a failure, kept in behave's JUnit and JSON. The token it was given leaked there."""
    token = "in-pr0cess-s3cret"
    feature = """
Feature: leaky
  Scenario: it prints and logs its token
    Given the MCP server "leaky" is running
    When I call the tool "leak"
    Then the result text contains "something else"
"""
    config = f'[servers.leaky]\napp = "leaky:create"\nenv = {{ API_TOKEN = "{token}" }}\n'
    root = make_project(tmp_path, config, {"l.feature": feature})
    (root / "leaky.py").write_text(LEAKY_APP)
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain", "--junit", "--junit-directory", "junit")
    assert run.counts()["failed"] == 1, run.output[-3000:]
    junit = "".join(path.read_text() for path in (root / "junit").glob("*.xml"))
    assert "the server prints ****" in junit and "the server logs ****" in junit, junit[-3000:]
    for name, text in (("console", run.output), ("junit", junit), ("behave json", _decoded(root / "behave.json"))):
        assert token not in text, f"the token leaked into the {name} output: {text[-3000:]}"
    assert "the server prints ****" in run.output, run.output[-3000:]


def test_a_step_exception_quoting_a_secret_is_masked_in_junit(tmp_path: Path) -> None:
    """behave writes a failed step's exception into JUnit's `message` attribute as its str(): a
    project's own step whose KeyError or RuntimeError quoted a token (a fake's setup error did)
    put it into junit.xml whole, where the console and the traceback showed ****."""
    token = "stp-s3cret-7f6e5d4c"
    feature = """
Feature: leaky step
  Scenario: a step of the project's own fails quoting the token
    Given the MCP server "leaky" is running
    When my own step fails with the token
"""
    steps = (
        "import os\nfrom behave import when\n\n@when('my own step fails with the token')\n"
        "def fail(context):\n    raise RuntimeError('could not reach the broker with ' + os.environ['LEAKY_TOKEN'])\n"
    )
    config = f'[servers.leaky]\napp = "leaky:create"\nenv = {{ API_TOKEN = "{token}" }}\n'
    root = make_project(tmp_path, config, {"l.feature": feature})
    (root / "leaky.py").write_text(LEAKY_APP)
    (root / "steps" / "own.py").write_text(steps)
    run = run_captured(
        [
            sys.executable,
            "-m",
            "behave",
            "--no-color",
            "features/",
            "-f",
            "plain",
            "--junit",
            "--junit-directory",
            "junit",
        ],
        cwd=root,
        env={**behave_env(), "LEAKY_TOKEN": token},
    )
    assert "1 scenario passed" not in run.stdout and "0 scenarios passed" in run.stdout, run.stdout[-3000:]
    junit = "".join(path.read_text() for path in (root / "junit").glob("*.xml"))
    assert 'message="could not reach the broker with ****"' in junit and 'type="RuntimeError"' in junit, junit
    assert token not in junit and token not in run.stdout + run.stderr, junit


CONFIG_REPR_APP = """
import dataclasses

from mcp.server.mcpserver import MCPServer


@dataclasses.dataclass
class Settings:
    api_key: str
    debug: bool


def create():
    server = MCPServer("config-repr")

    @server.tool()
    def start() -> str:
        # secrets mcp-bdd never passed it: only their names give them away, and their values are quoted
        print(repr(Settings(api_key="sk-live-unknown-4242", debug=True)))
        print('loaded .env: DB_PASSWORD="p4ss-unknown-77"')
        return "done"

    return server
"""


def test_a_quoted_secret_the_server_prints_under_a_secret_name_is_masked(tmp_path: Path) -> None:
    """A server prints its settings' repr (`Settings(api_key='...')`) or a .env line
    (`DB_PASSWORD="..."`): values mcp-bdd never knew, quoted, under secret names. Only unquoted
    ones (`API_KEY=...`) were masked: the quoted ones reached the console, JUnit and behave's JSON."""
    feature = """
Feature: config repr
  Scenario: it prints its settings
    Given the MCP server "repr" is running
    When I call the tool "start"
    Then the result text contains "something else"
"""
    root = make_project(tmp_path, '[servers.repr]\napp = "config_repr:create"\n', {"r.feature": feature})
    (root / "config_repr.py").write_text(CONFIG_REPR_APP)
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain", "--junit", "--junit-directory", "junit")
    assert run.counts()["failed"] == 1, run.output[-3000:]
    assert "Settings(api_key='****', debug=True)" in run.output and 'DB_PASSWORD="****"' in run.output, run.output
    junit = "".join(path.read_text() for path in (root / "junit").glob("*.xml"))
    for name, text in (("console", run.output), ("junit", junit), ("behave json", _decoded(root / "behave.json"))):
        for value in ("sk-live-unknown-4242", "p4ss-unknown-77"):
            assert value not in text, f"{value} leaked into the {name} output: {text[-3000:]}"


INHERITED = "ghp_inheritedFromCI0123456789abcdef"


@pytest.mark.parametrize("kind", ["stdio", "in-process"])
def test_a_secret_the_server_inherits_from_the_environment_is_masked(kind: str, tmp_path: Path) -> None:
    """CI sets GITHUB_TOKEN-like variables for the whole job; mcp-bdd hands them to a spawned
    server (its environment is behave's plus `env`), and an in-process one reads them. A server
    that echoed one put it in the console, the report and behave's JSON: only `env` was masked.
    And a boolean under a secret name (`AUTH_ENABLED = "false"`) is no secret: every `false` of
    the evidence became `****`."""
    feature = """
Feature: inherited
  Scenario: the server repeats what it inherited
    Given the MCP server "leaky" is running
    When I call the tool "{tool}"
    Then the result text contains "something else"

  Scenario: plain values under secret names stay readable
    Given the MCP server "leaky" is running
    When I call the tool "echo" with:
      | text                     |
      | auth false, rotation disabled   |
    Then the result text contains "something else"
""".format(tool="secret" if kind == "stdio" else "leak")
    plain = 'AUTH_ENABLED = "false", KEY_ROTATION = "disabled"'
    if kind == "stdio":
        config = hostile(name="leaky", extra=f"env = {{ {plain} }}\n")
    else:
        config = f'[servers.leaky]\napp = "leaky:create"\nenv = {{ {plain} }}\n'
    root = make_project(tmp_path, config, {"i.feature": feature})
    (root / "leaky.py").write_text(LEAKY_APP)
    out = tmp_path / "out"
    args = ["-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out / "doc.html"), "-f", "json", "-o", "behave.json"]
    proc = run_captured(
        [sys.executable, "-m", "behave", "--no-color", "features/", *args, "-f", "plain", "--junit"],
        cwd=root,
        env={**behave_env(), "API_TOKEN": INHERITED},
    )
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert run.counts()["failed"] == 2, run.output[-3000:]
    # the result, not the table row the console repeats
    assert "Actual:   auth false, rotation disabled" in run.output, run.output[-3000:]
    html = (out / "doc.html").read_text()
    html += json.dumps(unpack(html), ensure_ascii=False) + (out / "doc.json").read_text()
    junit = "".join(path.read_text() for path in (root / "reports").glob("*.xml"))
    shown = [("console", run.output), ("html", html), ("junit", junit), ("behave json", _decoded(root / "behave.json"))]
    for name, text in shown:
        assert INHERITED not in text, f"the inherited token leaked into the {name} output: {text[-3000:]}"
    echoed = "the token is ****" if kind == "stdio" else "the server prints ****"
    assert echoed in run.output, run.output[-3000:]  # masked, not dropped
    assert '"text":"auth false, rotation disabled"' in html, (
        "a plain value under a secret name was masked in the report"
    )


def test_a_project_about_keys_keeps_its_line_numbers_and_function_names(tmp_path: Path) -> None:
    """Secret-looking names in a project's own files are not secrets: `features/api_keys.feature:4`
    in a UsageError and `app = "keystore_app:create"` with `keystore_app.py:5` in a factory's
    failure were shown as `api_keys.feature:****` and `keystore_app:****`."""
    feature = """
Feature: keys
  Scenario: a typo in a notification kind
    Given the MCP server "vault" is running
    Then I receive a "bogus" notification within 1 seconds

  Scenario: the factory fails
    Given the MCP server "sealed" is running
"""
    config = '[servers.vault]\napp = "keystore_app:create"\n[servers.sealed]\napp = "keystore_app:sealed"\n'
    root = make_project(tmp_path, config, {"api_keys.feature": feature})
    (root / "keystore_app.py").write_text(
        "from mcp.server.mcpserver import MCPServer\n\n\ndef create():\n    return MCPServer('vault')\n\n\n"
        "def sealed():\n    raise RuntimeError('the vault is sealed')\n"
    )
    run = run_behave(root, "-f", "plain")
    assert run.counts()["error"] == 2, run.output[-3000:]
    assert 'features/api_keys.feature:5: unknown notification kind "bogus"' in run.output, run.output[-3000:]
    assert 'app = "keystore_app:sealed" raised RuntimeError' in run.output, run.output[-3000:]
    assert "(keystore_app.py:9, in sealed)" in run.output, run.output[-3000:]
    assert "****" not in run.output, run.output[-3000:]


def test_the_sdks_own_log_lines_about_a_server_are_masked_and_escaped(tmp_path: Path) -> None:
    """The SDK logs what it could not validate (here a log notification whose level is escape
    sequences and the token) with the server's text in it; behave prints that log on a failure."""
    token = "tok-5d4c3b2a1f0e"
    feature = """
Feature: the SDK's log
  Scenario: a notification the SDK rejects
    Given the MCP server "hostile" is running
    When I call the tool "badlog"
    Then the result text is "something else"
"""
    root = make_project(tmp_path, hostile(extra=f'env = {{ API_TOKEN = "{token}" }}\n'), {"s.feature": feature})
    run = run_behave(root, "-f", "plain")
    assert run.counts()["failed"] == 1, run.failures()
    assert "notifications/message" in run.output or "level" in run.output, run.failures()  # the SDK said something
    assert token not in run.output and "\x1b" not in run.output and "\x07" not in run.output, run.output[-3000:]


def _pieces(token: str) -> list[str]:
    """What must not show of a token: its lines, the key's body as JSON escapes it, and each run of
    six letters or digits in it, which survives any escaping (a form escaped twice held them all)."""
    lines = [line for line in token.splitlines() if "PRIVATE KEY" not in line]
    return lines + [json.dumps(token)[1:-1]] + [run for line in lines for run in re.findall(r"[A-Za-z0-9]{6,}", line)]


def test_a_token_the_server_repeats_in_its_own_surface_is_masked_in_reports_cli_and_files(tmp_path: Path) -> None:
    """The server's name and a tool's description repeat the token it was given: the report, the
    console of probe / check / list / call / scaffold, and the files meant for git (a contract,
    scaffolded features) show `****`."""
    token = "sup3rs3cret-value42"
    feature = """
Feature: surface
  Scenario: the server names itself with the token
    Given the MCP server "hostile" is running
    Then the server name is "hostile"
"""
    config = hostile("--token-in-surface", extra=f'env = {{ API_TOKEN = "{token}" }}\n')
    root = make_project(tmp_path, config, {"s.feature": feature})
    formats = ["-f", "json", "-o", "behave.json", "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "doc.html"]
    run = run_behave(root, *formats, "-f", "plain")
    assert run.counts()["failed"] == 1 and "hostile ****" in run.output, run.output[-3000:]

    def mcp_bdd(*args: str) -> str:
        argv = [sys.executable, "-m", "mcp_bdd.cli", *args]
        done = run_captured(argv, cwd=root, timeout=300)
        return done.stdout + done.stderr

    shown = [
        mcp_bdd("probe", "--server", "hostile"),
        mcp_bdd("probe", "--server", "hostile", "--json"),
        mcp_bdd("list", "hostile", "tools"),
        mcp_bdd("list", "hostile", "tools", "--json"),
        mcp_bdd("check", "hostile", "--sarif", "check.sarif"),
        mcp_bdd("contract", "update", "contract.json", "hostile"),
        mcp_bdd("contract", "verify", "contract.json", "hostile"),
        mcp_bdd("scaffold", "--server", "hostile", "--out", "gen"),
    ]
    assert "matches: server hostile against contract.json" in shown[6], shown[6]  # masked alike on both sides
    html = (root / "doc.html").read_text()
    files = [html, json.dumps(unpack(html), ensure_ascii=False), (root / "doc.json").read_text()]
    files += [(root / name).read_text() for name in ("behave.json", "contract.json", "check.sarif")]
    files += [f.read_text() for f in (root / "gen").rglob("*.feature")]
    assert "Uses ****" in shown[2] and "hostile ****" in shown[0], shown[:3]
    for text in shown + files:
        assert token not in text, text[-3000:]


@pytest.mark.parametrize("written", ["from a variable", "literally"])
def test_a_secret_on_a_servers_command_line_is_masked(
    written: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`command = [..., "--token", "${env.SHOP_API_KEY}"]`: the failure quotes how the server was
    started, and the value came from a secret-named variable: it is a secret there too. So is one
    written in the command itself after a secret option (`--token sk-...`)."""
    key = "sk-live-5e6f7a8b9c"
    if written == "from a variable":
        monkeypatch.setenv("SHOP_API_KEY", key)
    feature = """
Feature: secrets
  Scenario: the server dies and the failure says how it was started
    Given the MCP server "hostile" is running
    When I call the tool "die"
    Then the tool call succeeds
"""
    config = hostile("--token", "${env.SHOP_API_KEY}" if written == "from a variable" else key)
    root = make_project(tmp_path, config, {"s.feature": feature})
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain")
    assert run.counts()["failed"] == 1, run.output[-3000:]
    assert "--token ****" in run.output, run.output[-3000:]
    assert key not in run.output + (root / "behave.json").read_text(), run.output[-3000:]


class _RefusesTheKeyInItsPath(http.server.BaseHTTPRequestHandler):
    """An API that takes its key in the URL's path (`/v1/<key>/mcp`) and refuses it: 401."""

    paths: list[str] = []

    def do_POST(self) -> None:
        self.paths.append(self.path)
        body = b"<html><body>Invalid API key</body></html>"
        self.send_response(401)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


def test_a_secret_environment_variable_in_a_url_servers_url_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`url = "https://api.example/v1/${env.SHOP_API_KEY}/mcp"`: the failure names the URL it
    could not connect to, and the value came from a secret-named variable. In the path, no
    `key=value` or userinfo form gives it away: only its value, remembered on use, masks it."""
    key = "sk-live-url-7c6d5e4f3a"
    monkeypatch.setenv("SHOP_API_KEY", key)
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RefusesTheKeyInItsPath)
    _RefusesTheKeyInItsPath.paths = []
    thread = threading.Thread(target=web.serve_forever, daemon=True)
    thread.start()
    feature = """
Feature: secrets
  Scenario: the API refuses the key in its URL
    Given the MCP server "remote" is running
"""
    url = f"http://127.0.0.1:{web.server_address[1]}/v1/${{env.SHOP_API_KEY}}/mcp"
    root = make_project(tmp_path, f'[servers.remote]\nurl = "{url}"\n', {"s.feature": feature})
    out = tmp_path / "out"
    formats = ["-f", "json", "-o", str(out / "behave.json"), "-f", "mcp_bdd.report:LivingDocFormatter"]
    formats += ["-o", str(out / "doc.html"), "-f", "mcp_bdd.report:JUnitFormatter", "-o", str(out / "junit.xml")]
    formats += ["-f", "mcp_bdd.report:CucumberMessagesFormatter", "-o", str(out / "run.ndjson")]
    try:
        run = run_behave(root, *formats, "-f", "plain")
    finally:
        web.shutdown()
        thread.join()
    assert run.counts()["passed"] == 0, run.failures()
    assert f"/v1/{key}/mcp" in _RefusesTheKeyInItsPath.paths, _RefusesTheKeyInItsPath.paths  # the key was sent
    assert "refused the connection with HTTP 401" in run.output and "/v1/****/mcp" in run.output, run.failures()
    html = (out / "doc.html").read_text()
    shown = {
        "console": run.output,
        "html": html + json.dumps(unpack(html), ensure_ascii=False),
        "json": (out / "doc.json").read_text(),
        "junit": (out / "junit.xml").read_text(),
        "cucumber messages": (out / "run.ndjson").read_text(),
        "behave json": _decoded(out / "behave.json"),
    }
    for name, text in shown.items():
        assert key not in text, f"the key leaked into the {name} output: {text[-3000:]}"
    assert "/v1/****/mcp" in shown["json"], shown["json"][-3000:]  # the failure is in the report, masked


def test_a_token_a_server_issues_and_a_scenario_remembers_under_a_secret_name_is_masked(tmp_path: Path) -> None:
    """No configuration knows a token the server itself issues (`login`). Remembered as
    "access_token", it is a secret from then on: sent back as an argument, echoed in a result and
    quoted by a failure, it shows as `****` in the console, the HTML, its JSON, JUnit, behave's
    json and the Cucumber outputs — in the login's own response too, recorded before the scenario
    knew it was a secret."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hostile_server", REPO / "tests" / "servers" / "hostile.py")
    assert spec is not None and spec.loader is not None
    server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server)
    token = server.ISSUED_TOKEN
    feature = """
Feature: issued secrets
  Scenario: the server issues a token and echoes it back
    Given the MCP server "hostile" is running
    When I call the tool "login"
    And I remember the result at "$.access_token" as "access_token"
    When I call the tool "echo" with:
      | text                   |
      | again ${access_token} |
    Then the result text is "something else"
"""
    root = make_project(tmp_path, hostile(), {"s.feature": feature})
    out = tmp_path / "out"
    formats = ["-f", "json", "-o", str(out / "behave.json"), "-f", "mcp_bdd.report:LivingDocFormatter"]
    formats += ["-o", str(out / "doc.html"), "-f", "mcp_bdd.report:JUnitFormatter", "-o", str(out / "junit.xml")]
    formats += ["-f", "mcp_bdd.report:CucumberMessagesFormatter", "-o", str(out / "run.ndjson")]
    formats += ["-f", "mcp_bdd.report:CucumberJsonFormatter", "-o", str(out / "cucumber.json")]
    run = run_behave(root, *formats, "-f", "plain")
    assert run.counts()["failed"] == 1, run.failures()
    assert "again ****" in run.output, run.failures()
    html = (out / "doc.html").read_text()
    cucumber_json = (out / "cucumber.json").read_text()  # its embeddings are base64: decoded too
    cucumber_json += "".join(
        base64.b64decode(b64).decode() for b64 in re.findall(r'"data": ?"([A-Za-z0-9+/=]+)"', cucumber_json)
    )
    shown = {
        "console": run.output,
        "html": html + json.dumps(unpack(html), ensure_ascii=False),
        "json": (out / "doc.json").read_text(),
        "junit": (out / "junit.xml").read_text(),
        "behave json": _decoded(out / "behave.json"),
        "cucumber messages": (out / "run.ndjson").read_text(),
        "cucumber json": cucumber_json,
    }
    for name, text in shown.items():
        assert token not in text, f"the issued token leaked into the {name} output"
    for name in ("json", "cucumber messages", "cucumber json"):  # the login's response is there, masked
        assert "welcome, ****" in shown[name], f"{name}: {shown[name][-3000:]}"


def _decoded(path: Path) -> str:
    """behave's json with each attachment decoded (they are base64)."""
    text = path.read_text()
    data = json.loads(text)
    steps = [s for f in data for el in f["elements"] for s in el.get("steps", [])]
    return text + "".join(base64.b64decode(e["data"]).decode() for s in steps for e in s.get("embeddings", []))


def test_a_large_stdio_result_arrives_whole(tmp_path: Path) -> None:
    """Defect 4: 16 MB over stdio used to take ~2 s of re-copying; now the framing is linear."""
    feature = """
Feature: big
  Scenario: 16 MB
    Given the MCP server "hostile" is running
    When I call the tool "big" with:
      | mb |
      | 16 |
    Then the tool call succeeds
    And the result text matches "^x{1000}"
"""
    root = make_project(tmp_path, hostile(), {"b.feature": feature})
    run = run_behave(root)
    assert run.counts()["passed"] == 1, run.output[-3000:]


def test_a_line_past_the_bound_is_refused_however_it_arrives() -> None:
    """`max_line` is a hard bound: a line that came whole in one read used to be taken at any
    length, and a line that overflowed in a read that also finished an earlier line was never
    reported (its request waited out its timeout). Each long line comes once, in its place."""
    from mcp_bdd.servers._framing import LineSplitter, LineTooLong

    def fed(splitter: LineSplitter, *chunks: bytes) -> list[object]:
        """Lines as bytes, a refused line as ("too long", its head)."""
        return [("too long", x.args[0]) if isinstance(x, LineTooLong) else x for c in chunks for x in splitter.feed(c)]

    out = fed(LineSplitter(10), b"short\n" + b"y" * 30 + b"\nafter\n")  # whole, in one read
    assert out == [b"short", ("too long", b"y" * 30), b"after"]
    out = fed(LineSplitter(10), b"0123456789\nabc", b"defghijkl\nok\n")  # finished one, overflowed next
    assert out == [b"0123456789", ("too long", b"abcdefghijkl"), b"ok"]
    out = fed(LineSplitter(10), b"y" * 5, b"y" * 6, b"y" * 20, b"zz\nfine\n")  # in pieces: reported once
    assert out == [("too long", b"y" * 11), b"fine"]
    assert fed(LineSplitter(10), b"x" * 10 + b"\n") == [b"x" * 10]  # the bound itself is allowed
    assert fed(LineSplitter(10), b"z" * 9000 + b"\n") == [("too long", b"z" * 4096)]  # only its head is kept


def test_a_stdio_answer_past_max_message_bytes_fails_its_call_at_once(tmp_path: Path) -> None:
    """End to end: an answer of ~52 KB against `max_message_bytes = 16384` comes in one read of
    the pipe; it used to be taken whole (the bound held only for lines that came in pieces). The
    call fails at once (the timeout is far beyond run_behave's own limit), naming the setting;
    a small answer on the same server still passes."""
    feature = "Feature: bounded" + call_scenario("too big", "big", "mb", "0.05")
    feature += call_scenario("small enough", "big", "mb", "0.005")
    extra = "max_message_bytes = 16384\ntimeout = 900\n"
    run = run_behave(make_project(tmp_path, hostile(extra=extra), {"b.feature": feature}), "-f", "plain", timeout=240)
    assert run.counts() == {**run.counts(), "passed": 1, "failed": 1}, run.output[-3000:]
    assert "line too long" in run.output and "max_message_bytes" in run.output, run.failures()
    # the size said is the limit it passed, not the 4 KiB head kept of it
    assert "more than max_message_bytes = 16 KiB" in run.output and "(4096 bytes" not in run.output, run.failures()


def test_an_unfinished_line_is_kept_in_the_pieces_it_came_in() -> None:
    """Defect 4's mechanism, without a clock: the pieces of a line are kept as they came and
    joined once, when its newline arrives (the 0.1 transport re-joined the whole buffer on every
    read: 30 MB took ~12 s). Timing it is the benchmark's job (benchmarks/stdio_framing.py)."""
    from mcp_bdd.servers._framing import LineSplitter

    splitter = LineSplitter(1 << 30)
    chunks = [bytes([65 + i % 26]) * 65536 for i in range(64)]
    for chunk in chunks:
        assert splitter.feed(chunk) == []
    assert all(kept is chunk for kept, chunk in zip(splitter._parts, chunks, strict=True))
    [line] = splitter.feed(b"\n")
    assert line == b"".join(chunks)


def test_a_pretty_printed_answer_is_parsed_once_when_it_closes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-assembling pretty-printed JSON used to re-parse all the lines so far after each line,
    the square of the message's size in the run's event loop (a 670 KiB answer: 42 s, every
    session and fake stalled). Brackets are counted instead; the value is parsed once."""
    import mcp_types as types

    from mcp_bdd.servers import _framing
    from mcp_bdd.servers._framing import StdoutEvidence, Waiting, decode_line

    content = [{"type": "text", "text": '}]{["\\'}] * 3000
    # a list's last item alone on its line is JSON by itself ("b", 1, {}): still a line of the message
    answer = {"jsonrpc": "2.0", "id": 4, "result": {"content": content, "structuredContent": {"x": ["a", "b", 1, {}]}}}
    lines = json.dumps(answer, indent=2).encode().split(b"\n")
    parses: list[int] = []
    loads = _framing.json.loads
    monkeypatch.setattr(_framing.json, "loads", lambda text, *a, **k: parses.append(1) or loads(text, *a, **k))
    evidence, waiting = StdoutEvidence(), Waiting()
    waiting.sent(types.JSONRPCRequest(jsonrpc="2.0", id=4, method="tools/call"))
    out = [m for line in lines for m in decode_line(line, evidence, waiting)]
    assert len(lines) > 12_000 and len(parses) == 2, len(parses)  # its first line is looked at, then one parse
    failed = [m for m in out if not isinstance(m, Exception)]
    said = str(failed[0].message.error.message)  # type: ignore[union-attr]
    assert len(failed) == 1 and "spread over several lines" in said
    # its size in all (the lines and the newlines between them), not its closing brace's
    assert f"({len(json.dumps(answer, indent=2).encode())} bytes in all)" in said, said
    # past the re-assembly limit the lines are only counted (no parse of a megabyte per line), and
    # the id at its start fails its request at once
    parses.clear()
    waiting.sent(types.JSONRPCRequest(jsonrpc="2.0", id=5, method="tools/call"))
    huge = json.dumps({"jsonrpc": "2.0", "id": 5, "result": {"x": ["y" * 100] * 20_000}}, indent=2)
    out = [m for line in huge.encode().split(b"\n") for m in decode_line(line, evidence, waiting)]
    assert not evidence._pretty.open and len(parses) <= 2 and waiting.count() == 0  # its first line, its id
    failed = [m for m in out if not isinstance(m, Exception)]
    assert len(failed) == 1 and failed[0].message.id == 5  # type: ignore[union-attr]


#: What the SDK refuses but Python's json module reads, by case: (tool, hostile flags, said)
UNPARSEABLE = {
    "5000-deep": ("deep", ("--deep", "5000"), "a response nested too deep to parse"),
    # deeper than the SDK's parser takes (~200), not than Python's json module (~1000)
    "400-deep": ("deep", ("--deep", "400"), "a response nested too deep to parse"),
    "lone-surrogate": ("lone", (), "JSON the SDK's parser rejects"),
    # valid JSON, but Python reads no integer of more than 4,300 digits: it was taken for a banner
    "5000-digit-number": ("huge_number", (), "a number too long for JSON readers"),
    # Python's json.dumps writes NaN and Infinity, which no JSON reader outside Python takes
    "NaN": ("nan", (), "NaN or Infinity, which JSON does not have"),
    # the SDK's lax validation reads the string as False; the steps read it as set
    "isError-a-string": ("stringly", (), 'isError is "false" (str), not true or false'),
}

#: A handshake answer that breaks the protocol, by case: (hostile flags, said, tip)
BROKEN_HANDSHAKES = {
    "byte-order-mark": (("--bom",), "a byte order mark (U+FEFF) before the JSON", "write plain UTF-8"),
    "unoffered-version": (
        ("--answer-version", "1999-01-01"),
        "answered initialize with protocolVersion '1999-01-01', a version the client did not offer",
        "never one of its own making",
    ),
    "capabilities-a-string": (
        ("--bad-capabilities",),
        "answered the handshake with a result that does not fit the MCP schema",
        "fix the shape of the server's initialize result",
    ),
}


@pytest.fixture(scope="module")
def unusable_answers(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """Every case of the two tests below, each a hostile server of its own, in one run. The
    timeouts are far beyond the run's own limit: a case that waited for one fails the run."""
    config, features = "", {}
    for case, (tool, flags, _) in UNPARSEABLE.items():
        config += hostile(*flags, name=case, extra="timeout = 900\n")
        features[f"{case}.feature"] = (
            f'Feature: {case}\n  Scenario: unusable\n    Given the MCP server "{case}" is running\n'
            f'    When I call the tool "{tool}"\n    Then the tool call succeeds\n'
        )
    for case, (flags, _, _) in BROKEN_HANDSHAKES.items():
        config += hostile(*flags, name=case, extra="startup_timeout = 600\n")
        features[f"{case}.feature"] = (
            f'Feature: {case}\n  Scenario: its handshake\n    Given the MCP server "{case}" is running\n'
        )
    return shared_run(make_project(tmp_path_factory.mktemp("unusable"), config, features))


@pytest.mark.parametrize("case", UNPARSEABLE)
def test_an_unparseable_response_fails_its_request_at_once(case: str, unusable_answers: SharedRun) -> None:
    """Defect 5: structuredContent 5,000 deep; the request used to wait for its whole timeout.
    What the SDK refuses but Python's json module reads is named for what it is, not taken for
    a banner on stdout."""
    said = UNPARSEABLE[case][2]
    assert unusable_answers.statuses(case) == ["failed"], unusable_answers.run.failures()
    printed = unusable_answers.printed(case)
    assert said in printed, printed
    assert "banners" not in printed, printed
    assert "timed out" not in printed and "no answer within" not in printed, printed


@pytest.mark.parametrize("case", BROKEN_HANDSHAKES)
def test_a_handshake_answer_that_breaks_the_protocol_is_named_at_once(case: str, unusable_answers: SharedRun) -> None:
    """A handshake answer written with a byte order mark waited out startup_timeout and was blamed
    on logs or banners; one with a protocol version the client never offered, or capabilities of
    the wrong type, was a failed *start* (the SDK's RuntimeError or pydantic's dump) with the tip to
    read an empty stderr. Each is now a protocol violation, named at once, with what to fix."""
    _, said, tip = BROKEN_HANDSHAKES[case]
    assert unusable_answers.statuses(case) == ["error"], unusable_answers.run.failures()
    printed = unusable_answers.printed(case)
    assert f'ProtocolViolation: The MCP server "{case}" ' in printed and said in printed, printed
    assert tip in printed, printed
    assert "banners" not in printed and "stderr above" not in printed, printed
    assert unusable_answers.seconds[case] < 120, "the start waited instead of failing at once"


DEAF = """
Feature: deaf
  Scenario: a server that stops listening
    Given the MCP server "hostile" is running
    When I call the tool "deaf"{table}
    Then the tool call succeeds
    When I call the tool "echo"
    Then the tool call succeeds
"""


@pytest.mark.parametrize("unread", [False, True], ids=["written-after-the-close", "in-the-pipe-at-the-close"])
def test_a_server_that_closes_its_stdin_fails_the_next_request_at_once(unread: bool, tmp_path: Path) -> None:
    """It answered, closed its stdin and kept running: the next request could not be written
    (EPIPE, swallowed), waited for its whole timeout and was called slow. Or the request was
    written into the pipe first (no EPIPE) and the close discarded it unread: under load the
    first case met this order by chance and hung; with `unread` the server waits for the next
    request to be in the pipe before it closes its stdin, every time."""
    table = " with:\n      | unread |\n      | true   |" if unread else ""
    root = make_project(tmp_path, hostile(extra="timeout = 60\n"), {"d.feature": DEAF.format(table=table)})
    started = time.monotonic()
    run = run_behave(root, timeout=300)
    assert run.counts("steps")["failed"] == 1 and run.counts("steps")["passed"] == 4, run.failures()
    assert "could not send the request: the server closed its stdin (pid" in run.output, run.failures()
    assert "timed out" not in run.output and "raise `timeout`" not in run.output, run.failures()
    assert time.monotonic() - started < 45, "the request waited instead of failing at once"


def _call(server: str, tool: str | None, then: str = "Then the tool call succeeds") -> str:
    """A scenario's steps: start `server`, then call `tool` (if any) and check the call."""
    start = f'    Given the MCP server "{server}" is running\n'
    return start + (f'    When I call the tool "{tool}"\n    {then}\n' if tool else "")


#: how a server ended, and what the failure must say of it: (hostile flags, tool called, said)
ENDINGS: dict[str, tuple[tuple[str, ...], str | None, str]] = {
    # it never answered the handshake; its exit code came from mcp-bdd giving up on it
    "mcp-bdd-closed-stdin": (
        ("--mute",),
        None,
        "Exit code: 0, once mcp-bdd had closed its stdin (it was still running until then)",
    ),
    # it closed its stdout and exited on its own 50 ms later: EOF came before its exit showed, and
    # closing its stdin then must not take the blame (it did, in a race, for a crash at start)
    "exited-slowly": (("--die-slowly",), None, "Exit code: 4\n"),
    # exit 0 mid-call while a helper holds its stdout: its keeper kills the helper as it reaps the
    # server, so the stream ends at once (it was a timeout, "a process it started still holds
    # its stdout"), and the exit is the server's own
    "exited-under-a-helper": (
        ("--holder",),
        "quit",
        "the connection closed before an answer came (the server went away)",
    ),
    "closed-its-stdout": ((), "blind", "the server closed its stdout but is still running: it can no longer answer"),
}


@pytest.fixture(scope="module")
def server_endings(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """Every case of the test below, each a hostile server of its own, in one run."""
    config, features = "", {}
    for case, (flags, tool, _) in ENDINGS.items():
        config += hostile(*flags, name=case, extra="timeout = 3\nstartup_timeout = 3\n")
        features[f"{case}.feature"] = f"Feature: {case}\n  Scenario: it ends\n{_call(case, tool)}"
    return shared_run(make_project(tmp_path_factory.mktemp("endings"), config, features))


@pytest.mark.parametrize("case", ENDINGS)
def test_how_a_server_ended_is_said_truly(case: str, server_endings: SharedRun) -> None:
    """The failure says whether the server exited on its own, was ended by mcp-bdd, or still runs."""
    _, tool, said = ENDINGS[case]
    assert "passed" not in server_endings.statuses(case), server_endings.run.failures()
    printed = server_endings.printed(case)
    assert said in printed, printed
    if tool == "quit":  # its own exit, at once: no timeout, and the code it chose
        assert "raise `timeout`" not in printed and "Exit code: 0\n" in printed, printed


@pytest.mark.parametrize(
    ("code", "tip"),
    [
        (0, "Tip: it exited with code 0, as a command that starts the server in the background and returns"),
        (3, "Tip: read its stderr above; run the command by hand to see it fail."),
    ],
)
def test_an_http_server_command_that_exits_before_listening_gets_a_tip(code: int, tip: str, tmp_path: Path) -> None:
    """Exit 0 before listening is what a daemonizing wrapper does (`docker run -d`): said, with
    what to do instead; any other exit points at its stderr."""
    command = json.dumps([sys.executable, "-c", f"raise SystemExit({code})"])
    config = (
        f'[servers.bg]\ncommand = {command}\ntransport = "streamable-http"\n'
        f'[servers.bg.http]\ncommand = {command}\nurl = "http://127.0.0.1:${{port}}/mcp"\n'
    )
    feature = 'Feature: bg\n  Scenario: it returns at once\n    Given the MCP server "bg" is running\n'
    run = run_behave(make_project(tmp_path, config, {"bg.feature": feature}), "-f", "plain")
    assert "exited before it accepted connections" in run.output and f"Exit code: {code}" in run.output, run.failures()
    assert tip in run.output, run.failures()


#: what a stdio server gets wrong, each a hostile server "<case>" of its own in one shared run:
#: (hostile flags, the server's settings, its scenario's steps)
STDIO_FAULTS: dict[str, tuple[tuple[str, ...], str, str]] = {
    # startup_timeout far beyond the run's own limit: waiting for it would fail the run
    "pretty": (("--pretty",), "startup_timeout = 900\n", _call("pretty", "echo")),
    "no-newline": (("--no-newline",), "startup_timeout = 6\n", _call("no-newline", "echo")),
    "mumble": ((), "timeout = 2\n", _call("mumble", "mumble")),
    "banner-then-hang": (("--junk",), "timeout = 2\n", _call("banner-then-hang", "hang")),
    "dies-mid-call": (("--holder",), "timeout = 900\n", _call("dies-mid-call", "die")),
    "dies-at-start": (("--holder", "--die-at-start"), "startup_timeout = 900\n", _call("dies-at-start", "echo")),
    "escapes": ((), "", _call("escapes", "ansi", 'Then the result text is "hello"')),
    "refuses-initialize": (("--refuse-initialize",), "", _call("refuses-initialize", None)),
}


@pytest.fixture(scope="module")
def stdio_faults(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    config, features = "", {}
    for case, (flags, settings, steps) in STDIO_FAULTS.items():
        config += hostile(*flags, name=case, extra=settings)
        features[f"{case}.feature"] = f"Feature: {case}\n  Scenario: {case}\n{steps}"
    return shared_run(make_project(tmp_path_factory.mktemp("stdio-faults"), config, features))


def test_pretty_printed_json_rpc_is_named_at_once(stdio_faults: SharedRun) -> None:
    """Defect 6: the classic framing bug used to fail after startup_timeout as a 'handshake' problem."""
    assert "passed" not in stdio_faults.statuses("pretty"), stdio_faults.run.failures()
    printed = stdio_faults.printed("pretty")
    assert "lines on stdout that are not JSON-RPC messages" in printed, printed
    assert "pretty-prints its JSON-RPC messages" in printed, printed
    # the whole message's size, not its last line's ("(1 bytes)": the closing brace)
    assert re.search(r"spread over several lines \(\d{3,} bytes in all\)", printed), printed
    assert "'}' … (" not in printed, printed  # a whole line quoted is not cut
    assert "ProtocolViolation" in printed, printed


def test_a_server_that_ends_no_message_with_a_newline_is_named(stdio_faults: SharedRun) -> None:
    """A server that writes each message without its newline (`process.stdout.write(JSON.stringify(m))`)
    failed after startup_timeout with "did not complete the MCP handshake", "Its stderr was empty"
    and the tip to read its stderr: the answer sitting on stdout was never mentioned."""
    assert stdio_faults.statuses("no-newline") == ["error"], stdio_faults.run.failures()
    printed = stdio_faults.printed("no-newline")
    assert "did not complete the MCP handshake within startup_timeout = 6 s" in printed, printed
    assert re.search(
        r"The server wrote \d+ bytes on stdout that no line end followed: an unfinished line: '\{", printed
    )
    assert "does not end its messages with a newline" in printed, printed
    assert "Tip: fix what the server writes on stdout (quoted above)" in printed, printed


def test_a_request_that_times_out_quotes_what_the_server_wrote_on_stdout_instead(stdio_faults: SharedRun) -> None:
    """Defect 6: a log line on stdout in place of an answer ended in a bare "tools/call timed out
    after 2.00 s", in the failure of the step that checks the call; now that failure says what
    the server wrote, and what that usually means."""
    assert stdio_faults.statuses("mumble") == ["failed"], stdio_faults.run.failures()
    printed = stdio_faults.printed("mumble")
    assert "tools/call timed out after" in printed, printed
    assert "The server wrote 1 line on stdout that is not a JSON-RPC message" in printed, printed
    assert "not JSON: 'Traceback: something broke, no answer coming'" in printed, printed
    assert "prints logs or banners on stdout" in printed, printed
    assert "Tip: fix what the server writes on stdout first" in printed, printed


def test_a_banner_long_before_a_request_is_not_blamed_for_its_timeout(stdio_faults: SharedRun) -> None:
    """A server that printed a banner at start, then answered, then hangs on a call: the timeout
    is a slow server's, not its stdout's (the banner is in the report, not in this failure)."""
    assert stdio_faults.statuses("banner-then-hang") == ["failed"], stdio_faults.run.failures()
    printed = stdio_faults.printed("banner-then-hang")
    assert "tools/call timed out after" in printed, printed
    assert "The server wrote" not in printed and "Tip: raise `timeout`" in printed, printed


def test_a_server_that_dies_while_its_helper_holds_stdout_fails_its_call_at_once(stdio_faults: SharedRun) -> None:
    """A helper that inherited stdout keeps the pipe open after the server died: no EOF comes.
    The call used to wait its whole timeout and blame a slow tool; now the exit ends the stream."""
    assert stdio_faults.statuses("dies-mid-call") == ["failed"], stdio_faults.run.failures()
    printed = stdio_faults.printed("dies-mid-call")
    assert "the connection closed before an answer came (the server went away)" in printed, printed
    assert "Exit code: 3" in printed, printed
    assert "timed out" not in printed, printed


def test_a_server_that_dies_at_start_while_its_helper_holds_stdout_is_named_at_once(stdio_faults: SharedRun) -> None:
    assert "passed" not in stdio_faults.statuses("dies-at-start"), stdio_faults.run.failures()
    printed = stdio_faults.printed("dies-at-start")
    assert "Exit code: 4" in printed, printed
    assert "within startup_timeout" not in printed, printed


def test_terminal_escapes_in_a_failure_are_shown_not_run(stdio_faults: SharedRun) -> None:
    """A tool result that clears the screen and prints a green summary, quoted by a failure."""
    assert stdio_faults.statuses("escapes") == ["failed"], stdio_faults.run.failures()
    assert "\x1b" not in stdio_faults.run.output and "\x07" not in stdio_faults.run.output, stdio_faults.run.failures()
    assert f"Actual:   {FAKE_GREEN_SHOWN}" in stdio_faults.printed("escapes"), stdio_faults.printed("escapes")


def test_a_handshake_answered_with_an_error_is_named_as_an_answer_not_a_closed_connection(
    stdio_faults: SharedRun,
) -> None:
    """A server that refuses `initialize` with its own -32000 error ("License expired") was said
    to have "closed the connection during the handshake": the SDK uses that code too."""
    assert stdio_faults.statuses("refuses-initialize") == ["error"], stdio_faults.run.failures()
    printed = stdio_faults.printed("refuses-initialize")
    said = '"refuses-initialize" answered the handshake with a JSON-RPC error (-32000: License expired: contact sales)'
    assert said in printed, printed
    assert "closed the connection" not in printed, printed


def test_junk_and_invalid_utf8_on_stdout_are_recorded_not_silent(tmp_path: Path) -> None:
    """Defect 6: banners and undecodable bytes passed silently; now they are evidence in the report."""
    root = make_project(tmp_path, hostile("--junk"), {"j.feature": CALL_ECHO})
    out = tmp_path / "doc.html"
    run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out))
    assert run.returncode == 0, run.output[-3000:]
    data = out.with_suffix(".json").read_text()
    assert "not JSON: 'Welcome to the hostile server v1!'" in data
    assert "invalid UTF-8" in data


def test_the_stderr_tail_reads_only_the_end_of_a_huge_log(tmp_path: Path) -> None:
    """Defect 7: 400 MB of stderr before a crash used to cost 488 MB of memory."""
    log = tmp_path / "server.stderr.log"
    with log.open("wb") as fh:
        fh.truncate(400 * 1024 * 1024)  # sparse: no disk or time spent
        fh.seek(0, os.SEEK_END)
        fh.write(b"\n".join(f"line {i}".encode() for i in range(30)) + b"\n")
    tracemalloc.start()
    text = tail(log, 5)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert text.splitlines() == [f"line {i}" for i in range(25, 30)]
    assert peak < 1024 * 1024, f"reading the tail cost {peak} bytes"


def test_a_url_server_implies_http_whatever_the_default_transport(tmp_path: Path) -> None:
    """Defect 10: a `url` server with transport = stdio said it 'cannot be run over stdio'."""
    from mcp_bdd.config import parse_config

    config = parse_config(
        {
            "transport": "stdio",
            "servers": {"remote": {"url": "http://127.0.0.1:9/mcp"}, "legacy": {"url": "http://127.0.0.1:9/sse"}},
        },
        source="t",
        root=tmp_path,
    )
    assert config.transport_for("remote") == "streamable-http"
    assert config.transport_for("legacy") == "sse"


def test_a_run_that_selects_nothing_is_not_green(tmp_path: Path) -> None:
    """Defect 8: no scenario selected by the tags, no feature files, a count step over zero calls."""
    feature = CALL_ECHO.replace("  Scenario: one call", "  @slow\n  Scenario: one call") + (
        '\n  @zero\n  Scenario: counts nothing\n    Given the MCP server "hostile" is running\n'
        "    Then all 0 calls succeed\n"
    )
    root = make_project(tmp_path, hostile(), {"z.feature": feature})
    run = run_behave(root, "--tags", "@nosuchtag")
    assert run.returncode != 0, run.output[-3000:]
    assert "No scenario ran" in run.output and "@nosuchtag" in run.output, run.output[-3000:]
    run = run_behave(root, "--tags", "@zero")
    assert run.counts()["failed"] == 1, run.output[-3000:]
    assert "No calls were made" in run.output, run.output[-3000:]

    def mcp_bdd(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "mcp_bdd.cli", *args]
        return run_captured(argv, cwd=root, timeout=300)

    done = mcp_bdd("run", "--transport", "stdio", "--tags", "@nosuchtag", "features/")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "no scenario ran" in done.stdout and "@nosuchtag" in done.stdout, done.stdout + done.stderr
    (root / "empty").mkdir()
    done = mcp_bdd("run", "--transport", "stdio", "empty/")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "no feature files to run under empty/" in done.stderr, done.stdout + done.stderr


FAKE_GREEN_SHOWN = "\\x1b[2J\\x1b[H\\x1b[32m1 feature passed, 0 failed\\x1b[0m\\x07\\x1b]0;pwned\\x07\\x0d"


@pytest.mark.parametrize("command", ["probe", "check", "scaffold", "contract"])
def test_terminal_escapes_in_a_servers_surface_are_shown_not_run(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcp-bdd probe|check|scaffold` print the server's name and version (check: descriptions
    too); `contract verify` the name and version that changed since the contract was recorded."""
    from mcp_bdd.cli import main

    monkeypatch.chdir(tmp_path)
    if command == "scaffold":  # from a configured server only
        (tmp_path / "mcp-bdd.toml").write_text(hostile("--escapes"))
        main(["scaffold", "--server", "hostile", "--out", "generated"])
    elif command == "contract":  # recorded from the plain server; verified against the one with escapes
        assert main(["contract", "update", "contract.json", "--", sys.executable, HOSTILE]) == 0, capsys.readouterr()
        capsys.readouterr()
        main(["contract", "verify", "contract.json", "--", sys.executable, HOSTILE, "--escapes"])
    else:
        main([command, "--", sys.executable, HOSTILE, "--escapes"])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out, out
    assert FAKE_GREEN_SHOWN in out, out
    if command == "contract":
        assert f"(note) name: hostile -> hostile{FAKE_GREEN_SHOWN}" in out, out


def test_a_notification_flood_is_counted_not_kept(tmp_path: Path) -> None:
    """30,000 log lines in one call: the steps still count and search them, while the transcript
    (every report, behave's json) keeps the first NOTIFICATION_LIMIT and counts the rest."""
    from mcp_bdd.transcript import NOTIFICATION_LIMIT

    feature = """
Feature: flood
  Scenario: a server floods its log
    Given the MCP server "hostile" is running
    When I call the tool "flood" with:
      | n     |
      | 30000 |
    Then the tool call succeeds
    And the server logged a "info" message containing "line 29"
"""
    items, size = _flooded_call(tmp_path, feature)
    kept = [i for i in items if i["kind"] == "notification"]
    counted = [i for i in items if i["method"] == "notifications" and i["kind"] == "info"]
    assert len(kept) == NOTIFICATION_LIMIT, len(kept)
    assert counted and counted[-1]["payload"]["notifications_not_recorded"] == 30000 - NOTIFICATION_LIMIT, counted
    assert [i["method"] for i in items if i["kind"] == "response"] == ["tools/list", "tools/call"], items[-3:]
    assert size < 2_000_000


def _flooded_call(tmp_path: Path, feature: str) -> tuple[list[dict[str, Any]], int]:
    """Run `feature` (it passes) against the hostile server: the transcript its second step
    attached to behave's json, and the json's size."""
    from mcp_bdd.transcript import TRANSCRIPT_MIME

    root = make_project(tmp_path, hostile(extra="timeout = 300\n"), {"f.feature": feature})
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain", timeout=300)
    assert run.counts()["passed"] == 1, run.output[-3000:]
    report = json.loads((root / "behave.json").read_text())
    items = [
        item
        for embedding in report[0]["elements"][0]["steps"][1]["embeddings"]
        if embedding["mime_type"] == TRANSCRIPT_MIME
        for item in json.loads(base64.b64decode(embedding["data"]))
    ]
    return items, (root / "behave.json").stat().st_size


def test_large_notifications_are_bounded_by_size_not_only_by_count(tmp_path: Path) -> None:
    """24 log messages of 1 MB each: a count of 1,000 bounded nothing, so all were kept, in the
    run's memory and in every report (32 MB of behave's json). The transcript now keeps
    NOTIFICATION_BYTES of them and counts the rest; the steps still search every one (the
    timeline's own bound, KEEP_BYTES, is larger)."""
    from mcp_bdd.transcript import NOTIFICATION_BYTES, weigh

    feature = """
Feature: flood
  Scenario: a server logs large messages
    Given the MCP server "hostile" is running
    When I call the tool "flood" with:
      | n  | size    |
      | 24 | 1000000 |
    Then the tool call succeeds
    And the server logged a "info" message containing "line 23xxx"
"""
    items, size = _flooded_call(tmp_path, feature)
    kept = [i for i in items if i["kind"] == "notification"]
    counted = [i for i in items if i["method"] == "notifications" and i["kind"] == "info"]
    assert 15 <= len(kept) < 24 and sum(weigh(i["payload"]) for i in kept) <= NOTIFICATION_BYTES, len(kept)
    assert counted and counted[-1]["payload"]["notifications_not_recorded"] == 24 - len(kept), counted
    assert "16 MiB of them at most" in counted[-1]["payload"]["why"], counted
    assert size < 24_000_000


def test_the_transcript_and_the_timeline_keep_the_first_messages_that_fit_their_size() -> None:
    from mcp_bdd.session import Timeline
    from mcp_bdd.transcript import Transcript, weigh

    big, small = {"data": "x" * 40}, {"data": ""}
    assert weigh(big) == 52 and weigh(small) == 12  # {"data": "..."}
    transcript = Transcript(notification_bytes=100)
    for payload in (big, big, small, big):
        transcript.record("notification", "s", "notifications/message", payload)
    items = transcript.drain()
    # the second did not fit: from then on every one is counted, the small one too ("the first N")
    assert [i.kind for i in items] == ["notification", "info"], items
    assert (
        items[-1].payload["notifications_not_recorded"] == 3 and "100 bytes of them at most" in items[-1].payload["why"]
    )
    timeline = Timeline(keep_bytes=100)
    for payload in (big, big, small):
        timeline.add("notifications/message", payload)
    assert timeline.count("notifications/message") == 3 and len(timeline.of("notifications/message")) == 1
    assert timeline.unseen() == 2
    timeline.clear()  # a feature-scoped session's next scenario: room again
    timeline.add("notifications/message", big)
    assert timeline.unseen() == 0 and len(timeline.of("notifications/message")) == 1


def test_a_message_is_weighed_once_for_both_bounds_and_not_at_all_past_them() -> None:
    """A notification goes to the transcript and to the timeline: it used to be encoded by each,
    and by the timeline for as long as the steps could keep any (100,000 of a flood). Now one
    `Weight` is taken once, and not at all once both bounds are closed."""
    from mcp_bdd.session import Timeline
    from mcp_bdd.transcript import Transcript, Weight

    encoded = []

    class Counted:  # `weigh` encodes it with `default=str`: each call is one weighing
        def __str__(self) -> str:
            encoded.append(1)
            return "x"

    transcript, timeline = Transcript(notification_limit=1), Timeline(keep=1)
    for n in range(1, 4):
        payload = {"n": n, "value": Counted()}
        weight = Weight(payload)
        transcript.record("notification", "s", "notifications/message", payload, weight=weight)
        timeline.add("notifications/message", payload, weight=weight)
    # the first fits both, the second closes both, the third is only counted
    assert len(encoded) == 2, encoded
    assert timeline.count("notifications/message") == 3 and len(timeline.of("notifications/message")) == 1
    assert [i.kind for i in transcript.drain()] == ["notification", "info"]


def test_the_transcript_counts_per_server_what_it_does_not_keep_and_never_drops_requests() -> None:
    from mcp_bdd.transcript import Transcript

    transcript = Transcript(notification_limit=2)
    for server in ("a", "b", "a", "a"):
        transcript.record("notification", server, "notifications/message", {})
    transcript.record("request", "a", "tools/call", {})
    first = transcript.drain()
    assert [(i.kind, i.server) for i in first] == [
        ("notification", "a"),
        ("notification", "b"),
        ("request", "a"),
        ("info", "a"),
    ]
    assert first[-1].payload["notifications_not_recorded"] == 2
    assert transcript.drain() == []  # nothing new counted: no second entry
    transcript.record("notification", "b", "notifications/progress", {})
    transcript.record("notification", "a", "notifications/message", {})
    entries = transcript.drain()
    assert [(e.server, e.payload["by_method"]) for e in entries] == [
        ("a", {"notifications/message": 1}),  # since its last entry, not again the two before
        ("b", {"notifications/progress": 1}),
    ]
    assert [e.payload["in_the_scenario_so_far"] for e in entries] == [3, 1]


def test_a_flood_of_server_requests_is_bounded_like_notifications() -> None:
    """60,000 unscripted sampling requests took 1.26 GB and a 43 MB report: each request of the
    server's and the client's answer to it were kept, without a limit. They now share the
    notifications' limit; the rest are counted by method, and the scenario's own requests are
    never dropped."""
    from mcp_bdd.transcript import NOTIFICATION_LIMIT, Transcript

    transcript = Transcript()
    for _ in range(3000):
        asked = transcript.record("server_request", "s", "sampling/createMessage", {"messages": []})
        transcript.record("client_response", "s", "sampling/createMessage", {"code": -32601}, related=asked.seq)
    transcript.record("request", "s", "tools/call", {"name": "t"})
    items = transcript.drain()
    assert len(items) == 2 * NOTIFICATION_LIMIT + 2, len(items)  # each kept request with its answer
    assert [i.kind for i in items[:2]] == ["server_request", "client_response"], items[:2]
    assert items[-2].kind == "request" and items[-1].method == "notifications", items[-2:]
    assert items[-1].payload["by_method"] == {"sampling/createMessage": 3000 - NOTIFICATION_LIMIT}


def test_scripted_server_requests_are_counted_exactly_and_kept_bounded() -> None:
    """The sampling and elicitation requests a scenario scripted answers for were kept in plain
    lists, without a bound, for the steps that count and read them: a server asking in a loop took
    the run's memory. They are a timeline now (bounded as notifications are); the count stays
    exact and the last request is the last that came, kept or not."""
    from mcp_bdd.session import ELICITATION, SAMPLING, Timeline
    from mcp_bdd.session._persona import ClientSide

    side = ClientSide()
    side.sampling_asked, side.elicitation_asked = Timeline(keep=2), Timeline(keep=2)
    for i in range(5):
        side.sampling_asked.add(SAMPLING, {"i": i})
    side.elicitation_asked.add(ELICITATION, {"message": "sure?"})  # a flood of sampling left it room
    assert side.sampling_asked.count(SAMPLING) == 5 and side.sampling_asked.last(SAMPLING) == {"i": 5 - 1}
    assert side.sampling_requests == [{"i": 0}, {"i": 1}] and side.elicitation_requests == [{"message": "sure?"}]
    side.sampling_asked.clear()
    assert side.sampling_asked.last(SAMPLING) is None and side.sampling_asked.count(SAMPLING) == 0


def test_the_timeline_counts_exactly_keeps_a_bounded_number_and_looks_at_each_once() -> None:
    from mcp_bdd.session import Timeline

    timeline = Timeline(keep=3)
    for i in range(5):
        timeline.add("notifications/message", {"i": i})
    assert timeline.count("notifications/message") == 5
    assert len(timeline.of("notifications/message")) == 3 and timeline.unseen() == 2
    looked: list[int] = []

    def seen(method: str, params: dict[str, object]) -> bool:
        looked.append(int(params["i"]))  # type: ignore[call-overload]
        return False

    assert not timeline.wait_for(seen, 0)
    assert looked == [0, 1, 2]

    arriving = Timeline(keep=10)
    looked.clear()
    for i in range(3):
        arriving.add("notifications/message", {"i": i})

    def add_three() -> None:
        for i in range(3, 6):
            arriving.add("notifications/message", {"i": i})

    adder = threading.Thread(target=add_three)
    adder.start()
    try:
        assert arriving.wait_for(lambda m, p: seen(m, p) or p["i"] == 5, 60)
    finally:
        adder.join()
    assert looked == [0, 1, 2, 3, 4, 5]  # each one once, however the arrivals and wake-ups interleave

    full = Timeline(keep=3)  # a count keeps growing after the timeline is full

    def add_eight() -> None:
        for _ in range(8):
            full.add("notifications/progress", {})

    counter = threading.Thread(target=add_eight)
    counter.start()
    try:
        assert full.wait_until(lambda: full.count("notifications/progress") >= 6, 60)
    finally:
        counter.join()
    assert not full.wait_until(lambda: full.count("notifications/progress") >= 9, 0)


class _RawServer(http.server.ThreadingHTTPServer):
    """A raw test server whose handler threads end with it: `server_close` joins them. A GET
    stream that outlived its test once raised minutes later inside another test, and its printed
    traceback (Python 3.11 parses the source line to draw the carets) raced that test's own
    `ast.parse`: "SystemError: AST constructor recursion depth mismatch"."""

    daemon_threads = False

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.outbox: queue.Queue[bytes | None] = queue.Queue()  # what its GET streams send
        self.closing = threading.Event()  # set as the test ends: the streams end


def _stream_messages(server: _RawServer) -> Iterator[bytes]:
    """The messages a GET stream sends: what `server.outbox` holds, until a None (the stream
    ends) or the end of the test (`closing`)."""
    while not server.closing.is_set():
        try:
            message = server.outbox.get(timeout=0.1)
        except queue.Empty:
            continue
        if message is None:
            return
        yield message


@contextlib.contextmanager
def _serving(web: _RawServer) -> Iterator[str]:
    """Serve `web` from a thread, as its base URL; after, end its GET streams and stop it."""
    thread = threading.Thread(target=web.serve_forever, daemon=True)
    thread.start()
    try:
        yield _origin(web)
    finally:
        web.closing.set()
        web.shutdown()
        web.server_close()
        thread.join()


def _origin(web: _RawServer) -> str:
    return f"http://127.0.0.1:{web.server_address[1]}"


def _answer(
    handler: http.server.BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    kind: str = "text/html; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> None:
    """Answer `status` with `body` (HTML, as a web framework's default does, unless `kind` says)."""
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def _open_sse_stream(handler: http.server.BaseHTTPRequestHandler) -> None:
    """Answer a legacy SSE GET: an event stream whose first event names the messages URL."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    handler.wfile.write(b"event: endpoint\ndata: /messages?session_id=1\n\n")
    handler.wfile.flush()


class _NotMcp(http.server.BaseHTTPRequestHandler):
    """A web server that is not an MCP endpoint: each path answers its own status with HTML."""

    def do_POST(self) -> None:
        _answer(self, int(self.path.strip("/") or 404), b"<html><body>Not here</body></html>")

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


def _connect_each(urls: dict[str, tuple[str, str]], settings: str = "") -> tuple[str, dict[str, str]]:
    """The configuration and features of a run that connects once to each `url` server "<case>"
    of `urls` (case: url, and `over` a transport or ""), a feature each."""
    config, features = "", {}
    for case, (url, over) in urls.items():
        config += f'[servers.{json.dumps(case)}]\nurl = "{url}"\n{settings}'
        features[f"{case}.feature"] = (
            f'Feature: {case}\n  Scenario: connect\n    Given the MCP server "{case}" is running{over}\n'
        )
    return config, features


def _connect(tmp_path: Path, url: str, *, over: str = "") -> Run:
    """behave's run of one scenario that connects to the `url` server "remote" (`over` a transport)."""
    return run_behave(make_project(tmp_path, *_connect_each({"remote": (url, over)})))


#: what a web server that is no MCP endpoint answers: (status, " over SSE" or "", said, tip)
HTTP_ERRORS: dict[str, tuple[int, str, str, str]] = {
    "404": (404, "", "answered HTTP 404 (text/html) to POST {url}", "check the path in `url`"),
    "401": (401, "", "refused the connection with HTTP 401 (text/html) to POST {url}", "the server wants credentials"),
    "200-html": (
        200,
        "",
        "answered HTTP 200 (text/html) to POST {url}",
        "an MCP endpoint answers with application/json or text/event-stream",
    ),
    "401-over-sse": (
        401,
        " over SSE",
        "answered HTTP 401 to the GET that opens an SSE stream at {url}",
        "wants credentials",
    ),
    "200-html-over-sse": (
        200,
        " over SSE",
        "answered HTTP 200 to the GET that opens an SSE stream at {url} with text/html: not an event stream",
        "an SSE endpoint answers its GET with text/event-stream",
    ),
    "302-over-sse": (
        302,
        " over SSE",
        "answered HTTP 302 to the GET that opens an SSE stream at {url}: a redirect",
        "point `url` at the address it redirects to",
    ),
}


@dataclass
class WebErrors:
    """The shared run of every HTTP_ERRORS case, and the origin of the web server it ran against."""

    shared: SharedRun
    origin: str


@pytest.fixture(scope="module")
def http_errors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebErrors]:
    """One web server (each path answers its own status) and one run: a server "<case>" per case."""
    with _serving(_RawServer(_NotMcp)) as origin:
        urls = {case: (f"{origin}/{status}", over) for case, (status, over, _, _) in HTTP_ERRORS.items()}
        yield WebErrors(shared_run(make_project(tmp_path_factory.mktemp("web-errors"), *_connect_each(urls))), origin)


@pytest.mark.parametrize("case", HTTP_ERRORS)
def test_a_url_that_answers_http_errors_is_named_with_its_status(case: str, http_errors: WebErrors) -> None:
    """The SDK says only "Server returned an error response"; a wrong path or a missing token is
    the first thing a new user meets with a URL server. A web page served with 200 used to read
    "closed the connection during the handshake" with the tip "is the server running?" — and over
    SSE "could not be connected to: SSEError", because SSE's answers were not recorded."""
    status, _, said, tip = HTTP_ERRORS[case]
    assert "passed" not in http_errors.shared.statuses(case), http_errors.shared.run.failures()
    printed = http_errors.shared.printed(case)
    assert f'"{case}" {said.format(url=f"{http_errors.origin}/{status}")}' in printed, printed
    assert tip in printed, printed
    assert "is the server running" not in printed, printed


def _serve_over_http(port: int, transport: str = "streamable-http") -> subprocess.Popen[str]:
    """The demo shop on Streamable HTTP at /mcp, or SSE at /sse (as a user's already-running
    server), once it listens."""
    argv = [sys.executable, "-m", "mcp_bdd.serve", "demo.shop:create_server", "--transport", transport]
    server = subprocess.Popen(
        [*argv, "--port", str(port)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    ready = threading.Event()
    said: list[str] = []

    def watch() -> None:
        assert server.stderr is not None
        for line in server.stderr:  # read to the end: a full pipe would block the server
            said.append(line)
            if "Uvicorn running" in line:
                ready.set()

    threading.Thread(target=watch, daemon=True).start()
    if not ready.wait(120) or server.poll() is not None:
        server.kill()
        server.wait()
        pytest.fail(f"the {transport} server did not start:\n" + "".join(said))
    return server


def test_sse_asked_of_a_streamable_http_endpoint_is_named_as_the_wrong_transport(tmp_path: Path) -> None:
    """`over SSE` to a url ending in /mcp: the SSE client's GET gets 400 from a Streamable HTTP
    endpoint, and the failure said only "could not be connected to: HTTPStatusError" with the tip
    "is the server running at that URL?" — while the server was running, on another transport."""
    from mcp_bdd._net import free_port

    port = free_port()
    server = _serve_over_http(port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        run = _connect(tmp_path, url, over=" over SSE")
    finally:
        server.kill()
        server.wait()
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert f'"remote" answered HTTP 400 to the GET that opens an SSE stream at {url}' in run.output, run.output[-3000:]
    assert "this URL looks like a Streamable HTTP endpoint" in run.output, run.output[-3000:]
    assert "is the server running" not in run.output, run.output[-3000:]


class _SilentSseServer(_RawServer):
    """Serves `_SilentSse`; `closing` ends its streams, `posts` counts the messages it answered
    (with `post_status`)."""

    def __init__(self, post_status: int) -> None:
        super().__init__(_SilentSse)
        self.post_status = post_status
        self.posts = 0


class _SilentSse(http.server.BaseHTTPRequestHandler):
    """An SSE endpoint that names its messages URL, acknowledges each POST the way Express does
    (`res.status(202).send("Accepted")`: 202, text/html), and never answers on the stream."""

    server: _SilentSseServer

    def do_GET(self) -> None:
        if self.server.post_status:
            _open_sse_stream(self)
        else:  # a stream, alive, that never says where to POST
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b": keep-alive\n\n")
            self.wfile.flush()
        self.server.closing.wait(120)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts += 1
        _answer(self, self.server.post_status, b"Accepted" if self.server.post_status < 300 else b"Not Found")

    def log_message(self, *args: object) -> None:
        pass


#: how an SSE server that never answers on its stream treats a POST: (its POST status, said)
SILENT_SSE: dict[str, tuple[int, str]] = {
    "acknowledged": (202, "did not complete the MCP handshake within startup_timeout = 3 s"),
    "refused": (404, "answered HTTP 404 to POST {url}/messages?session_id=1, a message sent where its SSE stream said"),
    # no `endpoint` event at all: it was "is the server running at that URL?", of a server that was
    "no-endpoint": (
        0,
        "opened its SSE stream but sent no `endpoint` event (the URL to POST requests to) within startup_timeout",
    ),
}


@dataclass
class SilentServers:
    """The shared run of every SILENT_SSE case, and the web server each case ran against."""

    shared: SharedRun
    webs: dict[str, _SilentSseServer]


@pytest.fixture(scope="module")
def silent_sse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SilentServers]:
    """A silent SSE server per case, all in one run (a server "<case>" each)."""
    webs = {case: _SilentSseServer(status) for case, (status, _) in SILENT_SSE.items()}
    with contextlib.ExitStack() as serving:
        urls = {case: (f"{serving.enter_context(_serving(web))}/sse", "") for case, web in webs.items()}
        config, features = _connect_each(urls, "startup_timeout = 3\n")
        yield SilentServers(shared_run(make_project(tmp_path_factory.mktemp("silent-sse"), config, features)), webs)


@pytest.mark.parametrize("case", SILENT_SSE)
def test_an_sse_servers_acknowledgement_of_a_post_is_not_taken_for_its_answer(
    case: str, silent_sse: SilentServers
) -> None:
    """Over SSE a POST's answer is only "202 Accepted", in whatever content type; the message
    comes on the stream. A server that never answers there timed out its handshake, and must be
    named for that, not as a URL that "answered HTTP 202 (text/html) ... not an MCP endpoint".
    A POST it refuses is named as such (not with a tip to fix the path in `url`, which was right)."""
    post_status, said = SILENT_SSE[case]
    shared = silent_sse.shared
    assert silent_sse.webs[case].posts >= 1 or not post_status, shared.run.failures()  # acknowledged, never answered
    assert "passed" not in shared.statuses(case), shared.run.failures()
    printed = shared.printed(case)
    assert said.format(url=_origin(silent_sse.webs[case])) in printed, printed
    assert "not an MCP endpoint" not in printed, printed
    assert "check the path" not in printed, printed


def test_the_http_answers_of_an_sse_session_are_recorded_for_the_http_steps(tmp_path: Path) -> None:
    """The HTTP steps (`the last HTTP response has status`, the auth checks) read the answers a
    session received; an SSE session recorded none, so they said "no HTTP exchange happened"
    over SSE. Now the SSE client records every answer as the Streamable HTTP client does."""
    from mcp_bdd._net import free_port

    port = free_port()
    server = _serve_over_http(port, "sse")
    feature = """
Feature: SSE answers
  Scenario: the messages endpoint accepts each request
    Given the MCP server "remote" is running over SSE
    When I list the tools
    Then the last HTTP response has status 202
"""
    try:
        root = make_project(
            tmp_path, f'[servers.remote]\nurl = "http://127.0.0.1:{port}/sse"\n', {"w.feature": feature}
        )
        run = run_behave(root)
    finally:
        server.kill()
        server.wait()
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


BAD_APP = """
import contextlib
import os

from mcp.server.mcpserver import MCPServer


@contextlib.asynccontextmanager
async def lifespan(server):
    raise RuntimeError("database at postgres://shop:hunter2pass@db/x is unreachable")
    yield


def with_lifespan():
    return MCPServer("bad", lifespan=lifespan)


def broken_factory():
    raise ValueError("config file missing: settings.toml")
"""

BAD_IMPORT = """
import os

DATABASE_URL = os.environ["SHOP_DATABASE_URL"]
"""


@pytest.mark.parametrize("transport", ["in-memory", "stdio"])
def test_an_app_that_raises_while_starting_is_named_with_where_it_raised(transport: str, tmp_path: Path) -> None:
    """The factory, the lifespan or the module's top level raising: the real exception and its
    place in the user's code, not a traceback through mcp-bdd (in-memory) or "unhandled errors
    in a TaskGroup" (the zygote's child); a DSN's password masked."""
    feature = """
Feature: bad apps
  Scenario: the lifespan raises
    Given the MCP server "lifespan" is running

  Scenario: the factory raises
    Given the MCP server "factory" is running

  Scenario: the module raises on import
    Given the MCP server "importer" is running
"""
    config = (
        f'transport = "{transport}"\n'
        '[servers.lifespan]\napp = "bad_app:with_lifespan"\n'
        '[servers.factory]\napp = "bad_app:broken_factory"\n'
        '[servers.importer]\napp = "bad_import:create_server"\n'
    )
    root = make_project(tmp_path, config, {"b.feature": feature})
    (root / "bad_app.py").write_text(BAD_APP)
    (root / "bad_import.py").write_text(BAD_IMPORT)
    run = run_behave(root)
    assert run.counts()["passed"] == 0 and run.counts()["error"] == 3, run.output[-5000:]
    for line in (
        "RuntimeError: database at postgres://shop:****@db/x is unreachable (bad_app.py:10, in lifespan)",
        "ValueError: config file missing: settings.toml (bad_app.py:19, in broken_factory)",
        "KeyError: 'SHOP_DATABASE_URL' (bad_import.py:4, in <module>)",
    ):
        assert line in run.output, run.output[-5000:]
    assert "hunter2pass" not in run.output and "unhandled errors in a TaskGroup" not in run.output, run.output[-5000:]
    if transport == "in-memory":
        assert "Traceback" not in run.output, run.output[-5000:]


def test_a_wrapper_that_forks_the_server_and_exits_takes_it_along_and_says_so(tmp_path: Path) -> None:
    """`sh -c 'server & exit 0'` returns as if done: what it leaves behind is its orphan, which
    its keeper kills as it reaps it (a server runs as long as mcp-bdd's process does, never on its
    own). Before the keeper the forked server went on talking on the same pipes; the failure now
    says what happened and what to do, as it does for an HTTP command that returns at once."""
    argv = ", ".join(
        json.dumps(a) for a in ["sh", "-c", f"{shlex.quote(sys.executable)} {shlex.quote(HOSTILE)} & exit 0"]
    )
    config = f'[servers.hostile]\ncommand = [{argv}]\nprotocol = "legacy"\n'
    root = make_project(tmp_path, config, {"w.feature": CALL_ECHO})
    run = run_behave(root)
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert "Exit code: 0\n" in run.output, run.failures()
    assert "a wrapper that starts the server in the background and returns" in run.output, run.failures()
    assert "configure its `url`" not in run.output, run.failures()  # no URL reaches a stdio server


def test_only_this_connects_refused_posts_explain_a_failed_handshake() -> None:
    """An earlier connect's 401 and the routine 405 to the optional GET stream are not the cause."""
    from mcp_bdd.servers import RemoteServer
    from mcp_bdd.session import Session
    from mcp_bdd.transcript import Transcript

    transcript = Transcript()
    server = RemoteServer("web", "streamable-http", "http://127.0.0.1:9/mcp", {})
    session = Session("web", server, portal=None, transcript=transcript, timeout=1, startup_timeout=1, protocol="auto")
    url = "http://127.0.0.1:9/mcp"
    transcript.record("info", "web", "http", {"method": "POST", "url": url, "status": 401, "headers": {}})
    since = transcript.record("info", "web", "connect", {}).seq
    transcript.record("info", "web", "http", {"method": "POST", "url": url, "status": 200})
    transcript.record("info", "web", "http", {"method": "GET", "url": url, "status": 405, "headers": {}})
    assert session._http_refusal(since) is None
    transcript.record("info", "web", "http", {"method": "POST", "url": url, "status": 404, "headers": {}})
    refusal = session._http_refusal(since)
    assert refusal is not None and refusal[0].startswith("answered HTTP 404 (no content type) to POST"), refusal


HOLDING_APP = """
import subprocess


def create_server():
    subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)  # inherits the server's stdout
    raise RuntimeError("boom while starting")
"""


def test_a_forked_app_that_dies_at_start_while_a_helper_holds_stdout_is_named_at_once(tmp_path: Path) -> None:
    """The zygote reaps its children within 0.2 s: the exit may be over before the transport
    watches it; its status, asked of the zygote, still ends the wait."""
    feature = """
Feature: dies at start
  Scenario: the factory starts a helper, then raises
    Given the MCP server "app" is running
"""
    config = 'transport = "stdio"\nstartup_timeout = 900\n[servers.app]\napp = "holding_app:create_server"\n'
    root = make_project(tmp_path, config, {"d.feature": feature})
    (root / "holding_app.py").write_text(HOLDING_APP)
    run = run_behave(root, timeout=300)
    assert run.counts()["error"] == 1, run.output[-3000:]
    assert "RuntimeError: boom while starting (holding_app.py:7, in create_server)" in run.output, run.output[-3000:]
    assert "within startup_timeout" not in run.output, run.output[-3000:]


def test_kill_marked_finds_exactly_the_marked_processes_whatever_their_session() -> None:
    from mcp_bdd._process_tree import kill_marked, marked

    mark = f"MCP_BDD_SERVER=test-{os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ)
    env.pop("MCP_BDD_SERVER", None)
    name, value = mark.split("=", 1)
    ours = subprocess.Popen(["sleep", "600"], env={**env, name: value}, start_new_session=True)
    near = subprocess.Popen(["sleep", "600"], env={**env, name: value + "0"})  # a prefix is not the mark
    try:
        assert marked(mark.encode()) == [ours.pid]
        assert kill_marked(mark.encode()) == 1
        assert ours.wait(timeout=30) == -signal.SIGKILL
        assert near.poll() is None
    finally:
        for proc in (ours, near):
            proc.kill()
            proc.wait(timeout=30)


BLOCKING = 'timeout = 1\nstartup_timeout = 5\n[servers.blocking]\napp = "blocking_app:create_server"\n'


def _blocking_project(root: Path, feature: str) -> Path:
    made = make_project(root, BLOCKING, {"b.feature": feature})
    (made / "blocking_app.py").write_text((REPO / "tests" / "servers" / "blocking_app.py").read_text())
    return made


def test_an_in_process_tool_that_blocks_fails_its_step_in_time_and_the_run_goes_on(tmp_path: Path) -> None:
    """time.sleep(20) in an async tool stops the event loop, so nothing inside it can time the call
    out (it used to "succeed" after 20 s), and a cancelled call to a tool that never returns used
    to hang the step for good. Now the step stops waiting `timeout` + STALL_GRACE after the last
    answer, says why, and the run goes on once the loop is free again."""
    feature = """
Feature: blocking tools
  Scenario: a tool sleeps in the event loop
    Given the MCP server "blocking" is running
    When I call the tool "hog" with:
      | seconds |
      | 20      |
    Then the tool call times out

  Scenario: a sync tool never returns
    Given the MCP server "blocking" is running
    When I call the tool "spin"
    Then the tool call times out

  Scenario: the next scenario runs
    Given the MCP server "blocking" is running
    When I call the tool "hog" with:
      | seconds |
      | 0       |
    Then the tool call succeeds
"""
    root = _blocking_project(tmp_path, feature)
    run = run_behave(root, "-f", "plain", timeout=300)
    counts = run.counts()
    assert counts["passed"] == 1 and counts["error"] == 2, run.output[-4000:]
    assert run.output.count("and 10 s later the request had still not ended although it was cancelled") == 2, (
        run.output[-4000:]
    )
    assert "cannot be interrupted" in run.output and "-D transport=stdio" in run.output, run.output[-4000:]
    assert "still blocked" not in run.output, run.output[-4000:]  # the loop came back: a normal end


def test_a_run_whose_event_loop_stays_blocked_ends_and_keeps_its_reports(tmp_path: Path) -> None:
    """An async tool that never awaits holds the event loop for good: the step fails in time, the
    next server cannot connect (said so), and the run ends with exit code 1 and its reports
    written, instead of hanging in its teardown and at interpreter exit."""
    feature = """
Feature: frozen
  Scenario: a tool freezes the event loop
    Given the MCP server "blocking" is running
    When I call the tool "freeze"
    Then the tool call times out

  Scenario: nothing can connect any more
    Given the MCP server "blocking" is running
    Then the tool call succeeds
"""
    root = _blocking_project(tmp_path, feature)
    run = run_behave(root, "-f", "json", "-o", "out.json", "-f", "plain", timeout=300)
    assert run.returncode == 1 and run.counts()["error"] == 2, run.output[-4000:]
    assert "could not be connected: the run's event loop did not finish this" in run.output, run.output[-4000:]
    assert "the run's event loop is still blocked by an in-process server" in run.output, run.output[-4000:]
    assert json.loads((root / "out.json").read_text())[0]["status"] == "error"  # written whole


def _stray_answer_run(tmp_path: Path, flag: str, feature: str = CALL_ECHO) -> tuple[str, str]:
    """behave against `hostile.py <flag>` with timeout = 900: what it printed, and the report's data."""
    root = make_project(tmp_path, hostile(flag, extra="timeout = 900\n"), {"s.feature": feature})
    out = tmp_path / "doc.html"
    run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain", timeout=300)
    assert run.counts()["failed"] == 1, run.output[-4000:]
    assert "timed out" not in run.output and "no answer within" not in run.output, run.output[-4000:]
    data = out.with_suffix(".json").read_text()
    assert '"error_kind":"protocol"' in data, data[-4000:]
    return run.output, data


def test_an_answer_whose_id_no_request_waits_for_fails_its_call_at_once(tmp_path: Path) -> None:
    """Found by a probe: a server that answers with id 999999 made the call wait its whole
    `timeout` and say "timed out", and its reply was in neither the transcript nor the report."""
    output, data = _stray_answer_run(tmp_path, "--wrong-id")
    said = (
        "the server answered with id 999999, but no request with that id is waiting (waiting: 1) "
        "— a server must echo the request's id"
    )
    assert said in output, output[-4000:]
    quoted = (  # what it sent, bounded and masked, through the evidence every stdio failure quotes
        "on stdout that mcp-bdd could not use (1 a response no request waits for); "
        'the first: a response no request waits for: \'{"jsonrpc": "2.0", "id": 999999, "result"'
    )
    assert quoted in output, output[-4000:]
    assert "a response no request waits for: " in data and "999999" in data, data[-4000:]


def test_a_json_rpc_error_without_an_id_fails_its_call_at_once(tmp_path: Path) -> None:
    """Found by a probe: the standard answer of a server that could not parse what it read,
    `{"id": null, "error": {"code": -32700, ...}}`, made the call wait its whole `timeout`."""
    output, data = _stray_answer_run(tmp_path, "--null-id-error")
    said = (
        "the server answered with a JSON-RPC error without an id (-32700 Parse error): "
        "it could not read the request mcp-bdd sent"
    )
    assert said in output, output[-4000:]
    assert 'the first: a JSON-RPC error without an id: \'{"jsonrpc": "2.0", "id": null' in output, output[-4000:]
    assert "a JSON-RPC error without an id: " in data and "-32700" in data, data[-4000:]


def test_a_second_answer_to_one_request_is_evidence_and_the_first_stands(tmp_path: Path) -> None:
    """Before, a server that answered a call twice (its result, then an error for the same id)
    passed with no trace of it: the second answer was dropped like a late one. It is a protocol
    violation, now recorded where the report and the failure messages show it.

    Two calls: the server writes the first call's second answer before it reads the next call,
    and the transport reads in order, so that one is in the transcript by the time the second
    call returns, however the machine schedules the processes (the last one may come after the
    scenario ended)."""
    feature = CALL_ECHO_TWICE
    root = make_project(tmp_path, hostile("--twice"), {"s.feature": feature})
    out = tmp_path / "doc.html"
    run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    data = out.with_suffix(".json").read_text()
    assert "a second answer to one request: " in data and "second thoughts" in data, data[-4000:]


class _TwiceSseServer(_RawServer):
    """A legacy SSE server, raw: one stream carries every answer, in the order the POSTs were
    read, and the first tools/call is answered twice (its result, then an error for its id)."""

    def __init__(self, handler: type[_TwiceSse] | None = None) -> None:
        super().__init__(handler or _TwiceSse)
        self.calls = 0
        self.reset: Any = None  # the id of a request whose POST was closed unanswered (`_FailingSse`)


class _TwiceSse(http.server.BaseHTTPRequestHandler):
    server: _TwiceSseServer

    def do_GET(self) -> None:
        _open_sse_stream(self)
        for message in _stream_messages(self.server):
            self.wfile.write(b"event: message\ndata: " + message + b"\n\n")
            self.wfile.flush()

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        for answer in self._answers(request):
            self.server.outbox.put(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer}).encode())
        _answer(self, 202, b"Accepted")

    def _answers(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        method, params = request.get("method"), request.get("params") or {}
        if "id" not in request:
            return []  # a notification
        if method == "initialize":
            info = {"name": "twice", "version": "1"}
            version = params["protocolVersion"]
            return [{"result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}}]
        if method == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string"}}}
            return [{"result": {"tools": [{"name": "echo", "inputSchema": schema}]}}]
        if method == "tools/call":
            self.server.calls += 1
            result = {"result": {"content": [{"type": "text", "text": params["arguments"]["text"]}]}}
            if self.server.calls > 1:
                return [result]
            return [result, {"error": {"code": -32603, "message": "second thoughts"}}]
        return [{"error": {"code": -32601, "message": f"Method not found: {method}"}}]

    def log_message(self, *args: object) -> None:
        pass


def _run_over_sse(tmp_path: Path, web: _TwiceSseServer, feature: str) -> tuple[Run, str]:
    """`feature` against the legacy SSE server `web` (as the server "hostile"): behave's run, and
    the report's run model as JSON text."""
    with _serving(web) as base:
        config = f'protocol = "legacy"\n[servers.hostile]\nurl = "{base}/sse"\n'
        root = make_project(tmp_path, config, {"s.feature": feature})
        out = tmp_path / "doc.html"
        run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain")
    return run, out.with_suffix(".json").read_text()


def test_a_second_answer_over_http_is_evidence_as_over_stdio(tmp_path: Path) -> None:
    """Over stdio a second answer to one request is quoted as evidence (the test above); over
    HTTP and SSE the SDK dropped it at debug level, like a late answer, and the run showed no
    trace of it. The SDK's one door for answers (`_sdk.watch_repeated_answers`) now records it in
    the same words. The second call's answer comes after the duplicate on the one SSE stream, so
    the duplicate is in the transcript by the time that call returns."""
    web = _TwiceSseServer()
    run, data = _run_over_sse(tmp_path, web, CALL_ECHO_TWICE)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert web.calls == 2, run.output[-3000:]
    assert "a second answer to one request: " in data and "second thoughts" in data, data[-4000:]
    assert "JSON-RPC allows one response per request" in data, data[-4000:]


class _GarbledSse(_TwiceSse):
    """The legacy SSE server that answers a call of the text "garbled" on its stream with a message
    cut short (not JSON, its id readable), and every other request as it should."""

    def _answers(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self.server.calls = 1  # no second answers: this server's fault is another
        return super()._answers(request)

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if ((request.get("params") or {}).get("arguments") or {}).get("text") == "garbled":
            self.server.outbox.put(b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [' % request["id"])
            return _answer(self, 202, b"Accepted")
        for answer in self._answers(request):
            self.server.outbox.put(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer}).encode())
        return _answer(self, 202, b"Accepted")


def test_an_sse_answer_that_is_no_json_rpc_message_fails_its_request_at_once(tmp_path: Path) -> None:
    """Over legacy SSE the SDK dropped a message event it could not parse (a log line at most): the
    request waited out its whole timeout and was called slow. It now fails at once as a protocol
    violation saying what came."""
    feature = "\nFeature: garbled" + call_scenario("one call", "echo", "text", "garbled")
    web = _TwiceSseServer(_GarbledSse)
    started = time.monotonic()
    with _serving(web) as base:
        config = f'protocol = "legacy"\ntimeout = 900\n[servers.hostile]\nurl = "{base}/sse"\n'
        run = run_behave(make_project(tmp_path, config, {"g.feature": feature}), timeout=300)
    assert run.counts() == {"passed": 0, "failed": 1, "error": 0, "skipped": 0}, run.failures()
    said = 'The server "hostile" sent an SSE message event that is no JSON-RPC message: it is not JSON'
    assert said in run.output and "timed out" not in run.output, run.failures()
    assert time.monotonic() - started < 120, "the request waited instead of failing at once"


class _TwoEndpointsSse(_TwiceSse):
    """The legacy SSE server that sends a second `endpoint` event, on another origin, at once
    after its first (and later, a third on its own origin), then serves as it should."""

    def do_GET(self) -> None:
        _open_sse_stream(self)
        self.wfile.write(b"event: endpoint\ndata: http://127.0.0.2:9/messages\n\n")
        self.wfile.flush()
        first = True
        for message in _stream_messages(self.server):
            extra = b"event: endpoint\ndata: /elsewhere\n\n" if first else b""
            first = False
            self.wfile.write(extra + b"event: message\ndata: " + message + b"\n\n")
            self.wfile.flush()

    def _answers(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self.server.calls = 1  # no second answers: this server's fault is another
        return super()._answers(request)


def test_a_second_endpoint_event_is_ignored_and_said(tmp_path: Path) -> None:
    """A second `endpoint` event crashed the SDK's SSE reader with a Python traceback ("called
    'started' twice", or "Endpoint origin does not match"), and the session was blamed on the
    server going away ("is the server running at that URL?"). The first endpoint stands; each
    later one is recorded and ignored."""
    run, data = _run_over_sse(tmp_path, _TwiceSseServer(_TwoEndpointsSse), CALL_ECHO_TWICE)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert "Traceback" not in run.output and "started' twice" not in run.output, run.output[-3000:]
    assert "the server sent a second `endpoint` event on its SSE stream" in data, data[-3000:]


class _FailingSse(_TwiceSse):
    """The legacy SSE server above, whose tools/call POST fails by the text it is given:
    `forbidden` a 403 with a Bearer challenge, `crash` a 500 in plain text, `invalid` a 400 with
    a JSON-RPC error (id null) in its body, `moved` a 307 to /messages/ on the same origin (which
    the SDK follows, and where it is answered), `reset` no answer at all (the connection closes;
    its answer comes on the stream before the next call's, as a server that handled it would send it),
    `gone` a 404 for the session (as a server that restarted says it), `away` a 302 (no client
    follows it with the POST);
    any other text is answered on the stream. The POST of every notification gets a 500: nothing
    waits for those."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        text = ((request.get("params") or {}).get("arguments") or {}).get("text")
        if "id" not in request:
            return _answer(self, 500, b"no notifications here")
        if text == "moved" and not self.path.startswith("/messages/"):
            return _answer(self, 307, b"", headers={"Location": "/messages/?session_id=1"})
        if text == "reset":
            self.server.reset = request["id"]
            self.close_connection = True  # closed without a status line: the client's read breaks
            return None
        if self.server.reset is not None:  # the reset request's answer, late (its POST failed it already)
            late = {"jsonrpc": "2.0", "id": self.server.reset, "result": {"content": []}}
            self.server.outbox.put(json.dumps(late).encode())
            self.server.reset = None
        if request.get("method") != "tools/call" or text not in ("forbidden", "crash", "invalid", "gone", "away"):
            for answer in self._answers(request):
                self.server.outbox.put(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer}).encode())
            return _answer(self, 202, b"Accepted")
        self.server.calls += 1  # so the next echo is answered once
        invalid = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "text: too short"}}
        status, kind, body, extra = {
            "forbidden": (403, "text/plain", b"scope tools:write needed",
                          {"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="tools:write"'}),
            "crash": (500, "text/plain", b"Internal Server Error: the database is down", {}),
            "invalid": (400, "application/json", json.dumps(invalid).encode(), {}),
            "gone": (404, "text/plain", b"Could not find session", {}),
            "away": (302, "text/plain", b"", {"Location": "/elsewhere/messages"}),
        }[text]  # fmt: skip
        return _answer(self, status, body, kind, extra)


def _echo(text: str, then: str) -> str:
    """Gherkin: a call of the raw servers' echo tool with `text`, and the step that checks it."""
    return f'    When I call the tool "echo" with:\n      | text |\n      | {text} |\n    {then}\n'


FAILING_POSTS = (
    "Feature: legacy SSE posts that fail\n"
    "  Scenario: each fails at once, and the session goes on\n"
    '    Given the MCP server "hostile" is running\n'
    + _echo("forbidden", 'Then the tool call fails with an error mentioning "insufficient_scope"')
    + "    And the last HTTP response has status 403\n"
    + _echo("invalid", "Then the request is rejected with error code -32602")
    + _echo("hello", "Then the tool call succeeds")
    + _echo("moved", "Then the tool call succeeds")
    + _echo(
        "reset", 'Then the tool call fails with an error mentioning "Server disconnected without sending a response"'
    )
    + _echo("again", "Then the tool call succeeds")
    + _echo("gone", 'Then the tool call fails with an error mentioning "Could not find session"')
    + _echo("away", 'Then the tool call fails with an error mentioning "a redirect to http://127.0.0.1"')
    + _echo("crash", "Then the tool call succeeds")
)


def test_a_request_whose_sse_post_fails_fails_at_once_and_the_session_goes_on(tmp_path: Path) -> None:
    """Over legacy SSE a request's POST answered with an HTTP error (403, 500, 400) made the
    SDK's sender raise and stop for good: the request waited its whole timeout (900 s here) for
    an answer that could not come, and every later request failed as "connection lost". Now the
    request fails at once with what the server sent (a refusal, the server's own JSON-RPC error,
    or a protocol violation naming the status), and the session goes on; a notification's POST
    that fails is evidence, and a same-origin 307 is still followed. A POST whose connection
    closed without an answer stopped the sender the same way; it fails the request at once too,
    as over Streamable HTTP, naming the exchange that broke."""
    with _serving(_TwiceSseServer(handler=_FailingSse)) as base:
        config = f'protocol = "legacy"\ntimeout = 900\n[servers.hostile]\nurl = "{base}/sse"\n'
        root = make_project(tmp_path, config, {"f.feature": FAILING_POSTS})
        out = tmp_path / "doc.html"
        run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain", timeout=300)
    # (one scenario: the raw server serves one session) every step but the last, the crash, passes
    assert run.counts("steps") == {"passed": 19, "failed": 1, "error": 0, "skipped": 0}, run.failures()
    said = 'The server "hostile" answered the tools/call request with HTTP 500 (text/plain): not a JSON-RPC answer'
    assert said in run.output and "the database is down" in run.output, run.failures()
    assert "timed out" not in run.output and "connection lost" not in run.output, run.failures()
    data = out.with_suffix(".json").read_text()  # the notifications' refused POSTs, as evidence
    assert "answered the POST of a notifications/initialized notification with HTTP 500" in data, data[-3000:]
    broke = "the connection closed before an answer came (the HTTP exchange of the tools/call request broke: POST "
    assert broke in data and "RemoteProtocolError: Server disconnected" in data, data[-3000:]
    # its answer on the stream after that: not "a second answer to one request"
    late = "an answer on the GET stream to the tools/call request whose POST had failed (the request failed then)"
    assert late in data and "a second answer to one request" not in data, data[-3000:]
    posts = [i["payload"]["status"] for i in _items(json.loads(data), "http") if i["payload"]["method"] == "POST"]
    assert len(posts) == 12 and 200 not in posts, posts  # the broken POST: no answer, none recorded
    # the tip for the session a legacy server forgot names its endpoint event, not `url` or a header
    assert "HTTP 404 (text/plain), for a session it had opened" in data and "HTTP+SSE needs sticky sessions" in data
    assert "/elsewhere/messages" in data and "`endpoint` event names a POST URL that redirects" in data


def _items(report: Any, method: str) -> list[dict[str, Any]]:
    """Every transcript item of `method` anywhere in a JSON report."""
    if isinstance(report, list):
        return [i for v in report for i in _items(v, method)]
    if not isinstance(report, dict):
        return []
    here = [report] if report.get("method") == method and "payload" in report else []
    return here + [i for v in report.values() for i in _items(v, method)]


class _LockedSse(_TwiceSse):
    """A legacy SSE server that opens its stream to anyone and refuses every POST with a 401."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _answer(self, 401, b"", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})


def test_a_handshake_whose_sse_post_is_refused_fails_at_once(tmp_path: Path) -> None:
    """Over legacy SSE an initialize POST refused with 401 stopped the SDK's sender: the start
    waited all of startup_timeout (600 s here) and then blamed the URL. Now it fails at once,
    saying what the server answered and how to give credentials."""
    feature = 'Feature: locked\n  Scenario: connect\n    Given the MCP server "hostile" is running\n'
    with _serving(_TwiceSseServer(handler=_LockedSse)) as base:
        config = f'protocol = "legacy"\nstartup_timeout = 600\n[servers.hostile]\nurl = "{base}/sse"\n'
        run = run_behave(make_project(tmp_path, config, {"l.feature": feature}), "-f", "plain", timeout=300)
    assert run.counts()["error"] == 1, run.output[-3000:]
    assert f"answered HTTP 401 to POST {base}/messages?session_id=1, a message sent" in run.output, run.output[-3000:]
    assert "the server wants credentials. Give them in `headers`" in run.output, run.output[-3000:]


class _ResettingSse(_TwiceSse):
    """A legacy SSE server that opens its stream to anyone and closes every POST's connection
    without an answer (a proxy or a worker that dies on it)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.close_connection = True


def test_a_handshake_whose_sse_post_breaks_fails_at_once_naming_the_exchange(tmp_path: Path) -> None:
    """The initialize POST's connection closed without an answer: the start waited all of
    startup_timeout (600 s here); then, once such a POST failed at once, it said only "closed the
    connection during the handshake (-32000: Connection closed)". It names the exchange that broke."""
    feature = 'Feature: resetting\n  Scenario: connect\n    Given the MCP server "hostile" is running\n'
    with _serving(_TwiceSseServer(handler=_ResettingSse)) as base:
        config = f'protocol = "legacy"\nstartup_timeout = 600\n[servers.hostile]\nurl = "{base}/sse"\n'
        run = run_behave(make_project(tmp_path, config, {"r.feature": feature}), "-f", "plain", timeout=300)
    assert run.counts()["error"] == 1, run.output[-3000:]
    said = f"closed the connection during the handshake (the HTTP exchange of the initialize request broke: POST {base}"
    assert said in run.output and "RemoteProtocolError: Server disconnected" in run.output, run.output[-3000:]


class _EndingSse(_TwiceSse):
    """A legacy SSE server whose stream ends (the server going away) when a tools/call asks it to."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if request.get("method") == "tools/call":
            self.server.outbox.put(None)  # the GET stream's loop ends: its connection closes
            return _answer(self, 202, b"Accepted")
        for answer in self._answers(request):
            self.server.outbox.put(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer}).encode())
        return _answer(self, 202, b"Accepted")


def test_a_request_pending_when_the_sse_stream_ends_fails_at_once(tmp_path: Path) -> None:
    """The stream a legacy SSE session reads ends when the server goes away: a request waiting
    on it fails at once ("the connection closed"), not after its timeout (900 s here), with the
    inbox that carries failed POSTs' errors merged into what the session reads."""
    feature = (
        "Feature: ending\n  Scenario: the server goes away mid-call\n"
        '    Given the MCP server "hostile" is running\n' + _echo("end", "Then the tool call fails")
    )
    with _serving(_TwiceSseServer(handler=_EndingSse)) as base:
        config = f'protocol = "legacy"\ntimeout = 900\n[servers.hostile]\nurl = "{base}/sse"\n'
        run = run_behave(make_project(tmp_path, config, {"e.feature": feature}), "-f", "plain", timeout=300)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.failures()


class _AcceptingServer(_RawServer):
    """A Streamable HTTP endpoint, raw, that answers a tools/call POST with 202 Accepted (as
    text/plain "Accepted") and sends the call's answer on its GET stream instead (the HTTP+SSE
    transport's way). `answer_first`: the answer goes out before the 202, which waits until the
    client has read it (the server pings the client right behind it on the same stream and
    waits for the reply); else after it: held until the next call's POST, then followed by a log
    notification the scenario waits for. `accept_initialize`: the handshake gets a 202 too."""

    def __init__(
        self, *, answer_first: bool = False, accept_initialize: bool = False, handler: type[_Accepting] | None = None
    ) -> None:
        super().__init__(handler or _Accepting)
        self.answer_first = answer_first
        self.accept_initialize = accept_initialize
        self.held: list[bytes] = []
        self.pong = threading.Event()
        self.calls = 0

    def push(self, message: dict[str, Any]) -> None:
        self.outbox.put(json.dumps({"jsonrpc": "2.0", **message}).encode())


class _Accepting(http.server.BaseHTTPRequestHandler):
    server: _AcceptingServer

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for message in _stream_messages(self.server):
            self.wfile.write(b"event: message\ndata: " + message + b"\n\n")
            self.wfile.flush()

    def do_DELETE(self) -> None:
        self._json(200, None)

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        method, request_id = request.get("method"), request.get("id")
        if method is None:  # the client's reply to the server's ping
            self.server.pong.set()
            return _answer(self, 202, b"")
        if request_id is None:  # a notification
            return _answer(self, 202, b"")
        if method == "initialize" and self.server.accept_initialize:
            return self._accepted()
        if method == "initialize":
            info = {"name": "accepting", "version": "1"}
            caps = {"tools": {}, "logging": {}}
            result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": caps, "serverInfo": info}
            return self._json(200, {"jsonrpc": "2.0", "id": request_id, "result": result})
        if method == "tools/list":
            tools = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]
            return self._json(200, {"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
        return self._call(request_id, request["params"]["arguments"]["text"])

    def _call(self, request_id: Any, text: str) -> None:
        self.server.calls += 1
        answer = {"id": request_id, "result": {"content": [{"type": "text", "text": text}]}}
        if self.server.answer_first:
            self.server.pong.clear()  # this call's ping, not the last one's
            self.server.push(answer)
            self.server.push({"id": f"is-{request_id}-read", "method": "ping"})
            assert self.server.pong.wait(60), "the client never answered the ping behind the answer"
            return self._accepted()
        if self.server.calls == 1:
            self.server.held.append(json.dumps({"jsonrpc": "2.0", **answer}).encode())
            return self._accepted()
        for held in self.server.held:
            self.server.outbox.put(held)
        self.server.push({"method": "notifications/message", "params": {"level": "info", "data": "sent"}})
        return self._json(200, {"jsonrpc": "2.0", **answer})

    def _accepted(self) -> None:
        self.send_response(202)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "8")
        self.end_headers()
        self.wfile.write(b"Accepted")

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Mcp-Session-Id", "one")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _accepting(base: str) -> str:
    return f'protocol = "legacy"\n[servers.accepting]\nurl = "{base}/mcp"\n'


class _Reconnecting(_Accepting):
    """A Streamable HTTP endpoint whose GET stream asks to be reopened after 1 ms, and ends at once."""

    def do_GET(self) -> None:
        self.server.calls += 1  # GETs, here: this server takes no tool call
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"id: 1\nretry: 1\n\n")
        self.wfile.flush()
        self.close_connection = True


def test_a_stream_that_asks_to_reconnect_at_once_is_not_reopened_in_a_busy_loop(tmp_path: Path) -> None:
    """`retry: 1` on a GET stream that ends at once: the SDK reopened it 1,700 times in 5 s at full
    CPU, and the scenario passed without a word. mcp-bdd lets it wait at least `MIN_RETRY_MS`, and
    the evidence says why. (The bound asserted: hundreds of GETs before, a handful now.)"""
    from mcp_bdd.session._http import MIN_RETRY_MS

    feature = """
Feature: reconnect
  Scenario: a stream that ends at once
    Given the MCP server "accepting" is running
    Then I receive a "tools list changed" notification within 2 seconds
"""
    web = _AcceptingServer(handler=_Reconnecting)
    with _serving(web) as base:
        root = make_project(tmp_path, _accepting(base), {"r.feature": feature})
        out = tmp_path / "doc.html"
        run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain")
    assert run.counts() == {"passed": 0, "failed": 1, "error": 0, "skipped": 0}, run.failures()  # nothing came
    assert 1 <= web.calls <= 30, web.calls
    said = f"the server asked to reconnect its SSE stream after 1 ms; mcp-bdd waits {MIN_RETRY_MS} ms"
    assert said in out.with_suffix(".json").read_text()


def test_a_request_answered_with_202_says_so_and_its_later_answer_is_named(tmp_path: Path) -> None:
    """A Streamable HTTP server that answers a request's POST with 202 Accepted and sends the answer
    on its GET stream (ported from HTTP+SSE). The SDK made up "JSON-RPC error -32600: server
    answered a request with 202 Accepted", shown as the server's error with the tip "the server
    rejected the call", and the answer that came later was "a second answer to one request". Now
    the failure says what the server did and what to do, the transcript keeps what the server sent
    (202, text/plain), and the late answer is named for what it is."""
    feature = """
Feature: accepted
  Scenario: the server answers on its GET stream
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text  |
      | early |
    Then the tool call fails
    When I call the tool "echo" with:
      | text   |
      | second |
    Then the tool call succeeds
    Then I receive a "log message" notification within 60 seconds
"""
    with _serving(_AcceptingServer()) as base:
        root = make_project(tmp_path, _accepting(base), {"a.feature": feature})
        out = tmp_path / "doc.html"
        run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-4000:]
    data = out.with_suffix(".json").read_text()
    said = 'The server \\"accepting\\" answered the tools/call request with HTTP 202 Accepted'
    assert said in data and "must return the result in the POST" in data, data[-4000:]
    # what the server sent: the stand-in answer's 200 and JSON are mcp-bdd's
    assert '"status":202,"content_type":"text/plain"' in data, data[-4000:]
    assert "a second answer" not in data and "server answered a request with 202" not in data, data[-4000:]
    late = "an answer on the GET stream to the tools/call request it had answered with 202 Accepted: "
    assert late in data, data[-4000:]
    quoted = data[data.index(late) : data.index(late) + 300]
    assert "early" in quoted, quoted


def test_an_answer_on_the_get_stream_before_the_202_is_taken_and_the_202_is_evidence() -> None:
    """The other order: the answer came first on the GET stream and the request took it; the 202
    that followed is still recorded, as the fault it is, with the request's own words. Driven
    through a real `Session` rather than behave: the 202's record is made when the client reads it,
    which nothing in a scenario could wait for."""
    from anyio.from_thread import start_blocking_portal

    from mcp_bdd.servers import RemoteServer
    from mcp_bdd.session import Session
    from mcp_bdd.transcript import Transcript

    transcript = Transcript()
    with _serving(_AcceptingServer(answer_first=True)) as base, start_blocking_portal() as portal:
        server = RemoteServer("accepting", "streamable-http", f"{base}/mcp", {})
        session = Session(
            "accepting", server, portal=portal, transcript=transcript, timeout=60, startup_timeout=60, protocol="legacy"
        )
        session.open()
        try:
            outcome = session.call_tool("echo", {"text": "first"})
            assert outcome.ok, outcome.describe()

            def recorded() -> str:
                return json.dumps([item.payload for item in transcript.items if item.method == "transport"])

            _wait_for(lambda: "first, and was taken" in recorded(), 60, "the 202's record")
        finally:
            session.close()
    said = recorded()
    assert "answered the tools/call request with HTTP 202 Accepted" in said, said
    assert "Its answer had come on the GET stream first, and was taken." in said, said
    assert "a second answer" not in said, said


def test_a_202_failure_is_a_protocol_violation_in_the_console(tmp_path: Path) -> None:
    """The step that reads the 202'd call fails as a protocol violation, with mcp-bdd's sentence."""
    feature = """
Feature: accepted
  Scenario: the call is expected to succeed
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text  |
      | first |
    Then the tool call succeeds
"""
    with _serving(_AcceptingServer()) as base:
        run = run_behave(make_project(tmp_path, _accepting(base), {"a.feature": feature}), "-f", "plain")
    assert run.counts()["failed"] == 1, run.output[-4000:]
    assert 'The server "accepting" answered the tools/call request with HTTP 202 Accepted' in run.output, run.output
    assert "Tip: that is how the older HTTP+SSE transport answers" in run.output, run.output
    assert "the exchange broke the protocol" in run.output and "rejected the call" not in run.output, run.output


def test_a_handshake_answered_with_202_says_so_with_one_tip(tmp_path: Path) -> None:
    """`initialize` answered with 202: no GET stream exists yet, and the server plainly answered, so
    neither "on its GET stream" nor "is the server running at that URL?" belongs in the message."""
    feature = """
Feature: accepted
  Scenario: the handshake
    Given the MCP server "accepting" is running
"""
    with _serving(_AcceptingServer(accept_initialize=True)) as base:
        run = run_behave(make_project(tmp_path, _accepting(base), {"a.feature": feature}), "-f", "plain")
    assert run.counts()["error"] == 1, run.output[-4000:]
    said = (
        'broke the protocol during the handshake (The server "accepting" answered the initialize request with HTTP 202'
    )
    assert said in run.output, run.output[-4000:]
    assert run.output.count("Tip:") == 1 and "Tip: that is how the older HTTP+SSE transport" in run.output, run.output
    assert "GET stream" not in run.output and "is the server running" not in run.output, run.output


def test_a_stray_answer_fails_every_call_that_waits_at_once(tmp_path: Path) -> None:
    """Several calls in flight: a stray answer cannot be matched to one of them, so none of them
    waits for an answer that may never come."""
    feature = """
Feature: concurrent
  Scenario: three calls at once
    Given the MCP server "hostile" is running
    When I call the tool "echo" 3 times concurrently with:
      | text |
      | ${i} |
    Then all 3 calls succeed
"""
    output, _data = _stray_answer_run(tmp_path, "--wrong-id", feature)
    assert "Not all 3 calls succeeded (0 of 3 did)" in output, output[-4000:]
    assert output.count("but no request with that id is waiting (waiting: ") >= 3, output[-4000:]


def test_the_stdio_transport_fails_waiting_requests_on_a_stray_answer_and_nothing_else() -> None:
    """The bookkeeping behind the three tests above, case by case: what counts as waiting, what a
    stray answer fails, and what stays an ordinary late answer."""
    import mcp_types as types

    from mcp_bdd.servers._framing import PROTOCOL_MARK, StdoutEvidence, Waiting, decode_line

    def request(request_id: int | str, method: str = "tools/call") -> types.JSONRPCRequest:
        return types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method)

    def cancel(request_id: int) -> types.JSONRPCNotification:
        params = {"requestId": request_id, "reason": "timed out"}
        return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params)

    def failed(items: list[object]) -> list[object]:
        return [
            m.message.id
            for m in items
            if not isinstance(m, Exception)
            and isinstance(m.message, types.JSONRPCError)
            and isinstance(m.message.error.data, dict)
            and m.message.error.data.get("mcp_bdd") == PROTOCOL_MARK
        ]

    evidence, waiting = StdoutEvidence(), Waiting()
    for message in (request("listen-1", "subscriptions/listen"), request(1), request(2), request(3), cancel(3)):
        waiting.sent(message)
    assert waiting.count() == 2  # a listen stream waits for events, a cancelled request for nothing
    # an answer to a waiting request, an echoed id as a string ("2" is 2), and a late answer to a
    # cancelled request pass through untouched, and none of them is evidence
    for line in (b'{"jsonrpc":"2.0","id":1,"result":{}}', b'{"jsonrpc":"2.0","id":3,"result":{}}'):
        [message] = decode_line(line, evidence, waiting)
        assert not isinstance(message, Exception) and not failed([message])
    assert waiting.count() == 1 and evidence.bad_lines == 0
    # a second answer to request 1 is not taken for a stray: it fails nothing, and it is evidence
    out = decode_line(b'{"jsonrpc":"2.0","id":1,"result":{}}', evidence, waiting)
    assert [type(m) for m in out] == [ValueError] and "a second answer to one request" in str(out[0])
    assert evidence.bad_lines == 1 and "answered one request twice" in evidence.describe()
    # a stray: quoted as evidence first (the transcript records it), then every waiting request fails
    waiting.sent(request(4))
    out = decode_line(b'{"jsonrpc":"2.0","id":999999,"result":{}}', evidence, waiting)
    assert isinstance(out[0], ValueError) and "999999" in str(out[0])
    assert failed(out) == [2, 4] and waiting.count() == 0 and evidence.bad_lines == 2
    # the real answers arriving late are ordinary late answers, not strays that fail request 5
    waiting.sent(request(5))
    assert not failed(decode_line(b'{"jsonrpc":"2.0","id":"2","result":{}}', evidence, waiting))
    assert waiting.count() == 1
    # an error without an id, with the id missing altogether (not JSON-RPC's schema), fails request 5
    out = decode_line(b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}', evidence, waiting)
    assert failed(out) == [5] and "-32600 Invalid Request" in str(out[1].message.error.message)  # type: ignore[union-attr]
    # with nothing waiting a stray is evidence only; the bookkeeping stays bounded
    assert [type(m) for m in decode_line(b'{"jsonrpc":"2.0","id":7,"result":{}}', evidence, waiting)] == [ValueError]
    for i in range(100, 100_000):
        waiting.sent(request(i))
        if i % 2:
            decode_line(b'{"jsonrpc":"2.0","id":%d,"result":{}}' % i, evidence, waiting)
    assert len(waiting._waiting) + len(waiting._settled) <= 2 * 4096


def test_a_second_answer_is_told_from_a_late_one_whatever_came_between() -> None:
    """A cancel that crosses the answer leaves the request answered; a pretty-printed or too long
    answer settles its request too: any answer after those is a second answer (evidence), not a
    late one or a fresh one."""
    import mcp_types as types

    from mcp_bdd.servers._framing import LineTooLong, StdoutEvidence, Waiting, decode_line, too_long

    evidence, waiting = StdoutEvidence(), Waiting()
    for request_id in (1, 2, 3):
        waiting.sent(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call"))
    assert waiting.take(1) == "waiting"
    cancel = {"requestId": 1, "reason": "timed out"}
    waiting.sent(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=cancel))
    assert waiting.take(1) == "repeated"
    for line in (b"{", b'  "jsonrpc": "2.0",', b'  "id": 2,', b'  "result": {}', b"}"):  # pretty-printed
        decode_line(line, evidence, waiting)
    assert waiting.take(2) == "repeated" and waiting.count() == 1
    evidence = StdoutEvidence()
    too_long(
        LineTooLong(b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"aaaa', 64), evidence, waiting
    )
    [again] = too_long(
        LineTooLong(b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"bbbb', 64), evidence, waiting
    )
    assert isinstance(again, ValueError) and "a second answer to one request" in str(again)
    assert waiting.count() == 0 and evidence.kinds == {"line too long": 1, "a second answer to one request": 1}
    assert "max_message_bytes" in evidence.describe()  # the fault that failed a request is what it explains


def test_a_server_that_ignores_eof_and_sigterm_is_named_once_with_what_its_stop_costs(tmp_path: Path) -> None:
    """Each stop of such a server waits out both grace periods (3 s): a suite of them was slow
    for no reason anyone could see. The run now says so, once, with what to change, and the
    teardown evidence of every scenario it slowed says it too."""
    feature = CALL_ECHO + CALL_ECHO.split("Feature: echo\n")[1].replace("one call", "another call")
    root = make_project(tmp_path, hostile("--stubborn"), {"s.feature": feature})
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain")
    assert run.counts()["passed"] == 2, run.failures()
    said = re.findall(r"mcp-bdd: warning: the server \"hostile\" did not exit[^\n]*", run.stderr)
    assert len(said) == 1, run.stderr[-3000:]
    assert "within 1 s of its stdin closing nor within 2 s of SIGTERM: it was killed (SIGKILL)" in said[0]
    assert "make it exit when its stdin closes" in said[0]
    embedded = [
        base64.b64decode(e["data"]).decode()
        for element in json.loads((root / "behave.json").read_text())[0]["elements"]
        for step in element["steps"]
        for e in step.get("embeddings", [])
    ]
    assert sum('"slow stop"' in text for text in embedded) == 2, embedded


def test_pre_started_spares_are_stopped_together_at_the_end_of_the_run(tmp_path: Path) -> None:
    """The end of a run stopped its `prestart` spares one after another: 3 s each for a server that
    ignores EOF and SIGTERM. Their stdins now close together (one after another, the spares' EOFs
    would lie 3 s apart; the bound leaves room for a loaded machine)."""
    log = tmp_path / "eof.log"
    config = hostile("--stubborn", "--eof-log", str(log), extra="prestart = 3\n")
    root = make_project(tmp_path, config, {"s.feature": CALL_ECHO})
    run = run_behave(root)
    assert run.counts()["passed"] == 1, run.failures()
    ends = sorted(float(line.split()[1]) for line in log.read_text().splitlines())
    assert len(ends) == 4, ends  # the scenario's server, then the three spares at the run's end
    spares = ends[1:]
    assert spares[-1] - spares[0] < 2.5, f"the spares' stdins closed {spares[-1] - spares[0]:.1f} s apart"


def _stubborn_process(tmp_path: Path, name: str, *flags: str) -> object:
    from mcp_bdd.servers._process import spawn

    return spawn(
        [sys.executable, HOSTILE, *(flags or ("--stubborn",))],
        env=dict(os.environ),
        cwd=str(tmp_path),
        stderr_path=tmp_path / f"{name}.stderr.log",
        describe=name,
        stdio=True,
    )


def _ignores_sigterm(pid: int) -> bool:
    """Whether the process has set SIGTERM to be ignored yet (the kernel's SigIgn mask)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(re.search(r"^SigIgn:\s*([0-9a-f]+)", status, re.M).group(1), 16)  # type: ignore[union-attr]
    return bool(mask & (1 << (signal.SIGTERM - 1)))


@pytest.mark.usefixtures("own_lifeline")
def test_a_second_stop_of_a_server_waits_for_the_first_and_sees_how_it_ended(tmp_path: Path) -> None:
    """reap_all at exit can meet a session's own close of the same server: the second caller used
    to return at once, while the first was still stopping it (and before it knew the stop was slow)."""
    process: Any = _stubborn_process(tmp_path, "twice")
    _wait_for(lambda: _ignores_sigterm(process.server_pid), 60, "the server ignoring SIGTERM")
    first = threading.Thread(target=process.stop)
    first.start()
    _wait_for(lambda: process.stopped, 30, "the first stop beginning")
    process.stop()  # returns only once the first has finished
    assert process.returncode is not None, "the second stop returned while the server still ran"
    assert process.slow_stop is not None and "it was killed (SIGKILL)" in process.slow_stop
    first.join(timeout=30)


class _Interrupted(BaseException):
    """What this test's own SIGINT handler raises (pytest keeps KeyboardInterrupt to itself)."""


@pytest.mark.usefixtures("own_lifeline")
def test_a_stop_cut_short_by_ctrl_c_still_kills_the_server(tmp_path: Path) -> None:
    """Ctrl-C during a stop's grace periods ends the stop at once, but not before the server is
    killed: it is no longer registered anywhere, and ran on (it ignores EOF and SIGTERM) until the
    test process ended. The server sends the Ctrl-C itself as its stdin closes, so the signal
    lands inside the stop however loaded the machine is."""
    pidfile = tmp_path / "test.pid"
    pidfile.write_text(f"{os.getpid()}\n")
    process: Any = _stubborn_process(tmp_path, "cut", "--stubborn", "--interrupt-on-eof", str(pidfile))
    _wait_for(lambda: _ignores_sigterm(process.server_pid), 60, "the server ignoring SIGTERM")

    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        with pytest.raises(_Interrupted):
            process.stop(close_stdin=process.popen.stdin.close)
    finally:
        signal.signal(signal.SIGINT, previous)
    _wait_for(lambda: not alive(process.server_pid), 30, "the server's death after the interrupted stop")


@pytest.mark.usefixtures("own_lifeline")
def test_stops_that_cannot_have_threads_of_their_own_still_all_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At interpreter shutdown (an atexit close, Python 3.12) no thread can start: the stops then
    run one after another instead of failing the run's end."""
    from mcp_bdd.servers._process import stop_together

    def no_threads(self: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    processes: list[Any] = [_stubborn_process(tmp_path, f"p{i}") for i in range(2)]
    monkeypatch.setattr(threading.Thread, "start", no_threads)
    stop_together([p.stop for p in processes])
    assert all(p.returncode is not None for p in processes)


@pytest.mark.usefixtures("own_lifeline")
def test_a_daemon_is_stopped_with_its_server_even_when_the_server_exits_on_eof_first(tmp_path: Path) -> None:
    """The session's end closes the server's stdin before its stop begins; a server that exits at
    once on EOF was gone by then, and its daemon (adopted by it as a subreaper) went up to init:
    under load, the test of that daemon above failed 1 run in 5. Here the order is forced: the
    transport closes its stdin, the server exits, and only then does its stop begin."""
    from mcp_bdd._process_tree import wait_exit
    from mcp_bdd.servers._framing import StdoutEvidence
    from mcp_bdd.servers._pipes import PipeTransport
    from mcp_bdd.servers._start import _pipes_of

    pidfile = tmp_path / "daemon.pid"
    process: Any = _stubborn_process(tmp_path, "eof", "--daemon", str(pidfile))
    _wait_for(lambda: pidfile.exists() and pidfile.read_text(), 60, "the daemon writing its pid")
    daemon = int(pidfile.read_text())
    write_fd, read_fd = _pipes_of(process)
    transport = PipeTransport(write_fd, read_fd, StdoutEvidence(), 1 << 20, process)
    transport.close_stdin()  # as the session's end does
    assert wait_exit(process.pid, 60), "the server did not exit on EOF"
    process.stop(close_stdin=transport.close_stdin)
    transport.close()
    try:
        gone = psutil.Process(daemon).wait(timeout=30) is not None or True
    except psutil.NoSuchProcess:
        gone = True
    except psutil.TimeoutExpired:
        os.kill(daemon, signal.SIGKILL)  # the census cannot see it (no environment): clean up here
        gone = False
    assert gone, f"the daemon {daemon} outlived its server's stop"


def test_mcp_bdd_run_shows_its_workers_warnings_on_a_leg_that_passes(tmp_path: Path) -> None:
    """A worker's warnings went to its job log, which `mcp-bdd run` shows only when a leg fails;
    a slow stop slows legs that pass. They are now in the leg's summary, once each."""

    root = make_project(tmp_path, hostile("--stubborn"), {"s.feature": CALL_ECHO})
    run = run_captured(
        [sys.executable, "-m", "mcp_bdd.cli", "run", "--transport", "stdio", "features/"], cwd=root, timeout=300
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    said = re.findall(r'warning: the server "hostile" did not exit[^\n]*', run.stdout + run.stderr)
    assert len(said) == 1, run.stdout[-3000:] + run.stderr[-3000:]


def test_the_answer_watch_tells_a_second_answer_from_a_request_sent_again_with_its_id() -> None:
    """`_sdk.watch_repeated_answers` on the SDK's real dispatcher, over memory streams: a request
    sent again with an id of the caller's choosing that was answered before gets its own answer
    (not reported, not swallowed); a second answer to it is reported and the first stands, whether
    it comes after the request returned or right behind the first; an answer to a request that
    timed out here unanswered is late, not repeated."""
    from types import SimpleNamespace

    import anyio
    import mcp_types
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp.shared.message import SessionMessage

    from mcp_bdd._sdk import watch_repeated_answers

    repeated: list[Any] = []

    async def main() -> list[Any]:
        to_client, client_reads = anyio.create_memory_object_stream[Any](10)
        client_writes, from_client = anyio.create_memory_object_stream[Any](10)
        dispatcher = JSONRPCDispatcher(client_reads, client_writes)
        reported = anyio.Event()

        def on_repeated(request_id: Any, outcome: Any) -> None:
            repeated.append((request_id, outcome))
            reported.set()

        watch_repeated_answers(SimpleNamespace(_dispatcher=dispatcher), on_repeated)

        async def answer(result: dict[str, Any], request_id: int) -> None:
            while getattr((sent := await from_client.receive()).message, "id", None) != request_id:
                pass  # what a timed-out request left: itself, and the SDK's courtesy cancel
            await to_client.send(
                SessionMessage(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=sent.message.id, result=result))
            )

        async def ignore(*args: Any) -> Any:
            return {}

        def response(request_id: Any, n: int) -> SessionMessage:
            return SessionMessage(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={"n": n}))

        async def answer_twice() -> None:  # both in the stream before the waiter can run
            sent = await from_client.receive()
            to_client.send_nowait(response(sent.message.id, 4))
            to_client.send_nowait(response(sent.message.id, 5))

        results = []
        async with anyio.create_task_group() as tg:
            await tg.start(dispatcher.run, ignore, ignore)
            for n in (1, 2):
                tg.start_soon(answer, {"n": n}, 7)
                with anyio.fail_after(30):
                    results.append(await dispatcher.send_raw_request("ping", None, {"request_id": 7}))
            await to_client.send(response(7, 3))
            with anyio.fail_after(30):
                await reported.wait()
            tg.start_soon(answer_twice)
            with anyio.fail_after(30):
                results.append(await dispatcher.send_raw_request("ping", None, {"request_id": 8}))
            with contextlib.suppress(Exception):  # the SDK's own timeout error
                await dispatcher.send_raw_request("ping", None, {"request_id": 9, "timeout": 0.01})
            await to_client.send(response(9, 6))  # late: read in order, before the next answer
            tg.start_soon(answer, {"n": 7}, 10)
            with anyio.fail_after(30):
                results.append(await dispatcher.send_raw_request("ping", None, {"request_id": 10}))
            tg.cancel_scope.cancel()
        return results

    assert anyio.run(main) == [{"n": 1}, {"n": 2}, {"n": 4}, {"n": 7}]
    assert repeated == [(7, {"n": 3}), (8, {"n": 5})]


EXITING_APP = """
import os
import sys
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer

if os.environ.get("EXIT_AT_IMPORT"):
    os._exit(1) if os.environ["EXIT_AT_IMPORT"] == "hard" else sys.exit(1)


def create_server():
    server = MCPServer("exiter")

    @server.tool()
    def leave(code: int) -> str:
        \"\"\"A synchronous tool (it runs in a worker thread) that exits.\"\"\"
        sys.exit(code)

    @server.tool()
    async def leave_now() -> str:
        \"\"\"An async tool (it runs in the run's event loop) that exits with a message.\"\"\"
        sys.exit("cannot go on")

    @server.tool()
    def ok() -> str:
        \"\"\"Answers.\"\"\"
        return "fine"

    return server


def needs_a_key():
    if not os.environ.get("WEATHER_KEY"):
        sys.exit("WEATHER_KEY is not set")
    return create_server()


@asynccontextmanager
async def no_database(server):
    sys.exit("no database")
    yield


def with_a_lifespan():
    return MCPServer("lifespan", lifespan=no_database)


class Abort(BaseException):
    \"\"\"A BaseException of a server's own (not an Exception: asyncio keeps it in the task).\"\"\"


def with_base_exceptions():
    server = MCPServer("base")

    @server.tool()
    async def abort() -> str:
        \"\"\"An async tool that raises a BaseException of its own.\"\"\"
        raise Abort("giving up")

    @server.tool()
    async def generator_exit() -> str:
        \"\"\"An async tool that raises GeneratorExit.\"\"\"
        raise GeneratorExit

    @server.tool()
    async def cancelled() -> str:
        \"\"\"An async tool that lets a CancelledError of its own escape.\"\"\"
        import asyncio

        raise asyncio.CancelledError

    return server
"""

EXITS_FEATURE = """
Feature: in-process servers that exit
  Scenario: a synchronous tool exits
    Given the MCP server "app" is running
    When I call the tool "leave" with:
      | code |
      | 2    |
    Then the tool call fails
    When I call the tool "ok"
    Then the tool call succeeds

  Scenario: an async tool exits
    Given the MCP server "app" is running
    When I call the tool "leave_now"
    Then the tool call succeeds

  Scenario: the factory exits
    Given the MCP server "factory" is running

  Scenario: the lifespan exits
    Given the MCP server "lifespan" is running

  Scenario: a tool raises a BaseException of its own
    Given the MCP server "base" is running
    When I call the tool "abort"
    Then the tool call succeeds

  Scenario: a tool raises GeneratorExit
    Given the MCP server "base" is running
    When I call the tool "generator_exit"
    Then the tool call fails

  Scenario: a tool raises CancelledError
    Given the MCP server "base" is running
    When I call the tool "cancelled"
    Then the tool call succeeds

  Scenario: a fresh server for the next scenario
    Given the MCP server "app" is running
    When I call the tool "ok"
    Then the tool call succeeds
"""


def _run_app(tmp_path: Path, config: str, features: dict[str, str], files: dict[str, str], *args: str) -> Run:
    """behave on a project in `tmp_path` with `files` of its own beside the configuration (the app
    modules its servers name, a steps module at "steps/...")."""
    root = make_project(tmp_path, config, features)
    for name, text in files.items():
        (root / name).write_text(text)
    return run_behave(root, *args)


def test_an_in_process_server_that_exits_ends_itself_not_the_run(tmp_path: Path) -> None:
    """`sys.exit()` in an in-process server's tool, factory or lifespan ended behave on the spot
    (status 2, no summary, no report, not a word: behave's capture swallowed the message), since
    asyncio lets SystemExit out of the run's event loop. Now the server ends as a process would
    (its session is lost: later requests fail), the step says what exited and where, and the next
    scenario gets a fresh server. So for any other BaseException that is no Exception (a class of
    the server's own, GeneratorExit): it went from the task to behave's thread, and behave (which
    catches Exception) ended the run without a summary, a report or a word."""
    config = """
        transport = "in-memory"
        [servers.app]
        app = "exiting_app:create_server"
        [servers.base]
        app = "exiting_app:with_base_exceptions"
        [servers.factory]
        app = "exiting_app:needs_a_key"
        [servers.lifespan]
        app = "exiting_app:with_a_lifespan"
    """
    run = _run_app(tmp_path, config, {"exits.feature": EXITS_FEATURE}, {"exiting_app.py": EXITING_APP})
    assert run.counts() == {"passed": 2, "failed": 4, "error": 2, "skipped": 0}, run.failures()
    # a CancelledError no one asked for was a Python traceback through the hop
    assert "the server's code raised CancelledError while no one had cancelled the request" in run.stdout, run.stdout
    out = run.stdout
    assert "Exit code: 1: its code raised Abort (exiting_app.py:59, in abort)" in out, out
    # the call that exited "fails" (its connection is gone, as over stdio); the next request finds it gone
    assert "the server had exited (during an earlier request): nothing answers" in out, run.failures()
    assert "Exit code: 2: its code called sys.exit(2) (exiting_app.py:18, in leave)" in out, out
    assert "its code called sys.exit('cannot go on') (exiting_app.py:23, in leave_now)" in out, out
    assert "a tool that fails should raise an error (or return isError) instead" in out, out
    assert (
        'The in-process server "factory" (app = "exiting_app:needs_a_key") exited as it started: its factory '
        "called sys.exit(): WEATHER_KEY is not set (exiting_app.py:35, in needs_a_key)" in out
    ), out
    assert "give it what it needs in `env` of [servers.factory]" in out, out
    assert (
        'The MCP server "lifespan" exited as it started: its code called '
        "sys.exit('no database') (exiting_app.py:41, in no_database)" in out
    ), out
    assert "Traceback" not in run.output, run.output


TEARDOWN_APP = """
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer


@asynccontextmanager
async def lifespan(server):
    yield {}
    raise RuntimeError("could not flush the audit log")


def create_server():
    server = MCPServer("teardown", lifespan=lifespan)

    @server.tool()
    def ok() -> str:
        \"\"\"Answers.\"\"\"
        return "fine"

    return server
"""

TEARDOWN_FAKES = """
from mcp_bdd.fakes import fake


@fake("fragile")
def fragile(ctx):
    yield {"url": "queue://fragile"}
    raise RuntimeError("broker gone")


@fake("greedy")
def greedy(ctx):
    yield {"url": "queue://a"}
    yield {"url": "queue://b"}
"""


def test_a_failing_teardown_is_reported_not_only_under_debug(tmp_path: Path) -> None:
    """A fake whose cleanup raised, one that yielded twice, and a server whose lifespan's teardown
    raised were said only with MCP_BDD_DEBUG=1, to a stream behave captures: a run with leaking
    cleanups read as clean (docs/fakes.md promised "a failing cleanup is reported"). Each is now a
    warning on stderr naming the scenario, and in the report's teardown evidence; the scenario's
    verdict stays its steps' own, and every other cleanup still ran."""
    feature = """
Feature: teardown
  Scenario: cleanups that fail
    Given the MCP server "app" is running
    When I call the tool "ok"
    Then the tool call succeeds
"""
    config = (
        'transport = "in-memory"\n[servers.app]\napp = "teardown_app:create_server"\n'
        'env = { QUEUE = "${fake.fragile.url}", OTHER = "${fake.greedy.url}" }\n'
    )
    files = {"teardown_app.py": TEARDOWN_APP, "steps/fakes.py": TEARDOWN_FAKES}
    run = _run_app(
        tmp_path, config, {"t.feature": feature}, files, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "report.html"
    )
    root = tmp_path
    assert run.returncode == 0 and run.counts()["passed"] == 1, run.output[-3000:]
    said = [line for line in run.stderr.splitlines() if "teardown of features/t.feature:3" in line]
    assert len(said) == 3, run.stderr
    assert (
        'closing the session with "app": RuntimeError: could not flush the audit log (teardown_app.py:10' in (said[0])
    ), said
    assert 'fake "greedy" ("greedy" fake): UsageError: The fake "greedy" yielded more than once' in said[1], said
    assert 'fake "fragile" ("fragile" fake): RuntimeError: broker gone' in said[2], said
    report = (root / "report.json").read_text()
    assert "broker gone" in report and "could not flush the audit log" in report and "yielded more than once" in report


STALLING_FAKES = """
import socket
import time
from pathlib import Path

from mcp_bdd.fakes import fake


@fake("stuck")
def stuck(ctx):
    a, b = socket.socketpair()
    try:
        while True:
            try:
                b.recv(1)  # a broker that never answers
            except Exception:
                continue  # a retry loop of its own, which must not swallow the limit
    finally:
        a.close()
        b.close()
        Path("stuck-cleaned-up").write_text("yes")
    yield {"url": "queue://never"}


@fake("sticky")
def sticky(ctx):
    yield {"url": "queue://sticky"}
    time.sleep(600)  # a cleanup that waits on a process that never stops
"""


def test_a_user_fake_that_blocks_in_setup_or_cleanup_does_not_hang_the_run(tmp_path: Path) -> None:
    """A `@fake` whose setup waited on a broker that never answered, or whose cleanup waited on a
    process that never stopped, hung the whole behave run without a word. Its setup and its cleanup
    now each get startup_timeout: a stalled setup is the scenario's start failure, naming the fake
    and the line it waited at (its own `finally` still runs); a stalled cleanup is a teardown warning,
    and the run goes on."""
    feature = """
Feature: stalling fakes
  Scenario: a setup that never ends
    Given the MCP server "a" is running

  Scenario: a cleanup that never ends
    Given the MCP server "b" is running
    When I call the tool "ok"
    Then the tool call succeeds
"""
    config = (
        'transport = "in-memory"\nstartup_timeout = 4\n'
        '[servers.a]\napp = "teardown_app:create_server"\nenv = { QUEUE = "${fake.stuck.url}" }\n'
        '[servers.b]\napp = "teardown_app:create_server"\nenv = { QUEUE = "${fake.sticky.url}" }\n'
    )
    files = {"teardown_app.py": TEARDOWN_APP, "steps/fakes.py": STALLING_FAKES}
    started = time.monotonic()
    run = _run_app(tmp_path, config, {"s.feature": feature}, files)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 1, "skipped": 0}, run.output[-3000:]
    said = 'The fake "stuck" (stuck) could not be set up: its setup did not finish within 4 s (it was at '
    lines = STALLING_FAKES.split("\n")
    recv, sleep = (next(i + 1 for i, line in enumerate(lines) if text in line) for text in ("recv(1)", "sleep(600)"))
    assert said in run.output and f"fakes.py:{recv}, in stuck)" in run.output, run.output[-3000:]
    assert "raise startup_timeout if a setup that long is expected" in run.output, run.output[-3000:]
    assert (tmp_path / "stuck-cleaned-up").read_text() == "yes"
    warned = [line for line in run.stderr.splitlines() if 'fake "sticky"' in line]
    assert warned and "its cleanup did not finish within 4 s (it was at " in warned[0], run.stderr
    assert f"fakes.py:{sleep}, in sticky)" in warned[0], warned
    assert time.monotonic() - started < 200, "the run waited on a fake far past its limit"


def test_a_teardown_that_times_out_is_said_as_its_failure_not_as_a_session_that_did_not_close() -> None:
    """A lifespan whose teardown ends in a TimeoutError of its own (an anyio.fail_after in it) is a
    failing teardown, said as any other; only a session whose task is still running when the wait
    ends "did not close"."""
    from contextlib import asynccontextmanager

    import anyio
    from anyio.from_thread import start_blocking_portal
    from mcp.server.mcpserver import MCPServer

    from mcp_bdd.servers import InMemoryServer
    from mcp_bdd.session import Session
    from mcp_bdd.transcript import Transcript

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> Any:
        yield {}
        with anyio.fail_after(0.01):
            await anyio.sleep(5)

    server = InMemoryServer("app", MCPServer("app", lifespan=lifespan), "app")
    with start_blocking_portal() as portal:
        session = Session(
            "app", server, portal=portal, transcript=Transcript(), timeout=5, startup_timeout=5, protocol="auto"
        )
        session.open()
        problems = session.close()
    assert len(problems) == 1 and problems[0].startswith('closing the session with "app": TimeoutError'), problems


SLOW_FACTORY = """
import time

from mcp.server.mcpserver import MCPServer


def create_server():
    time.sleep(2)  # a connection made at start, to something that does not answer
    return MCPServer("slow")
"""


def test_an_in_process_factory_slower_than_startup_timeout_fails_its_start(tmp_path: Path) -> None:
    """A factory that blocked (30 s, with startup_timeout = 3) made the server step wait it out and
    then *pass*: in-process nothing can interrupt it, and nothing held it to startup_timeout. It
    still cannot be interrupted, but the start fails, saying so and what to do."""
    feature = """
Feature: slow
  Scenario: a factory that blocks
    Given the MCP server "app" is running
"""
    config = 'transport = "in-memory"\nstartup_timeout = 1\n[servers.app]\napp = "slow_factory:create_server"\n'
    run = _run_app(tmp_path, config, {"s.feature": feature}, {"slow_factory.py": SLOW_FACTORY})
    assert run.counts() == {"passed": 0, "failed": 0, "error": 1, "skipped": 0}, run.failures()
    assert 'The factory of app = "slow_factory:create_server" took 2.' in run.stdout, run.stdout
    assert "past startup_timeout = 1 s" in run.stdout and "-D transport=stdio" in run.stdout, run.stdout


WANDERING_APP = """
import os

from mcp.server.mcpserver import MCPServer


def create_server():
    server = MCPServer("wanderer")

    @server.tool()
    def wander() -> str:
        \"\"\"Changes the process's working directory, as careless in-process code may.\"\"\"
        os.chdir(os.environ["WANDER_TO"])
        return "moved"

    return server
"""


def test_an_in_process_server_that_changes_directory_does_not_move_the_reports(tmp_path: Path) -> None:
    """The reports' relative paths were resolved when they were written, at the end of the run: an
    in-process tool's `os.chdir` sent the living documentation, its JSON, JUnit and the history to
    wherever that tool went (`/reports/` for a `chdir("/")`). They go where the run started."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    feature = """
Feature: wander
  Scenario: a tool moves the working directory
    Given the MCP server "app" is running
    When I call the tool "wander"
    Then the tool call succeeds
"""
    config = f'transport = "in-memory"\n[servers.app]\napp = "wandering_app:create_server"\nenv = {{ WANDER_TO = "{elsewhere}" }}\n'
    root = make_project(tmp_path / "project", config, {"w.feature": feature})
    (root / "wandering_app.py").write_text(WANDERING_APP)
    env = {**behave_env(), "WANDER_TO": str(elsewhere)}  # the tool runs in behave's own process
    argv = [sys.executable, "-m", "behave", "--no-color", "-f", "plain", "-f", "mcp_bdd.report:LivingDocFormatter", "-D",
            "mcp_bdd.report=reports/doc.html", "-f", "mcp_bdd.report:JUnitFormatter", "-o", "reports/junit.xml",
            "-D", "mcp_bdd.history=reports/history", "features/"]  # fmt: skip
    run = run_captured(argv, cwd=root, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    written = sorted(str(p.relative_to(root)) for p in (root / "reports").rglob("*") if p.is_file())
    assert {"reports/doc.html", "reports/doc.json", "reports/junit.xml"} <= set(written), written
    assert any(p.startswith("reports/history/") for p in written), written
    assert not any(elsewhere.rglob("*")), sorted(elsewhere.rglob("*"))


@pytest.mark.parametrize(("transport", "how"), [("in-memory", "1"), ("stdio", "1"), ("stdio", "hard")])
def test_a_server_that_exits_at_import_fails_its_start(transport: str, how: str, tmp_path: Path) -> None:
    """A module that exits at import (a check of its settings at the top) ended behave with status 1
    in-process, without a word; over stdio the pre-imported process said "failed
    (ConnectionResetError); exit code None" (its exit status was read before it existed). A
    `sys.exit` there no longer ends the pre-imported process (the server's `env` may be what the
    module misses): the forked server exits as it imports the module again, and says where; an
    `os._exit` still ends it."""
    feature = """
Feature: import
  Scenario: the module exits
    Given the MCP server "app" is running
"""
    config = f'transport = "{transport}"\n[servers.app]\napp = "exiting_app:create_server"\n'
    root = make_project(tmp_path, config, {"i.feature": feature})
    (root / "exiting_app.py").write_text(EXITING_APP)
    env = {**behave_env(), "EXIT_AT_IMPORT": how}
    run = run_captured([sys.executable, "-m", "behave", "--no-color", "features/"], cwd=root, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    expected = {
        ("in-memory", "1"): 'The in-process server "app" (app = "exiting_app:create_server") exited as it started: '
        "importing it called sys.exit() with status 1 (exiting_app.py:9, in <module>)",
        ("stdio", "1"): "SystemExit: 1 (exiting_app.py:9, in <module>)",
        ("stdio", "hard"): "The pre-imported server process for exiting_app:create_server exited with status 1 before "
        "it could start a server",
    }[transport, how]
    assert expected in run.stdout, run.stdout + run.stderr
    assert "0 scenarios passed, 0 failed, 1 error" in run.stdout, run.stdout


CONFIGURED_AT_IMPORT_APP = """
import os
import sys

from mcp.server.mcpserver import MCPServer

if "{check}" == "exit" and not os.environ.get("API_KEY"):
    sys.exit("API_KEY is not set")
API_KEY = os.environ["API_KEY"]


def create_server():
    server = MCPServer("configured")

    @server.tool()
    def key() -> str:
        return API_KEY

    return server
"""

ONE_AT_A_TIME_APP = """
import fcntl
import http.server
import socket
import threading

from mcp.server.mcpserver import MCPServer

if "{hold}" == "port":  # a fixed port, bound at import (a callback listener)
    LISTENER = socket.socket()
    LISTENER.bind(("127.0.0.1", {port}))
    LISTENER.listen()
elif "{hold}" == "served":  # and served by a thread (a metrics endpoint)
    METRICS = http.server.ThreadingHTTPServer(("127.0.0.1", {port}), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=METRICS.serve_forever, daemon=True).start()
elif "{hold}" == "udp":  # a fixed UDP port, bound at import (a statsd-like receiver)
    RECEIVER = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    RECEIVER.bind(("127.0.0.1", {port}))
elif "{hold}" == "sqlite":  # a database in WAL mode, opened at import: its locks are byte ranges, its own
    import sqlite3

    DB = sqlite3.connect("app.db", isolation_level=None, check_same_thread=False)
    DB.execute("PRAGMA journal_mode=WAL")
    DB.execute("CREATE TABLE IF NOT EXISTS hits (n INTEGER)")
    DB.execute("SELECT count(*) FROM hits").fetchone()
else:  # one copy at a time, by a lock file taken at import (and waited for)
    LOCK = open("app.lock", "w")
    fcntl.flock(LOCK, fcntl.LOCK_EX)


def create_server():
    server = MCPServer("holder")

    @server.tool()
    def ping() -> str:
        if "{hold}" == "sqlite":
            DB.execute("INSERT INTO hits VALUES (1)")  # "database is locked" when its locks were taken from it
        return "pong"

    return server
"""

HOLDS = ("port", "served", "lock", "udp", "sqlite")
CHECKS = ("exit", "key")

#: two scenarios on one server: the second one's server is forked after the first one's stopped
TWO_SCENARIOS = """
Feature: {name}
  Scenario: one
    Given the MCP server "{name}" is running
    When I call the tool "{tool}"
    Then {then}

  Scenario: two
    Given the MCP server "{name}" is running
    When I call the tool "{tool}"
    Then {then}
"""


@pytest.fixture(scope="module", params=["stdio", "streamable-http"])
def import_holds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """Every module of the two tests below, each as a server of its own, in one run per transport."""
    from mcp_bdd._net import free_port

    transport: str = request.param
    root = tmp_path_factory.mktemp(f"import-holds-{transport}")
    config = f'transport = "{transport}"\n'
    features: dict[str, str] = {}
    for hold in HOLDS:
        config += f'[servers.hold-{hold}]\napp = "hold_{hold}:create_server"\n'
        features[f"hold-{hold}.feature"] = TWO_SCENARIOS.format(
            name=f"hold-{hold}", tool="ping", then="the tool call succeeds"
        )
    for check in CHECKS:
        config += f'[servers.check-{check}]\napp = "check_{check}:create_server"\nenv = {{ API_KEY = "k-1" }}\n'
        features[f"check-{check}.feature"] = TWO_SCENARIOS.format(
            name=f"check-{check}", tool="key", then='the result text is "k-1"'
        )
    root = make_project(root, config, features)
    for hold in HOLDS:
        (root / f"hold_{hold}.py").write_text(ONE_AT_A_TIME_APP.format(hold=hold, port=free_port()))
    for check in CHECKS:
        (root / f"check_{check}.py").write_text(CONFIGURED_AT_IMPORT_APP.replace("{check}", check))
    env = behave_env()
    env.pop("API_KEY", None)  # the pre-imported process imports the module without the server's `env`
    return shared_run(root, env)


@pytest.mark.parametrize("check", CHECKS)
def test_a_module_that_needs_the_servers_env_at_import_starts_from_the_pool(
    check: str, import_holds: SharedRun
) -> None:
    """A module that reads a setting the server's `env` gives it at import (`os.environ["API_KEY"]`,
    or `sys.exit("API_KEY is not set")`) failed every scenario with the pool, the default: the
    pre-imported process imports the app with behave's environment, without the server's `env`,
    and its failure was "exited with status 1 before it could start a server: the app probably
    cannot be imported". With pool = false it passed. Each forked server imports the module again
    with its own environment: the pre-imported process's failure is no reason to fail it."""
    assert import_holds.statuses(f"check-{check}") == ["passed", "passed"], import_holds.run.failures()


@pytest.mark.parametrize("hold", HOLDS)
def test_what_a_module_takes_at_import_is_not_held_by_the_pool(hold: str, import_holds: SharedRun) -> None:
    """A module that binds a fixed port or takes a lock file at import runs one server at a time:
    cold (pool = false) each scenario's server took it and its stop gave it back. With the pool,
    the pre-imported process took it as it imported the app and kept it for the whole run, so
    every forked server, which imports the module again, failed: "Address already in use", or
    (the lock) a silent wait until startup_timeout, "Its stderr was empty", scenario after
    scenario. The pre-imported process lets go of both once it has imported the app (and a thread
    of its own that served the port waits on a stand-in, not on the port); a UDP port too. A
    database's own byte-range locks (SQLite in WAL mode) are not a lock file's, and stay: taken
    away, every pooled write said "database is locked"."""
    assert import_holds.statuses(f"hold-{hold}") == ["passed", "passed"], import_holds.run.failures()


def test_a_tool_whose_schema_names_no_type_is_called_with_text_and_described_plainly(tmp_path: Path) -> None:
    """Properties whose schema is `true` (valid JSON Schema), `false` or `{"type": 42}` crashed the
    call step and "argument ... is of type" with an AttributeError / TypeError traceback from
    mcp-bdd's code. Now such cells go as text (the server decides), and the type step says the
    schema names no type."""
    feature = """
Feature: loose schemas
  Scenario: call it
    Given the MCP server "hostile" is running
    When I call the tool "loose" with:
      | anything | count |
      | 5        | 7     |
    Then the tool call succeeds
    And the result text is "{\\"anything\\": \\"5\\", \\"count\\": \\"7\\"}"

  Scenario: its argument's type
    Given the MCP server "hostile" is running
    Then the tool "loose" argument "count" is of type "integer"
"""
    root = make_project(tmp_path, hostile("--loose-schema"), {"l.feature": feature})
    run = run_behave(root)
    assert run.counts() == {"passed": 1, "failed": 1, "error": 0, "skipped": 0}, run.failures()
    assert 'The argument "count" of "loose" names no JSON type in its schema' in run.stdout, run.failures()
    assert "Traceback" not in run.output, run.output


class _NoAnswer(_Accepting):
    """A Streamable HTTP endpoint whose tools/call POST gets, by the text it is given: `html` a
    web page's content type (around a valid JSON-RPC answer), `crash` HTTP 500 in plain text,
    `error` HTTP 400 with a JSON-RPC error in the body (a server's own answer, at an HTTP error
    status), `moved` a 307 redirect to another origin, `gone` a 404 for the session, `garbled` a
    status line that is not HTTP, `slash` a 307 to /mcp/ on the same origin (a trailing-slash
    redirect, which the SDK follows), where it answers; and as `application/json`, `empty` no body,
    `batch` the answer in an array, `null` a null result, `nan` a result holding NaN; `loop` a 307
    back to the same URL; and as an event stream, `event` one message that is not JSON, `nanevent`
    one answer holding Infinity (what Python's json.dumps writes for float("nan") and float("inf"))."""

    def _call(self, request_id: Any, text: str) -> None:
        answer = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}
        if text == "slash" and self.path == "/mcp/":
            return self._json(200, answer)
        if text == "error":
            return self._json(400, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "no"}})
        if text == "garbled":
            self.wfile.write(b"HTTP/1.1 abc OK\r\n\r\n")
            self.close_connection = True
            return None
        status, kind, body, extra = {
            "html": (200, "text/html", json.dumps(answer).encode(), {}),
            "crash": (500, "text/plain", b"Internal Server Error: the database is down", {}),
            "moved": (307, "text/plain", b"", {"Location": "http://127.0.0.2:9/mcp"}),
            "slash": (307, "text/plain", b"", {"Location": "/mcp/"}),
            "gone": (404, "text/plain", b"Not Found", {}),
            "loop": (307, "text/plain", b"", {"Location": self.path}),
            "event": (200, "text/event-stream", b"event: message\ndata: {not json\n\n", {}),
            "empty": (200, "application/json", b"", {}),
            "batch": (200, "application/json", json.dumps([answer]).encode(), {}),
            "null": (200, "application/json", json.dumps({**answer, "result": None}).encode(), {}),
            "nan": (
                200,
                "application/json",
                json.dumps({**answer, "result": {**_RESULT, "x": float("nan")}}).encode(),
                {},
            ),
            "nanevent": (200, "text/event-stream", _event({**answer, "result": {**_RESULT, "x": float("inf")}}), {}),
        }[text]
        return _answer(self, status, body, kind, extra)


_RESULT = {"content": [{"type": "text", "text": "n"}]}


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


class _Refusing(_Accepting):
    """A Streamable HTTP endpoint, raw, that lets a client in and list its one read-only tool, and
    refuses every other request's POST, as a token without the scope it needs gets: `forbidden`
    (403 insufficient_scope, a JSON body of its own, the default) or `locked` (401 invalid_token,
    no body) by the `text` argument of the call."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length))
        method, request_id = request.get("method"), request.get("id")
        if request_id is None or method == "initialize":
            return self._json(200, {"jsonrpc": "2.0", "id": request_id, "result": _INITIALIZED}) if method else None
        if method == "tools/list":
            return self._json(200, {"jsonrpc": "2.0", "id": request_id, "result": {"tools": [_ECHO_TOOL]}})
        locked = ((request.get("params") or {}).get("arguments") or {}).get("text") == "locked"
        challenge = (
            'Bearer error="invalid_token"' if locked else 'Bearer error="insufficient_scope", scope="tools:write"'
        )
        body = b"" if locked else b'{"detail": "you don\'t have the scope tools:write"}'
        return _answer(self, 401 if locked else 403, body, "application/json", {"WWW-Authenticate": challenge})


_INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "resources": {}},
    "serverInfo": {"name": "r", "version": "1"},
}
_ECHO_TOOL = {
    "name": "echo",
    "description": "Echoes the text it is given, for the refusal tests.",
    "annotations": {"readOnlyHint": True},
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}

REFUSED_FEATURE = """
Feature: refused
  Scenario: a code the server never sent
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text      |
      | forbidden |
    Then the request is rejected with error code -32603

  Scenario: a refused call fails, with what the server sent
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text      |
      | forbidden |
    Then the tool call fails
    And the tool call fails with an error mentioning "don't have the scope tools:write"
    And the request is refused for insufficient scope
    And the last HTTP response has status 403
    And the last HTTP response has the header "WWW-Authenticate" containing "insufficient_scope"
    And the last HTTP response has the header "Content-Type" containing "application/json"

  Scenario: mcp-bdd's own words are not the server's error
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text      |
      | forbidden |
    Then the tool call fails with an error mentioning "a scope, a role"

  Scenario: a refused read, checked as a refusal
    Given the MCP server "accepting" is running
    When I read the resource "shop://orders"
    Then the request is refused for insufficient scope

  Scenario: a call that had to succeed
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text   |
      | locked |
    Then the tool call succeeds
  Scenario: a tool the token may not even list
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text      |
      | forbidden |
    And I call the tool "delete_everything"
    Then the tool call succeeds
"""


def test_a_request_refused_with_401_or_403_is_a_refusal_not_a_made_up_error(tmp_path: Path) -> None:
    """A request's POST refused with 401 or 403 once the session was open (a token without the
    scope a tool needs, or one that expired) got the SDK's made-up "-32603 Server returned an
    error response": "Then the request is rejected with error code -32603" passed for a code the
    server never sent. Now it is a refusal: the error-text steps match what the server sent (its
    status, challenge and body) and never mcp-bdd's tip, the auth steps read the server's own
    headers, and a call that had to succeed is filed as "refused" with what to do."""
    out = tmp_path / "doc.html"
    with _serving(_AcceptingServer(handler=_Refusing)) as base:
        root = make_project(tmp_path, _accepting(base), {"r.feature": REFUSED_FEATURE})
        run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain")
    assert run.counts() == {"passed": 2, "failed": 4, "error": 0, "skipped": 0}, run.failures()
    assert "the server has no tool" not in run.output, run.failures()  # refused, not missing
    said = "tools/call was refused by the server: HTTP "
    assert said + '403 (Forbidden); WWW-Authenticate: Bearer error="insufficient_scope"' in run.output, run.failures()
    assert "the server sent no JSON-RPC error: it refused the request at the HTTP level" in run.output, run.failures()
    assert said + '401 (Unauthorized); WWW-Authenticate: Bearer error="invalid_token"' in run.output, run.failures()
    # whole, not read as a secret by the masking ("credentials: give" was "credentials: ****")
    assert 'Give them in `headers` of its configuration: an "Authorization" header with "Bearer ${env.' in run.output
    assert "Server returned an error response" not in run.output, run.output
    data = out.with_suffix(".json").read_text()
    assert data.count('"error_kind":"refused"') == 2, data[-4000:]  # the calls that had to succeed


def test_a_server_cannot_pass_its_own_error_off_as_a_refusal() -> None:
    """The stand-in error's mark is plain text any server can write into an error of its own (over
    stdio too): taken at its word, `mcp-bdd check` would judge nothing of a tool that said so.
    A refusal is taken only by the token the transport kept for it; and an error-text step
    matches what the server sent as sent, not as mcp-bdd quotes it."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    from mcp_bdd.session import Refusal

    def error(data: dict[str, Any]) -> MCPError:
        return MCPError.from_error_data(types.ErrorData(code=-1, message="no", data=data))

    assert Refusal.taken(error({"mcp_bdd": "http-refusal", "status": 403}), {}) is None
    kept = {"t0k3n": Refusal(403, "Bearer", "no")}
    assert Refusal.taken(error({"mcp_bdd": "http-refusal", "token": "t0k3n"}), kept) == Refusal(403, "Bearer", "no")
    assert kept == {}  # taken once
    assert Refusal(403, 'Bearer error="x"', "you don't").matched() == '403 Bearer error="x" you don\'t'


def test_check_and_call_say_a_refusal_is_the_credentials_not_a_broken_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcp-bdd check` filed a tool refused with 403 as broken ("the tool failed on a generated
    call", "an unknown tool made the server hang or fail") and `mcp-bdd call` said UNREACHABLE.
    Now the check notes each refused target once and judges nothing of it; the call says
    REFUSED, quotes the server, and exits 1."""
    from mcp_bdd.cli import main
    from mcp_bdd.failures import EXIT_FAILED

    monkeypatch.chdir(tmp_path)
    with _serving(_AcceptingServer(handler=_Refusing)) as base:
        code = main(["check", f"{base}/mcp", "--only", "honest,protocol.unknown-names,poisoning", "--json"])
        report = json.loads(capsys.readouterr().out)
        called = main(["call", f"{base}/mcp", "echo", "text=forbidden"])
        said = capsys.readouterr()
        listed = main(["list", f"{base}/mcp", "resources"])
        listing = capsys.readouterr()
        gate = main(["check", f"{base}/mcp", "--only", "protocol.listings", "--json"])
        findings = json.loads(capsys.readouterr().out)["findings"]
    assert code == 0 and report["findings"] == [], report
    refused = [n for n in report["notes"] if "not checked: the server refused" in n]
    # the tool, the unknown tool and the unknown resource, each once; the tip once for all
    assert len(refused) == 3 and all("HTTP 403 (Forbidden)" in n for n in refused), report["notes"]
    assert sum("a scope, a role" in n for n in report["notes"]) == 1, report["notes"]
    assert called == EXIT_FAILED, said
    assert "REFUSED: " in said.err and "you don't have the scope tools:write" in said.err, said
    assert "UNREACHABLE" not in said.err + listing.err, said
    assert listed == EXIT_FAILED and "REFUSED: " in listing.err, listing
    # a gate that could list nothing does not pass: the refused listing is a finding
    assert gate == EXIT_FAILED and [f["title"] for f in findings] == [
        f"the server refused to list {kind} with the check's credentials, so none was checked"
        for kind in ("resources", "templates")
    ], findings


def _rejected(calls: list[tuple[str, int]]) -> str:
    """Gherkin: a scenario per (text, code): the raw server's echo called with `text`, and the step
    that a request rejected with `code` passes (on a made-up code, before the fixes these test)."""
    return "".join(
        f"""
  Scenario: {text}
    Given the MCP server "accepting" is running
    When I call the tool "echo" with:
      | text   |
      | {text} |
    Then the request is rejected with error code {code}
"""
        for text, code in calls
    )


def test_a_request_answered_with_no_json_rpc_answer_names_what_came_not_a_made_up_code(tmp_path: Path) -> None:
    """For a request's POST answered with an HTTP error, a redirect or a web page, the SDK made up
    a JSON-RPC error of its own (-32603 "Server returned an error response", -32600 "Unexpected
    content type"), shown as the server's, and "the request is rejected with error code -32600"
    passed for a code the server never sent. Now the request fails as a protocol violation naming
    the status, the content type and the body's start; a JSON-RPC error at an HTTP error status
    is still the server's answer. A response that cannot be parsed at all was "the server closed
    its stdout"; it now names the HTTP exchange that broke."""
    scenarios = _rejected(
        [
            *[("html", -32600), ("crash", -32603), ("moved", -32600), ("gone", -32600), ("loop", -32600)],
            *[("empty", -32700), ("batch", -32700), ("null", -32700)],  # "Failed to parse JSON response"
            ("event", -32700),  # "Failed to parse SSE message"
            *[("error", -32602), ("garbled", -32000)],
        ]
    )
    for text in ("slash", "nan", "nanevent"):  # a good answer, two that Python's json reads and JSON has not
        scenarios += f'\n  Scenario: {text}\n    Given the MCP server "accepting" is running\n' + _echo(
            text, "Then the tool call succeeds"
        )
    with _serving(_AcceptingServer(handler=_NoAnswer)) as base:
        root = make_project(tmp_path, _accepting(base), {"n.feature": "Feature: no answer\n" + scenarios})
        run = run_behave(root, "-f", "plain")
    assert run.counts() == {"passed": 2, "failed": 12, "error": 0, "skipped": 0}, run.failures()
    out = run.output
    said = 'The server "accepting" answered the tools/call request with '
    assert said + "JSON that is no JSON-RPC answer: it holds NaN or Infinity, which JSON does not have" in out
    sse = 'The server "accepting" sent an SSE message event that is no JSON-RPC message: it holds NaN or Infinity'
    assert sse in out, run.failures()
    assert said + "HTTP 307, a redirect back to the URL it was sent to (http://" in out, run.failures()
    assert said + "JSON that is no JSON-RPC answer: the body is empty" in out, run.failures()
    assert said + "JSON that is no JSON-RPC answer: it is a JSON-RPC batch (an array)" in out, run.failures()
    assert said + "JSON that is no JSON-RPC answer: it does not fit the JSON-RPC schema" in out, run.failures()
    assert "Failed to parse JSON response" not in out and "Failed to parse SSE message" not in out, out
    assert 'The server "accepting" sent an SSE message event that is no JSON-RPC message: it is not JSON' in out
    assert said + "HTTP 200 (text/html): not a JSON-RPC answer" in out, run.failures()
    assert "this URL serves something else (a web page?)" in out, out
    assert said + "HTTP 500 (text/plain): not a JSON-RPC answer. Its body begins: 'Internal Server Error: the " in out
    assert said + "HTTP 307, a redirect to http://127.0.0.2:9/mcp: not a JSON-RPC answer" in out, out
    assert said + "HTTP 404 (text/plain), for a session it had opened" in out, out
    assert "the HTTP exchange of the tools/call request broke: POST " in out, out
    assert "RemoteProtocolError" in out and "closed its stdout" not in out, out
    assert "Server returned an error response" not in out and "Unexpected content type" not in out, out


class _Looping(_Accepting):
    """A Streamable HTTP endpoint that redirects each tools/call POST (307, on its own origin) by
    the text it is given: `pingpong` round a loop of two hops, /mcp -> /mcp/ -> /mcp (one rule that
    adds a trailing slash, another that takes it away); `onwards` on and on, /mcp -> /mcp/1 ->
    /mcp/2 -> ..., never to the same URL twice; `detour` once, /mcp -> /mcp/, which answers with a
    web page. `calls` counts the POSTs."""

    def _call(self, request_id: Any, text: str) -> None:
        self.server.calls += 1
        if text == "detour" and self.path == "/mcp/":
            return _answer(self, 200, b"<html>the shop</html>")
        if text in ("pingpong", "detour"):
            location = "/mcp/" if self.path == "/mcp" else "/mcp"
        else:
            location = f"/mcp/{int(self.path.removeprefix('/mcp').lstrip('/') or 0) + 1}"
        return _answer(self, 307, b"", "text/plain", {"Location": location})


def test_a_redirect_loop_of_any_length_is_a_protocol_violation_naming_its_route(tmp_path: Path) -> None:
    """A request's POST redirected round a loop of more than one hop (/mcp -> /mcp/ -> /mcp), or on
    and on, was followed until the client's redirect budget ran out (21 POSTs), and the SDK then
    made up a -32600 ("Redirect to ... not followed"): "Then the request is rejected with error code
    -32600" passed on a broken server. As a redirect back to the very URL asked already did, it
    fails as a protocol violation naming the route (its first URLs) with a tip; a loop is stopped
    before its first URL is asked again. What answers a request after a redirect is its answer too:
    a web page there was the SDK's made-up -32600 ("Unexpected content type") as well."""
    scenarios = _rejected([(text, -32600) for text in ("pingpong", "onwards", "detour")])
    web = _AcceptingServer(handler=_Looping)
    with _serving(web) as base:
        root = make_project(tmp_path, _accepting(base), {"l.feature": "Feature: loops\n" + scenarios})
        run = run_behave(root, "-f", "plain")
    assert run.counts() == {"passed": 0, "failed": 3, "error": 0, "skipped": 0}, run.failures()
    out = run.output
    assert "answered the tools/call request with HTTP 200 (text/html): not a JSON-RPC answer" in out, out
    said = 'The server "accepting" answered the tools/call request with HTTP 307, '
    route = f"{base}/mcp -> {base}/mcp/ -> {base}/mcp"
    assert said + f"a redirect back to a URL it was sent to before, a loop: {route}: not a JSON-RPC" in out, out
    route = " -> ".join(f"{base}/mcp/{n}" for n in range(1, 4))
    assert said + f"a redirect after 20 in a row, as many as the client follows: {base}/mcp -> {route} -> " in out
    assert f"-> ... 17 more -> {base}/mcp/21: not a JSON-RPC answer" in out, out
    assert "Tip: the server (or a proxy before it) redirects its endpoint round a loop" in out, out
    assert "Tip: the server (or a proxy before it) redirects its endpoint on and on" in out, out
    assert "Redirect to" not in out and "Unexpected content type" not in out, out  # the SDK's made-up errors
    assert web.calls == 2 + 21 + 2, web.calls  # the loop's /mcp is not asked twice; the budget is the client's


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"jsonrpc":"2.0","id":4}', "it has neither a result nor an error"),
        (
            b'{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":-1,"message":"m"}}',
            "it has both a result and an error",
        ),
        (b'{"jsonrpc":"2.0","id":4,"error":{"message":"no code"}}', "the SDK said: error.code: Field required"),
        (b'{"jsonrpc":"2.0","id":4,"result":null}', "the SDK said: result: Input should be an object"),
        (b'[{"jsonrpc":"2.0","id":4,"result":{}}]', "a JSON-RPC batch (an array) of 1 messages"),
    ],
    ids=["neither", "both", "error-without-code", "null-result", "batch"],
)
def test_an_answer_of_the_wrong_shape_fails_its_request_at_once_saying_what_is_wrong(line: bytes, said: str) -> None:
    """An answer with neither a result nor an error, and a batch (an array, which MCP dropped),
    were "not JSON-RPC" lines: the request waited out its timeout, and the failure blamed logs on
    stdout. An answer with both was taken as the server's error. An error without a code said
    "method: Field required" (the SDK's words about a request). Each now fails its request at
    once as a protocol violation, in words about the answer."""
    import mcp_types as types

    from mcp_bdd.servers._framing import PROTOCOL_MARK, StdoutEvidence, Waiting, decode_line

    evidence, waiting = StdoutEvidence(), Waiting()
    waiting.sent(types.JSONRPCRequest(jsonrpc="2.0", id=4, method="tools/call"))
    out = decode_line(line, evidence, waiting)
    errors = [m.message for m in out if not isinstance(m, Exception) and isinstance(m.message, types.JSONRPCError)]
    assert [e.id for e in errors] == [4], out
    assert isinstance(errors[0].error.data, dict) and errors[0].error.data["mcp_bdd"] == PROTOCOL_MARK
    assert said in errors[0].error.message, errors[0].error.message
    assert "method: Field required" not in errors[0].error.message
    assert evidence.bad_lines == 1 and "prints logs or banners" not in evidence.describe(), evidence.describe()


def test_a_call_to_a_server_that_stopped_reading_its_stdin_ends_at_its_timeout(tmp_path: Path) -> None:
    """A request larger than the pipe to a server that no longer reads its stdin blocks the write.
    At the timeout the SDK sends a courtesy cancel, which waited behind the blocked write for up to
    5 s more: the step took its timeout + 5 s. A few messages may now queue while a write blocks.
    (The bound asserted leaves 3.5 s of room on a loaded machine; before, it took 6 s.)"""
    text = "x" * 2_000_000  # past any pipe's buffer
    feature = f"""
Feature: stdin
  Scenario: the server stops reading
    Given the MCP server "hostile" is running
    When I call the tool "stop_reading"
    Then the tool call succeeds
    When I call the tool "echo" with arguments:
      \"\"\"json
      {{"text": "{text}"}}
      \"\"\"
    Then the tool call times out
"""
    root = make_project(tmp_path, hostile(extra="timeout = 1\n"), {"s.feature": feature})
    run = run_behave(root, "-f", "plain")
    assert run.counts()["passed"] == 1, run.failures()
    took = re.findall(r'When I call the tool "echo" with arguments: \.\.\. passed in ([\d.]+)s', run.stdout)
    assert took and float(took[0]) < 4.5, (took, run.stdout[-2000:])


def test_progress_the_client_cannot_use_is_named_not_silent(tmp_path: Path) -> None:
    """Progress notifications with a token no request gave were dropped without a word: the step
    said "Only 0 progress notification(s) arrived" with a tip to call ctx.report_progress(). One
    whose progress is not a number printed the SDK's whole pydantic traceback with the failure."""
    feature = """
Feature: progress
  Scenario: the server reports progress on its own token
    Given the MCP server "hostile" is running
    When I call the tool "echo" with:
      | text |
      | hi   |
    Then I received at least 1 progress notification
"""
    root = make_project(tmp_path, hostile("--stray-progress"), {"p.feature": feature})
    run = run_behave(root)
    assert run.counts()["failed"] == 1, run.failures()
    assert "Only 0 progress notification(s) arrived" in run.output, run.failures()
    assert "2 progress notification(s) came, none with the progressToken of a request of this session" in (
        run.output
    ), run.failures()
    assert '"progressToken": "my-1"' in run.output, run.failures()
    assert "Failed to validate notification: notifications/progress: 1 validation error" in run.output, run.failures()
    assert "Traceback" not in run.output, run.output


GATED_FEATURE = """
Feature: a gateway that refuses listening
  Scenario: a subscription refused for its scope fails as a refusal
    Given the MCP server "gated" is running
    When I subscribe to the resource "shop://catalog"

  Scenario: a refusal that is meant is checked by the step after it
    Given the MCP server "gated" is running
    When I subscribe to the resource "shop://catalog"
    Then the request is refused for insufficient scope
    And the last HTTP response has status 403

  Scenario: what the token may do still works
    Given the MCP server "gated" is running
    When I call the tool "list_products"
    Then the tool call succeeds

  Scenario: the refused subscription is the request a rejection step judges
    Given the MCP server "gated" is running
    When I read the resource "shop://no-such-resource"
    And I subscribe to the resource "shop://catalog"
    Then the request is rejected with error code -32602

  Scenario: a change the gateway keeps from coming fails at once, as a refusal
    Given the MCP server "gated" is running
    When I call the tool "enable_admin_tools"
    Then I receive a "tools list changed" notification within 900 seconds
"""


def test_a_refused_listen_stream_is_a_refusal_not_a_missing_feature(tmp_path: Path) -> None:
    """On 2026-07-28 a resource subscription is a subscriptions/listen stream. A gateway that
    refused it with 403 insufficient_scope (tests/servers/listen_gate.py, in front of the demo shop)
    failed the step as an expectation, "the stream did not open", with the tip to use protocol =
    "legacy"; now it is a refusal with the credentials tip, a refusal step after it checks it, and
    it is the last request a rejection step judges (it used to judge the one before). A
    notification step whose stream is refused fails at once with the refusal, not at the end of
    its wait."""
    gate = json.dumps([sys.executable, str(REPO / "tests" / "servers" / "listen_gate.py"), "${port}"])
    config = (
        f'protocol = "2026-07-28"\n[servers.gated]\ncommand = {gate}\ntransport = "streamable-http"\n'
        f'[servers.gated.http]\ncommand = {gate}\nurl = "http://127.0.0.1:${{port}}/mcp"\n'
    )
    root = make_project(tmp_path, config, {"gated.feature": GATED_FEATURE})
    out = tmp_path / "doc.html"
    run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(out), "-f", "plain", timeout=300)
    assert run.counts() == {"passed": 2, "failed": 3, "error": 0, "skipped": 0}, run.failures()
    # a notification no stream can deliver: the refusal, at once (the step would wait 900 s)
    assert "the server refused the subscriptions/listen stream that would deliver it" in run.output, run.failures()
    assert 'subscriptions/listen to "gated" was refused' in run.output, run.failures()
    # the last request is the refused listen, not the read before it
    assert "The subscriptions/listen request was not rejected with error code -32602" in run.output, run.failures()
    assert "listening needs the scope notifications:listen" in run.output, run.failures()
    assert "the credentials lack what this request needs" in run.output, run.failures()
    assert 'protocol = "legacy"' not in run.output, run.failures()
    assert '"error_kind":"refused"' in out.with_suffix(".json").read_text(), "filed as Access refused"


EXIT_HANDLER_APP = """
import atexit
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer


import shelve

import cachelib  # a library's module: its temp dir is removed by its own atexit handler

STATE = shelve.open("state")
atexit.register(STATE.close)  # the app's state, closed by a library's method as the server ends


@atexit.register
def save():  # what an app that keeps its data (or its coverage) does as it ends
    with Path("saved.txt").open("a") as out:
        out.write(os.environ.get("RUN_NAME", "no server env") + "\\n")


def create_server():
    server = MCPServer("saver")

    @server.tool()
    def ping() -> str:
        STATE["n"] = STATE.get("n", 0) + 1
        (Path(cachelib.CACHE) / "entry").write_text("cached")
        return f"pong {STATE['n']}"

    return server
"""

CACHE_LIBRARY = """
import atexit
import shutil
import tempfile

CACHE = tempfile.mkdtemp()
atexit.register(shutil.rmtree, CACHE, True)
"""


@pytest.mark.parametrize("pool", ["true", "false"])
def test_a_server_s_exit_handlers_run_as_it_ends_from_the_pool_as_cold(pool: str, tmp_path: Path) -> None:
    """A forked server ends with os._exit, so its `atexit` handlers never ran; the app's handler ran
    once instead, in the pre-imported process, at the end of the run and without the server's env.
    An app that saves its data (or coverage) at exit lost it. Each server now runs its own, with
    its env, as a cold-started one does — and only its own: the pre-imported process's handlers
    (a library's temp dir, removed as the first server ended; the app's state as it was at that
    import, saved over what the servers saved) are not a server's."""
    feature = """
Feature: saved at exit
  Scenario: one
    Given the MCP server "app" is running
    When I call the tool "ping"
    Then the result text is "pong 1"

  Scenario: two
    Given the MCP server "app" is running
    When I call the tool "ping"
    Then the result text is "pong 2"

  Scenario: three
    Given the MCP server "app" is running
    When I call the tool "ping"
    Then the result text is "pong 3"
"""
    config = 'transport = "stdio"\n[servers.app]\napp = "saving_app:create_server"\nenv = { RUN_NAME = "server" }\n'
    root = make_project(tmp_path / "project", config, {"s.feature": feature})
    (root / "saving_app.py").write_text(EXIT_HANDLER_APP)
    libs = tmp_path / "libs"  # outside the project: a library's module, which no forked server imports again
    libs.mkdir()
    (libs / "cachelib.py").write_text(CACHE_LIBRARY)
    env = {**behave_env()}
    env["PYTHONPATH"] = os.pathsep.join([str(libs), env.get("PYTHONPATH", "")])
    done = run_captured(
        [sys.executable, "-m", "behave", "--no-color", "-D", f"pool={pool}", "features/"], cwd=root, env=env
    )
    run = Run(done.returncode, done.stdout, done.stderr)
    assert run.counts() == {"passed": 3, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert (root / "saved.txt").read_text().splitlines() == ["server"] * 3, run.output[-2000:]
