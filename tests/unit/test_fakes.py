"""Unit tests of mcp_bdd.fakes with real fakes: real HTTP on 127.0.0.1, real SQLite, a real portal."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import psutil
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

import mcp_bdd.fakes as fakes_module
from mcp_bdd.errors import ServerStartError, UsageError
from mcp_bdd.fakes import FakeContext, FakeDatabase, FakeHttpService, Fakes, FakeWorkspace, fake
from mcp_bdd.transcript import Transcript


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal() as p:
        yield p


@pytest.fixture
def transcript() -> Transcript:
    return Transcript()


@pytest.fixture
def fakes(portal: BlockingPortal, transcript: Transcript, tmp_path: Path) -> Iterator[Fakes]:
    f = Fakes(portal=portal, transcript=transcript, tmpdir=tmp_path)
    yield f
    assert f.close() == []


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    """User fakes registered by a test do not leak into the next one."""
    saved = dict(fakes_module._REGISTRY)
    yield
    fakes_module._REGISTRY.clear()
    fakes_module._REGISTRY.update(saved)


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(trust_env=False, timeout=5) as c:
        yield c


def _listening(port: int) -> bool:
    """Does this process still hold a socket on the port (listening or connected)?"""
    return any(
        c.laddr and c.laddr.port == port and c.status != psutil.CONN_TIME_WAIT
        for c in psutil.Process().net_connections(kind="tcp")
    )


# ------------------------------------------------------------------------------------------------
# HTTP service


def test_http_lifecycle_leaves_no_thread_or_socket(fakes: Fakes, client: httpx2.Client) -> None:
    threads = threading.active_count()
    service = fakes.http("payments")
    assert service.url == f"http://127.0.0.1:{service.port}"
    service.stub("GET", "/health", status=200, body="ok")
    assert client.get(service.url + "/health").text == "ok"
    assert _listening(service.port)
    assert threading.active_count() == threads  # served in the portal's loop, no thread of its own

    assert fakes.close() == []
    assert not _listening(service.port)
    assert threading.active_count() == threads
    # The port can be bound again at once (closed connections in TIME_WAIT do not block it).
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", service.port))
        sock.listen()
    with pytest.raises(httpx2.ConnectError):
        client.get(service.url + "/health")


def test_http_url_is_usable_before_the_first_request(portal: BlockingPortal, transcript: Transcript) -> None:
    # Creation returns with the socket listening: a server under test may connect straight away.
    for _ in range(5):
        service = FakeHttpService("x", portal=portal, transcript=transcript)
        try:
            service.stub("GET", "/", body="{}")
            assert httpx2.get(service.url + "/", trust_env=False).json() == {}
        finally:
            service.close()
        service.close()  # closing twice is harmless


def test_later_stub_replaces_earlier(fakes: Fakes, client: httpx2.Client) -> None:
    service = fakes.http("payments")
    service.stub("POST", "/charges", status=201, body='{"id": "ch_1"}')  # the Background
    service.stub("POST", "/charges", status=503, body="down")  # the Scenario overrides it
    response = client.post(service.url + "/charges", json={"amount": 5})
    assert response.status_code == 503
    assert response.text == "down"
    assert response.headers["content-type"].startswith("text/plain")
    assert [s.describe() for s in service.stubs] == ["POST /charges -> 503"]


def test_json_body_and_headers(fakes: Fakes, client: httpx2.Client) -> None:
    service = fakes.http("api")
    service.stub("GET", "/me", body='{"name": "Ada"}', headers={"X-Request-Id": "r-1"})
    response = client.get(service.url + "/me")
    assert response.json() == {"name": "Ada"}
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-request-id"] == "r-1"
    service.amend("GET", "/me", headers=[("Cache-Control", "no-store")])
    response = client.get(service.url + "/me")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-request-id"] == "r-1"  # amending adds to the stub's headers


def test_unstubbed_request_gets_404_and_is_recorded(
    fakes: Fakes, client: httpx2.Client, transcript: Transcript
) -> None:
    service = fakes.http("payments")
    service.stub("POST", "/charges", status=201)
    response = client.get(service.url + "/refunds?limit=2", headers={"Authorization": "Bearer t"})
    assert response.status_code == 404
    body = response.json()
    assert "GET /refunds?limit=2" in body["error"]
    assert body["stubs"] == ["POST /charges -> 201"]
    (request,) = service.requests
    assert (request.method, request.path, request.query, request.status, request.stub) == (
        "GET",
        "/refunds",
        "limit=2",
        404,
        None,
    )
    assert request.headers["authorization"] == "Bearer t"
    (record,) = [i for i in transcript.items if i.kind == "fake"]
    assert (record.server, record.method) == ("payments", "GET /refunds?limit=2")
    assert record.payload["status"] == 404


def test_request_body_and_stub_recorded(fakes: Fakes, client: httpx2.Client) -> None:
    service = fakes.http("payments")
    service.stub("POST", "/charges", status=201, body={"id": "ch_1"})
    client.post(service.url + "/charges", json={"amount": 1999})
    (request,) = service.requests
    assert request.json() == {"amount": 1999}
    assert request.stub == "POST /charges -> 201"
    assert request.status == 201


def test_a_huge_request_body_is_kept_bounded(
    fakes: Fakes, client: httpx2.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 400 MB upload from the server under test took 2 GB of behave's memory, 900 MB of it kept
    for the scenario. The fake keeps the first `BODY_KEPT` bytes of a body and counts the rest."""
    import importlib

    monkeypatch.setattr(importlib.import_module("mcp_bdd.fakes._http"), "BODY_KEPT", 1024 * 1024)  # a test's size
    service = fakes.http("uploads")
    service.stub("POST", "/files", status=201)
    client.post(service.url + "/files", content=b"x" * (3 * 1024 * 1024 + 5))
    (request,) = service.requests
    assert request.body.startswith("x" * 1000) and len(request.body) < 1024 * 1024 + 200
    assert request.body.endswith("… (3145733 bytes in all; the fake keeps the first 1 MiB)"), request.body[-80:]
    assert request.status == 201


