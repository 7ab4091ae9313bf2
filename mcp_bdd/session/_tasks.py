"""Tasks: tool calls answered with a task handle, followed until a terminal state, both revisions.

Why here, by hand: the SDK (mcp 2.3) defines the 2025-11-25 Task types but no client for them,
and nothing of the 2026-07-28 Tasks extension. Worse, its `send_request` validates every
`tools/call` answer as a CallToolResult, so the CreateTaskResult a task-augmented call gets was
recorded as a protocol violation although the server had created the task. So:

- a task-augmented `tools/call` is sent by `send_as_task` (the session's `_send` calls it), and
  its answer is validated as what it is: a CreateTaskResult (2025-11-25: `{"task": Task}`;
  2026-07-28: `resultType: "task"` and the Task inline), or, when the server ignored the ask,
  a CallToolResult;
- `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` go through the session's own
  `_send` (recorded in the transcript like every request) and are validated here.

The two revisions:
- 2025-11-25 (core): `capabilities.tasks.requests.tools.call`; `params.task = {ttl?}` asks for a
  task; a tool's `execution.taskSupport` (absent = forbidden); `tasks/result` gives the tool
  result; `tasks/list`; `notifications/tasks/status`.
- 2026-07-28 (extension `io.modelcontextprotocol/tasks`): advertised in `capabilities.extensions`;
  the client declares it in the request's `_meta` client capabilities and the server decides per
  call; `ttlMs`/`pollIntervalMs`; `tasks/get` inlines `result` (or `error`) once terminal; no
  `tasks/list` and no `tasks/result`; `tasks/update` answers a task's input requests; every
  `tasks/*` request declares the extension in its own `_meta` (a server refuses one that does
  not, -32021) and names the task in the `Mcp-Name` header (streamable HTTP); status
  notifications `notifications/tasks` only on a `subscriptions/listen` stream with `taskIds`.

Waiting for a status polls `tasks/get` at the server's poll interval (bounded: it is untrusted),
and wakes early on a status notification for the task, when the session receives one.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeGuard, TypeVar

import mcp_types as types
from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value
from mcp_types import methods as _methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcp_bdd._sdk import send_stamped
from mcp_bdd.session._outcome import Outcome, dump

if TYPE_CHECKING:
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT

    from mcp_bdd.session._timeline import Timeline
    from mcp_bdd.transcript import Transcript


class Session(Protocol):
    """What of `_session.Session` the tasks need (a Protocol: `_session` imports this module)."""

    name: str
    timeout: float
    transcript: Transcript
    timeline: Timeline
    tools: list[dict[str, object]] | None

    @property
    def protocol_version(self) -> str: ...

    def request(self, request: Request, *, progress: bool = False) -> Outcome: ...

    def _run(self, fn: Callable[[], Awaitable[T]], limit: float | None = None) -> T: ...

    async def _send(self, request: Request, *, progress: bool = False, as_task: bool = False) -> Outcome: ...

    async def _list_pages(self, kind: str) -> list[dict[str, object]]: ...


__all__ = [
    "EXTENSION",
    "STATUSES",
    "TERMINAL",
    "Support",
    "TaskView",
    "asks_for_task",
    "call_as_task",
    "call_with_hint",
    "cancel_task",
    "get_task",
    "list_tasks",
    "send_about_task",
    "send_as_task",
    "support",
    "task_result",
    "wait_for_status",
]

EXTENSION = "io.modelcontextprotocol/tasks"
_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: the status notifications of each revision (2025-11-25, then the 2026-07-28 extension's)
STATUS_NOTIFICATIONS = ("notifications/tasks/status", "notifications/tasks")
#: bounds on the server's pollInterval (untrusted): never a busy loop, never a minute's nap
_POLL_MIN_S, _POLL_DEFAULT_S, _POLL_MAX_S = 0.01, 0.5, 5.0
_MAX_PAGES = 1000
T = TypeVar("T")
#: a request as the SDK's `send_request` takes it (its own parameter type): one of the spec's, or a
#: tasks request of ours
Request = types.ClientRequest | types.Request[Any, Any]


class ExtensionTask(BaseModel):
    """A Task as the 2026-07-28 extension spells it (the SDK has no model of it)."""

    model_config = ConfigDict(extra="allow")
    task_id: str = Field(alias="taskId")
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None = Field(default=None, alias="statusMessage")
    created_at: str = Field(alias="createdAt")
    last_updated_at: str = Field(alias="lastUpdatedAt")
    ttl_ms: int | None = Field(alias="ttlMs")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")
    result: dict[str, object] | None = None
    error: dict[str, object] | None = None


class TasksRequest(types.Request[dict[str, object], str]):
    """Any `tasks/*` request, by its method name: the ones the extension defines and the ones it
    removed (a server must refuse `tasks/result` and `tasks/list` on 2026-07-28, so they must be
    sendable). On 2026-07-28 it goes out through `send_tasks_request`."""

    #: whether a 2026-07-28 request declares the extension in its `_meta` client capabilities
    #: (False: to see the server refuse it); never sent itself
    declares: bool = Field(default=True, exclude=True)


class HintedCall(types.CallToolRequest):
    """A tools/call carrying the 2025-11-25 `params.task` hint even on 2026-07-28, where the
    extension removed it: a server must ignore it (no error, no task for a tool without tasks)."""

    keeps_hint: ClassVar[bool] = True


def tasks_request(method: str, task_id: str, *, declares: bool = True) -> TasksRequest:
    """The request `method` about the task `task_id` (tasks/list takes no task, tasks/update
    carries no input responses)."""
    params: dict[str, object] = {} if method == "tasks/list" else {"taskId": task_id}
    if method == "tasks/update":
        params["inputResponses"] = {}
    return TasksRequest(method=method, params=params, declares=declares)


def is_tasks_request(request: Request, version: str) -> TypeGuard[TasksRequest]:
    """Whether `request` goes out through `send_tasks_request` (2026-07-28 only: on 2025-11-25
    tasks are core, declared once at initialize, and the SDK sends them as any request)."""
    return isinstance(request, TasksRequest) and is_modern(version)


async def send_tasks_request(client: Client, request: TasksRequest) -> dict[str, object]:
    """A 2026-07-28 `tasks/*` request, raw: stamped as the SDK stamps, the extension declared for
    this request only (as a call as a task declares it: a plain call must never get a task back),
    and the task id as the `Mcp-Name` routing header (SEP-2663 over streamable HTTP)."""
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    task_id = request.params.get("taskId")
    headers = {MCP_NAME_HEADER: encode_header_value(task_id)} if isinstance(task_id, str) else None
    return await send_stamped(client.session, data, _declaring if request.declares else _as_is, headers=headers)


def _declaring(params: dict[str, object]) -> None:
    """The extension added to the request's own client capabilities (a copy: the SDK shares the
    session's capabilities dict between requests). The `_meta` is the SDK's stamp: objects."""
    meta = params.setdefault("_meta", {})
    if not isinstance(meta, dict):
        raise TypeError(f"the stamped _meta is {type(meta).__name__}, not an object")
    caps = dict(_object(meta.get(_CAPABILITIES_META)))
    caps["extensions"] = {**_object(caps.get("extensions")), EXTENSION: {}}
    meta[_CAPABILITIES_META] = caps


def _object(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one (nothing there yet)."""
    return value if isinstance(value, dict) else {}


