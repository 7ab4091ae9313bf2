"""The run's lifeline: a tiny watchdog that kills the run's server sessions if the run dies.

Run as a script (`python -I .../_lifeline.py`), not as part of the package: it must start in
milliseconds and import nothing of mcp_bdd or mcp. The test process writes `+SID` / `-SID` lines
on its stdin as it starts and stops servers. EOF on stdin means the test process is gone —
finished normally (nothing is left registered) or killed, even with `kill -9`, which no handler
in the test process can see. Then every process of every registered session (the server, and
the helpers *it* started: `sh -c`, `npx`, `uv run` wrappers, daemons that left its process
group but not its session) gets SIGKILL.

First it gives each session's leader up to LEADERS_GRACE to end on its own: a spawned server's
leader is its keeper (`_keeper.py`), which got SIGTERM as the test process died and is killing
everything below it, the orphans no session or mark finds included.

Why a separate process: PR_SET_PDEATHSIG reaches only the direct child; a server's own children
are beyond it, and they are exactly what a wrapper command leaves behind.

`mNAME=value` lines name an environment entry every process the run started carries (its
SPAWNED_BY mark): a helper that left its server's session too (`setsid`, Node's
`detached: true`, a daemon) is found by it and killed as well.

`dPATH` lines name the run's temporary directory: after the kill, it is removed too (a run
that ends normally has removed it already), so `kill -9` of behave leaves no files behind.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import sys
import time


def session_members(sids: set[int]) -> list[int]:
    """Every process (but this one) whose session id is in `sids`: a server and all it started."""
    members: list[int] = []
    for pid in _others(os.listdir("/proc") if os.path.isdir("/proc") else _ps_pids()):
        try:
            if os.getsid(pid) in sids:
                members.append(pid)
        except OSError:
            continue
    return members


def marked(entry: bytes) -> list[int]:
    """Every process (but this one) whose environment holds `entry` (b"NAME=value") exactly.

    The environment a process started with (what /proc shows) is inherited by all it starts,
    whatever session or group they move to. Linux only: elsewhere the sessions must do."""
    found: list[int] = []
    for pid in _others(os.listdir("/proc") if os.path.isdir("/proc") else []):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if entry in fh.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return found


def _others(entries: list[str]) -> list[int]:
    """The pids among `entries` (names in /proc, or `ps` output), this process's left out."""
    me = os.getpid()
    return [int(e) for e in entries if e.isdigit() and int(e) != me]


def _ps_pids() -> list[str]:  # systems without /proc (macOS)
    import subprocess

    out = subprocess.run(["ps", "-A", "-o", "pid="], capture_output=True, text=True, check=False).stdout
    return out.split()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the test process; we act on EOF
    sids: set[int] = set()
    marks: list[bytes] = []
    dirs: list[bytes] = []
    for raw in sys.stdin.buffer:
        line = raw.rstrip(b"\n")
        if line[:1] == b"+" and line[1:].isdigit():
            sids.add(int(line[1:]))
        elif line[:1] == b"-" and line[1:].isdigit():
            sids.discard(int(line[1:]))
        elif line[:1] == b"m" and b"=" in line:
            marks.append(line[1:])
        elif line[:1] == b"d" and os.path.isabs(line[1:]):
            dirs.append(line[1:])
    _leaders_end(sids)
    kill_sessions(sids)
    for mark in marks:
        kill_marked(mark)
    for path in dirs:  # after the kill: a database server must not be writing into it any more
        shutil.rmtree(path, ignore_errors=True)
    return 0


#: how long the session leaders get to end on their own before their sessions are killed
LEADERS_GRACE = 3.0


def _leaders_end(sids: set[int]) -> None:
    """Wait (at most LEADERS_GRACE, woken by their pidfds) for each session's leader to end: a
    server's keeper got SIGTERM as the test process died and is killing all below it, orphans in
    no session of ours included; SIGKILL would cut that short. A leader that does not end is
    killed with its session as before."""
    fds = []
    for sid in sids:
        try:
            fds.append(os.pidfd_open(sid))
        except (AttributeError, OSError):
            continue
    deadline = time.monotonic() + LEADERS_GRACE
    try:
        pending = list(fds)
        while pending and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(pending, [], [], left)
            pending = [fd for fd in pending if fd not in ready]
    finally:
        for fd in fds:
            os.close(fd)


def kill_sessions(sids: set[int]) -> int:
    """SIGKILL every process of these sessions; how many there were."""
    return len(_kill(session_members(sids))) if sids else 0


def kill_marked(entry: bytes, rounds: int = 3) -> int:
    """SIGKILL every process whose environment holds `entry`; how many there were. Scanned again
    while a scan finds some (at most `rounds` times): one may fork between a scan and its kill."""
    killed: set[int] = set()
    for _ in range(rounds):
        # a killed process shows in /proc until it has exited (under load, a while): only new ones count
        found = [pid for pid in marked(entry) if pid not in killed]
        if not found:
            break
        killed |= _kill(found)
    return len(killed)


def _kill(pids: list[int]) -> set[int]:
    """SIGKILL each of `pids`; the ones the signal reached."""
    reached: set[int] = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            reached.add(pid)
    return reached


if __name__ == "__main__":
    raise SystemExit(main())
