"""Tasks: tool calls the server answers with a task, followed until a terminal state.

"The task" is the last task this scenario created. A server that does not offer tasks, or a tool
that forbids them, fails the step at once, naming the capability or the tool's
`execution.taskSupport`: nothing waits for a timeout. Both revisions: the 2025-11-25 core Tasks
(`capabilities.tasks`) and the 2026-07-28 extension `io.modelcontextprotocol/tasks` (see
`mcp_bdd.session._tasks`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from mcp_bdd._text import did_you_mean, produced_by
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.runtime import ScenarioState
from mcp_bdd.session import (
    TASK_STATUSES,
    Outcome,
    Session,
    TaskSupport,
    TaskView,
    call_as_task,
    call_with_hint,
    cancel_task,
    created_task,
    get_task,
    list_tasks,
    send_about_task,
    task_result,
    task_support,
    tasks_offered,
    wait_for_status,
)
from mcp_bdd.steps._base import StepContext, coerce_arguments, current_session, keep_call, state, text, then, when


@dataclass
class _Tasks:
    """One scenario's task: the call that asked for it and the task as last seen."""

    server: str = ""
    tool: str = ""
    call: Outcome | None = None
    task: TaskView | None = None
    listed: list[dict[str, object]] | None = None


#: each scenario's task, by its state object (ScenarioState has no field for it; gone with the scenario)
_BY_SCENARIO: dict[int, _Tasks] = {}


def _tasks(st: ScenarioState) -> _Tasks:
    key = id(st)
    if key not in _BY_SCENARIO:
        _BY_SCENARIO[key] = _Tasks()
        weakref.finalize(st, _BY_SCENARIO.pop, key, None)
    return _BY_SCENARIO[key]


def _offered(session: Session) -> TaskSupport:
    """The server's tasks support, or a failure that names the capability it lacks."""
    assert session.client is not None
    offered = tasks_offered(session.client)
    if not offered.offered:
        raise ExpectationFailed(
            f'The server "{session.name}" does not support tasks (protocol {session.protocol_version})',
            expected=f"{offered.where} in its capabilities",
            actual="absent",
            tip="a server that runs tool calls as tasks declares it: "
            + (
                f'the "{offered.where.split(chr(34))[1]}" extension in the server/discover capabilities.'
                if offered.modern
                else "capabilities.tasks.requests.tools.call in its initialize result."
            ),
        )
    return offered


def _listed(session: Session, name: str) -> dict[str, object]:
    tool = session.tool_named(name)
    if tool is None:
        names = [str(t.get("name")) for t in session.tool_list()]
        raise ExpectationFailed(
            f'The server "{session.name}" has no tool "{name}"', details="  " + did_you_mean(name, names, "tool")
        )
    return tool


def _said(value: str | None, modern: bool) -> str:
    if value is not None:
        return f"execution.taskSupport = {value!r}"
    return "no execution.taskSupport" + ("" if modern else " (absent means forbidden)")


def _task_support(context: StepContext, name: str, wanted: tuple[str, ...]) -> None:
    session = current_session(context)
    offered = _offered(session)
    value = task_support(_listed(session, text(context, name)))
    if value in wanted or (value is None and offered.modern and "optional" in wanted):
        return  # 2026-07-28: with the extension, the server decides per call unless the tool says
    raise ExpectationFailed(
        f'The tool "{text(context, name)}" does not {"require" if wanted == ("required",) else "support"} tasks',
        expected=" or ".join(f"execution.taskSupport = {w!r}" for w in wanted),
        actual=_said(value, offered.modern),
        tip="a tool says how it runs as a task in its definition: execution.taskSupport is "
        '"forbidden" (the default), "optional" or "required".',
    )


@then("the server offers tasks only as the extension")
def step_tasks_only_as_extension(context: StepContext) -> None:
    """Check that a 2026-07-28 server offers tasks as the `io.modelcontextprotocol/tasks`
    extension in its capabilities, and not (also) in the 2025-11-25 `capabilities.tasks` slot,
    which the extension replaced.

    Example: Then the server offers tasks only as the extension
    """
    session = current_session(context)
    offered = _offered(session)
    if not offered.modern:
        raise UsageError(
            f"{state(context).location}: the tasks extension is a 2026-07-28 feature; the session speaks "
            f"{session.protocol_version} (set protocol = \"2026-07-28\" for the server)."
        )
    assert session.client is not None
    legacy = (session.client.server_capabilities.model_dump(by_alias=True, exclude_none=True) or {}).get("tasks")
    if legacy is not None:
        raise ExpectationFailed(
            f'The server "{session.name}" also offers tasks in capabilities.tasks',
            expected=f"tasks only as {offered.where}",
            actual=f"capabilities.tasks = {str(legacy)[:300]}",
            tip="on 2026-07-28 tasks are the io.modelcontextprotocol/tasks extension: drop capabilities.tasks.",
        )


