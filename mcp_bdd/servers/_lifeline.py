"""The run's lifeline: a tiny watchdog that kills the run's server sessions if the run dies.

Run as a script (`python -I .../_lifeline.py`), not as part of the package: it must start in
milliseconds and import nothing of mcp_bdd or mcp but `_process_tree.py` (stdlib only, loaded by
its path), which finds, waits for and kills. The test process writes `+SID` / `-SID` lines on
its stdin as it starts and stops servers. EOF on stdin means the test process is gone —
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

import os
import shutil
import signal
import sys

TYPE_CHECKING = False  # not typing's: this script starts in milliseconds
if TYPE_CHECKING:
    import mcp_bdd._process_tree as tree
else:  # by its path: `import mcp_bdd._process_tree` would import the whole package first
    from importlib.util import module_from_spec, spec_from_file_location

    tree = module_from_spec(spec := spec_from_file_location("tree", f"{os.path.dirname(__file__)}/../_process_tree.py"))
    spec.loader.exec_module(tree)


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
    tree.kill_sessions(sids)
    for mark in marks:
        tree.kill_marked(mark)
    for path in dirs:  # after the kill: a database server must not be writing into it any more
        shutil.rmtree(path, ignore_errors=True)
    return 0


#: how long the session leaders get to end on their own before their sessions are killed
LEADERS_GRACE = 3.0


def _leaders_end(sids: set[int]) -> None:
    """Wait (at most LEADERS_GRACE) for each session's leader to end: a server's keeper got SIGTERM
    as the test process died and is killing all below it, orphans in no session of ours included;
    SIGKILL would cut that short. A leader that does not end is killed with its session as before.
    Only on Linux: elsewhere no leader learns that the test process died (no PR_SET_PDEATHSIG)."""
    if sys.platform == "linux":
        tree.wait_exits(sids, LEADERS_GRACE)


if __name__ == "__main__":
    raise SystemExit(main())
