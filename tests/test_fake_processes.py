"""Processes a user `@fake` starts with `ctx.start_process`: owned and stopped as a server's are.

Before, a fake that started a service binary with `subprocess.Popen` owned it alone: a cleanup
that raised (or a setup that failed after the start) left it running after a green run, and a
`kill -9` of behave left it for good. Each test takes a census by a marker in the command line.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import sys
import time
import uuid
from pathlib import Path

import psutil
from behave_project import make_project, printed, run_behave, start_behave

#: a TCP service on the port it is given; it ignores SIGTERM when told to; exits with 3 when told to
SERVICE = """
import os, signal, socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "fail":
    print("service: the configuration file is missing; token", os.environ.get("SERVICE_TOKEN"), flush=True)
    sys.exit(3)
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen()
print("service: listening", flush=True)
time.sleep(600)
"""

FAKES = """
import socket
import sys
from pathlib import Path

from behave import then

from mcp_bdd.fakes import fake

SERVICE = Path(__file__).resolve().parent.parent / "service.py"
MARK = Path(__file__).resolve().parent.parent.joinpath("mark.txt").read_text().strip()


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _service(ctx, mode):
    port = _port()
    process = ctx.start_process([sys.executable, str(SERVICE), str(port), mode, MARK], env={"SERVICE_TOKEN": "tok-s3cr3t-77"})
    process.wait_for_port(port)
    return port, process


@fake("svc")
def svc(ctx):
    port, process = _service(ctx, "serve")
    Path("svc.pid").write_text(str(process.pid))
    yield {"url": f"http://127.0.0.1:{port}", "pid": process.pid}
    raise RuntimeError("the cleanup forgot to stop its service")  # the process is stopped all the same


@fake("stubborn")
def stubborn(ctx):
    port, _ = _service(ctx, "stubborn")
    yield {"url": f"http://127.0.0.1:{port}"}


@fake("broken")
def broken(ctx):
    port, _ = _service(ctx, "fail")
    yield {"url": f"http://127.0.0.1:{port}"}


@then("the first scenario's service is gone")
def gone(context):
    import psutil

    pid = int(Path("svc.pid").read_text())
    assert not psutil.pid_exists(pid), f"the first scenario's service (pid {pid}) still runs"


@fake("wrong")
def wrong(ctx):
    ctx.start_process("redis-server --port 1")
    yield {}
"""

APP = """
import os

import anyio
from mcp.server.mcpserver import MCPServer


