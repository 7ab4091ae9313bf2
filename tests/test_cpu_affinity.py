"""An in-memory server runs in the test process, in the run's event loop: whatever CPUs the run
was given, its code and what it starts get all of them (design.md: nothing is patched for speed).
Read from the kernel's affinity masks in a real behave run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from behave_project import make_project, run_behave

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="affinity masks are Linux's")

SERVER = """
import json
import os
import subprocess
import sys
import threading

from mcp.server.mcpserver import MCPServer

CHILD = "import json, os; print(json.dumps(sorted(os.sched_getaffinity(0))))"


def create_server():
    mcp = MCPServer("cpus")

    @mcp.tool()
    async def in_the_loop() -> str:
        # async: it runs in the event loop's own thread
        child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
        return json.dumps({"loop": sorted(os.sched_getaffinity(0)), "child": json.loads(child.stdout)})

    @mcp.tool()
    def in_a_worker() -> str:
        # sync: a worker thread the loop hands it to
        return json.dumps({"worker": sorted(os.sched_getaffinity(0))})

    return mcp
"""

STEPS = """
import json
import os

from behave import then


@then("the CPUs it saw are noted")
def note(context):
    seen = json.loads(context.mcp.last.text)
    with open(os.environ["CPUS_OUT"], "a") as out:
        out.write(json.dumps(seen) + "\\n")
"""

FEATURE = """
Feature: CPUs
  Scenario: an in-process server's code and the process it starts see every CPU of the run
    Given the MCP server "cpus" is running
    When I call the tool "in_the_loop"
    Then the tool call succeeds
    And the CPUs it saw are noted
    When I call the tool "in_a_worker"
    Then the tool call succeeds
    And the CPUs it saw are noted
"""


def test_an_in_process_servers_code_and_its_children_see_every_cpu_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, '[servers.cpus]\napp = "cpus_server:create_server"\n', {"cpus.feature": FEATURE})
    (root / "cpus_server.py").write_text(SERVER)
    (root / "steps" / "notes.py").write_text(STEPS)
    out = tmp_path / "cpus.jsonl"
    monkeypatch.setenv("CPUS_OUT", str(out))
    run = run_behave(root, "-f", "plain")
    assert run.returncode == 0, run.failures()
    seen: dict[str, list[int]] = {}
    for line in out.read_text().splitlines():
        seen.update(json.loads(line))
    every = sorted(os.sched_getaffinity(0))  # behave inherits this process's mask
    assert seen == {"loop": every, "child": every, "worker": every}, run.output[-2000:]