def _as_is(params: dict[str, object]) -> None:
    return None


@dataclass(frozen=True)
class TaskView:
    """One task as last seen (a CreateTaskResult, a tasks/get answer or a status notification)."""

    task_id: str
    status: str
    message: str | None
    poll_s: float  # the server's suggested poll interval, bounded
    raw: dict[str, object]  # the Task as sent

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def said(self) -> str:
        """Status and message, for failures: `failed ("a report needs at least one page")`."""
        return self.status + (f" ({self.message!r})" if self.message else "")


@dataclass(frozen=True)
class Support:
    """What the server offers for tasks at the negotiated revision."""

    revision: str  # "2025-11-25" (core) or "2026-07-28" (the extension)
    offered: bool
    where: str  # the capability that says so, for messages
    lists: bool  # tasks/list
    cancels: bool  # tasks/cancel

    @property
    def modern(self) -> bool:
        return self.revision == "2026-07-28"


def is_modern(version: str) -> bool:
    return version in MODERN_PROTOCOL_VERSIONS


def support(client: Client) -> Support:
    """The server's tasks capability: `capabilities.tasks` (2025-11-25) or the extension (2026-07-28)."""
    caps = dump(client.server_capabilities)
    if is_modern(client.protocol_version):
        offered = EXTENSION in _object(caps.get("extensions"))
        return Support("2026-07-28", offered, f'capabilities.extensions["{EXTENSION}"]', False, offered)
    tasks = _object(caps.get("tasks"))
    call = _object(_object(tasks.get("requests")).get("tools")).get("call")
    return Support(
        "2025-11-25", call is not None, "capabilities.tasks.requests.tools.call", "list" in tasks, "cancel" in tasks
    )


