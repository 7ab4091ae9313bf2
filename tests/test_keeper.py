"""The keeper (servers/_keeper.py) under `spawn`: the server's exit reads as if there were none,
a program that cannot run is the OSError Popen raised, and what the server orphans dies with it.

Real processes throughout: `spawn` is the one way mcp-bdd starts a server."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from behave_project import Census, is_lifeline, make_project, run_behave

from mcp_bdd._process_tree import wait_exit
from mcp_bdd.servers._process import ChildProcess, spawn

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the keeper needs prctl (Linux)"),
    pytest.mark.usefixtures("own_lifeline"),  # every test spawns from this process: its census
]


def _spawn(tmp_path: Path, *argv: str, stdio: bool = False) -> ChildProcess:
    return spawn(
        list(argv),
        env=dict(os.environ),
        cwd=str(tmp_path),
        stderr_path=tmp_path / "stderr.log",
        describe="test",
        stdio=stdio,
    )


@pytest.mark.parametrize(
    ("script", "code"),
    [("exit 3", 3), ("exit 0", 0), ("kill -TERM $$", -signal.SIGTERM), ("kill -KILL $$", -signal.SIGKILL)],
)
def test_the_servers_exit_is_read_as_its_own(script: str, code: int, tmp_path: Path) -> None:
    """Exit code and death by a signal are mirrored by the keeper, which mcp-bdd owns."""
    process = _spawn(tmp_path, "sh", "-c", script)
    assert wait_exit(process.server_pid, 60), "the server did not end"
    # the teardown's SIGTERM can reach the keeper in any of its last steps (reaping the server,
    # killing its orphans, exiting): it must not become the exit status mcp-bdd reads. Sent
    # over and over until the keeper has ended (a few milliseconds), so every step gets one
    while not wait_exit(process.pid, 0):
        os.kill(process.pid, signal.SIGTERM)
    process.stop()
    assert process.returncode == code
    assert process.exited()
    assert not list(tmp_path.glob("core*")), "the keeper left a core file"


def test_a_program_that_cannot_be_run_is_an_oserror_at_spawn_with_nothing_left(
    tmp_path: Path, no_leftover_processes: Census
) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        _spawn(tmp_path, "no-such-mcp-server-program", "--stdio", stdio=True)
    assert raised.value.strerror == "No such file or directory"
    assert raised.value.filename == "no-such-mcp-server-program"
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        _spawn(tmp_path, str(script))
    # the test process's lifeline aside: the first spawn starts it, even one that fails, and it
    # runs until `own_lifeline` closes it
    left = no_leftover_processes.left(besides=is_lifeline)
    assert not left, left


def test_the_keeper_holds_no_end_of_the_servers_pipes(tmp_path: Path) -> None:
    """The server's stdout ends when the server does: the keeper, still killing what the
    server orphaned, must not keep it open (nor its stdin, which tells a server it is unread)."""
    process = _spawn(tmp_path, "sh", "-c", "read line; echo got $line", stdio=True)
    popen = process.popen
    assert popen.stdin is not None and popen.stdout is not None
    popen.stdin.write(b"hello\n")
    popen.stdin.close()
    assert popen.stdout.read() == b"got hello\n"  # EOF: no other holder
    process.stop()
    assert process.returncode == 0


def test_sigterm_reaches_a_server_that_left_the_keepers_group(tmp_path: Path) -> None:
    """The teardown's SIGTERM goes to the group; a server that made a group of its own gets it
    from the keeper, so its polite shutdown runs instead of SIGKILL."""
    server = textwrap.dedent("""
        import os, signal, sys, time
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))
        print("ready", flush=True)
        while True:
            time.sleep(60)
    """)
    process = _spawn(tmp_path, sys.executable, "-c", server, stdio=True)
    assert process.popen.stdout is not None
    assert process.popen.stdout.readline() == b"ready\n", (tmp_path / "stderr.log").read_text()
    process.stop()
    assert process.returncode == 7, (tmp_path / "stderr.log").read_text()
    assert process.slow_stop is None


def test_a_missing_command_is_said_with_the_program_and_a_tip(tmp_path: Path) -> None:
    config = '[servers.gone]\ncommand = ["no-such-mcp-server-program", "--stdio"]\n'
    feature = 'Feature: gone\n  Scenario: start\n    Given the MCP server "gone" is running\n'
    run = run_behave(make_project(tmp_path, config, {"g.feature": feature}))
    assert run.counts()["passed"] == 0, run.output[-3000:]
    assert 'The server "gone" could not be started: No such file or directory.' in run.output, run.failures()
    assert "is the program installed and on PATH?" in run.output, run.failures()


def test_an_inherited_ignored_sigchld_does_not_hide_the_servers_exit(tmp_path: Path) -> None:
    """A test process that ignores SIGCHLD passes the ignore on (exec keeps it): the kernel then
    reaps the server unseen, and the keeper read its exit as 0."""
    import subprocess

    from mcp_bdd.servers import _process

    report, theirs = os.pipe()
    keeper = subprocess.Popen(
        [sys.executable, "-I", "-S", str(_process._KEEPER), str(os.getpid()), str(theirs), "sh", "-c", "exit 3"],
        pass_fds=(theirs,),
        preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN),
    )
    os.close(theirs)
    try:
        assert keeper.wait(timeout=60) == 3
    finally:
        os.close(report)
