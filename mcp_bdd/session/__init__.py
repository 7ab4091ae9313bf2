"""Sessions with MCP servers, driven from synchronous behave steps (see `_session` for why).

Session          the facade: open / request / check / close, typed helpers
Outcome          what one request produced (result, error, timeout, protocol violation, refusal)
Refusal          a request refused with HTTP 401/403: what the server sent, and what to do
Persona          how the client answers server-to-client requests (declared by Given steps)
Timeline         the notifications of a session, with waiting on arrival
listen streams   2026-07-28 `subscriptions/listen` (open_stream, covers, listening)
cancel_pending   end of a run: cancel the session hops an interruption left running (`_hop`)
stalled          whether a hop outlived its deadline: the run's event loop may be blocked for good
input rounds     2026-07-28 input-required rounds, noted per request, and the client's deviations (`_rounds`)
tasks            tool calls answered with a task (`_tasks`): call, follow, cancel, list, fetch the result
"""

from __future__ import annotations

from mcp_bdd.session._hop import cancel_pending, stalled
from mcp_bdd.session._listen import ListenFailed, covers, listening, open_stream
from mcp_bdd.session._outcome import Outcome, Refusal, result_text, unwrap
from mcp_bdd.session._persona import (
    ELICITATION,
    SAMPLING,
    HeaderDeviation,
    Persona,
    coerce_elicitation,
    coerce_value,
    schema_types,
)
from mcp_bdd.session._raw_http import send_raw
from mcp_bdd.session._rounds import DEVIATIONS, Deviation, InputRound
from mcp_bdd.session._session import HEADER_DEVIATIONS, Session
from mcp_bdd.session._tasks import (
    TASK_STATUSES,
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
from mcp_bdd.session._timeline import KEEP, KEEP_BYTES, Timeline

__all__ = [
    "DEVIATIONS",
    "ELICITATION",
    "HEADER_DEVIATIONS",
    "KEEP",
    "KEEP_BYTES",
    "SAMPLING",
    "TASK_STATUSES",
    "Deviation",
    "HeaderDeviation",
    "InputRound",
    "ListenFailed",
    "Outcome",
    "Persona",
    "Refusal",
    "Session",
    "TaskSupport",
    "TaskView",
    "Timeline",
    "call_as_task",
    "call_with_hint",
    "cancel_pending",
    "cancel_task",
    "coerce_elicitation",
    "coerce_value",
    "covers",
    "created_task",
    "get_task",
    "list_tasks",
    "listening",
    "open_stream",
    "result_text",
    "schema_types",
    "send_about_task",
    "send_raw",
    "stalled",
    "task_result",
    "task_support",
    "tasks_offered",
    "unwrap",
    "wait_for_status",
]