def task_support(tool: dict[str, object]) -> str | None:
    """A listed tool's `execution.taskSupport` as sent, or None when it says nothing."""
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return str(value)[:40] if value is not None else None


def asks_for_task(method: str, params: dict[str, object]) -> bool:
    """A tools/call whose `params.task` asks for a task (2025-11-25): its answer is a CreateTaskResult."""
    return method == "tools/call" and isinstance(params.get("task"), dict)


async def send_as_task(client: Client, request: Request, on_progress: ProgressFnT | None = None) -> dict[str, object]:
    """Send a task-augmented tools/call and return its answer, validated as a CreateTaskResult
    (or as a CallToolResult, when the server chose to answer at once).

    Why below `send_request`: it validates a tools/call answer as a CallToolResult, and on
    2026-07-28 stamps the client capabilities the client was built with, while the extension is
    declared for this call only (a plain call must never get a task back). So the request is
    stamped as the SDK stamps it, then sent raw (`_sdk.send_stamped`).
    """
    version = client.protocol_version
    data: dict[str, object] = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    params = data.get("params")
    if is_modern(version) and not getattr(request, "keeps_hint", False) and isinstance(params, dict):
        params.pop("task", None)  # 2025-11-25 only: the extension is declared instead
    raw = await send_stamped(client.session, data, _declaring if is_modern(version) else _as_is, on_progress)
    _check_answer(raw, version)
    return raw


def _check_answer(raw: dict[str, object], version: str) -> None:
    """Raises ValidationError when the answer is neither a CreateTaskResult nor a tool result."""
    if is_modern(version) and raw.get("resultType") == "task":
        ExtensionTask.model_validate(raw)
    elif not is_modern(version) and "task" in raw:
        types.CreateTaskResult.model_validate(raw, by_name=False)
    else:
        _methods.validate_server_result("tools/call", version, raw)


def created(raw: dict[str, object] | None, version: str) -> TaskView | None:
    """The task a tools/call answer created, or None (a plain tool result, or nothing)."""
    if raw is None:
        return None
    if is_modern(version):
        return _view(raw) if raw.get("resultType") == "task" else None
    task = raw.get("task")
    return _view(task) if isinstance(task, dict) else None


def _view(task: dict[str, object]) -> TaskView:
    poll = task.get("pollIntervalMs", task.get("pollInterval"))
    poll_s = poll / 1000 if isinstance(poll, int | float) and not isinstance(poll, bool) else _POLL_DEFAULT_S
    message = task.get("statusMessage")
    return TaskView(
        str(task.get("taskId"))[:200],
        str(task.get("status"))[:40],
        str(message)[:500] if message is not None else None,
        min(max(poll_s, _POLL_MIN_S), _POLL_MAX_S),
        task,
    )


