"""Processes a user `@fake` starts with `ctx.start_process`: owned and stopped as a server's are.

Before, a fake that started a service binary with `subprocess.Popen` owned it alone: a cleanup
that raised (or a setup that failed after the start) left it running after a green run, and a
`kill -9` of behave left it for good. Each test takes a census by a marker in the command line.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from behave_project import Run, behave_env, make_project, printed, run_behave, run_captured, start_behave

#: a TCP service on the port it is given; it ignores SIGTERM when told to; exits with 3 when told to
SERVICE = """
import os, signal, socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "fail":
    print("service: the configuration file is missing; token", os.environ.get("SERVICE_TOKEN"), flush=True)
    print("service: deploy token", os.environ.get("CI_DEPLOY_TOKEN"), flush=True)
    print("service: started with", sys.argv[-1], flush=True)
    sys.exit(3)
if mode == "late":  # never binds: still starting when another process holds its port
    time.sleep(600)
if mode == "daemon":  # puts itself in the background: the parent returns at once
    if os.fork():
        os._exit(0)
    os.setsid()
    time.sleep(0.2)
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

MARK = Path(__file__).resolve().parent.parent.joinpath("mark.txt").read_text().strip()


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _service(ctx, mode):
    port = _port()
    # a relative path, read from the configuration's folder as a server's command is
    argv = [sys.executable, "service.py", str(port), mode, MARK, "--auth-token", "argv-s3cr3t-4455"]
    process = ctx.start_process(argv, env={"SERVICE_TOKEN": "tok-s3cr3t-77"})
    process.wait_for_port(port)
    return port, process


@fake("svc")
def svc(ctx):
    port, process = _service(ctx, "serve")
    Path("svc.pid").write_text(str(process.pid))
    yield {"url": f"http://127.0.0.1:{port}", "pid": process.pid}
    raise RuntimeError("the cleanup forgot to stop its service")  # the process is stopped all the same


def _plain(mode):
    def plain(ctx):
        port, _ = _service(ctx, mode)
        yield {"url": f"http://127.0.0.1:{port}"}

    return plain


# a service that ignores SIGTERM; one that exits at once; one that puts itself in the background
for _name, _mode in (("stubborn", "stubborn"), ("broken", "fail"), ("daemon", "daemon")):
    fake(_name)(_plain(_mode))


@then("the first scenario's service is gone")
def gone(context):
    import psutil

    pid = int(Path("svc.pid").read_text())
    assert not psutil.pid_exists(pid), f"the first scenario's service (pid {pid}) still runs"


@fake("taken")
def taken(ctx):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        process = ctx.start_process([sys.executable, "service.py", str(port), "late", MARK])
        process.wait_for_port(port)
    finally:
        holder.close()
    yield {"url": f"http://127.0.0.1:{port}"}


class _Broker:
    def __init__(self, ctx, directory):
        self.port = _port()
        self.process = ctx.start_process([sys.executable, "service.py", str(self.port), "serve", MARK])
        self.process.wait_for_port(self.port)

    def close(self):
        pass  # the process is mcp-bdd's to stop, when the run ends


@fake("broker")
def broker(ctx):
    shared = ctx.shared("broker", lambda directory: _Broker(ctx, directory))  # one for the whole run
    yield {"url": f"http://127.0.0.1:{shared.port}", "pid": shared.process.pid}


@then('the broker is the one of the first scenario')
def same_broker(context):
    import psutil

    pid = int(context.mcp.fakes.get("broker")["pid"])
    first = Path("broker.pid")
    if not first.exists():
        first.write_text(str(pid))
    assert pid == int(first.read_text()) and psutil.pid_exists(pid), "the run-wide broker was restarted"


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
    for name in ("svc", "stubborn", "broken", "daemon", "taken", "broker", "wrong"):
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


def test_a_process_a_shared_resource_starts_lives_as_long_as_the_run(tmp_path: Path) -> None:
    """`ctx.shared(key, start)` is one resource for the whole run (a broker, many queues): the
    process its `start` starts serves every scenario, and stops when the run ends."""
    root, mark = _project(
        tmp_path,
        """
        Feature: a broker for the run
          Scenario: the first
            Given the MCP server "broker" is running
            Then the broker is the one of the first scenario

          Scenario: the second
            Given the MCP server "broker" is running
            Then the broker is the one of the first scenario
        """,
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 2, "failed": 0, "error": 0, "skipped": 0}, run.failures()
    assert not _marked(mark), [p.info["cmdline"] for p in _marked(mark)]


