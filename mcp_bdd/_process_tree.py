"""The process tree: how every process mcp-bdd starts is found, signalled, waited for and killed,
and the two settings that keep it from outliving the run.

- Settings, in a child before it runs anything (a preexec_fn, or a forked child): PR_SET_PDEATHSIG
  (it dies when the thread that started it dies, even on `kill -9` of the test process) and
  PR_SET_CHILD_SUBREAPER (what its helpers orphan becomes its child, not init's, so its stop
  still finds it): `die_with_parent`, `adopt_orphans`, `server_lifelines`, `keeper_lifelines`.
- Finding: `children` and `descendant_pids` (the kernel's own lists), `descendants` (the same as
  psutil handles, which a reused pid cannot fool), `session_members`, `marked`, `parent_of`.
- Signalling: `signal_pid`, `signal_group`, `kill_pids`, `kill_all`, `kill_sessions`,
  `kill_marked`; and `kill_orphans`, for a subreaper (the keeper, the zygote).
- Waiting: `wait_exit`, `wait_exits`, woken by the kernel (pidfds), polled where there are none.

Why one module: a server's stop (servers/_process.py), its keeper (servers/_keeper.py), the run's
lifeline (servers/_lifeline.py), the zygote, the fakes and `mcp-bdd run` all do these things, and
each had grown its own copy (three ways to list children, two loops killing a subreaper's
orphans, two pidfd waits, two readers of /proc/PID/stat), each with its own gaps: where the
kernel keeps no children lists, where there are no pidfds, an fd past 1024.

Stdlib only at import, without even `typing` (milliseconds at every server start): the keeper
(`python -I -S`) and the lifeline run as scripts and load this file by its path, as they may import
nothing of mcp_bdd or mcp. psutil is imported only where a handle is asked for (`descendants`,
`kill_all`) and to list children where there is no /proc (macOS), never in the keeper (Linux).

Not here: what a stop means (EOF, then SIGTERM, then SIGKILL, and their grace periods:
servers/_process.py; `mcp-bdd run`'s workers: cli/matrix.py; the PostgreSQL fake's fast
shutdown), a wait inside the event loop (servers/_pipes.py waits on a pidfd with anyio), who
listens on a port (servers/_listeners.py), the keeper's and the lifeline's own protocols.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time

TYPE_CHECKING = False  # not typing's, which costs the keeper milliseconds at every start; mypy reads it alike
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    import psutil

__all__ = [
    "adopt_orphans",
    "all_pids",
    "children",
    "descendant_pids",
    "descendants",
    "die_with_parent",
    "keeper_lifelines",
    "kill_all",
    "kill_marked",
    "kill_orphans",
    "kill_pids",
    "kill_sessions",
    "marked",
    "parent_of",
    "server_lifelines",
    "session_members",
    "signal_group",
    "signal_pid",
    "wait_exit",
    "wait_exits",
]

# ---------------------------------------------------------------------------------------------
# settings, in the child


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


def _prctl(option: int, arg: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg)
    except Exception:
        pass


# ---------------------------------------------------------------------------------------------
# finding


def all_pids() -> list[int]:
    """Every process now, this one left out: /proc's entries, or `ps` where there is none (macOS)."""
    if os.path.isdir("/proc"):
        entries = os.listdir("/proc")
    else:
        import subprocess

        entries = subprocess.run(["ps", "-A", "-o", "pid="], capture_output=True, text=True, check=False).stdout.split()
    me = os.getpid()
    return [int(entry) for entry in entries if entry.isdigit() and int(entry) != me]


def children(pid: int) -> list[int]:
    """`pid`'s children now (none once it is gone): the kernel's own list, a small read per thread
    of `pid` (a scan for parents reads every process on the machine); where the kernel keeps
    none (built without it, or no /proc), every process whose parent `pid` is."""
    if not os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
        return _children_by_parent(pid)
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found  # gone
    for task in tasks:
        # a thread that ended meanwhile is no error
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children", "rb") as listed:
            found += [int(child) for child in listed.read().split()]
    return found


def _children_by_parent(pid: int) -> list[int]:
    if os.path.isdir("/proc"):
        return [other for other in all_pids() if parent_of(other) == pid]
    import psutil  # no /proc (macOS), where the keeper, which cannot import it, never runs

    try:
        return [child.pid for child in psutil.Process(pid).children()]
    except psutil.Error:
        return []


def descendant_pids(pid: int) -> list[int]:
    """Every process below `pid` now, each before those below it."""
    found: list[int] = []
    seen = {pid}
    below = children(pid)
    while below:
        below = [child for child in below if child not in seen]  # a pid reused between two reads
        seen.update(below)
        found += below
        below = [grandchild for child in below for grandchild in children(child)]
    return found


def descendants(pid: int) -> list[psutil.Process]:
    """Every process below `pid` now (none if it is gone), as psutil handles: taken before a stop,
    so that what it orphans as it dies is still known by its process, not by a pid that may be
    reused."""
    import psutil

    found = []
    for child in descendant_pids(pid):
        with contextlib.suppress(psutil.Error):  # ended since it was listed
            found.append(psutil.Process(child))
    return found


def session_members(sids: Collection[int]) -> list[int]:
    """Every process (but this one) whose session id is in `sids`: a server and all it started."""
    members: list[int] = []
    for pid in all_pids():
        with contextlib.suppress(OSError):  # gone meanwhile
            if os.getsid(pid) in sids:
                members.append(pid)
    return members