def call_as_task(
    session: Session,
    name: str,
    arguments: Callable[[dict[str, object] | None], dict[str, object]],
    ttl: int | None = None,
) -> Outcome:
    """Call a tool as a task: the listing (when none was taken), the arguments (a function of the
    tool as listed, e.g. a coerced table) and the call in one portal call, as `call_tool` does."""

    async def call() -> Outcome:
        listed = session.tools if session.tools is not None else await session._list_pages("tools")
        args = arguments(next((t for t in listed if t.get("name") == name), None))
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name=name, arguments=args, task=types.TaskMetadata(ttl=ttl))
        )
        return await session._send(request, progress=True, as_task=True)

    return session._run(call)


def call_with_hint(session: Session, name: str) -> Outcome:
    """Call a tool, without arguments, with the 2025-11-25 task hint (`params.task`) kept on any
    revision. On 2026-07-28 a server must ignore the hint: a task in the answer is no usable
    result, and the outcome says so (every Tool outcome step then fails naming it)."""
    hint = types.TaskMetadata(ttl=60_000)
    request = HintedCall(params=types.CallToolRequestParams(name=name, arguments={}, task=hint))
    outcome = session.request(request, progress=True)
    version = session.protocol_version
    made = created(outcome.raw, version) if is_modern(version) else None
    if made is None:
        return outcome
    return replace(
        outcome,
        raw=None,
        exception=f"the server made the call a task ({made.task_id!r}, {made.said()}) on the removed 2025-11-25 "
        "task hint, where a 2026-07-28 server ignores it",
    )


def send_about_task(
    session: Session, method: str, task_id: str, *, declares: bool = True
) -> tuple[Outcome, TaskView | None]:
    """Any tasks method about the task `task_id` (tasks/list: about none), its outcome, and the
    task as a tasks/get that succeeded shows it. `declares`: as for `get_task`."""
    if method == "tasks/get":
        return get_task(session, task_id, declares=declares)
    return session.request(tasks_request(method, task_id, declares=declares)), None


def _validated(session: Session, outcome: Outcome, check: Callable[[dict[str, object]], object]) -> Outcome:
    """The outcome, or one marked as a protocol violation when its answer does not fit `check`."""
    if outcome.raw is None:
        return outcome
    try:
        check(outcome.raw)
    except ValidationError as exc:
        errors = exc.errors()
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
        said = (errors[0]["msg"] if errors else exc.title) + (f" at {where}" if where else "")
        session.transcript.record(
            "error", session.name, outcome.method, {"message": f"does not fit the schema: {said}"}, related=outcome.seq
        )
        return replace(
            outcome,
            raw=None,
            protocol_violation=True,
            exception=f"the server's {outcome.method} result does not fit the MCP schema: {said}",
        )
    return outcome


def _task_check(version: str) -> Callable[[dict[str, object]], object]:
    if is_modern(version):
        return ExtensionTask.model_validate
    return lambda raw: types.GetTaskResult.model_validate(raw, by_name=False)


def get_task(session: Session, task_id: str, *, declares: bool = True) -> tuple[Outcome, TaskView | None]:
    """tasks/get: the task as the server sees it now (validated as a Task of the revision).
    `declares`: False leaves the extension out of a 2026-07-28 request (the server must refuse it)."""
    version = session.protocol_version
    outcome = session.request(tasks_request("tasks/get", task_id, declares=declares))
    outcome = _validated(session, outcome, _task_check(version))
    return outcome, (_view(outcome.raw) if outcome.raw is not None else None)


