"""PR_SET_PDEATHSIG: a process we start dies when the thread that started it dies; and
PR_SET_CHILD_SUBREAPER: a server keeps the orphans of what it starts as its own children.

And the one way a process tree is found and killed once its stop has come (`descendants`,
`kill_all`, `signal_group`): a server's stop, the zygote's orphans, `mcp-bdd run`'s workers.

Kept in a module of its own (stdlib, and psutil when a tree is killed) because the `mcp-bdd run`
parent, the zygote and the server spawner all need it, and the first two must not import `mcp`
to get it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

__all__ = [
    "adopt_orphans",
    "descendants",
    "die_with_parent",
    "keeper_lifelines",
    "kill_all",
    "server_lifelines",
    "signal_group",
]


def die_with_parent() -> None:
    """preexec_fn (or a forked child): SIGKILL when the spawning thread dies, even on `kill -9` of it.

    Runs between fork and exec: one prctl call. Linux only;
    elsewhere the run's lifeline process (servers/_lifeline.py) is what ends the servers.
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


def keeper_lifelines() -> None:
    """preexec_fn of a server's keeper (servers/_keeper.py): SIGTERM, which it handles by killing
    all below it, when the spawning thread dies; and the subreaper of all it starts."""
    _prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    adopt_orphans()


def descendants(pid: int) -> list[psutil.Process]:
    """Every process below `pid` now (none if it is gone): taken before a stop, so that what it
    orphans as it dies is still known by its process, not by a pid that may be reused."""
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_all(processes: Iterable[psutil.Process], *, groups: bool = False) -> None:
    """SIGKILL those still alive (psutil refuses a pid that was reused since); with `groups`, also
    the process group each one led: its helpers, which outlive it in the group when it has exited
    and been reaped (a server killed with its worker, a daemon's middle process). Safe from reuse:
    a pid that no process holds names no group but the old one (Linux gives out no pid that is
    still a group's id), and one that another process holds now is left alone."""
    import psutil

    for process in processes:
        with contextlib.suppress(psutil.Error):
            if groups and (process.is_running() or not psutil.pid_exists(process.pid)):
                signal_group(process.pid, signal.SIGKILL)
            process.kill()


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """`sig` to the process group `pgid`; one that is gone, or not ours, is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _prctl(option: int, arg: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg)
    except Exception:
        pass
