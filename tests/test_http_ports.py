"""An HTTP server's port is picked after the fakes its launch names have bound theirs.

Seen under load (`make test-stress`, run 3): `free_port()` released a port, the payments fake
that the server's environment names started next and the OS handed it that same port, so the
server could not bind and the readiness probe found the fake listening there instead ("closed
the connection during the handshake (-32601: Not Found)"). The order is what can be held here;
the collision itself is the OS's choice.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from behave_project import REPO

import mcp_bdd.servers._start as start
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


def _start_shop(tmp_path: Path) -> Any:
    shop = {"app": "demo.shop:create_server", "cwd": str(REPO), "startup_timeout": 60}
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
    with pytest.raises(ServerStartError) as failure:
        _start_shop(tmp_path)
    reap_all()
    message = str(failure.value)
    assert 'The server "shop" could not get a port' in message, message
    assert f"{taken} (pid {os.getpid()}" in message, message
    assert "Tip:" in message, message
