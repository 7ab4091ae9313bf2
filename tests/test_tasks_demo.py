"""Tasks end to end, beyond features/tasks (which tests/test_features.py runs on every transport:
2025-11-25's core Tasks, the 2026-07-28 extension's own rules, the routing headers of tasks
requests over streamable HTTP): the 2025-11-25 feature again on the extension, the phrases'
failures (a careless server, a server without tasks, a tool that forbids them, a task that
fails), and the reference TypeScript server-everything over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import REPO, make_project, run_behave

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]

FEATURE = (REPO / "features" / "tasks" / "report.feature").read_text()
EVERYTHING = REPO / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


@pytest.mark.parametrize("transport", ["in-memory", "stdio", "streamable-http"])
def test_the_tasks_feature_passes_on_the_2026_07_28_extension(tmp_path: Path, transport: str) -> None:
    """The same scenarios on 2026-07-28 (the io.modelcontextprotocol/tasks extension), but the
    task list: the extension has no tasks/list."""
    root = make_project(
        tmp_path, '[servers.reports]\napp = "demo.reports:create_server"\n', {"tasks/report.feature": FEATURE}
    )
    run = run_behave(root, "-D", f"transport={transport}", "--tags=not @legacy-only", timeout=240)
    assert run.returncode == 0 and run.counts()["passed"] == 5, run.failures()


BROKEN_TASKS = """
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from demo.reports import TaskMiddleware, TaskStore


class Careless:
    \"\"\"In front of the demo's tasks: forgets a task once it was seen ended, answers tasks/update without
    resultType, and makes a task of any call that carries the legacy hint.\"\"\"

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.told: set[str] = set()

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = dict(ctx.params or {})
        job = self.store.jobs.get(params.get("taskId"))
        if ctx.method == "tasks/get" and job is not None and job.terminal:
            if job.task_id in self.told:
                raise MCPError(code=-32602, message="no such task")
            self.told.add(job.task_id)
        if ctx.method == "tasks/update":
            return {}
        if ctx.method == "tools/call" and params.get("task") is not None:
            return {"resultType": "task", **self.store.start("ping", _pong, {}).wire(modern=True)}
        return await call_next(ctx)


async def _pong(args: dict[str, Any]) -> dict[str, Any]:
    return {"text": "pong"}


def create_server() -> MCPServer:
    store = TaskStore()

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as group:
            store.group = group
            yield {}
            group.cancel_scope.cancel()

    server = MCPServer("careless", lifespan=lifespan, middleware=[Careless(store), TaskMiddleware(store)])

    @server.tool()
    async def report(title: str, pages: int = 1) -> dict[str, Any]:
        \"\"\"A report.\"\"\"
        return {"title": title, "pages": pages}

    @server.tool()
    def ping() -> str:
        \"\"\"Pong.\"\"\"
        return "pong"

    return server
"""

CARELESS = """
Feature: a careless tasks server
  Background:
    Given the MCP server "careless" is running

  Scenario: it forgets a task that ended
    When I call the tool "report" as a task with:
      | title | pages |
      | Q1    | 1     |
    Then the task status becomes "completed"
    And the task is still available

  Scenario: its tasks/update answer says nothing
    When I call the tool "report" as a task with:
      | title | pages |
      | Q2    | 1     |
    And I send "tasks/update" for the task
    Then the answer has the result type "complete"

  Scenario: it makes a task of the legacy hint
    When I call the tool "ping" with the legacy task hint
    Then the tool call succeeds
"""


def test_a_careless_tasks_server_fails_each_phrase_naming_what_it_did(tmp_path: Path) -> None:
    """Each new Tasks phrase fails on the server that breaks its rule, and says what came instead."""
    config = '[servers.careless]\napp = "careless:create_server"\nprotocol = "2026-07-28"\n'
    root = make_project(tmp_path, config, {"careless.feature": CARELESS})
    (root / "careless.py").write_text(BROKEN_TASKS)
    run = run_behave(root, timeout=200)
    out = run.output
    assert run.counts()["failed"] == 3, out
    assert "The server no longer has the task" in out and "JSON-RPC error -32602: no such task" in out, out
    assert "The tasks/update answer has the wrong result type" in out and "no resultType" in out, out
    assert "the server made the call a task" in out and "removed 2025-11-25 task hint" in out, out


NO_TASKS = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("plain")


@app.tool()
def add(a: int, b: int) -> int:
    return a + b
"""