def test_query_stubs_are_more_specific(fakes: Fakes, client: httpx2.Client) -> None:
    service = fakes.http("catalog")
    service.stub("GET", "/search", body="any")
    service.stub("GET", "/search?q=shoes", body="shoes")
    assert client.get(service.url + "/search?q=shoes&limit=3").text == "shoes"
    assert client.get(service.url + "/search?q=hats").text == "any"
    assert client.get(service.url + "/search").text == "any"


def test_delay(fakes: Fakes, client: httpx2.Client) -> None:
    service = fakes.http("slow")
    service.stub("GET", "/report", body="done")
    service.amend("GET", "/report", delay=0.3)
    started = time.perf_counter()
    assert client.get(service.url + "/report").text == "done"
    assert time.perf_counter() - started >= 0.3
    # A client that gives up first still left its request on record.
    with pytest.raises(httpx2.TimeoutException):
        client.get(service.url + "/report", timeout=0.05)
    assert len(service.requests) == 2


def test_close_does_not_wait_for_a_delayed_answer(fakes: Fakes) -> None:
    service = fakes.http("slow")
    service.stub("GET", "/report", body="done", delay=30)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            httpx2.get(service.url + "/report", timeout=30, trust_env=False)
        except BaseException as exc:  # collected for the assertion
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + 60
    while not service.requests:  # the request has reached the fake: closing must cut it short
        assert time.monotonic() < deadline and thread.is_alive(), f"the call never reached the fake: {errors}"
        time.sleep(0.005)
    started = time.perf_counter()
    assert fakes.close() == []
    assert time.perf_counter() - started < 2
    thread.join(5)
    assert errors and isinstance(errors[0], httpx2.HTTPError)
    assert not _listening(service.port)


def test_dropped_connection(fakes: Fakes, client: httpx2.Client) -> None:
    service = fakes.http("payments")
    service.stub("POST", "/charges", drop=True)
    with pytest.raises(httpx2.RemoteProtocolError):
        client.post(service.url + "/charges", json={})
    (request,) = service.requests
    assert request.status is None
    assert "dropped" in request.describe()
    # The service keeps answering other requests.
    service.stub("GET", "/health", body="ok")
    assert client.get(service.url + "/health").text == "ok"


