"""Stopping an HTTP server we launch (forked from the zygote, or cold) is a graceful shutdown.

uvicorn, as it is, notices SIGTERM on a 0.1 s tick and then pauses 0.1 s more; forked servers
used to be SIGKILLed 50 ms after SIGTERM for that reason, so the app's lifespan shutdown never
ran. `mcp_bdd.apps._run_uvicorn` wakes on the signal; these tests hold the behaviour (the
shutdown completes, the process ends on its own: uvicorn re-raises the SIGTERM it handled, so
-15 after "Finished server process" is the graceful end; -9 is the grace running out), never
a duration.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from behave_project import REPO

from mcp_bdd.config import load_config
from mcp_bdd.servers import reap_all, start_server

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
@pytest.mark.parametrize("pool", [True, False], ids=["forked", "cold"])
def test_an_http_server_we_launch_shuts_down_gracefully(tmp_path: Path, pool: bool, transport: str) -> None:
    data = {"pool": pool, "servers": {"shop": {"app": "demo.shop:create_server", "cwd": str(REPO)}}}
    config = load_config(tmp_path, data=data, source="test")
    server = start_server(
        "shop",
        config.server_named("shop"),
        config,
        transport,
        interpolate=lambda text, extra: text.replace("${port}", extra.get("port", "")),
        inject=lambda factory: {},
        logdir=tmp_path / "logs",
    )
    try:
        assert server.returncode is None, server.describe_death()
        server.stop()
        stderr = server.stderr_tail(40)
        assert "Application shutdown complete" in stderr and "Finished server process" in stderr, stderr
        assert server.returncode in (0, -signal.SIGTERM), f"exit status {server.returncode}\n{stderr}"
    finally:
        server.stop()
        reap_all()  # the end of a run (after_all): the zygote and the lifeline go too
