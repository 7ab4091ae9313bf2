"""behave's thread and the event loop's share a CPU only while mcp-bdd's own code runs
(`mcp_bdd/_turns.py`): read from the kernel's affinity masks in a real behave run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from behave_project import make_project, run_behave

from mcp_bdd._turns import Turns

ALL = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
pytestmark = pytest.mark.skipif(len(ALL) < 2, reason="pinning needs a Linux machine with two CPUs or more")

SERVER = """
import json
import os
import threading

from mcp.server.mcpserver import MCPServer


def note(label, loop_thread):
    # behave's thread is the process's main thread: its kernel id is the pid
    seen = {"label": label, "behave": sorted(os.sched_getaffinity(os.getpid()))}
    if loop_thread:
        seen["loop"] = sorted(os.sched_getaffinity(loop_thread))
    with open(os.environ["CPUS_OUT"], "a") as out:
        out.write(json.dumps(seen) + "\\n")


def create_server():
    # the project's code, run by mcp-bdd inside the server step: on every CPU, and so what it starts
    note("factory", 0)
    started = threading.Thread(target=note, args=("factory's thread", 0))
    started.start()
    started.join()
    mcp = MCPServer("cpus")

    @mcp.tool()
    async def cpus(label: str) -> str:
        # async: it runs in the event loop's own thread, where this process has one
        note(label, threading.get_native_id())
        return label

    return mcp
"""

STEPS = """
import threading

from behave import when

from cpus_server import note
from mcp_bdd.fakes import fake


@fake("probe")
def probe(ctx):
    note("fake setup", 0)
    yield {"label": "probe"}
    note("fake cleanup", 0)


@when("my own step notes its CPUs")
def own_step(context):
    note("own step", context.mcp.portal.call(threading.get_native_id))
    # a session's hop from a project's step: the pin a vocabulary step armed is not carried here
    context.mcp.sessions["cpus"].call_tool("cpus", {"label": "own step's hop"})


@when("my own step notes its CPUs after a failure")
def own_step_after_failure(context):
    note("own step after a failure", context.mcp.portal.call(threading.get_native_id))
"""

ENVIRONMENT = """
from cpus_server import note


def before_step(context, step):
    note("project's before_step of " + step.name.split()[0], 0)


from mcp_bdd.chain import chain_hooks  # noqa: E402

chain_hooks(globals())
"""

FEATURE = """
Feature: CPUs
  Scenario: pinned while mcp-bdd works, free in the project's own step and in what mcp-bdd starts
    Given the MCP server "cpus" is running
    When I call the tool "cpus" with:
      | label           |
      | vocabulary step |
    Then the tool call succeeds
    When my own step notes its CPUs
    Given the MCP server "child" is running
    When I call the tool "cpus" on "child" with:
      | label         |
      | child process |
    Then the tool call succeeds

  Scenario: a vocabulary step that fails lets go of the CPU too
    Given the MCP server "cpus" is running
    When I call the tool "cpus" with:
      | label        |
      | failing step |
    Then the result at "$.result" is "something else"

  Scenario: the next scenario's own step is free
    When my own step notes its CPUs after a failure
"""


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> dict[str, dict[str, list[int]]]:
    config = f"""
    [servers.cpus]
    app = "cpus_server:create_server"
    env = {{ PROBE = "${{fake.probe.label}}" }}
    [servers.child]
    command = ["{sys.executable}", "-m", "mcp_bdd.serve", "cpus_server:create_server", "--transport", "stdio"]
    """
    root = make_project(tmp_path, config, {"cpus.feature": FEATURE})
    (root / "cpus_server.py").write_text(SERVER)
    (root / "steps" / "own_steps.py").write_text(STEPS)
    (root / "environment.py").write_text(ENVIRONMENT)
    out = root / "cpus.jsonl"
    monkeypatch.setenv("CPUS_OUT", str(out))  # behave and the servers it starts inherit it
    run = run_behave(root, *args)
    assert run.counts()["failed"] == 1 and run.counts()["passed"] == 2, run.output[-3000:]
    seen = [json.loads(line) for line in out.read_text().splitlines()]
    return {entry.pop("label"): entry for entry in seen}  # the last of each label


def test_behave_and_the_loop_share_one_cpu_only_while_a_vocabulary_step_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _run(tmp_path, monkeypatch)
    during = seen["vocabulary step"]
    assert len(during["behave"]) == 1 and during["loop"] == during["behave"], seen
    assert seen["own step"] == {"behave": ALL, "loop": ALL}, seen
    assert seen["own step's hop"] == {"behave": ALL, "loop": ALL}, seen
    # a server process a vocabulary step started (a keeper, then the server) got every CPU back
    assert seen["child process"]["behave"] == ALL, seen
    # the project's code mcp-bdd runs inside a vocabulary step, and what it starts, stays free
    for project_code in ("factory", "factory's thread", "fake setup", "fake cleanup", "project's before_step of I"):
        assert seen[project_code] == {"behave": ALL}, (project_code, seen)
    # pinned again once the project's code returned to mcp-bdd's
    assert len(seen["failing step"]["behave"]) == 1, seen
    assert seen["own step after a failure"] == {"behave": ALL, "loop": ALL}, seen


def test_pin_threads_false_leaves_every_thread_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _run(tmp_path, monkeypatch, "-D", "pin_threads=false")
    assert seen["vocabulary step"] == {"behave": ALL, "loop": ALL}, seen


def test_an_affinity_call_that_fails_turns_pinning_off_and_frees_the_thread() -> None:
    """A loop thread the kernel does not know (an id above the largest it hands out): the pin is
    undone and never tried again. It is a speed-up, never a reason for a step to fail."""
    turns = Turns(int(Path("/proc/sys/kernel/pid_max").read_text()) + 1)
    assert turns.on
    try:
        turns.pin()
        assert not turns.on and not turns.pinned
        assert sorted(os.sched_getaffinity(0)) == ALL
        turns.pin()
        assert sorted(os.sched_getaffinity(0)) == ALL
    finally:
        os.sched_setaffinity(0, ALL)


def test_a_vocabulary_step_pins_at_its_first_hop_from_behaves_thread_and_never_inside_free() -> None:
    """`arm` (before_step) makes no system call: a step that never hops stays free; the first hop
    from behave's thread pins; a hop from another thread, or from project code under `free`, does
    not; `release` disarms, so a later hop (a project's own step) pins nothing."""
    import asyncio
    import threading

    from mcp_bdd import _turns

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        turns = Turns(asyncio.run_coroutine_threadsafe(_turns.loop_thread_id(), loop).result(timeout=30))
        turns.arm()
        assert not turns.pinned and sorted(os.sched_getaffinity(0)) == ALL
        elsewhere = threading.Thread(target=_turns.at_hop)
        elsewhere.start()
        elsewhere.join()
        assert not turns.pinned
        _turns.at_hop()
        assert turns.pinned and len(os.sched_getaffinity(0)) == 1
        with _turns.free():
            assert sorted(os.sched_getaffinity(0)) == ALL
            _turns.at_hop()  # the project's code hops: still free
            assert not turns.pinned and sorted(os.sched_getaffinity(0)) == ALL
        assert not turns.pinned and _turns._ARMED is turns  # armed again: the step's next hop pins
        turns.release()
        _turns.at_hop()
        assert not turns.pinned and sorted(os.sched_getaffinity(0)) == ALL
    finally:
        turns.release()
        os.sched_setaffinity(0, ALL)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()