def test_stub_usage_errors(fakes: Fakes) -> None:
    service = fakes.http("payments")
    with pytest.raises(UsageError, match=r'must start with "/": write "/charges"'):
        service.stub("POST", "charges")
    with pytest.raises(UsageError, match=r'"PSOT" is not an HTTP method. Did you mean "POST"'):
        service.stub("PSOT", "/charges")
    with pytest.raises(UsageError, match=r"no stub for GET /x to change"):
        service.amend("GET", "/x", delay=1)
    with pytest.raises(UsageError, match=r"not an HTTP status"):
        service.stub("GET", "/x", status=42)


# ------------------------------------------------------------------------------------------------
# Database


def test_database_seed_types_and_nulls(fakes: Fakes) -> None:
    db = fakes.database("shop")
    assert db.url == f"sqlite:///{db.path}"
    assert db.path.is_file()  # exists at once: the server may open it before any seed
    db.seed(
        "products",
        ["id", "name", "price", "stock", "zip", "note"],
        [["1", "Widget", "9.99", "12", "007", ""], ["2", "Gadget", "-1e3", "0", "10115", "x"]],
    )
    rows = sqlite3.connect(db.path).execute("SELECT * FROM products ORDER BY id").fetchall()
    assert rows == [(1, "Widget", 9.99, 12, "007", None), (2, "Gadget", -1000.0, 0, 10115, "x")]
    assert db.count("products") == 2
    assert db.rows("products")[0] == {
        "id": 1,
        "name": "Widget",
        "price": 9.99,
        "stock": 12,
        "zip": "007",
        "note": None,
    }
    assert db.columns("products") == ["id", "name", "price", "stock", "zip", "note"]
    db.seed("products", ["id", "name"], [["3", "Doohickey"]])  # existing table: more rows
    assert db.count("products") == 3


def test_database_seed_into_a_table_the_server_created(fakes: Fakes) -> None:
    db = fakes.database("shop")
    db.execute("CREATE TABLE inventory (product_id TEXT PRIMARY KEY, quantity INTEGER NOT NULL)")
    db.seed("inventory", ["product_id", "quantity"], [["PROD-1", "5"]])
    assert db.rows("inventory") == [{"product_id": "PROD-1", "quantity": 5}]
    with pytest.raises(UsageError, match=r'has no column "quantty". Did you mean "quantity"'):
        db.seed("inventory", ["product_id", "quantty"], [["PROD-2", "1"]])


@pytest.mark.parametrize("heading", ["unit price", "1st", "drop;table", ""])
def test_database_bad_heading(fakes: Fakes, heading: str) -> None:
    with pytest.raises(UsageError, match=f'column heading "{heading}" is not a valid SQL identifier'):
        fakes.database("shop").seed("t", ["id", heading], [["1", "2"]])


def test_database_bad_table_name_and_missing_table(fakes: Fakes) -> None:
    db = fakes.database("shop")
    with pytest.raises(UsageError, match=r'table name "my table"'):
        db.seed("my table", ["a"], [["1"]])
    with pytest.raises(LookupError):
        db.count("nothing")


# ------------------------------------------------------------------------------------------------
# Workspace


def test_workspace_files(fakes: Fakes) -> None:
    ws = fakes.workspace()
    path = ws.write("notes/todo.md", "- buy milk\n")
    assert path == ws.path / "notes" / "todo.md"
    assert ws.read("notes/todo.md") == "- buy milk\n"
    assert ws.exists("notes/todo.md") and not ws.exists("notes/other.md")
    assert ws.files() == ["notes/todo.md"]
    assert fakes.resolve("workspace", "path") == str(ws.path)