def cancel_task(session: Session, task_id: str) -> Outcome:
    """tasks/cancel (2025-11-25 answers with the Task; 2026-07-28 with an empty acknowledgement)."""
    version = session.protocol_version
    outcome = session.request(tasks_request("tasks/cancel", task_id))
    if is_modern(version):
        return outcome
    return _validated(session, outcome, lambda raw: types.CancelTaskResult.model_validate(raw, by_name=False))


def list_tasks(session: Session) -> tuple[Outcome, list[dict[str, object]]]:
    """tasks/list, every page (2025-11-25 only); a repeated cursor ends the listing."""
    tasks: list[dict[str, object]] = []
    cursor: str | None = None
    seen: set[str] = set()
    outcome = Outcome("tasks/list", {})
    for _ in range(_MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        outcome = session.request(types.ListTasksRequest(params=params))
        outcome = _validated(session, outcome, lambda raw: types.ListTasksResult.model_validate(raw, by_name=False))
        if outcome.raw is None:
            break
        listed = outcome.raw.get("tasks")
        if isinstance(listed, list):
            tasks.extend(t for t in listed if isinstance(t, dict))
        after = outcome.raw.get("nextCursor")
        if not isinstance(after, str) or not after or after in seen:
            break
        cursor = after
        seen.add(cursor)
    return outcome, tasks


def task_result(session: Session, task: TaskView, call: Outcome) -> Outcome:
    """The task's tool result as the outcome of its tools/call (so every Tool outcome and Results
    step reads it): tasks/result on 2025-11-25, the `result` a completed task inlines on 2026-07-28.
    Validated as a CallToolResult."""
    version = session.protocol_version
    if is_modern(version):
        inline = task.raw.get("result")
        # the inlined result is the tool's CallToolResult; a resultType absent there means "complete"
        outcome = replace(call, raw={"resultType": "complete", **inline} if isinstance(inline, dict) else None)
        if outcome.raw is None:
            outcome = replace(call, raw=None, exception=f"the completed task {task.task_id} carries no result")
    else:
        payload = types.GetTaskPayloadRequestParams(task_id=task.task_id)
        fetched = session.request(types.GetTaskPayloadRequest(params=payload))
        outcome = replace(fetched, method="tools/call", params=call.params)
    return _validated(session, outcome, lambda raw: _methods.validate_server_result("tools/call", version, raw))


def wait_for_status(
    session: Session, task: TaskView, done: Callable[[TaskView], bool], timeout: float
) -> tuple[TaskView, Outcome | None]:
    """Follow the task until `done` (or a terminal status) or `timeout` s: poll tasks/get at the
    server's poll interval, and wake early on a status notification for it, whichever comes
    first. Returns the task as last seen and the failed tasks/get, if one failed."""
    deadline = time.monotonic() + timeout
    seen = task
    while True:
        outcome, now = get_task(session, task.task_id)
        if now is None:
            return seen, outcome
        seen = now
        if done(seen) or seen.terminal:
            return seen, None
        left = deadline - time.monotonic()
        if left <= 0:
            return seen, None
        pushed = _notified(session, task.task_id, min(seen.poll_s, left))
        if pushed is not None and (done(pushed) or pushed.terminal):
            return pushed, None


def _notified(session: Session, task_id: str, wait: float) -> TaskView | None:
    """A status notification for the task that arrives within `wait` s, or None (the poll is due)."""
    timeline = session.timeline
    before = {m: timeline.count(m) for m in STATUS_NOTIFICATIONS}

    def arrived() -> bool:
        return any(timeline.count(m) > n for m, n in before.items())

    if not timeline.wait_until(arrived, wait):
        return None
    for method in STATUS_NOTIFICATIONS:
        last = timeline.last(method)
        if timeline.count(method) > before[method] and last is not None and last.get("taskId") == task_id:
            return _view(last)
    return None


#: the names the package exports (`mcp_bdd.session`): what each is, without the module's context
TASK_STATUSES = STATUSES
TaskSupport = Support
created_task = created
tasks_offered = support