@then('the tool "{tool:Q}" supports tasks')
def step_tool_supports_tasks(context: StepContext, tool: str) -> None:
    """Check that a tool may be called as a task: its `execution.taskSupport` is "optional" or
    "required", and the server declares tasks (2025-11-25: `capabilities.tasks`; 2026-07-28: the
    `io.modelcontextprotocol/tasks` extension, where a tool that says nothing leaves it to the server).

    Example: Then the tool "report" supports tasks
    """
    _task_support(context, tool, ("optional", "required"))


@then('the tool "{tool:Q}" requires tasks')
def step_tool_requires_tasks(context: StepContext, tool: str) -> None:
    """Check that a tool runs only as a task: its `execution.taskSupport` is "required".

    Example: Then the tool "archive" requires tasks
    """
    _task_support(context, tool, ("required",))


def _call_as_task(context: StepContext, tool: str, table: bool) -> None:
    st = state(context)
    session = current_session(context)
    name = text(context, tool)
    offered = _offered(session)  # before any request: a server without tasks is no wait
    listed = session.tool_named(name)
    value = task_support(listed) if listed is not None else None
    if listed is not None and (value == "forbidden" or (value is None and not offered.modern)):
        raise ExpectationFailed(
            f'The tool "{name}" cannot be called as a task',
            expected='execution.taskSupport = "optional" or "required"',
            actual=_said(value, offered.modern),
            tip=f'call it as a plain tool ("When I call the tool "{name}"), or declare the task support in its '
            "definition.",
        )
    outcome = call_as_task(session, name, lambda found: coerce_arguments(context, name, found) if table else {})
    st.last_request = outcome
    kept = _tasks(st)
    kept.server, kept.tool, kept.call, kept.listed = session.name, name, outcome, None
    kept.task = created_task(outcome.raw, session.protocol_version)
    session.raise_problems()


@when('I call the tool "{tool:Q}" as a task')
def step_call_as_task(context: StepContext, tool: str) -> None:
    """Call a tool as a task, without arguments: the server answers with a task (an id and a status),
    not the tool's result. 2025-11-25 sends `params.task`; 2026-07-28 declares the tasks extension
    for this call.

    Example: When I call the tool "archive" as a task
    """
    _call_as_task(context, tool, table=False)


@when('I call the tool "{tool:Q}" as a task with:')
def step_call_as_task_with(context: StepContext, tool: str) -> None:
    """Call a tool as a task with an argument table (heading row = names, one row of values,
    coerced by the tool's inputSchema, as for plain calls).

    Example:
        When I call the tool "report" as a task with:
          | title | pages |
          | Q1    | 3     |
    """
    _call_as_task(context, tool, table=True)


def _the_task(context: StepContext) -> tuple[Session, _Tasks, TaskView]:
    """This scenario's task, or a failure that says why there is none."""
    st = state(context)
    kept = _tasks(st)
    if kept.call is None:
        raise UsageError(f'{st.location}: no tool was called as a task yet ("When I call the tool ... as a task").')
    session = current_session(context, kept.server)
    if kept.task is None:
        outcome = kept.call
        raise ExpectationFailed(
            f'The server did not create a task for the tool "{kept.tool}"',
            expected="a CreateTaskResult (a task id and a status)",
            actual=outcome.describe() if not outcome.ok else f"a plain tool result: {outcome.describe()}",
            exchange=produced_by(session.transcript.items, session.name),
            tip="the server refused the task (read the error), or ran the call at once and ignored the ask.",
            kind=outcome.failure_kind,
        )
    return session, kept, kept.task


@then("the task is created")
def step_task_created(context: StepContext) -> None:
    """Check that the last call as a task was answered with a task: an id and a status.

    Example: Then the task is created
    """
    _, _, task = _the_task(context)
    if not task.task_id or task.status not in TASK_STATUSES:
        raise ExpectationFailed(
            "The task has no usable id or status",
            expected=f"a task id and one of {', '.join(TASK_STATUSES)}",
            actual=f"taskId {task.task_id!r}, status {task.status!r}",
        )


@then('the task at "{path:Q}" is "{expected:Q}"')
def step_task_at_text(context: StepContext, path: str, expected: str) -> None:
    """Check a field of the task as last seen (taskId, status, createdAt ...) by JSONPath against a
    text, or a fuzzy marker ("#string", "#number", "##number" for an optional one).

    Example: Then the task at "$.createdAt" is "#string"
    """
    _task_field(context, path, text(context, expected))


