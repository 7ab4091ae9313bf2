"""Tests of the bundled demo servers (demo/), with the real SDK client in both protocol eras.

`mode="legacy"` forces the 2025-11-25 initialize handshake (server-to-client requests mid-call,
resources/subscribe, session notifications); `mode="auto"` lands on 2026-07-28 (input-required
rounds, subscriptions/listen). The payment flow runs against a real HTTP server on 127.0.0.1;
one test runs the shop over stdio, and the start-failure, hang and crash helpers are run as the
processes they are.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as t
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from pydantic import FileUrl

from demo import crash, shop

ROOT = Path(__file__).resolve().parents[1]
MODES = ["legacy", "auto"]

pytestmark = [
    pytest.mark.anyio,
    # The client's logging / resources-subscribe methods are deprecated as of 2026-07-28; used on purpose.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHOP_DB", raising=False)
    monkeypatch.delenv("PAYMENTS_URL", raising=False)


# --------------------------------------------------------------------------- helpers


@dataclass
class Recorder:
    """What the client saw: notifications, log messages, and the server's requests to it."""

    notifications: list[Any] = field(default_factory=list)
    logs: list[t.LoggingMessageNotificationParams] = field(default_factory=list)
    sampling: list[t.CreateMessageRequestParams] = field(default_factory=list)
    elicitations: list[t.ElicitRequestParams] = field(default_factory=list)
    elicit_answer: t.ElicitResult = field(
        default_factory=lambda: t.ElicitResult(action="accept", content={"confirm": True, "reason": "test"})
    )

    async def on_message(self, message: Any) -> None:
        self.notifications.append(message)

    async def on_log(self, params: t.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_sampling(
        self, context: ClientRequestContext, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        self.sampling.append(params)
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(type="text", text="Two widgets, paid."), model="fake-llm"
        )

    async def on_elicit(self, context: ClientRequestContext, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.elicitations.append(params)
        return self.elicit_answer

    async def on_roots(self, context: ClientRequestContext) -> t.ListRootsResult:
        return t.ListRootsResult(roots=[t.Root(uri=FileUrl("file:///srv/project"), name="project")])


@asynccontextmanager
async def connect(mode: str, recorder: Recorder | None = None, **kwargs: Any) -> AsyncIterator[Client]:
    """An in-memory client on a fresh shop (configured from the environment at this moment)."""
    rec = recorder or Recorder()
    client = Client(
        shop.create_server(),
        mode=mode,
        cache=None,
        message_handler=rec.on_message,
        logging_callback=rec.on_log,
        log_level="debug",
        **kwargs,
    )
    async with client:
        yield client


def text_of(result: t.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, t.TextContent))


async def call_ok(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, text_of(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


async def call_error(client: Client, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error, result
    return text_of(result)


# --------------------------------------------------------------------------- fake payment provider


@dataclass
class FakePayments:
    url: str
    status: int = 201
    body: dict[str, Any] = field(default_factory=lambda: {"id": "ch_123"})
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@pytest.fixture
def payments() -> Iterator[FakePayments]:
    """A real HTTP payment provider on 127.0.0.1, served from a thread."""
    fake = FakePayments(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            fake.requests.append((self.path, json.loads(self.rfile.read(length) or b"{}")))
            payload = json.dumps(fake.body).encode()
            self.send_response(fake.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


# --------------------------------------------------------------------------- discovery


async def test_server_identity_and_tool_metadata() -> None:
    async with connect("auto") as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("shop", "1.0.0")
        assert client.instructions and "list_products" in client.instructions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {"list_products", "create_order", "pay_order", "summarize_order", "confirm_delete"} <= set(tools)
    assert all(len(tool.description or "") >= 20 for tool in tools.values())
    for name in ("list_products", "check_stock", "get_order", "add", "get_user"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint, name
    for name in ("cancel_order", "delete_user", "confirm_delete"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.destructive_hint, name
    assert "cannot be undone" in (tools["delete_user"].description or "")
    assert tools["create_order"].output_schema is not None
    assert tools["echo"].output_schema is None
    assert set(tools["create_order"].input_schema["required"]) == {"product_id", "quantity"}
    assert set(tools["summarize_order"].input_schema["properties"]) == {"order_id"}  # resolver args hidden


@pytest.mark.parametrize("mode", MODES)
async def test_capabilities(mode: str) -> None:
    async with connect(mode) as client:
        caps = client.server_capabilities
    assert caps.tools and caps.tools.list_changed
    assert caps.resources and caps.resources.subscribe
    assert caps.prompts and caps.completions and caps.logging


# --------------------------------------------------------------------------- orders


@pytest.mark.parametrize("mode", MODES)
async def test_order_lifecycle_reserves_and_releases_stock(mode: str) -> None:
    async with connect(mode) as client:
        catalogue = await call_ok(client, "list_products")
        assert catalogue["items"][0] == {"product_id": "PROD-123", "quantity": 10, "price": 19.99}
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 2})
        assert order["status"] == "pending" and order["total"] == 39.98
        assert order["id"].startswith("ORD-") and len(order["id"]) == 12
        assert order["items"] == [{"product_id": "PROD-123", "quantity": 2, "unit_price": 19.99}]
        assert (await call_ok(client, "check_stock", {"product_id": "PROD-123"}))["quantity"] == 8
        assert (await call_ok(client, "get_order", {"order_id": order["id"]}))["status"] == "pending"
        cancelled = await call_ok(client, "cancel_order", {"order_id": order["id"]})
        assert cancelled["status"] == "cancelled"
        assert (await call_ok(client, "check_stock", {"product_id": "PROD-123"}))["quantity"] == 10
        assert "already cancelled" in await call_error(client, "cancel_order", {"order_id": order["id"]})


@pytest.mark.parametrize("mode", MODES)
async def test_order_errors_are_actionable_error_results(mode: str) -> None:
    async with connect(mode) as client:
        unknown = await call_error(client, "create_order", {"product_id": "PROD-999", "quantity": 1})
        assert "Product PROD-999 does not exist. Call list_products to see valid product ids." in unknown
        empty = await call_error(client, "create_order", {"product_id": "PROD-456", "quantity": 1})
        assert "Insufficient stock for PROD-456" in empty and "list_products" in empty
        short = await call_error(client, "create_order", {"product_id": "PROD-789", "quantity": 5})
        assert "only 3 available" in short
        assert "does not exist" in await call_error(client, "get_order", {"order_id": "ORD-00000000"})
        assert "Unknown tool" in await call_error(client, "no_such_tool", {})


async def test_concurrent_orders_never_oversell() -> None:
    async with connect("auto") as client:
        results: list[t.CallToolResult] = []

        async def order() -> None:
            results.append(await client.call_tool("create_order", {"product_id": "PROD-789", "quantity": 1}))

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(order)
        ids = {r.structured_content["id"] for r in results if not r.is_error and r.structured_content}
        assert len(ids) == 3 and sum(r.is_error for r in results) == 2


async def test_database_is_read_from_shop_db_at_factory_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db_path = tmp_path / "shop.db"
    with sqlite3.connect(db_path) as db:  # what a fake database step creates: no price column
        db.execute("CREATE TABLE inventory (product_id TEXT, quantity INTEGER)")
        db.execute("INSERT INTO inventory VALUES ('WIDGET-1', 4)")
    monkeypatch.setenv("SHOP_DB", str(db_path))  # after import: read when create_server() runs
    async with connect("auto") as client:
        assert (await call_ok(client, "list_products"))["items"] == [
            {"product_id": "WIDGET-1", "quantity": 4, "price": None}
        ]
        order = await call_ok(client, "create_order", {"product_id": "WIDGET-1", "quantity": 3})
        assert order["total"] is None
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT quantity FROM inventory").fetchall() == [(1,)]
        assert db.execute("SELECT id, status FROM orders").fetchall() == [(order["id"], "pending")]


# --------------------------------------------------------------------------- payments


@pytest.mark.parametrize("mode", MODES)
async def test_payment_succeeds_against_the_provider(
    mode: str, payments: FakePayments, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYMENTS_URL", payments.url)
    async with connect(mode) as client:
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        paid = await call_ok(client, "pay_order", {"order_id": order["id"]})
    assert (paid["status"], paid["charge_id"]) == ("paid", "ch_123")
    assert payments.requests == [("/charges", {"order_id": order["id"], "amount": 19.99})]


@pytest.mark.parametrize("mode", MODES)
async def test_payment_provider_down_leaves_order_pending(
    mode: str, payments: FakePayments, monkeypatch: pytest.MonkeyPatch
) -> None:
    payments.status = 503
    monkeypatch.setenv("PAYMENTS_URL", payments.url)
    async with connect(mode) as client:
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        message = await call_error(client, "pay_order", {"order_id": order["id"]})
        assert (
            f"The payment provider is unavailable (HTTP 503). The order {order['id']} is still pending; "
            "retry pay_order later." in message
        )
        assert (await call_ok(client, "get_order", {"order_id": order["id"]}))["status"] == "pending"
        payments.status = 402
        assert "rejected the charge (HTTP 402)" in await call_error(client, "pay_order", {"order_id": order["id"]})


async def test_payment_provider_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYMENTS_URL", "http://127.0.0.1:9")  # discard port: connection refused
    async with connect("auto") as client:
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        message = await call_error(client, "pay_order", {"order_id": order["id"]})
    assert "unreachable" in message and "still pending" in message


async def test_payment_is_simulated_without_provider() -> None:
    async with connect("auto") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "simulated" in (tools["pay_order"].description or "")
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        assert (await call_ok(client, "pay_order", {"order_id": order["id"]}))["status"] == "paid"


# --------------------------------------------------------------------------- content, progress, logging


@pytest.mark.parametrize("mode", MODES)
async def test_content_blocks(mode: str) -> None:
    async with connect(mode) as client:
        assert (await client.call_tool("add", {"a": 3, "b": 5})).structured_content == {"result": 8}
        echo = await client.call_tool("echo", {"text": "hello"})
        assert (text_of(echo), echo.structured_content) == ("hello", None)
        assert "<script>window.__pwned=1</script>" in text_of(await client.call_tool("render_html", {}))
        logo = (await client.call_tool("get_logo", {})).content[0]
        assert isinstance(logo, t.ImageContent) and logo.mime_type == "image/png"
        link = (await client.call_tool("find_docs", {"topic": "payments"})).content[0]
        assert isinstance(link, t.ResourceLink) and str(link.uri) == "shop://docs/payments"
        assert (await call_ok(client, "slow", {"seconds": 0.01}))["slept"] == 0.01


@pytest.mark.parametrize("mode", MODES)
async def test_progress_and_logging(mode: str) -> None:
    recorder = Recorder()
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with connect(mode, recorder) as client:
        result = await client.call_tool("import_catalog", {"count": 4}, progress_callback=on_progress)
        assert not result.is_error
        assert seen == [1, 2, 3, 4]
    levels = {(log.level, str(log.data)) for log in recorder.logs}
    assert ("info", "Importing 4 products") in levels and ("debug", "Imported IMP-004") in levels


async def test_legacy_log_level_filters_messages() -> None:
    recorder = Recorder()
    async with connect("legacy", recorder) as client:
        await client.set_logging_level("warning")
        await call_ok(client, "import_catalog", {"count": 2})
    assert recorder.logs == []


# --------------------------------------------------------------------------- the client's side


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_elicitation_and_roots(mode: str) -> None:
    recorder = Recorder()
    callbacks = {
        "sampling_callback": recorder.on_sampling,
        "elicitation_callback": recorder.on_elicit,
        "list_roots_callback": recorder.on_roots,
    }
    async with connect(mode, recorder, **callbacks) as client:
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 2})
        summary = await call_ok(client, "summarize_order", {"order_id": order["id"]})
        assert summary == {"order_id": order["id"], "summary": "Two widgets, paid.", "model": "fake-llm"}
        assert len(recorder.sampling) == 1
        assert order["id"] in str(recorder.sampling[0].messages[0].content)

        user = await call_ok(client, "create_user", {"email": "ada@example.com", "name": "Ada"})
        outcome = await call_ok(client, "confirm_delete", {"user_id": user["id"]})
        assert outcome == {"action": "accepted", "confirm": True, "reason": "test", "deleted": True}
        request = recorder.elicitations[0]
        assert isinstance(request, t.ElicitRequestFormParams) and "cannot be undone" in request.message
        assert set(request.requested_schema["properties"]) == {"confirm", "reason"}
        assert "does not exist" in await call_error(client, "get_user", {"user_id": user["id"]})

        answers: tuple[tuple[Literal["decline", "cancel"], str], ...] = (
            ("decline", "declined"),
            ("cancel", "cancelled"),
        )
        for action, expected in answers:
            recorder.elicit_answer = t.ElicitResult(action=action)
            kept = await call_ok(client, "create_user", {"email": f"{action}@example.com", "name": action})
            outcome = await call_ok(client, "confirm_delete", {"user_id": kept["id"]})
            assert (outcome["action"], outcome["deleted"]) == (expected, False)

        roots = await call_ok(client, "list_roots")
        assert roots["uris"] == ["file:///srv/project"]


@pytest.mark.parametrize("mode", MODES)
async def test_missing_client_capability_is_an_actionable_error(mode: str) -> None:
    async with connect(mode) as client:
        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        message = await call_error(client, "summarize_order", {"order_id": order["id"]})
        assert "did not declare the sampling capability" in message
        assert "roots" in await call_error(client, "list_roots", {})


# --------------------------------------------------------------------------- users


async def test_user_accounts() -> None:
    async with connect("auto") as client:
        user = await call_ok(client, "create_user", {"email": "grace@example.com", "name": "Grace"})
        assert len(user["id"]) == 36 and user["created_at"].endswith("+00:00")
        assert await call_ok(client, "get_user", {"user_id": user["id"]}) == user
        duplicate = await call_error(client, "create_user", {"email": "grace@example.com", "name": "G"})
        assert "already exists" in duplicate and user["id"] in duplicate
        assert "not a valid email" in await call_error(client, "create_user", {"email": "nope", "name": "N"})
        assert await call_ok(client, "delete_user", {"user_id": user["id"]}) == {
            "id": user["id"],
            "deleted": True,
        }


# --------------------------------------------------------------------------- resources, prompts, completions


@pytest.mark.parametrize("mode", MODES)
async def test_resources_prompts_and_completions(mode: str) -> None:
    async with connect(mode) as client:
        resources = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
        assert resources == {"shop://catalog": "application/json", "shop://logo.png": "image/png"}
        templates = (await client.list_resource_templates()).resource_templates
        assert [(r.uri_template, r.mime_type) for r in templates] == [("shop://docs/{topic}", "text/markdown")]

        catalog = (await client.read_resource("shop://catalog")).contents[0]
        assert isinstance(catalog, t.TextResourceContents) and catalog.mime_type == "application/json"
        assert json.loads(catalog.text)[0]["product_id"] == "PROD-123"
        logo = (await client.read_resource("shop://logo.png")).contents[0]
        assert isinstance(logo, t.BlobResourceContents) and logo.mime_type == "image/png"
        docs = (await client.read_resource("shop://docs/payments")).contents[0]
        assert isinstance(docs, t.TextResourceContents) and docs.text.startswith("# Payments")

        order = await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        prompt = await client.get_prompt("order_confirmation", {"order_id": order["id"]})
        assert [m.role for m in prompt.messages] == ["user", "assistant"]
        assert order["id"] in str(prompt.messages[1].content)
        greeting = await client.get_prompt("greeting", {"name": "Ada"})
        assert "Ada" in str(greeting.messages[0].content)

        names = await client.complete(
            t.PromptReference(type="ref/prompt", name="greeting"), {"name": "name", "value": "Ad"}
        )
        assert names.completion.values == ["Ada", "Adam"]
        template = t.ResourceTemplateReference(type="ref/resource", uri="shop://docs/{topic}")
        topics = await client.complete(template, {"name": "topic", "value": "pay"})
        assert topics.completion.values == ["payments"]


# --------------------------------------------------------------------------- change notifications


async def test_legacy_list_changed_and_resource_updates() -> None:
    recorder = Recorder()
    async with connect("legacy", recorder) as client:
        await client.subscribe_resource("shop://catalog")
        assert (await call_ok(client, "enable_admin_tools")) == {"added": ["purge_orders"]}
        assert "purge_orders" in {tool.name for tool in (await client.list_tools()).tools}
        await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
        with anyio.fail_after(2):
            while not any(isinstance(n, t.ResourceUpdatedNotification) for n in recorder.notifications):
                await anyio.sleep(0.01)
    kinds = {type(n).__name__ for n in recorder.notifications}
    assert {"ToolListChangedNotification", "ResourceUpdatedNotification"} <= kinds


async def test_modern_changes_arrive_on_subscriptions_listen() -> None:
    async with connect("auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True, resource_subscriptions=["shop://catalog"]) as sub:
            await call_ok(client, "create_order", {"product_id": "PROD-123", "quantity": 1})
            await call_ok(client, "enable_admin_tools")
            events: list[Any] = []
            with anyio.fail_after(2):
                async for event in sub:
                    events.append(event)
                    if len(events) == 2:
                        break
    assert {type(e).__name__ for e in events} == {"ResourceUpdated", "ToolsListChanged"}


# --------------------------------------------------------------------------- real processes


def _stdio(module: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", module], cwd=str(ROOT), env={"PYTHONPATH": str(ROOT), **env}
    )


async def test_shop_over_stdio(tmp_path: Path) -> None:
    recorder = Recorder()
    params = _stdio("demo.shop", SHOP_DB=str(tmp_path / "shop.db"))
    with (tmp_path / "stderr.txt").open("w") as errlog:
        client = Client(
            stdio_client(params, errlog=errlog),
            mode="auto",
            cache=None,
            sampling_callback=recorder.on_sampling,
        )
        async with client:
            assert client.protocol_version == "2026-07-28"
            order = await call_ok(client, "create_order", {"product_id": "PROD-789", "quantity": 1})
            summary = await call_ok(client, "summarize_order", {"order_id": order["id"]})
            assert summary["summary"] == "Two widgets, paid."
    with sqlite3.connect(tmp_path / "shop.db") as db:
        assert db.execute("SELECT quantity FROM inventory WHERE product_id = 'PROD-789'").fetchone() == (2,)
    assert "Warning" not in (tmp_path / "stderr.txt").read_text()


async def test_crash_server_dies_mid_call() -> None:
    assert crash.create_server().name == "crash"
    async with Client(_stdio("demo.crash"), mode="legacy", cache=None) as client:
        assert text_of(await client.call_tool("hello", {"name": "Ada"})) == "Hello, Ada!"
        with pytest.raises(Exception) as caught:
            with anyio.fail_after(5):
                await client.call_tool("crash", {})
        assert not isinstance(caught.value, TimeoutError)


def test_broken_server_fails_at_start() -> None:
    done = subprocess.run([sys.executable, "-m", "demo.broken"], cwd=ROOT, capture_output=True, text=True, timeout=10)
    assert (done.returncode, done.stderr.strip(), done.stdout) == (3, "boom: database unreachable", "")


def test_hang_server_never_answers() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo.hang"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        proc.stdin.close()  # even at EOF it keeps hanging
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
    finally:
        proc.kill()
        proc.wait(timeout=5)
    assert proc.stdout is not None
    assert proc.stdout.read() == b""
    proc.stdout.close()


def test_environment_is_not_read_at_import(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHOP_DB", str(tmp_path / "late.db"))
    monkeypatch.setenv("PAYMENTS_URL", "http://127.0.0.1:1")
    server = shop.create_server()
    tools = anyio.run(server.list_tools)
    pay = next(tool for tool in tools if tool.name == "pay_order")
    assert "simulated" not in (pay.description or "")
    assert os.environ["SHOP_DB"].endswith("late.db")
