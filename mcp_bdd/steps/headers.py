"""Routing headers (2026-07-28, streamable HTTP): a client that gets them wrong is refused.

On the 2026-07-28 protocol a client mirrors the request's method as the `Mcp-Method` HTTP header
and, for a call, a prompt or a read, its name (or URI) as `Mcp-Name`, so that gateways can route
a request without reading its body. A server must refuse a request whose headers do not match
its body: HTTP 400 with JSON-RPC error -32020. These steps make the client get one header wrong
on purpose (on calls, prompts and reads only, or on the tasks requests that name a task;
connecting and listing stay right), before the server step like every step that shapes the client.
"""

from __future__ import annotations

from mcp_bdd.session import HEADER_DEVIATIONS, HeaderDeviation
from mcp_bdd.steps._base import StepContext, given, state
from mcp_bdd.steps.client import before_connecting

__all__: list[str] = []


def _bend(context: StepContext, deviation: HeaderDeviation) -> None:
    before_connecting(context, f"sending {HEADER_DEVIATIONS[deviation]}")
    state(context).persona.header_deviation = deviation


@given("the client sends a wrong Mcp-Method header")
def step_wrong_method(context: StepContext) -> None:
    """Make the client name another method in the Mcp-Method header of calls, prompts and reads
    (over streamable HTTP; the server must refuse them with -32020).

    Example: Given the client sends a wrong Mcp-Method header
    """
    _bend(context, "wrong-method")


@given("the client sends a wrong Mcp-Name header")
def step_wrong_name(context: StepContext) -> None:
    """Make the client name another tool, prompt or resource in the Mcp-Name header (over
    streamable HTTP; the server must refuse the request with -32020).

    Example: Given the client sends a wrong Mcp-Name header
    """
    _bend(context, "wrong-name")


@given("the client leaves out the Mcp-Name header")
def step_no_name(context: StepContext) -> None:
    """Make the client send calls, prompts and reads without the Mcp-Name header (over streamable
    HTTP; the server must refuse them with -32020).

    Example: Given the client leaves out the Mcp-Name header
    """
    _bend(context, "no-name")


@given("the client sends wrong Mcp-Param headers")
def step_wrong_params(context: StepContext) -> None:
    """Make the client send, for each argument a tool marks with `x-mcp-header`, an `Mcp-Param-*`
    header that does not match it (over streamable HTTP; the server must refuse the call with -32020).

    Example: Given the client sends wrong Mcp-Param headers
    """
    _bend(context, "wrong-param")


@given("the client sends a wrong Mcp-Name header on tasks requests")
def step_wrong_task_name(context: StepContext) -> None:
    """Make the client name another task in the Mcp-Name header of tasks/get, tasks/update and
    tasks/cancel, which carry the task id there (2026-07-28 Tasks extension, over streamable
    HTTP; the server must refuse them with -32020). Calls stay right, so the task is created.

    Example: Given the client sends a wrong Mcp-Name header on tasks requests
    """
    _bend(context, "wrong-task-name")

