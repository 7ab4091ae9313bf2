"""A demo server whose slow tools run as tasks: reports built in the background, fetched later.

The SDK's MCPServer (mcp 2.3) defines the Tasks types but serves none of it: no `tasks/*` methods,
no `capabilities.tasks`, no `execution.taskSupport` on a tool, and on 2025-11-25 it rejects a
`tools/call` result that is a task (it validates every tools/call answer as a CallToolResult).
So the task handling lives in one `ServerMiddleware` (`TaskMiddleware`), which sees each request
before the SDK validates it and may answer it itself, for both protocol revisions:

- 2025-11-25 (core Tasks): `capabilities.tasks` in the initialize result; `params.task` on a
  `tools/call` asks for a task; `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`.
- 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the extension in the
  `server/discover` capabilities; a client that declares it in a request's `_meta` client
  capabilities may get `resultType: "task"`; `tasks/get` (the result inlined once completed),
  `tasks/update` and `tasks/cancel`, each refused without the extension in its own `_meta`
  (-32021) and, over HTTP, without the task id as its `Mcp-Name` header (-32020); no
  `tasks/list` or `tasks/result`.

Tools: `report` (tasks optional: a plain call answers at once), `archive` (tasks required) and
`ping` (no tasks: `execution.taskSupport` absent, which means forbidden). A report of 0 pages
fails, with a status message that says why.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import decode_header_value
from mcp_types import HEADER_MISMATCH, INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
POLL_MS = 50
TTL_MS = 60_000
SECONDS_PER_PAGE = 0.02
MAX_TASKS = 1000  # a demo's bound: the oldest finished task goes first

Work = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


async def build_report(args: dict[str, Any]) -> dict[str, Any]:
    """The report itself: a page takes SECONDS_PER_PAGE; 0 pages is an error the caller should see."""
    title, pages = str(args.get("title", "report")), int(args.get("pages", 1))
    if pages < 1:
        raise ValueError("a report needs at least one page")
    await anyio.sleep(pages * SECONDS_PER_PAGE)
    return {"title": title, "pages": pages, "status": "ready"}


async def archive_reports(args: dict[str, Any]) -> dict[str, Any]:
    """Archiving: slow enough that it only ever runs as a task."""
    year = int(args.get("year", 2025))
    await anyio.sleep(3 * SECONDS_PER_PAGE)
    return {"year": year, "archived": 12}


#: the tools that may run as tasks: their work and `execution.taskSupport`
TASK_TOOLS: dict[str, tuple[Work, str]] = {
    "report": (build_report, "optional"),
    "archive": (archive_reports, "required"),
}


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _tool_result(value: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value, "isError": False}


@dataclass
class Job:
    """One task: its state as tasks/get shows it, and what the work produced."""

    task_id: str
    tool: str
    status: str = "working"
    message: str | None = None
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def set(self, status: str, message: str | None) -> None:
        self.status, self.message, self.updated = status, message, _now()

    @property
    def terminal(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    def wire(self, modern: bool) -> dict[str, Any]:
        """The Task as the revision spells it (2026: ttlMs/pollIntervalMs, the outcome inlined)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
        }
        if self.message is not None:
            task["statusMessage"] = self.message
        if not modern:
            return {**task, "ttl": TTL_MS, "pollInterval": POLL_MS}
        task.update(ttlMs=TTL_MS, pollIntervalMs=POLL_MS)
        if self.status == "completed" and self.result is not None:
            task["result"] = self.result
        if self.status == "failed" and self.error is not None:
            task["error"] = self.error
        return task


class TaskStore:
    """The server's tasks, run in the task group of its lifespan (they outlive the request)."""

    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self.group: anyio.abc.TaskGroup | None = None

    def start(self, tool: str, work: Work, args: dict[str, Any]) -> Job:
        if self.group is None:
            raise MCPError(code=INVALID_PARAMS, message="tasks are not available: the server is not running")
        if len(self.jobs) >= MAX_TASKS:
            oldest = next((k for k, j in self.jobs.items() if j.terminal), None)
            if oldest is not None:
                del self.jobs[oldest]
        job = Job(str(uuid.uuid4()), tool, message="started")
        self.jobs[job.task_id] = job
        self.group.start_soon(self._run, job, work, args)
        return job

    async def _run(self, job: Job, work: Work, args: dict[str, Any]) -> None:
        with job.scope:
            try:
                value = await work(args)
            except Exception as exc:
                job.error = {"code": INVALID_PARAMS, "message": str(exc)}
                job.set("failed", str(exc))
                return
            job.result = _tool_result(value)
            job.set("completed", "done")
        if job.scope.cancelled_caught and not job.terminal:
            job.set("cancelled", "cancelled by the client")

    def get(self, params: Mapping[str, Any] | None) -> Job:
        task_id = (params or {}).get("taskId")
        job = self.jobs.get(task_id) if isinstance(task_id, str) else None
        if job is None:
            raise MCPError(code=INVALID_PARAMS, message=f"no task {task_id!r}")
        return job


def _declares_tasks(params: Mapping[str, Any]) -> bool:
    """Whether a 2026-07-28 request carries the extension in its per-request client capabilities."""
    meta = params.get("_meta")
    caps = meta.get(CAPABILITIES_META) if isinstance(meta, Mapping) else None
    extensions = caps.get("extensions") if isinstance(caps, Mapping) else None
    return isinstance(extensions, Mapping) and EXTENSION in extensions


