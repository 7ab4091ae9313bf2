"""PR_SET_PDEATHSIG: a process we start dies when the thread that started it dies; and
PR_SET_CHILD_SUBREAPER: a server keeps the orphans of what it starts as its own children.

Kept in a module of its own (stdlib only) because the `mcp-bdd run` parent, the zygote and the
server spawner all need it, and the first two must not import `mcp` to get it.
"""

from __future__ import annotations

import signal

__all__ = ["adopt_orphans", "die_with_parent", "server_lifelines"]


def die_with_parent() -> None:
    """preexec_fn (or a forked child): SIGKILL when the spawning thread dies, even on `kill -9` of it.

    Runs between fork and exec: only one async-signal-safe prctl call. Linux only; elsewhere the
    run's lifeline process (servers/_lifeline.py) is what ends the servers.
    """
    _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def adopt_orphans() -> None:
    """preexec_fn (or a forked server): make this process the "subreaper" of all it starts, so a
    daemon its helper double-forks (setsid, a cleared environment: no session and no mark to be
    found by) becomes *its* child instead of init's, and is found among its descendants when it
    is stopped. Kept across exec; one async-signal-safe prctl call. Linux only."""
    _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER


def server_lifelines() -> None:
    """Both, for a server process (spawned, or forked by the zygote): it dies with the run and
    keeps what its helpers orphan (servers/_process.py stops them with it)."""
    die_with_parent()
    adopt_orphans()


def _prctl(option: int, arg: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg)
    except Exception:
        pass