@pytest.mark.parametrize(
    ("relative", "message"),
    [
        ("/etc/passwd", "absolute path"),
        ("C:\\Windows\\x.txt", "absolute path"),
        ("../outside.txt", "leaves the workspace"),
        ("a/../../outside.txt", "leaves the workspace"),
        ("", "needs a relative path"),
    ],
)
def test_workspace_rejects_escapes(fakes: Fakes, relative: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        fakes.workspace().write(relative, "x")


def test_workspace_rejects_symlink_escape(fakes: Fakes, tmp_path: Path) -> None:
    ws = fakes.workspace()
    (ws.path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(UsageError, match=r"resolves outside the workspace"):
        ws.write("link/x.txt", "x")


# ------------------------------------------------------------------------------------------------
# User fakes, teardown order


class Queue:
    def __init__(self, url: str) -> None:
        self.url = url
        self.messages: list[str] = []


def test_user_fakes_setup_and_cleanup_in_reverse_order(fakes: Fakes) -> None:
    events: list[str] = []

    @fake("queue")
    def queue(ctx: FakeContext) -> Iterator[Queue]:
        assert ctx.tmpdir.is_dir() and ctx.name == "queue"
        events.append("queue up")
        ctx.record("started", {"dir": str(ctx.tmpdir)})
        yield Queue("amqp://127.0.0.1:5672")
        events.append("queue down")

    @fake("mailer")
    def mailer(ctx: FakeContext) -> Iterator[dict[str, str]]:
        events.append("mailer up")
        yield {"host": "127.0.0.1"}
        events.append("mailer down")

    assert fakes.resolve("queue", "url") == "amqp://127.0.0.1:5672"
    http = fakes.http("payments")
    assert fakes.resolve("mailer", "host") == "127.0.0.1"
    assert list(fakes.active) == ["queue", "payments", "mailer"]
    assert isinstance(fakes.active["queue"], Queue)
    assert events == ["queue up", "mailer up"]
    assert fakes.close() == []
    assert events == ["queue up", "mailer up", "mailer down", "queue down"]
    assert not _listening(http.port)
    assert fakes.close() == []  # idempotent


def test_user_fake_plain_function_and_declared_under_another_name(
    portal: BlockingPortal, transcript: Transcript, tmp_path: Path
) -> None:
    @fake("queue")
    def queue(ctx: FakeContext) -> Queue:
        return Queue(f"mem://{ctx.name}")

    fakes = Fakes(portal=portal, transcript=transcript, tmpdir=tmp_path, declared={"jobs": "queue"})
    assert fakes.resolve("jobs", "url") == "mem://jobs"
    assert fakes.kind_of("jobs") == "queue"
    assert fakes.close() == []


def test_teardown_problems_are_reported_not_raised(fakes: Fakes) -> None:
    events: list[str] = []

    @fake("fragile")
    def fragile(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("x")
        raise RuntimeError("broker gone")

    @fake("greedy")
    def greedy(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("a")
        events.append("greedy resumed")
        yield Queue("b")

    @fake("last")
    def last(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("z")
        events.append("last down")

    for name in ("fragile", "greedy", "last"):
        fakes.get(name)
    problems = fakes.close()
    assert events == ["last down", "greedy resumed"]
    assert problems == [
        'fake "greedy" ("greedy" fake): UsageError: The fake "greedy" yielded more than once; '
        "a fake yields its object exactly once.",
        'fake "fragile" ("fragile" fake): RuntimeError: broker gone',
    ]


def test_an_interrupted_cleanup_lets_the_others_run_then_stops_the_run(fakes: Fakes) -> None:
    """Ctrl-C or SIGTERM in one slow cleanup (a `docker stop`) skipped every other fake's, and the
    processes they had started outlived the run. Now the others still run, then the run stops."""
    events: list[str] = []

    @fake("first")
    def first(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("a")
        events.append("first down")

    @fake("slow")
    def slow(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("b")
        raise KeyboardInterrupt  # as Ctrl-C lands in its cleanup

    for name in ("first", "slow"):
        fakes.get(name)
    with pytest.raises(KeyboardInterrupt):
        fakes.close()
    assert events == ["first down"]


def test_user_fake_setup_error_names_the_fake(fakes: Fakes) -> None:
    @fake("broken")
    def broken(ctx: FakeContext) -> Iterator[Queue]:
        raise ConnectionError("no broker")
        yield Queue("never")  # pragma: no cover

    with pytest.raises(ServerStartError) as info:
        fakes.get("broken")
    # its own words and line, not a traceback through mcp-bdd (the server's start printed ~30 frames)
    said = str(info.value)
    assert 'The fake "broken" (' in said and "could not be set up: it raised ConnectionError: no broker" in said
    assert "test_fakes.py:" in said and "in broken)" in said, said
    assert isinstance(info.value.__cause__, ConnectionError)
    assert "broken" not in fakes.active


def test_fake_registration_rules() -> None:
    with pytest.raises(UsageError, match=r"no dots"):
        fake("my.queue")
    with pytest.raises(UsageError, match=r"built-in kind"):
        fake("http")

    async def setup(ctx: FakeContext) -> None:  # pragma: no cover - rejected before use
        pass

    with pytest.raises(UsageError, match=r"is async"):
        fake("aqueue")(setup)


# ------------------------------------------------------------------------------------------------
# Placeholders and kind inference


def test_kind_inference_from_placeholders(fakes: Fakes) -> None:
    url = fakes.resolve("payments", "url")
    assert isinstance(fakes.active["payments"], FakeHttpService)
    assert url == fakes.active["payments"].url
    assert fakes.resolve("payments", "port") == str(fakes.active["payments"].port)

    path = fakes.resolve("shop", "path")
    assert isinstance(fakes.active["shop"], FakeDatabase)
    assert fakes.resolve("shop", "url") == f"sqlite:///{path}"  # url of an existing database

    assert isinstance(fakes.get("workspace"), FakeWorkspace)


def test_placeholder_errors(fakes: Fakes) -> None:
    with pytest.raises(UsageError) as info:
        fakes.resolve("mailer", "host")
    message = str(info.value)
    assert 'cannot tell what kind of fake "mailer" is from ".host"' in message
    assert "HTTP service offers url, port" in message and "database offers path, url" in message
    assert "workspace offers path" in message

    fakes.resolve("payments", "url")
    with pytest.raises(UsageError, match=r'HTTP service "payments" has no attribute "path". .*"port", "url"'):
        fakes.resolve("payments", "path")
    with pytest.raises(UsageError, match=r'has no attribute "url". Available attributes: "path"'):
        fakes.resolve("workspace", "url")


def test_user_fake_unknown_attribute_lists_what_it_has(fakes: Fakes) -> None:
    @fake("queue")
    def queue(ctx: FakeContext) -> Queue:
        return Queue("mem://q")

    with pytest.raises(UsageError, match=r'has no attribute "uri". Did you mean "url".*"messages", "url"'):
        fakes.resolve("queue", "uri")


def test_declared_kinds(portal: BlockingPortal, transcript: Transcript, tmp_path: Path) -> None:
    fakes = Fakes(portal=portal, transcript=transcript, tmpdir=tmp_path, declared={"shop": "database", "odd": "hppt"})
    try:
        # Declared as a database, so ".url" means sqlite:///..., not an HTTP service.
        assert fakes.resolve("shop", "url").startswith("sqlite:///")
        with pytest.raises(UsageError, match=r'Unknown kind of fake "hppt"'):
            fakes.resolve("odd", "url")
    finally:
        assert fakes.close() == []


def test_declared_kind_conflicts_with_a_step(portal: BlockingPortal, transcript: Transcript, tmp_path: Path) -> None:
    fakes = Fakes(portal=portal, transcript=transcript, tmpdir=tmp_path, declared={"shop": "database"})
    with pytest.raises(UsageError, match=r"declared as a database in \[tool.mcp-bdd.fakes\], but this step uses it"):
        fakes.get("shop", "http")
    assert fakes.close() == []


def test_kind_mismatch_with_existing_fake(fakes: Fakes) -> None:
    fakes.database("shop")
    with pytest.raises(UsageError, match=r'"shop" is a database in this scenario, not an HTTP service'):
        fakes.http("shop")


def test_existing_requires_a_fake_in_use(fakes: Fakes) -> None:
    fakes.http("payments")
    with pytest.raises(UsageError) as info:
        fakes.existing("paymnts", "http")
    assert 'The fake HTTP service "paymnts" was never set up in this scenario' in str(info.value)
    assert 'fakes in use: "payments" (HTTP service)' in str(info.value)
    assert fakes.existing("payments", "http") is fakes.active["payments"]


def test_get_after_close(fakes: Fakes) -> None:
    fakes.close()
    with pytest.raises(Exception, match=r"after the scenario's fakes were closed"):
        fakes.http("late")


# ------------------------------------------------------------------------------------------------
# Dependency injection


def test_inject_by_annotation_and_name(fakes: Fakes) -> None:
    @fake("queue")
    def queue(ctx: FakeContext) -> Queue:
        return Queue("mem://q")

    def create_server(
        payments: FakeHttpService,
        shop: FakeDatabase | None,
        workspace: Any,
        queue: Queue,
        debug: bool = False,
    ) -> None:
        raise AssertionError("not called")

    kwargs = fakes.inject(create_server)
    assert set(kwargs) == {"payments", "shop", "workspace", "queue"}
    assert isinstance(kwargs["payments"], FakeHttpService)
    assert isinstance(kwargs["shop"], FakeDatabase)
    assert isinstance(kwargs["workspace"], FakeWorkspace)
    assert isinstance(kwargs["queue"], Queue)
    assert fakes.inject(create_server)["payments"] is kwargs["payments"]  # the same fakes, not new ones


def test_inject_uses_existing_fakes_and_checks_kinds(fakes: Fakes) -> None:
    fakes.database("billing")

    def by_name(billing: Any) -> None: ...

    def wrong_kind(billing: FakeHttpService) -> None: ...

    assert fakes.inject(by_name) == {"billing": fakes.active["billing"]}
    with pytest.raises(UsageError, match=r"is a database in this scenario"):
        fakes.inject(wrong_kind)


def test_inject_rejects_required_non_fakes(fakes: Fakes) -> None:
    def create_server(payments: FakeHttpService, api_key: str) -> None: ...

    with pytest.raises(UsageError, match='create_server\\(\\) needs the argument "api_key", which is not a fake'):
        fakes.inject(create_server)

    def plain() -> None: ...

    assert fakes.inject(plain) == {}


@pytest.mark.timeout(120, method="thread")  # pytest-timeout's default method holds SIGALRM, the limit's signal
def test_a_user_fakes_cleanup_past_its_limit_is_reported_and_the_others_still_run(
    portal: BlockingPortal, transcript: Transcript, tmp_path: Path
) -> None:
    """A cleanup that never returns gets the limit its setup got (startup_timeout): a problem said,
    the other fakes still cleaned up; and SIGALRM, used for the limit, is given back as it was."""
    import signal

    assert threading.current_thread() is threading.main_thread()  # where the limit can be armed
    events: list[str] = []
    reader, writer = socket.socketpair()

    @fake("first")
    def first(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("a")
        events.append("first down")

    @fake("sticky")
    def sticky(ctx: FakeContext) -> Iterator[Queue]:
        yield Queue("b")
        reader.recv(1)  # a process that never says it stopped

    limited = Fakes(portal=portal, transcript=transcript, tmpdir=tmp_path, limit=0.5)
    for name in ("first", "sticky"):
        limited.get(name)
    try:
        problems = limited.close()
    finally:
        reader.close()
        writer.close()
    assert len(problems) == 1 and problems[0].startswith('fake "sticky" ("sticky" fake): its cleanup did not finish'), (
        problems
    )
    assert "within 0.5 s (it was at " in problems[0] and "test_fakes.py:" in problems[0], problems
    assert events == ["first down"]
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL)[0] == 0


@pytest.mark.timeout(120, method="thread")
def test_a_project_that_uses_sigalrm_keeps_it_and_its_fakes_get_no_limit(
    portal: BlockingPortal, transcript: Transcript, tmp_path: Path
) -> None:
    import signal

    rang: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: rang.append(signum))
    try:

        @fake("slowish")
        def slowish(ctx: FakeContext) -> Iterator[Queue]:
            time.sleep(0.3)  # past the limit below, which is not armed
            yield Queue("c")

        limited = Fakes(portal=portal, transcript=transcript, tmpdir=tmp_path, limit=0.05)
        assert isinstance(limited.get("slowish"), Queue)
        assert limited.close() == []
        assert signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL and not rang
    finally:
        signal.signal(signal.SIGALRM, previous)