#: the 2026-07-28 methods about one task: the extension must be declared, Mcp-Name is its id
_ABOUT_A_TASK = ("tasks/get", "tasks/update", "tasks/cancel")
#: 2025-11-25's: no tasks/update, and tasks/result fetches the result
_LEGACY_ABOUT_A_TASK = ("tasks/get", "tasks/cancel", "tasks/result")


def _check_task_request(method: str, params: Mapping[str, Any], headers: Mapping[str, str] | None) -> None:
    """What SEP-2663 asks of a request about a task, before the task is looked up: over HTTP the
    `Mcp-Name` header is the task id (-32020, as the SDK does for a call's tool name; it knows
    only calls, prompts and reads), and the request declares the extension (-32021). The routing
    headers are Streamable HTTP's: a POST of the SSE transport, which predates them, carries no
    `Mcp-Method` and is not held to them."""
    routed = headers is not None and "mcp-method" in headers
    if routed and decode_header_value(headers.get("mcp-name")) != params.get("taskId"):
        raise MCPError(code=HEADER_MISMATCH, message="Mcp-Name header does not match the request body's 'taskId'")
    if not _declares_tasks(params):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"{method} needs the {EXTENSION} extension in the request's client capabilities",
            data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )


class TaskMiddleware:
    """Tasks for MCPServer, both revisions, in front of the SDK's own handling (see the module doc)."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        method, params = ctx.method, dict(ctx.params or {})
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if method == "tools/call" and params.get("name") in TASK_TOOLS:
            created = await self._call(params, modern)
            if created is not None:
                return created
        elif method.startswith("tasks/"):
            if modern and method in _ABOUT_A_TASK:
                _check_task_request(method, params, getattr(ctx.request, "headers", None))
            return self._tasks(method, params, modern)
        result = await call_next(ctx)
        if method in ("initialize", "server/discover", "tools/list") and isinstance(result, dict):
            self._advertise(method, result)
        return result

    async def _call(self, params: dict[str, Any], modern: bool) -> dict[str, Any] | None:
        """A task for a task-augmented call; None lets the SDK answer a plain call of an optional tool."""
        name = str(params["name"])
        work, support = TASK_TOOLS[name]
        asked = _declares_tasks(params) if modern else isinstance(params.get("task"), Mapping)
        if not asked:
            if support != "required":
                return None
            if modern:
                raise MCPError(
                    code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                    message=f'the tool "{name}" runs only as a task',
                    data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
                )
            raise MCPError(code=METHOD_NOT_FOUND, message=f'the tool "{name}" must be called as a task')
        job = self.store.start(name, work, dict(params.get("arguments") or {}))
        if modern:
            return {"resultType": "task", **job.wire(modern=True)}
        return {"task": job.wire(modern=False)}

    def _tasks(self, method: str, params: dict[str, Any], modern: bool) -> dict[str, Any]:
        if method == "tasks/list" and not modern:
            return {"tasks": [job.wire(modern=False) for job in self.store.jobs.values()]}
        if method not in (_ABOUT_A_TASK if modern else _LEGACY_ABOUT_A_TASK):
            # before the task is looked up: a method the revision lacks is unknown whatever it names
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method)
        job = self.store.get(params)
        if method == "tasks/get":
            return {"resultType": "complete", **job.wire(True)} if modern else job.wire(False)
        if method == "tasks/update":
            # the answers to a task's input requests: these tasks ask for none, so every answer is
            # one nobody asked for, which a server ignores; the acknowledgement carries nothing else
            return {"resultType": "complete"}
        if method == "tasks/cancel":
            if job.terminal:
                raise MCPError(code=INVALID_PARAMS, message=f"the task is already {job.status}")
            job.scope.cancel()
            job.set("cancelled", "cancelled by the client")
            return {"resultType": "complete"} if modern else job.wire(False)
        if job.status == "completed" and job.result is not None:  # tasks/result (2025-11-25)
            return {**job.result, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": job.task_id}}}
        raise MCPError(code=INVALID_PARAMS, message=f"the task is {job.status}: {job.message}")

    @staticmethod
    def _advertise(method: str, result: dict[str, Any]) -> None:
        """Say what the SDK cannot: the tasks capability (or extension) and each tool's taskSupport."""
        if method == "initialize":
            result.setdefault("capabilities", {})["tasks"] = {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
        elif method == "server/discover":
            result.setdefault("capabilities", {}).setdefault("extensions", {})[EXTENSION] = {}
        else:
            for tool in result.get("tools") or []:
                if tool.get("name") in TASK_TOOLS:
                    tool["execution"] = {"taskSupport": TASK_TOOLS[tool["name"]][1]}


def create_server() -> MCPServer:
    """A fresh server with its own task store."""
    store = TaskStore()

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as group:
            store.group = group
            yield {}
            group.cancel_scope.cancel()  # unfinished tasks end with the server
        store.group = None

    server = MCPServer(
        "reports",
        version="1.0.0",
        instructions="Builds reports; long ones run as tasks.",
        lifespan=lifespan,
        middleware=[TaskMiddleware(store)],
    )

    @server.tool()
    async def report(title: str, pages: int = 1) -> dict[str, Any]:
        """Build a report of `pages` pages (0.02 s a page). Runs as a task when the client asks."""
        return await build_report({"title": title, "pages": pages})

    @server.tool()
    async def archive(year: int) -> dict[str, Any]:
        """Archive a year's reports. Runs only as a task."""
        return await archive_reports({"year": year})

    @server.tool()
    def ping() -> str:
        """Answer at once; never a task."""
        return "pong"

    return server
