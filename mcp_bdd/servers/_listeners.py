"""Who listens on a loopback port: the HTTP server mcp-bdd started, or a stranger.

Why: a server's `${port}` is free when `free_port()` picks it and taken by the server a moment
later; whoever binds it in between (a fake, another run's server) answers the readiness probe,
and the scenario then talks to that stranger (seen under load: a 404 reported as -32601). So a
probe that connects asks who answered.

What counts as the server: its own process, or any process of its session (every server runs in
a session of its own, `_process.py`), which covers `sh -c` / `npx` wrappers and daemonising
children. What counts as a stranger: a process outside that session that is *older than the
server*: it cannot have been started for it. A younger one outside the session may be the
server's own proxy (`docker run -p` publishes the port through docker-proxy, a child of the
Docker daemon), and a listener whose process cannot be seen (another user's, without root) may
be anything: both are accepted, as every listener was before. Only addresses a connection to
127.0.0.1 reaches are looked at.
"""

from __future__ import annotations

import contextlib
import os

import psutil

from mcp_bdd.secrets import mask

__all__ = ["listens", "stranger_on"]

#: local addresses that a connection to 127.0.0.1 reaches ("::" when the socket takes IPv4 too)
_REACHED = {"127.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1"}


def _is_listener(conn: object, port: int) -> bool:
    laddr = getattr(conn, "laddr", None)
    return (
        getattr(conn, "status", None) == psutil.CONN_LISTEN
        and bool(laddr)
        and laddr.port == port  # type: ignore[union-attr]
        and laddr.ip in _REACHED  # type: ignore[union-attr]
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


def stranger_on(port: int, server_pid: int, *, only_older: bool) -> str | None:
    """A description ("pid 123: python fake.py") of a process outside the server's session that
    listens on `port` (and, with `only_older`, was started before the server), else None."""
    try:
        listeners = {c.pid for c in psutil.net_connections(kind="tcp") if _is_listener(c, port)}
    except (psutil.Error, OSError):
        return None
    for pid in sorted(p for p in listeners if p is not None):
        if _in_session(pid, server_pid) or (only_older and not _older(pid, server_pid)):
            continue
        return _describe(pid)
    return None


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
