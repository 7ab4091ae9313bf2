"""Plain custom steps that fake an MCP exchange, so the report can be tested alone."""

import json
import time

from behave import given, then, when
from behave.api.pending_step import StepNotImplementedError

from mcp_bdd.errors import ExpectationFailed

SERVER_MIME = "application/vnd.mcp-bdd.server+json"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
HOSTILE = '<script>window.__pwned=1;document.title="pwned"</script><img src=x onerror="window.__pwned=1">'
SURFACE = {
    "server": "shop",
    "name": "Shop <Demo>",
    "version": "1.0",
    "protocol": "2026-07-28",
    "transport": "in-memory",
    "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
    "instructions": "Use the tools to total a basket.",
    "env": {"SHOP_DB": "/tmp/shop.db", "API_TOKEN": "s3cr3t-value"},
    "tools": [
        {
            "name": "add",
            "description": "Add two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            },
            "annotations": {"readOnlyHint": True},
        },
        {"name": "multiply", "description": "Multiply two numbers.", "inputSchema": {"type": "object"}},
        {
            "name": "divide",
            "description": "Divide; refuses zero.",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"result": {"type": "number"}}},
        },
        {"name": "echo", "description": HOSTILE, "inputSchema": {"type": "object"}},
        {"name": "refund", "description": "Never called by any scenario.", "inputSchema": {"type": "object"}},
    ],
    "resources": [
        {"uri": "shop://catalog", "name": "catalog", "mimeType": "application/json"},
        {"uri": "shop://orders", "name": "orders"},
    ],
    "resource_templates": [{"uriTemplate": "shop://items/{id}", "name": "item"}],
    "prompts": [{"name": "summarise", "description": "Summarise a basket."}],
}


def _record(context, kind, method, payload, related=None, duration_ms=None):
    context.seq += 1
    context.exchanges.append(
        {
            "seq": context.seq,
            "kind": kind,
            "server": "shop",
            "method": method,
            "payload": payload,
            "at": time.time(),
            "duration_ms": duration_ms,
            "related": related,
        }
    )
    return context.seq


def _call(context, name, arguments, result):
    seq = _record(context, "request", "tools/call", {"name": name, "arguments": arguments})
    _record(context, "response", "tools/call", result, related=seq, duration_ms=1.5)
    context.result = result


@given('the "{server}" server is running')
def step_server_running(context, server):
    """Start the named server for this scenario.

    Given the "shop" server is running
    """
    context.attach(SERVER_MIME, json.dumps(SURFACE).encode())
    _record(context, "info", "session/open", {"server": server})


@when('I call "{tool}" with {a:d} and {b:d}')
def step_call(context, tool, a, b):
    """Call a tool with two numbers.

    When I call "add" with 2 and 3
    """
    if tool == "divide" and b == 0:
        _call(
            context,
            tool,
            {"a": a, "b": b},
            {"content": [{"type": "text", "text": "division by zero"}], "isError": True},
        )
        return
    if tool not in ("add", "multiply", "divide"):  # an error path: the catalog lists it as "not in the catalog"
        _call(
            context,
            tool,
            {"a": a, "b": b},
            {"content": [{"type": "text", "text": f"Unknown tool: {tool}"}], "isError": True},
        )
        return
    value = {"add": a + b, "multiply": a * b, "divide": a // b if b else 0}[tool]
    if tool == "divide" and context.config.userdata.get("break_division"):
        value += 1  # lets a second run disagree with the first (the merge test)
    if tool == "add" and context.config.userdata.get("slow_adding"):
        time.sleep(float(context.config.userdata["slow_adding"]))  # the duration under test (history trends)
    _call(
        context,
        tool,
        {"a": a, "b": b},
        {
            "content": [
                {"type": "text", "text": str(value)},
                {"type": "image", "data": PNG_1PX, "mimeType": "image/png"},
            ],
            "structuredContent": {"result": value},
            "isError": False,
        },
    )
    _record(context, "notification", "notifications/message", {"level": "info", "data": "computed"})


@when('I call "echo" with hostile markup')
def step_hostile(context):
    """Call the echo tool with markup that must never run in the report.

    When I call "echo" with hostile markup
    """
    _call(
        context,
        "echo",
        {"text": HOSTILE},
        {
            "content": [
                {"type": "text", "text": HOSTILE},
                {"type": "image", "data": "PHN2Zz48L3N2Zz4=", "mimeType": "image/svg+xml"},
                {"type": "text", "text": "</script><!-- \u2028 -->"},
            ],
            "isError": False,
        },
    )


@when('I read the resource "{uri}"')
def step_read(context, uri):
    """Read a resource by URI.

    When I read the resource "shop://catalog"
    """
    seq = _record(context, "request", "resources/read", {"uri": uri})
    big = "apples " * 4000
    _record(context, "response", "resources/read", {"contents": [{"uri": uri, "text": big}]}, related=seq)
    seq = _record(context, "request", "prompts/get", {"name": "missing"})
    _record(
        context,
        "error",
        "prompts/get",
        {"code": -32602, "message": "Unknown prompt", "data": None},
        related=seq,
    )
    context.result = {"content": [{"type": "text", "text": big}]}


@then("the result is {value:d}")
def step_result_is(context, value):
    """Check the tool's numeric result.

    Then the result is 5
    """
    actual = context.result["structuredContent"]["result"]
    if actual != value:
        raise ExpectationFailed(
            "Unexpected value at $.structuredContent.result",
            path="$.structuredContent.result",
            expected=value,
            actual=actual,
            tip="check the numbers in the Examples table.",
        )


@then("the tool reports an error")
def step_tool_error(context):
    """Check that the last tool call returned isError.

    Then the tool reports an error
    """
    assert context.result["isError"] is True


@then('the result mentions "{text}"')
def step_mentions(context, text):
    """Check that the result's text contains a phrase.

    Then the result mentions "apples"
    """
    texts = " ".join(c.get("text", "") for c in context.result["content"])
    assert text in texts, f"{text!r} not in the result"


@given("a step that is still pending")
def step_pending(context):
    """A step whose implementation is not written yet.

    Given a step that is still pending
    """
    raise StepNotImplementedError("STEP: Given a step that is still pending")
