"""An HTTP server's port is picked after the fakes its launch names have bound theirs.

Seen under load (`make test-stress`, run 3): `free_port()` released a port, the payments fake
that the server's environment names started next and the OS handed it that same port, so the
server could not bind and the readiness probe found the fake listening there instead ("closed
the connection during the handshake (-32601: Not Found)"). The order is what can be held here;
the collision itself is the OS's choice.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from behave_project import REPO

import mcp_bdd.servers._start as start
from mcp_bdd._net import free_port
from mcp_bdd._process_tree import wait_exit
from mcp_bdd.config import load_config
from mcp_bdd.errors import ServerStartError
from mcp_bdd.servers import reap_all, start_server

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def test_the_fakes_a_server_names_are_listening_before_its_port_is_picked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_free_port = start.free_port

    def free_port() -> int:  # the real one, noted
        events.append("port")
        return real_free_port()

    monkeypatch.setattr(start, "free_port", free_port)
    fake = socket.socket(socket.AF_INET, socket.SOCK_STREAM)

    def interpolate(text: str, extra: dict[str, Any]) -> str:
        if "${fake.payments.url}" in text:
            if "fake" not in events:  # a fake starts once per scenario, like mcp_bdd.fakes does
                fake.bind(("127.0.0.1", 0))
                fake.listen()
                events.append("fake")
            text = text.replace("${fake.payments.url}", f"http://127.0.0.1:{fake.getsockname()[1]}")
        return text.replace("${port}", str(extra.get("port", "")))

    shop = {"app": "demo.shop:create_server", "cwd": str(REPO), "env": {"PAYMENTS_URL": "${fake.payments.url}"}}
    config = load_config(tmp_path, data={"servers": {"shop": shop}}, source="test")
    server = start_server(
        "shop",
        config.server_named("shop"),
        config,
        "streamable-http",
        interpolate=interpolate,
        inject=lambda factory: {},
        logdir=tmp_path / "logs",
    )
    try:
        assert events == ["fake", "port"], events
        assert server.url is not None and f":{fake.getsockname()[1]}/" not in server.url
        assert server.returncode is None, server.describe_death()
    finally:
        server.stop()
        reap_all()
        fake.close()


def _start_shop(tmp_path: Path, shop: dict[str, Any] | None = None) -> Any:
    shop = shop or {"app": "demo.shop:create_server", "cwd": str(REPO), "startup_timeout": 60}
    config = load_config(tmp_path, data={"servers": {"shop": shop}}, source="test")
    return start_server(
        "shop",
        config.server_named("shop"),
        config,
        "streamable-http",
        interpolate=lambda text, extra: text.replace("${port}", str(extra.get("port", ""))),
        inject=lambda factory: {},
        logdir=tmp_path / "logs",
    )


@pytest.fixture
def stranger() -> Any:
    """A listening socket in this (test) process: a stranger to any server mcp-bdd starts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock
    sock.close()


def test_a_stranger_on_the_picked_port_is_not_taken_for_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stranger: socket.socket
) -> None:
    """The race that remains after picking the port last: some other process binds it first. The
    readiness probe used to accept whoever answered; now the server is tried on another port."""
    taken = stranger.getsockname()[1]
    picks = iter([taken])
    real_free_port = start.free_port
    monkeypatch.setattr(start, "free_port", lambda: next(picks, None) or real_free_port())
    server = _start_shop(tmp_path)
    try:
        assert f":{taken}/" not in server.url, f"the server was taken to be the stranger on port {taken}"
        assert server.returncode is None, server.describe_death()
        with socket.create_connection(("127.0.0.1", int(server.url.split(":")[2].split("/")[0])), timeout=5):
            pass
    finally:
        server.stop()
        reap_all()


def test_a_port_that_is_always_taken_fails_the_start_naming_who_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stranger: socket.socket
) -> None:
    taken = stranger.getsockname()[1]
    monkeypatch.setattr(start, "free_port", lambda: taken)
    try:
        with pytest.raises(ServerStartError) as failure:
            _start_shop(tmp_path)
    finally:
        reap_all()
    message = str(failure.value)
    assert 'The server "shop" could not get a port' in message, message
    assert f"{taken} (pid {os.getpid()}" in message, message
    assert "Tip:" in message, message


LISTEN = """
import socket, sys, time
sock = socket.socket()
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen()
time.sleep(120)
"""


def _command(code: str, port: int | str, *more: str) -> dict[str, Any]:
    """A command server whose Streamable HTTP start runs `code` with the port (and `more`) as argv."""
    http = {"command": [sys.executable, "-c", code, str(port), *more], "url": f"http://127.0.0.1:{port}/mcp"}
    return {"command": [sys.executable, "-c", "pass"], "http": http, "startup_timeout": 60}


def test_a_server_on_a_fixed_port_in_its_url_is_ready_when_it_listens_there(tmp_path: Path) -> None:
    """The port probed is the url's: a fixed one, not only the ${port} mcp-bdd picks."""
    port = free_port()
    server = _start_shop(tmp_path, _command(LISTEN, port))
    try:
        assert server.url == f"http://127.0.0.1:{port}/mcp" and server.returncode is None, server.describe_death()
    finally:
        server.stop()
        reap_all()


