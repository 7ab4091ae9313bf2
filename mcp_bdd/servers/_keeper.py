"""The keeper: the parent of every spawned server, so that nothing a server orphans reaches init.

    python -I -S .../_keeper.py PARENT_PID REPORT_FD PROGRAM [ARG...]

Why: a daemon a server's helper double-forks (fork, setsid, fork, exec with an empty
environment: no group, session or environment mark finds it) is found by the server's stop only
while a subreaper above it keeps it in the tree. A spawned server was that subreaper itself, but
one that *dies first* (a crash, or `kill -9` of the test process, whose PR_SET_PDEATHSIG killed
it at once) passed its orphans up — to the test process, which is no subreaper, hence to init,
where nothing tells them from any other process. `app` servers are forked by the zygote, itself
a subreaper that kills such orphans; a `command` server had nothing above it. Now it has this:
a small stdlib-only Python process (~20–35 ms to start; `-I -S`: nothing of mcp_bdd or mcp but
`_process_tree.py`, loaded by its path), spawned in the server's place, that forks and execs the
server and then only waits.

- It is the process mcp-bdd owns (pid, session, group): the server runs in its session and
  group, so the one teardown path (servers/_process.py) reaches both unchanged.
- It holds no end of the server's stdin or stdout (they end when the server's copies do), and
  ignores SIGTERM sent to the group (the server got it too; one that left the group gets it
  forwarded).
- When the server exits, every other child of the keeper is an orphan the server left: they are
  killed, with all they started (`kill_orphans`, as the zygote kills its own), before the
  keeper exits with the server's own status (the same exit code, or death by the same signal),
  so mcp-bdd reads the server's exit as it did.
- When the test process dies, even by `kill -9`, the kernel sends the keeper SIGTERM
  (PR_SET_PDEATHSIG, set by the spawner with PR_SET_CHILD_SUBREAPER): it kills the whole tree.
- On REPORT_FD it writes the server's pid (a line), and the server's exec closes it: the spawner
  waits for that EOF. A program that cannot be executed writes `!errno message` there instead,
  so a missing program is an OSError at spawn, as it was with Popen. The pid tells the spawner
  when the server itself has ended (a pidfd), a few milliseconds before its keeper does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

TYPE_CHECKING = False  # not typing's: the keeper starts in milliseconds
if TYPE_CHECKING:
    import mcp_bdd._process_tree as tree
else:  # by its path: `import mcp_bdd._process_tree` would import the whole package first
    from importlib.util import module_from_spec, spec_from_file_location

    tree = module_from_spec(spec := spec_from_file_location("tree", f"{os.path.dirname(__file__)}/../_process_tree.py"))
    spec.loader.exec_module(tree)

#: the longest the keeper waits for what it killed to be reaped (a process stuck in the kernel)
REAP_DEADLINE = 10.0


class ParentGone(Exception):
    """The test process died (PR_SET_PDEATHSIG): kill the tree and leave."""


def main(argv: list[str]) -> int:
    parent, report, program = int(argv[0]), int(argv[1]), argv[2:]
    server = 0
    forwarded = False

    def on_term(_sig: int, _frame: object) -> None:
        nonlocal forwarded
        if os.getppid() != parent:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not interrupt the kill
            raise ParentGone
        # the teardown signals the group and its leader, which arrive here one by one: the server
        # gets one SIGTERM, as it did when it led the group (a second one can cut its shutdown short);
        # never once it is reaped: its pid may belong to a stranger by then
        if server and server not in _statuses and not forwarded and _left_group(server):
            forwarded = True
            tree.signal_pid(server, signal.SIGTERM)  # the group's SIGTERM did not reach it

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # an inherited SIG_IGN would reap the server unseen
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        if os.getppid() != parent:
            return 1  # the test process died while this one started: no server, nothing to keep
        server = _start(program, report)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        if not server:
            return 127  # it could not fork: said on the report
        status = _wait_for(server)
        # every other child is an orphan the server left (module doc)
        tree.kill_orphans(timeout=REAP_DEADLINE)
        # the server's status is the answer now: a SIGTERM the teardown sends meanwhile must not
        # become ours (it stays pending, blocked, until the exit)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    except ParentGone:
        tree.kill_orphans(timeout=REAP_DEADLINE)  # the server among them
        return 1
    return _mirror(status)


def _start(program: list[str], report: int) -> int:
    """Fork and exec the server; its pid. A program that cannot be executed is said on `report`
    (the spawner raises it) and ends the child with 127, which the keeper then mirrors."""
    os.set_inheritable(report, False)  # closed by the server's exec: EOF tells the spawner it ran
    # no SIGTERM handler may run in the child (its getppid is not the test process) or in the
    # keeper before it knows the server's pid: held until both have set up
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        pid = os.fork()
    except OSError as exc:  # EAGAIN: a process limit reached
        _say(report, f"!{exc.errno or 0} {exc.strerror or exc}\n")
        return 0
    if pid == 0:
        try:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGALRM):
                signal.signal(sig, signal.SIG_DFL)  # as Popen restores them; exec keeps ignored ones
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            os.execvp(program[0], program)
        except OSError as exc:
            _say(report, f"!{exc.errno or 0} {exc.strerror or exc}\n")
        finally:
            os._exit(127)
    _say(report, f"{pid}\n")  # the spawner watches the server itself too (its pidfd)
    # let go of the server's stdin and stdout: they must end when its own copies do
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    os.close(report)
    return pid


def _say(report: int, line: str) -> None:
    with contextlib.suppress(OSError):  # the spawner gave up waiting (EPIPE): nothing to tell
        os.write(report, line.encode())


_statuses: dict[int, int] = {}


def _wait_for(pid: int) -> int:
    """The raw wait status of `pid`, reaping any orphan that ends meanwhile."""
    while pid not in _statuses:
        try:
            ended, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        _statuses[ended] = status
    return _statuses[pid]


def _left_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) != os.getpgid(0)
    except OSError:
        return False


def _mirror(status: int) -> int:
    """Exit as the server did: its exit code, or death by its signal (no core file of ours)."""
    if not os.WIFSIGNALED(status):
        return os.waitstatus_to_exitcode(status)
    sig = os.WTERMSIG(status)
    with contextlib.suppress(OSError, ValueError, ImportError):
        import resource

        try:  # 1, not 0: a core handler behind a pipe (systemd-coredump) ignores 0, and stops at 1
            resource.setrlimit(resource.RLIMIT_CORE, (1, 1))
        except ValueError:  # a hard limit of 0
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
        signal.signal(sig, signal.SIG_DFL)
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
    return 128 + sig  # a signal that does not end a process (one the server died of regardless)


if __name__ == "__main__":
    # no interpreter shutdown: it restores SIGTERM's default action, and a SIGTERM then would end
    # the keeper with a status that is not the server's (the keeper writes nothing to flush)
    os._exit(main(sys.argv[1:]))