@then('the task at "{path:Q}" is {literal:Literal}')
def step_task_at(context: StepContext, path: str, literal: str) -> None:
    """Check a field of the task as last seen (ttl, pollInterval ...) by JSONPath against a JSON
    literal: a number, true/false, null, an array or an object.

    Example: Then the task at "$.pollInterval" is 500
    """
    from mcp_bdd.matchers import coerce_literal

    _task_field(context, path, coerce_literal(text(context, literal)))


@then('the task has no field "{name:Q}"')
def step_task_lacks(context: StepContext, name: str) -> None:
    """Check that the task as last seen does not carry a field (a name another revision uses: the
    2026-07-28 extension renamed `ttl` and `pollInterval` to `ttlMs` and `pollIntervalMs`).

    Example: Then the task has no field "ttl"
    """
    _, _, task = _the_task(context)
    field = text(context, name)
    if field in task.raw:
        raise ExpectationFailed(
            f'The task has a field "{field}"', expected=f'no "{field}"', actual={field: task.raw[field]}
        )


def _task_field(context: StepContext, path: str, wanted: object) -> None:
    from mcp_bdd.matchers import compare, query_one

    _, _, task = _the_task(context)
    p = text(context, path)
    value = query_one(task.raw, p, what="task")
    mismatches = compare(wanted, value, subset=False)
    if mismatches:
        raise ExpectationFailed(
            f"Unexpected value at {p} of the task",
            path=p,
            expected=wanted,
            actual=value,
            details="\n".join(f"  {m.path}: {m.reason}" for m in mismatches) + f"\n  the task: {task.raw}"[:2000],
        )


def _follow(context: StepContext, wanted: str | None) -> tuple[Session, _Tasks, TaskView]:
    """The task once it has `wanted` status (None: any terminal one) or the request timeout passed."""
    session, kept, task = _the_task(context)
    seen, failed = wait_for_status(
        session, task, lambda t: t.status == wanted if wanted else t.terminal, session.timeout
    )
    kept.task = seen
    if failed is not None:
        session.check(failed)  # raises: the tasks/get failed, or broke the protocol
    return session, kept, seen


@then('the task status becomes "{status:Q}"')
def step_task_status_becomes(context: StepContext, status: str) -> None:
    """Wait until the task has this status: working, input_required, completed, failed or cancelled.
    Polls tasks/get at the server's poll interval, or takes a status notification when one comes
    first; up to the request timeout. A task that ends in another status fails at once.

    Example: Then the task status becomes "completed"
    """
    wanted = text(context, status)
    if wanted not in TASK_STATUSES:
        raise UsageError(f'{state(context).location}: "{wanted}" is no task status: {", ".join(TASK_STATUSES)}.')
    session, _, seen = _follow(context, wanted)
    if seen.status != wanted:
        ended = seen.terminal
        raise ExpectationFailed(
            f"The task {'ended' if ended else 'is still'} {seen.said()}"
            + ("" if ended else f" after {session.timeout:g} s"),
            expected=f'status "{wanted}"',
            actual=seen.said(),
            exchange=produced_by(session.transcript.items, session.name),
            tip="a terminal status never changes: read the status message."
            if ended
            else "raise `timeout` (or -D timeout=30) if the work is just slow.",
            kind=None if ended else "timeout",
        )


@when("I cancel the task")
def step_cancel_task(context: StepContext) -> None:
    """Ask the server to cancel the task (tasks/cancel); the task may then become "cancelled".

    Example: When I cancel the task
    """
    session, _, task = _the_task(context)
    _offered_to(session, "cancels", "cancel")
    outcome = cancel_task(session, task.task_id)
    state(context).last_request = outcome
    session.check(outcome)


def _offered_to(session: Session, what: str, method: str) -> None:
    """A failure naming the capability when the server does not offer tasks/<method>."""
    assert session.client is not None
    offered = tasks_offered(session.client)
    if not getattr(offered, what):
        raise ExpectationFailed(
            f'The server "{session.name}" does not offer tasks/{method} (protocol {session.protocol_version})',
            expected=f"capabilities.tasks.{method}" if not offered.modern else f"tasks/{method}",
            actual="absent" if not offered.modern else "not part of the 2026-07-28 Tasks extension",
            tip="the 2026-07-28 Tasks extension has no tasks/list: follow a task by its id."
            if offered.modern
            else f"a server that lets clients {method} tasks declares capabilities.tasks.{method}.",
        )


