"""Loopback ports for what mcp-bdd starts (HTTP servers, the PostgreSQL fake): one way to pick one,
and one way to ask whether something listens on one.

The port is picked by the OS and released before its user binds it, so whoever binds next may be
handed the same one. That is why a server's port is picked after the fakes its launch names have
started (`servers/_start.py`): under load, a fake got the port a server was about to take.
"""

from __future__ import annotations

import socket

__all__ = ["accepts", "free_port"]


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the OS picks it; see the module docstring for the race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepts(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:`port` now (a server's readiness, a
    fake's process's)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False