def marked(entry: bytes) -> list[int]:
    """Every process (but this one) whose environment holds `entry` (b"NAME=value") exactly.

    The environment a process started with (what /proc shows) is inherited by all it starts,
    whatever session or group they move to. Linux only: elsewhere the sessions must do."""
    if not os.path.isdir("/proc"):
        return []
    found: list[int] = []
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if entry in fh.read().split(b"\0"):
                    found.append(pid)
        except OSError:  # gone meanwhile, or another user's
            continue
    return found


def parent_of(pid: int) -> int:
    """The parent pid of `pid` (0 when it is gone, or there is no /proc): also how a pid is
    checked to still be the child it was."""
    fields = _stat(pid)
    return int(fields[1]) if len(fields) > 1 else 0


def _is_zombie(pid: int) -> bool:
    return _stat(pid)[:1] == [b"Z"]


def _stat(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command's name (state, parent, ...), which may hold
    anything, ")" and spaces included; [] when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


# ---------------------------------------------------------------------------------------------
# signalling and killing


def signal_pid(pid: int, sig: signal.Signals) -> bool:
    """`sig` to `pid`; whether it reached it (one that is gone, or not ours, is no error)."""
    try:
        os.kill(pid, sig)
    except OSError:
        return False
    return True


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """`sig` to the process group `pgid`; one that is gone, or not ours, is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def kill_pids(pids: Iterable[int]) -> set[int]:
    """SIGKILL each of `pids`; the ones the signal reached."""
    return {pid for pid in pids if signal_pid(pid, signal.SIGKILL)}


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


def kill_sessions(sids: Collection[int]) -> int:
    """SIGKILL every process of these sessions; how many there were."""
    return len(kill_pids(session_members(sids))) if sids else 0


def kill_marked(entry: bytes, rounds: int = 3) -> int:
    """SIGKILL every process whose environment holds `entry`; how many there were. Scanned again
    while a scan finds some (at most `rounds` times): one may fork between a scan and its kill."""
    killed: set[int] = set()
    for _ in range(rounds):
        # a killed process shows in /proc until it has exited (under load, a while): only new ones count
        found = [pid for pid in marked(entry) if pid not in killed]
        if not found:
            break
        killed |= kill_pids(found)
    return len(killed)


def kill_orphans(keep: Collection[int] = (), *, timeout: float) -> None:
    """For a subreaper (the keeper, the zygote): SIGKILL each of its children but `keep` with all
    below it, and reap them. Pass after pass: a killed process's children come up to it as it
    dies (one that forked after the last look too). At most `timeout` seconds: a process stuck
    in the kernel is left to the server's stop and the lifeline."""
    deadline = time.monotonic() + timeout
    while orphans := [pid for pid in children(os.getpid()) if pid not in keep]:
        kill_pids([*orphans, *(below for orphan in orphans for below in descendant_pids(orphan))])
        wait_exits(orphans, deadline - time.monotonic())
        for orphan in orphans:
            with contextlib.suppress(ChildProcessError):  # reaped already (an ignored SIGCHLD)
                os.waitpid(orphan, os.WNOHANG)
        if time.monotonic() >= deadline:
            return


# ---------------------------------------------------------------------------------------------
# waiting


def wait_exit(pid: int, timeout: float) -> bool:
    """Wait until `pid` exits (or becomes a zombie), at most `timeout` seconds (0: just look);
    True if it did. As `wait_exits`: woken by the kernel where it can be."""
    return not wait_exits([pid], timeout)


def wait_exits(pids: Iterable[int], timeout: float) -> list[int]:
    """Wait until each of `pids` has exited (a zombie counts), at most `timeout` seconds; those
    still running then. Woken by the kernel (a pidfd each); polled every 10 ms where there are no
    pidfds (kernels before 5.3, macOS)."""
    deadline = time.monotonic() + timeout
    watched: dict[int, int] = {}  # pidfd -> pid
    polled: list[int] = []
    try:
        for pid in pids:
            try:
                watched[os.pidfd_open(pid)] = pid
            except ProcessLookupError:
                continue  # gone already
            except (AttributeError, OSError):  # no pidfds here, or no fd left
                polled.append(pid)
        running = [watched[fd] for fd in _unready(list(watched), deadline)]
    finally:
        for fd in watched:
            os.close(fd)
    return running + _poll_exits(polled, deadline)


def _unready(fds: list[int], deadline: float) -> list[int]:
    """Those of `fds` not yet readable at `deadline` (looked at once, at least)."""
    poll = select.poll()  # not select(): an fd past 1024 in a long run
    for fd in fds:
        poll.register(fd, select.POLLIN)
    pending = set(fds)
    while pending:
        for fd, _events in poll.poll(max(0.0, deadline - time.monotonic()) * 1000):
            pending.discard(fd)
            poll.unregister(fd)
        if time.monotonic() >= deadline:
            break
    return sorted(pending)


def _poll_exits(pids: list[int], deadline: float) -> list[int]:
    while pids := [pid for pid in pids if _running(pid)]:
        if time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    return pids


def _running(pid: int) -> bool:
    """Whether `pid` runs: it exists (a zombie does) and is no zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's: it exists
    return not _is_zombie(pid)