@when("I wait for the task result")
def step_wait_for_task_result(context: StepContext) -> None:
    """Wait until the task ends, then take its tool result: "the result" is then the task's tool
    result, so every Tool outcome and Results step applies to it. A task that failed or was
    cancelled fails here, with its status message.

    Example:
        When I wait for the task result
        Then the tool call succeeds
        And the result at "$.pages" is 3
    """
    session, kept, seen = _follow(context, None)
    if not seen.terminal:
        raise ExpectationFailed(
            f"The task did not end within {session.timeout:g} s: it is {seen.said()}",
            expected="completed",
            actual=seen.said(),
            tip="raise `timeout` (or -D timeout=30) if the work is just slow.",
            kind="timeout",
        )
    if seen.status != "completed":
        raise ExpectationFailed(
            f'The task of the tool "{kept.tool}" ended {seen.status}' + (f": {seen.message}" if seen.message else ""),
            expected="completed",
            actual=seen.said(),
            exchange=produced_by(session.transcript.items, session.name),
            tip="read the status message: the server says there why the work did not complete.",
        )
    assert kept.call is not None
    outcome = task_result(session, seen, kept.call)
    keep_call(context, outcome, kept.tool)


@when("I list the tasks")
def step_list_tasks(context: StepContext) -> None:
    """List the server's tasks (tasks/list, every page; 2025-11-25: the 2026-07-28 extension has none).

    Example: When I list the tasks
    """
    session = current_session(context)
    _offered(session)
    _offered_to(session, "lists", "list")
    outcome, listed = list_tasks(session)
    state(context).last_request = outcome
    session.check(outcome)
    _tasks(state(context)).listed = listed


@then("the task list includes the task")
def step_task_list_includes(context: StepContext) -> None:
    """Check that the last task listing shows this scenario's task (by its id).

    Example: Then the task list includes the task
    """
    _, kept, task = _the_task(context)
    if kept.listed is None:
        raise UsageError(f'{state(context).location}: the tasks were not listed yet ("When I list the tasks").')
    ids = [str(t.get("taskId")) for t in kept.listed]
    if task.task_id not in ids:
        raise ExpectationFailed(
            f"The task list lacks the task {task.task_id}",
            expected=f"a task with taskId {task.task_id!r}",
            actual=ids[:20] or "no tasks",
            tip="a server lists the tasks of this client until their ttl ends.",
        )


# ---------------------------------------------------------------------------------------------
# the tasks methods one by one, and what the 2026-07-28 extension asks of their answers

#: the methods a scenario may send about a task: the extension's, and the ones it removed
_TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list")


def _send_about(context: StepContext, method: str, task: str | None, *, declares: bool = True) -> None:
    """Send `method` about the scenario's task (or the task id `task`), and keep its outcome as
    the last request; a tasks/get that answers becomes the task as last seen."""
    st = state(context)
    wanted = text(context, method)
    if wanted not in _TASK_METHODS:
        raise UsageError(f'{st.location}: "{wanted}" is no tasks method: {", ".join(_TASK_METHODS)}.')
    if task is None:
        session, kept, seen = _the_task(context)
        task_id: str = seen.task_id
    else:
        session, kept, task_id = current_session(context), None, text(context, task)
    outcome, view = send_about_task(session, wanted, task_id, declares=declares)
    st.last_request = outcome
    if kept is not None and view is not None and view.task_id == task_id:
        kept.task = view
    session.raise_problems()


@when('I send "{method:Q}" for the task')
def step_send_for_task(context: StepContext, method: str) -> None:
    """Send one tasks method about the task: tasks/get, tasks/update (no input responses),
    tasks/cancel, or tasks/result and tasks/list, which the 2026-07-28 extension removed (a server
    must refuse them with -32601). The answer is the last request's, for `the request is rejected
    with error code <code>` or `the answer has the result type "<type>"`; a tasks/get that answers
    is the task as last seen. On 2026-07-28 the request declares the extension in its `_meta`.

    Example:
        When I send "tasks/get" for the task
        Then the answer has the result type "complete"
    """
    _send_about(context, method, None)


@when('I send "{method:Q}" for the task "{task:Q}"')
def step_send_for_task_id(context: StepContext, method: str, task: str) -> None:
    """Send one tasks method about the task with this id, e.g. one the server never created (it
    must refuse it with -32602).

    Example:
        When I send "tasks/get" for the task "no-such-task"
        Then the request is rejected with error code -32602
    """
    _send_about(context, method, task)


