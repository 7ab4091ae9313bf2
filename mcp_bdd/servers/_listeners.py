"""Who listens on a loopback port: the HTTP server mcp-bdd started, or a stranger.

Why: a server's `${port}` is free when `free_port()` picks it and taken by the server a moment
later; whoever binds it in between (a fake, another run's server) answers the readiness probe,
and the scenario then talks to that stranger (seen under load: a 404 reported as -32601). So a
probe that connects asks who answered.

What counts as the server: its own process, or any process of its session (every server runs in
a session of its own, `_process.py`), which covers `sh -c` / `npx` wrappers. What counts as a
stranger, outside that session:
- a process another mcp-bdd process started (another run's server, forked or not: every process
  `spawn` starts carries SPAWNED_BY in its environment, and a zygote's children inherit it);
- a process *older than the server*: it cannot have been started for it (a fake in this run).
A younger unmarked one outside the session may be the server's own (docker-proxy publishing
`docker run -p`, a daemon it forked), and a listener whose process cannot be seen (another
user's, without root) may be anything: both are accepted, as every listener was before. Only
addresses a connection to 127.0.0.1 reaches are looked at.

Cost: the server's own process is asked first (~3.5 ms: each socket kind is a read of the
kernel's table); only when it does not listen itself are all processes' sockets scanned (~10 ms
with 80 processes, more with more).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import psutil

from mcp_bdd._process_tree import descendant_pids
from mcp_bdd.secrets import mask

__all__ = ["SPAWNED_BY", "listens", "spawned_by", "stranger_on"]

#: the environment variable naming the mcp-bdd process that started a server (set by `spawn`)
SPAWNED_BY = "MCP_BDD_SPAWNED_BY"
_TOKENS: dict[int, str] = {}


def spawned_by() -> str:
    """This process's SPAWNED_BY value: its pid and a random token (a pid alone repeats across pid
    namespaces: a container's processes show in the host's /proc, and the lifeline kills by it)."""
    pid = os.getpid()
    if pid not in _TOKENS:  # per pid: a forked child is another spawner
        _TOKENS[pid] = f"{pid}-{os.urandom(6).hex()}"
    return _TOKENS[pid]


#: local addresses that a connection to 127.0.0.1 reaches ("::" when the socket takes IPv4 too)
_REACHED = {"127.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1"}


def _is_listener(conn: Any, port: int) -> bool:
    """`conn`: one of psutil's connection records (`laddr` is an empty tuple when unbound)."""
    return bool(
        conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.laddr.ip in _REACHED
    )


def listens(pid: int, port: int) -> bool:
    """Whether process `pid` itself listens on `port`: the common case, and the cheap check
    (IPv4 first, where the probe connected; each kind reads the kernel's whole socket table)."""
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        for kind in ("tcp4", "tcp6"):
            if any(_is_listener(c, port) for c in process.net_connections(kind=kind)):
                return True
    return False


def stranger_on(port: int, server_pid: int) -> str | None:
    """A description ("pid 123: python fake.py") of a stranger (see the module doc) listening on
    `port`, else None."""
    try:
        listeners = {c.pid for c in psutil.net_connections(kind="tcp") if _is_listener(c, port)}
    except (psutil.Error, OSError):
        return None
    for pid in sorted(p for p in listeners if p is not None):
        if not _in_session(pid, server_pid) and (_spawned_elsewhere(pid) or _older(pid, server_pid)):
            return _describe(pid)
    return None


def listening_instead(server_pid: int) -> list[str]:
    """The TCP addresses the server's process and its descendants listen on ("127.0.0.1:8001",
    "[::1]:8000"): where a server that never answered on the port it was given went instead."""
    tree = {server_pid, *descendant_pids(server_pid)}
    try:
        conns = psutil.net_connections(kind="inet")
    except (psutil.Error, OSError):
        return []
    found = {(c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN and c.laddr and c.pid in tree}
    return [f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}" for ip, port in sorted(found)]


def _spawned_elsewhere(pid: int) -> bool:
    try:
        spawner = psutil.Process(pid).environ().get(SPAWNED_BY)
    except psutil.Error:
        return False  # cannot tell: the age decides
    return spawner is not None and spawner != spawned_by()


def _in_session(pid: int, server_pid: int) -> bool:
    try:
        return os.getsid(pid) == server_pid
    except OSError:
        return False  # gone: whoever holds the port now, it is not this process


def _older(pid: int, server_pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).create_time() < psutil.Process(server_pid).create_time())
    except psutil.Error:
        return False  # cannot tell: not counted as a stranger


def _describe(pid: int) -> str:
    with contextlib.suppress(psutil.Error):
        return mask(f"pid {pid}: {' '.join(psutil.Process(pid).cmdline())[:120]}")
    return f"pid {pid}"