def test_a_fixed_port_held_by_a_stranger_fails_at_once_naming_it(tmp_path: Path, stranger: socket.socket) -> None:
    taken = stranger.getsockname()[1]
    try:
        with pytest.raises(ServerStartError) as failure:
            _start_shop(tmp_path, _command("import time; time.sleep(120)", taken))
    finally:
        reap_all()
    message = str(failure.value)
    assert f"could not listen on port {taken}, fixed in its url" in message, message
    assert f"(pid {os.getpid()}" in message and "Tip:" in message, message


LISTENER = """
import os, sys, time
port, pidfile, how = sys.argv[1], sys.argv[2], sys.argv[3]
if os.fork() == 0:
    os.setsid()  # outside the server's session, like docker-proxy for `docker run -p`
    if os.fork() == 0:
        with open(pidfile, "a") as f:  # first: the test stops every listener by its pid
            f.write(f"{os.getpid()} ")
        env = dict(os.environ, MCP_BDD_SPAWNED_BY="1") if how == "other-run" else os.environ
        code = "import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(120)"
        os.execve(sys.executable, [sys.executable, "-c", code, port], env)
    os._exit(0)
time.sleep(120)
"""


def _start_with_listener(tmp_path: Path, how: str) -> Any:
    """Start a server whose process forks a listener on its ${port} (see LISTENER), and stop
    every listener it forked afterwards, whatever happened."""
    pidfile = tmp_path / "listeners.pid"
    try:
        server = _start_shop(tmp_path, _command(LISTENER, "${port}", str(pidfile), how))
        assert server.returncode is None, server.describe_death()
        return server
    finally:
        reap_all()  # stops the server and its session
        for pid in map(int, pidfile.read_text().split() if pidfile.exists() else []):
            with contextlib.suppress(ProcessLookupError):  # outside the server's session: the test's to stop
                os.kill(pid, signal.SIGKILL)
            wait_exit(pid, 30)


def test_a_listener_started_for_the_server_outside_its_session_is_accepted(tmp_path: Path) -> None:
    """A proxy the server has started (younger than it, no other run's mark) is not a stranger."""
    _start_with_listener(tmp_path, "proxy")


def test_another_runs_server_on_the_port_is_a_stranger_however_young(tmp_path: Path) -> None:
    """Another mcp-bdd process's server takes a port after this one was picked, so it is younger
    than the server: its spawner's mark in its environment tells it apart."""
    with pytest.raises(ServerStartError) as failure:
        _start_with_listener(tmp_path, "other-run")
    message = str(failure.value)
    assert 'The server "shop" could not get a port' in message and message.count("(pid ") == 3, message


def test_a_url_whose_port_is_not_a_number_fails_the_start_and_stops_the_server(tmp_path: Path) -> None:
    try:
        with pytest.raises(ServerStartError) as failure:
            _start_shop(tmp_path, _command("import time; time.sleep(120)", "eighty"))
        alive = [c.cmdline() for c in psutil.Process().children(recursive=True) if "eighty" in c.cmdline()]
        assert not alive, f"the server was left running: {alive}"
    finally:
        reap_all()
    assert 'The server "shop" has no usable port in its url http://127.0.0.1:eighty/mcp' in str(failure.value)


ELSEWHERE = """
import socket
import sys
import time

port, where = int(sys.argv[1]), sys.argv[2]
sock = socket.socket(socket.AF_INET6 if where == "ipv6" else socket.AF_INET)
sock.bind(("::1", port) if where == "ipv6" else ("127.0.0.1", 0))  # the port given, on ::1; or a port of its own
sock.listen()
time.sleep(600)
"""


def _ipv6_loopback() -> bool:
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET6) as sock:
        sock.bind(("::1", 0))
        return True
    return False


@pytest.mark.parametrize("where", ["own-port", "ipv6"])
def test_a_server_that_listens_elsewhere_is_told_where(where: str, tmp_path: Path) -> None:
    """An HTTP command server that chose its own port, or bound the given port on ::1 only, failed
    after startup_timeout with "did not accept connections on port N" and `Exit code: -15` (mcp-bdd's
    own SIGTERM, read as a crash). The failure says where it listens instead and what to change,
    and that it was running."""
    if where == "ipv6" and not _ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    script = tmp_path / "elsewhere.py"
    script.write_text(ELSEWHERE)
    argv = [sys.executable, str(script), "${port}", where]
    server = {"command": argv, "http": {"command": argv, "url": "http://127.0.0.1:${port}/mcp"}, "startup_timeout": 2}
    with pytest.raises(ServerStartError) as info:
        _start_shop(tmp_path, server)
    reap_all()
    said = str(info.value)
    assert "did not accept connections on port" in said and "Running:   yes" in said, said
    assert "Exit code" not in said, said
    if where == "ipv6":
        assert "It listens on [::1]:" in said and "bind 127.0.0.1 (or 0.0.0.0)" in said, said
    else:
        assert "It listens on 127.0.0.1:" in said and "if it chose its own port, pass it the ${port}" in said, said
    assert "raise `startup_timeout`" in said, said