@when('I send "{method:Q}" for the task without the tasks extension')
def step_send_for_task_undeclared(context: StepContext, method: str) -> None:
    """Send one tasks method about the task without declaring the 2026-07-28 tasks extension in
    the request's client capabilities: the server must refuse tasks/get, tasks/update and
    tasks/cancel with -32021 (Missing Required Client Capability).

    Example:
        When I send "tasks/get" for the task without the tasks extension
        Then the request is rejected with error code -32021
    """
    _send_about(context, method, None, declares=False)


@then('the answer has the result type "{kind:Q}"')
def step_answer_result_type(context: StepContext, kind: str) -> None:
    """Check the `resultType` of the last request's answer (2026-07-28): "complete" for a plain
    tool result and for every tasks/get, tasks/update and tasks/cancel answer, "task" for a call
    answered with a task, "input_required" for a round. (The result of `When I wait for the task
    result` is the one the task inlines, not an answer of its own.)

    Example: Then the answer has the result type "complete"
    """
    st = state(context)
    outcome = st.last_request
    if outcome is None:
        raise UsageError(f"{st.location}: no request was made yet in this scenario.")
    wanted = text(context, kind)
    session = current_session(context, outcome.server or None)
    if outcome.raw is None or not outcome.ok:
        raise ExpectationFailed(
            f"The {outcome.method} request got no result",
            expected=f'a result with resultType "{wanted}"',
            actual=outcome.describe(),
            exchange=produced_by(session.transcript.items, session.name),
            kind=outcome.failure_kind,
        )
    got = outcome.raw.get("resultType")
    if got != wanted:
        raise ExpectationFailed(
            f"The {outcome.method} answer has the wrong result type",
            expected=f'resultType "{wanted}"',
            actual=f"resultType {str(got)[:80]!r}" if "resultType" in outcome.raw else "no resultType",
            details=f"  the answer: {outcome.describe()}"[:2000],
            tip="on 2026-07-28 every answer says what it is: complete, input_required, or task.",
        )


@then("the task is still available")
def step_task_still_available(context: StepContext) -> None:
    """Check that the server still has the task: tasks/get answers with it. A server keeps a task,
    ended or not, for its ttl (`ttlMs`; 2025-11-25: `ttl`) from its creation, never less.

    Example:
        Then the task status becomes "completed"
        And the task is still available
    """
    session, kept, task = _the_task(context)
    outcome, now = get_task(session, task.task_id)
    state(context).last_request = outcome
    session.raise_problems()
    if now is not None and now.task_id == task.task_id:
        kept.task = now
        return
    ttl = task.raw.get("ttlMs", task.raw.get("ttl"))
    raise ExpectationFailed(
        f"The server no longer has the task {task.task_id}",
        expected=f"the task, kept for its ttl ({str(ttl)[:40]} ms from its creation at "
        f"{str(task.raw.get('createdAt'))[:40]})",
        actual=outcome.describe() if now is None else f"the task {now.task_id!r}",
        exchange=produced_by(session.transcript.items, session.name),
        tip="a server must not forget a task (nor its result) before its ttl has passed.",
        kind=outcome.failure_kind,
    )


@then('the task has nothing at "{path:Q}"')
def step_task_nothing_at(context: StepContext, path: str) -> None:
    """Check that the task as last seen has nothing at a JSONPath: metadata that does not belong
    there (2026-07-28: the result a task inlines carries no `io.modelcontextprotocol/related-task`,
    the task id is beside it), or a field nested deeper than `the task has no field` reaches.

    Example: Then the task has nothing at "$.result._meta['io.modelcontextprotocol/related-task']"
    """
    from mcp_bdd.matchers import query

    _, _, task = _the_task(context)
    p = text(context, path)
    found = query(task.raw, p)
    if found:
        raise ExpectationFailed(
            f"The task has something at {p}",
            path=p,
            expected="nothing",
            actual=str(found[0] if len(found) == 1 else found)[:500],
            details=f"  the task: {task.raw}"[:2000],
        )


@when('I call the tool "{tool:Q}" with the legacy task hint')
def step_call_with_legacy_hint(context: StepContext, tool: str) -> None:
    """Call a tool, without arguments, with the 2025-11-25 task hint (`params.task`), which the
    2026-07-28 extension removed: such a server must ignore it, answering a tool without tasks
    with its plain result (no error, no task). The outcome is the last call's, for every Tool
    outcome and Results step; on 2026-07-28 a task in the answer fails them, naming it.

    Example:
        When I call the tool "ping" with the legacy task hint
        Then the tool call succeeds
        And the result text is "pong"
    """
    session = current_session(context)
    name = text(context, tool)
    outcome = call_with_hint(session, name)
    keep_call(context, outcome, name)
    session.raise_problems()