def test_a_fake_s_process_that_never_listens_fails_the_start_with_its_own_words(tmp_path: Path) -> None:
    """`wait_for_port` on a process that exits first quotes its exit code and what it printed
    (the secrets it was given or inherited masked), names the fake and the line that waited; one
    that put itself in the background is told to run in the foreground; another process on the
    port is named. Nothing is left running. A command given as one string is a usage error that
    says how to write it."""
    root, mark = _project(
        tmp_path,
        """
        Feature: broken fakes
          Scenario: a service that exits at once
            Given the MCP server "broken" is running

          Scenario: a service that daemonizes
            Given the MCP server "daemon" is running

          Scenario: a port another process holds
            Given the MCP server "taken" is running

          Scenario: a command as one string
            Given the MCP server "wrong" is running
        """,
    )
    deploy = "ghp_abcdefghijklmnop123456"
    proc = run_captured(
        [sys.executable, "-m", "behave", "--no-color", "features/"],
        cwd=root,
        env={**behave_env(), "CI_DEPLOY_TOKEN": deploy},
    )
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    assert run.counts() == {"passed": 0, "failed": 0, "error": 4, "skipped": 0}, run.failures()
    said = run.output
    assert 'of the fake "broken" exited with code 3 before it accepted connections on port' in said, said[-4000:]
    assert "(wait_for_port at fakes.py:" in said and ", in _service)" in said, said[-4000:]
    assert "service: the configuration file is missing; token ****" in said, said[-4000:]
    assert "service: deploy token ****" in said, said[-4000:]
    assert "tok-s3cr3t-77" not in said and deploy not in said  # given, or inherited, under a secret-looking name
    assert "--auth-token ****" in said and "service: started with ****" in said
    assert "argv-s3cr3t-4455" not in said  # a secret option's value, in its command line and its echo
    assert 'of the fake "daemon" exited with code 0 before it accepted' in said, said[-4000:]
    assert "as a program that puts itself in the background does" in said, said[-4000:]
    assert 'of the fake "taken" does not listen on port' in said and "another process does (pid" in said, said[-4000:]
    assert "start_process takes the command as a list of strings" in said, said[-4000:]
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
    from mcp_bdd.fakes._process import SlowStop, stop_all
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
        assert process.wait_for_output("listen", timeout=60) == "service: listening"
        assert process.wait_for_output(re.compile(r"listen\w+"), timeout=60) == "service: listening"
        assert process.returncode is None and psutil.Process(process.pid).is_running()
        assert "service: listening" in process.output() and process.log.parent == tmp_path / "svc"
        process.stop()
        assert process.returncode is not None and not psutil.pid_exists(process.pid)
        methods = [item.method for item in transcript.items]
        assert methods == ["process started"], methods
        stubborn = ctx.start_process([sys.executable, str(tmp_path / "service.py"), str(port), "stubborn"])
        stubborn.wait_for_port(port, timeout=60)
        stubborn.stop()  # killed after 2 s; a step that stops it does not fail for that
        assert stubborn.returncode is not None
        with pytest.raises(SlowStop, match="did not exit within 2 s of SIGTERM") as slow:
            stop_all(ctx._processes, transcript)  # the fake's end: said there, once
        assert str(slow.value).count("did not exit") == 1 and not ctx._processes
    finally:
        process.stop()  # a second stop is a no-op


@pytest.mark.timeout(120, method="thread")  # pytest-timeout's signal method would hold SIGALRM
def test_the_default_wait_follows_the_fake_s_own_limit_only() -> None:
    """`wait_for_port`'s default is the fake's setup limit less half a second; a project's own
    SIGALRM timer (a watchdog) is no fake's limit: the default stays 30 s."""
    from mcp_bdd.fakes._deadline import within
    from mcp_bdd.fakes._process import DEFAULT_WAIT, _wait_limit

    assert _wait_limit(None) == DEFAULT_WAIT and _wait_limit(7) == 7
    with within(10):
        assert 9.0 < _wait_limit(None) <= 9.5
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 3600)
    try:
        assert _wait_limit(None) == DEFAULT_WAIT
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.timeout(120, method="thread")
def test_a_limit_that_expires_while_a_process_is_spawned_waits_until_it_is_recorded() -> None:
    """The setup's limit fired inside `spawn` and the process, never recorded as the fake's, ran
    until the end of the run. A held block lets it through only once the block is left."""
    from mcp_bdd.fakes._deadline import Stalled, held, within

    finished = []
    with pytest.raises(Stalled), within(0.05):
        with held():
            time.sleep(0.3)  # the timer fires here: held until the block is left
            finished.append("recorded")
        finished.append("after")  # never reached
    assert finished == ["recorded"]


def test_a_fake_s_process_is_started_from_behave_s_thread_only(tmp_path: Path) -> None:
    """A process mcp-bdd owns dies with the thread that starts it: a worker thread's would die early."""
    from mcp_bdd.errors import UsageError
    from mcp_bdd.fakes import FakeContext
    from mcp_bdd.transcript import Transcript

    ctx = FakeContext(name="svc", tmpdir=tmp_path / "svc", portal=None, transcript=Transcript())  # type: ignore[arg-type]
    raised: list[BaseException] = []

    def start() -> None:
        try:
            ctx.start_process([sys.executable, "-c", "pass"])
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=start, name="worker")
    worker.start()
    worker.join()
    assert len(raised) == 1 and isinstance(raised[0], UsageError), raised
    assert 'start_process was called from the thread "worker"' in str(raised[0]) and "Tip: start it from" in str(
        raised[0]
    )


def test_wait_for_output_says_why_it_gave_up(tmp_path: Path) -> None:
    """A process that exits before it writes the text, and one that never writes it: each said
    with its exit code or the time waited, its last output, and where the fake waited."""
    from mcp_bdd.errors import ServerStartError
    from mcp_bdd.fakes import FakeContext
    from mcp_bdd.transcript import Transcript

    (tmp_path / "service.py").write_text(SERVICE)
    ctx = FakeContext(name="svc", tmpdir=tmp_path / "svc", portal=None, transcript=Transcript())  # type: ignore[arg-type]
    failing = ctx.start_process([sys.executable, str(tmp_path / "service.py"), "1", "fail"])
    with pytest.raises(ServerStartError) as ended:
        failing.wait_for_output("Ready to accept connections", timeout=60)
    said = str(ended.value)
    assert 'of the fake "svc" exited with code 3 before it wrote "Ready to accept connections"' in said, said
    assert "(wait_for_output at test_fake_processes.py:" in said and "configuration file is missing" in said, said
    silent = ctx.start_process([sys.executable, str(tmp_path / "service.py"), "1", "late"])
    try:
        with pytest.raises(ServerStartError, match=r'did not write "Ready" within 0\.5 s') as waited:
            silent.wait_for_output("Ready", timeout=0.5)
        assert "It wrote nothing." in str(waited.value)
    finally:
        silent.stop()
