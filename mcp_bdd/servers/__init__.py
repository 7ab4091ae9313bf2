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
"""

from __future__ import annotations

from mcp_bdd.servers._base import HttpServer, InMemoryServer, RemoteServer, RunningServer, StdioServer
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
from mcp_bdd.servers._process import ChildProcess, lifeline, reap_all, spawn, stop_together
from mcp_bdd.servers._start import discard_prestarted, exit_0_tip, exit_at_start_tip, start_server

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
    "reap_all",
    "repeated_answer",
    "spawn",
    "start_server",
    "stop_together",
]
