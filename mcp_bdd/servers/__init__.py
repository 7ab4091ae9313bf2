"""Start and stop the servers under test: one class per way a server comes to life.

    start_server(...) -> RunningServer      resolve → bring to life → wait until connectable
    RunningServer.stop()                    the one teardown path of its process (see _process)
    reap_all()                              end of run / SIGINT / SIGTERM / atexit: stop everything

- `in-memory`: an `app` object (MCPServer / low-level Server, or a factory returning one) in the
  test process; the SDK client talks to it directly.
- `stdio`: a process we spawn (or the zygote forks) speaking JSON-RPC over pipes through our own
  linear, bounded framing (`_framing`, `_pipes`).
- `streamable-http` / `sse`: a process on a free loopback port (`${port}`), ready when the port
  accepts connections.
- `url`: nothing is started.

Every process dies with the test process (PR_SET_PDEATHSIG: SIGTERM to a spawned server's keeper,
which kills all below it; SIGKILL to a forked one) and with its session on every exit
path, grandchildren included (the run's lifeline, `_lifeline.py`).

Importing this package does not import the MCP SDK: `_framing`'s names below come with their
first use. A one-shot command (`mcp-bdd call ... -- COMMAND`) starts its server first
(`prestart`), then imports the SDK while the server boots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_bdd.servers._base import HttpServer, InMemoryServer, RemoteServer, RunningServer, StdioServer
from mcp_bdd.servers._process import ChildProcess, lifeline, reap_all, spawn, stop_together
from mcp_bdd.servers._start import discard_prestarted, exit_0_tip, exit_at_start_tip, prestart, start_server

if TYPE_CHECKING:
    from mcp_bdd.servers._framing import (
        ID_VALUE,
        NON_JSON_NUMBER,
        NON_JSON_NUMBER_FIX,
        PROTOCOL_MARK,
        answer_after_202,
        answer_after_failed_post,
        holds_non_json_number,
        repeated_answer,
    )

__all__ = [
    "ID_VALUE",
    "NON_JSON_NUMBER",
    "NON_JSON_NUMBER_FIX",
    "PROTOCOL_MARK",
    "ChildProcess",
    "HttpServer",
    "InMemoryServer",
    "RemoteServer",
    "RunningServer",
    "StdioServer",
    "answer_after_202",
    "answer_after_failed_post",
    "discard_prestarted",
    "exit_0_tip",
    "exit_at_start_tip",
    "holds_non_json_number",
    "lifeline",
    "prestart",
    "reap_all",
    "repeated_answer",
    "spawn",
    "start_server",
    "stop_together",
]

#: the stdio framing's names, imported on first use (`_framing` imports the MCP SDK)
_FRAMING = frozenset({
    "ID_VALUE", "NON_JSON_NUMBER", "NON_JSON_NUMBER_FIX", "PROTOCOL_MARK", "answer_after_202",
    "answer_after_failed_post", "holds_non_json_number", "repeated_answer",
})  # fmt: skip


def __getattr__(name: str) -> object:
    if name in _FRAMING:
        from mcp_bdd.servers import _framing

        return getattr(_framing, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
