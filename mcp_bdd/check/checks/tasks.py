"""The `tasks` group: each tool's `execution.taskSupport` against what the server offers and does.

A tool says whether it runs as a task: `forbidden` (or nothing), `optional` or `required`. A
client reads that to decide how to call it, so a tool that says one thing and does another is
either never called right or hangs a client that waits for a task that never comes. The claims
are checked against the server's capabilities (no call), and, for tools the checks may call
(read-only ones, or those named with --write-tools / --allow-writes), against a plain call and a
call as a task. A task the check creates is cancelled once it is seen.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_bdd.check._context import CheckContext
from mcp_bdd.check._finding import Problem, call_of
from mcp_bdd.check._registry import check
from mcp_bdd.session import call_as_task, cancel_task, created_task, task_support, tasks_offered

__all__: list[str] = []

_CLAIMS = ("forbidden", "optional", "required")


def _claims(ctx: CheckContext) -> Iterator[tuple[dict[str, object], str]]:
    """Each listed tool that says something about tasks, with what it says."""
    for tool in ctx.tools:
        claim = task_support(tool)
        if claim is not None:
            yield tool, claim


@check(
    "tasks.offered",
    severity="high",
    group="tasks",
    rationale="A tool that runs as a task on a server that offers no Tasks cannot be called as it says.",
)
def offered(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool's `execution.taskSupport` is `forbidden`, `optional` or `required`, and a tool that may
    run as a task is served by a server that offers Tasks (`capabilities.tasks` on 2025-11-25, the
    `io.modelcontextprotocol/tasks` extension on 2026-07-28). No call is made."""
    assert ctx.session.client is not None
    support = tasks_offered(ctx.session.client)
    for tool, claim in _claims(ctx):
        target = f"tool {tool.get('name')}"
        if claim not in _CLAIMS:
            yield Problem(
                title=f'execution.taskSupport is "{claim}", which no client understands',
                target=target,
                tip='say "forbidden", "optional" or "required" (or leave it out: forbidden).',
                severity=None,
            )
        elif claim != "forbidden" and not support.offered:
            yield Problem(
                title=f'the tool says it runs as a task ("{claim}"), but the server offers no Tasks',
                target=target,
                details=f"not offered: {support.where} (protocol {support.revision})",
                tip="declare the Tasks capability (or, on 2026-07-28, the extension) or drop taskSupport.",
            )


@check(
    "tasks.required-refuses-plain-calls",
    severity="medium",
    group="tasks",
    rationale="A tool that runs only as a task must refuse a plain call, or a client waits for what never comes.",
    calls_tools=True,
)
def required_refuses(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool the checks may call whose `execution.taskSupport` is `required` answers a plain
    call (without a task) with a JSON-RPC error (or an error result), not with a result."""
    from mcp_bdd.check.checks.honest import minimal_call

    for tool, claim in _claims(ctx):
        if claim != "required" or not ctx.may_call(tool):
            continue
        arguments = minimal_call(ctx, tool)
        if arguments is None:
            continue
        outcome = ctx.call(str(tool.get("name")), arguments, "plain call of a task-only tool")
        # an error result refuses too (TypeScript servers answer "MCP error -32601: ..." as one): the
        # client is not left waiting, which is what the claim protects
        if outcome is None or outcome.error is not None or outcome.raw is None or outcome.is_error_result:
            continue
        yield Problem(
            title='the tool says it runs only as a task ("required"), but answered a plain call',
            target=f"tool {tool.get('name')}",
            call=call_of(outcome),
            tip='refuse a call without a task (-32601 on 2025-11-25, -32021 on 2026-07-28), or say "optional".',
        )


@check(
    "tasks.task-created",
    severity="high",
    group="tasks",
    rationale="A tool that may run as a task must answer a call as a task with a task a client can follow.",
    calls_tools=True,
)
def task_created(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool the checks may call whose `execution.taskSupport` is `optional` or `required`, called
    as a task, answers with a task (an id and a status) — or, when optional, with its result at once.
    The task is cancelled once seen."""
    from mcp_bdd.check.checks.honest import minimal_call

    assert ctx.session.client is not None
    if not tasks_offered(ctx.session.client).offered:
        return  # tasks.offered says so
    for tool, claim in _claims(ctx):
        if claim not in ("optional", "required") or not ctx.may_call(tool):
            continue
        arguments = minimal_call(ctx, tool)
        if arguments is None:
            continue
        problem = _as_task(ctx, str(tool.get("name")), arguments, claim)
        if problem is not None:
            yield problem


def _as_task(ctx: CheckContext, name: str, arguments: dict[str, object], claim: str) -> Problem | None:
    outcome = ctx.answered(f"tool {name}", lambda: call_as_task(ctx.session, name, lambda _listed: arguments))
    if outcome is None:
        return None  # refused with HTTP 401/403: the credentials, never judged (the notes say so)
    task = created_task(outcome.raw, ctx.session.protocol_version)
    if task is not None:
        cancel_task(ctx.session, task.task_id)  # leave nothing running on the server's side
        return None
    immediate = outcome.raw is not None and outcome.error is None and claim == "optional"
    if immediate:
        return None
    said = "an error" if outcome.error is not None else "no task" if outcome.raw is not None else "nothing usable"
    return Problem(
        title=f'the tool says it runs as a task ("{claim}"), but a call as a task got {said}',
        target=f"tool {name}",
        call=call_of(outcome),
        tip="answer a task-augmented call with a task (CreateTaskResult: taskId, status), then serve tasks/get.",
    )