def create_server():
    mcp = MCPServer("app")

    @mcp.tool()
    def service() -> str:
        return os.environ.get("SERVICE", "")

    @mcp.tool()
    async def slow(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "done"

    return mcp
"""


def _project(tmp_path: Path, feature: str) -> tuple[Path, str]:
    mark = f"fake-process-{uuid.uuid4().hex}"
    config = 'transport = "in-memory"\nstartup_timeout = 20\n'
    for name in ("svc", "stubborn", "broken", "wrong"):
        config += f'[servers.{name}]\napp = "fake_app:create_server"\nenv = {{ SERVICE = "${{fake.{name}.url}}" }}\n'
    root = make_project(tmp_path, config, {"p.feature": feature})
    (root / "service.py").write_text(SERVICE)
    (root / "fake_app.py").write_text(APP)
    (root / "steps" / "fakes.py").write_text(FAKES)
    (root / "mark.txt").write_text(mark)
    return root, mark


def _marked(mark: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if mark in (process.info["cmdline"] or []):
            found.append(process)
    return found


def test_a_fake_s_process_is_stopped_when_its_fake_ends_whatever_its_cleanup_did(tmp_path: Path) -> None:
    """The fake's cleanup raised, and another fake's process ignored SIGTERM: each process is gone
    when its scenario ends (the run's end would stop them anyway, too late for the next scenarios), the raise and the SIGKILL are said as teardown warnings, and the
    secret the process was given is masked in what the run printed."""
    root, mark = _project(
        tmp_path,
        """
        Feature: fakes that run processes
          Scenario: a service the cleanup forgets
            Given the MCP server "svc" is running
            When I call the tool "service"
            Then the tool call succeeds

          Scenario: a service that ignores SIGTERM
            Given the MCP server "stubborn" is running
            When I call the tool "service"
            Then the tool call succeeds
            And the first scenario's service is gone
        """,
    )
    run = run_behave(root, "-f", "json", "-o", "report.json")
    assert run.counts() == {"passed": 2, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert not _marked(mark), [p.info["cmdline"] for p in _marked(mark)]
    warned = [line for line in run.stderr.splitlines() if "teardown of" in line]
    assert any('fake "svc"' in line and "the cleanup forgot to stop its service" in line for line in warned), warned
    slow = [line for line in warned if 'fake "stubborn"' in line]
    assert slow and "did not exit within 2 s of SIGTERM: it was killed (SIGKILL)" in slow[0], warned
    assert 'of the fake "stubborn"' in slow[0] and "Tip: make it exit on SIGTERM" in slow[0], slow
    evidence = _evidence(root / "report.json")
    assert '"method": "process started"' in evidence and '"method": "process stopped"' in evidence, evidence[:3000]
    assert "tok-s3cr3t-77" not in evidence


def _evidence(report: Path) -> str:
    """Every attachment of behave's json report, decoded."""
    texts = []
    for feature in json.loads(report.read_text()):
        for element in feature.get("elements", []):
            for step in element.get("steps", []):
                for embedding in step.get("embeddings", []):
                    texts.append(base64.b64decode(embedding["data"]).decode("utf-8", "replace"))
    return "\n".join(texts)


def test_a_fake_s_process_that_never_listens_fails_the_start_with_its_own_words(tmp_path: Path) -> None:
    """`wait_for_port` on a process that exits first quotes what it printed and its exit code, names
    the fake; nothing is left running. A command given as one string is a usage error that says
    how to write it."""
    root, mark = _project(
        tmp_path,
        """
        Feature: broken fakes
          Scenario: a service that exits at once
            Given the MCP server "broken" is running

          Scenario: a command as one string
            Given the MCP server "wrong" is running
        """,
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 0, "failed": 0, "error": 2, "skipped": 0}, run.failures()
    said = run.output
    assert 'of the fake "broken" exited with code 3 before it accepted connections on port' in said, said[-3000:]
    assert "service: the configuration file is missing; token ****" in said, said[-3000:]
    assert "tok-s3cr3t-77" not in said  # given under a secret-looking name: masked where quoted
    assert "start_process takes the command as a list of strings" in said, said[-3000:]
    assert not _marked(mark)


def test_a_fake_s_process_dies_with_a_killed_run(tmp_path: Path) -> None:
    """`kill -9` of behave runs no hook: the run's lifeline (and the keeper's parent-death signal)
    ends the fake's process, as it ends a server."""
    root, mark = _project(
        tmp_path,
        """
        Feature: killed
          Scenario: a long call while the fake's service runs
            Given the MCP server "svc" is running
            When I call the tool "slow" with:
              | seconds |
              | 60      |
        """,
    )
    behave = start_behave(root)
    deadline = time.monotonic() + 120
    while not _marked(mark):  # the fake's process is up: an event behave brings about
        assert time.monotonic() < deadline and behave.poll() is None, printed(root)
        time.sleep(0.05)
    os.kill(behave.pid, signal.SIGKILL)
    behave.wait(timeout=30)
    _gone, alive = psutil.wait_procs(_marked(mark), timeout=30)
    assert not alive, [p.cmdline() for p in alive]


def test_the_fake_process_api_outside_behave(tmp_path: Path) -> None:
    """`FakeContext.start_process` on its own: the log, the output tail, the pid, an explicit stop."""
    from mcp_bdd.fakes import FakeContext
    from mcp_bdd.transcript import Transcript

    (tmp_path / "service.py").write_text(SERVICE)
    transcript = Transcript()
    ctx = FakeContext(name="svc", tmpdir=tmp_path / "svc", portal=None, transcript=transcript)  # type: ignore[arg-type]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = ctx.start_process([sys.executable, str(tmp_path / "service.py"), str(port), "serve"])
    try:
        process.wait_for_port(port, timeout=60)
        assert process.returncode is None and psutil.Process(process.pid).is_running()
        assert "service: listening" in process.output() and process.log.parent == tmp_path / "svc"
        process.stop()
        assert process.returncode is not None and not psutil.pid_exists(process.pid)
        methods = [item.method for item in transcript.items]
        assert methods == ["process started"], methods
    finally:
        process.stop()  # a second stop is a no-op