FAILURES = """
Feature: tasks that cannot be
  Scenario: a server without tasks
    Given the MCP server "plain" is running
    When I call the tool "add" as a task

  Scenario: a server without tasks has no tool that supports them
    Given the MCP server "plain" is running
    Then the tool "add" supports tasks

  Scenario: a tool that forbids tasks
    Given the MCP server "reports" is running
    When I call the tool "ping" as a task
    Then the task is created

  Scenario: a tool that does not require tasks
    Given the MCP server "reports" is running
    Then the tool "report" requires tasks

  Scenario: a task that fails, awaited
    Given the MCP server "reports" is running
    When I call the tool "report" as a task with:
      | title | pages |
      | Empty | 0     |
    And I wait for the task result

  Scenario: a task that fails, awaited as completed
    Given the MCP server "reports" is running
    When I call the tool "report" as a task with:
      | title | pages |
      | Empty | 0     |
    Then the task status becomes "completed"
"""


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_what_cannot_run_as_a_task_fails_at_once_naming_why(tmp_path: Path, protocol: str) -> None:
    """No wait for a timeout (timeout = 120 would show as a test timeout): each failure names the
    capability, the tool's execution.taskSupport (2025-11-25; on 2026-07-28 a tool that says
    nothing leaves it to the server, which may answer at once), or the task's status message."""
    config = f"""
timeout = 120
protocol = "{protocol}"
[servers.plain]
app = "servers:app"
[servers.reports]
app = "demo.reports:create_server"
"""
    root = make_project(tmp_path, config, {"fail.feature": FAILURES})
    (root / "servers.py").write_text(NO_TASKS)
    run = run_behave(root, timeout=100)
    assert run.counts()["failed"] == 6, run.output
    out = run.output
    capability = (
        "capabilities.tasks.requests.tools.call"
        if protocol == "legacy"
        else 'capabilities.extensions["io.modelcontextprotocol/tasks"]'
    )
    assert out.count('The server "plain" does not support tasks') == 2 and capability in out, out
    if protocol == "legacy":  # a tool that says nothing forbids tasks: no request is sent
        assert 'The tool "ping" cannot be called as a task' in out, out
        assert "no execution.taskSupport (absent means forbidden)" in out, out
    else:  # 2026-07-28: the server decides per call, and answered at once
        assert 'The server did not create a task for the tool "ping"' in out and "a plain tool result" in out, out
    assert 'The tool "report" does not require tasks' in out and "execution.taskSupport = 'optional'" in out, out
    assert 'The task of the tool "report" ended failed: a report needs at least one page' in out, out
    assert "The task ended failed ('a report needs at least one page')" in out, out


EVERYTHING_FEATURE = """
Feature: the reference server's research runs as a task
  Scenario: a research query
    Given the MCP server "everything" is running
    Then the tool "simulate-research-query" requires tasks
    When I call the tool "simulate-research-query" as a task with:
      | topic  |
      | tasks  |
    Then the task is created
    And the task status becomes "working"
    When I list the tasks
    Then the task list includes the task
    When I wait for the task result
    Then the tool call succeeds
    And the result text contains "Research Report: tasks"

  Scenario: a research query cancelled
    Given the MCP server "everything" is running
    When I call the tool "simulate-research-query" as a task with:
      | topic   |
      | nothing |
    When I cancel the task
    Then the task status becomes "cancelled"
"""


@pytest.mark.realworld
@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm install has not been run")
def test_server_everything_runs_its_research_as_a_task_over_stdio(tmp_path: Path) -> None:
    """The reference TypeScript server (2025-11-25): its task-required tool, followed to the end."""
    config = f"""
timeout = 30
startup_timeout = 30
[servers.everything]
command = ["node", "{EVERYTHING}", "stdio"]
protocol = "legacy"
"""
    root = make_project(tmp_path, config, {"everything.feature": EVERYTHING_FEATURE})
    run = run_behave(root, timeout=200)
    assert run.returncode == 0 and run.counts()["passed"] == 2, run.failures()
