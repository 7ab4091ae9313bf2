"""While mcp-bdd's own steps and hooks run, behave's thread and the event loop's thread share a CPU.

Why: a synchronous step hands its work to the run's event loop in another thread and waits for
it (ARCHITECTURE.md: synchronous steps, one portal), so the two threads take turns, several
times a scenario. Left alone, the scheduler wakes each thread on the CPU it last ran on: on a
2-CPU machine, one CPU each. Every turn then moves the interpreter's hot data (the reference
counts of shared objects, the session's state, the GIL itself) from one CPU's cache to the
other's, and all Python code runs slower. Measured on a 2-core VM, 1,000 in-memory scenarios
interleaved: 8.7 ms of CPU a scenario with the threads free, 6.5 ms with the pair pinned while
mcp-bdd's code runs, about what `taskset` on the whole process gives (6.3); `steps_overhead.py`
prints the same comparison. Nothing that ran in parallel is lost: the GIL lets one of the two
run Python at a time, and each waits while the other works.

What is pinned, and when: behave's thread and the loop's, from the first hop into the loop that
a vocabulary step makes to the end of its after_step, and likewise during mcp-bdd's
after_scenario (the sessions' close). The before_step of a vocabulary step only arms the pin
(`arm`); the step's first hop (`at_hop`, in `session._hop`) makes it. A step that never hops
(most Then steps check the result already in hand) costs no system call, and neither does a
server step's app factory, which runs before its hop: four fewer pins and releases an in-memory
scenario, ~0.1 ms (six system calls each pair, slower in a run than alone). The CPU is the one
behave's thread is on when the pin begins, so between steps the scheduler's balancing (a loaded
machine, `mcp-bdd run --jobs 2`) still moves the pair, and the loop's thread follows. A release
gives each thread back the CPUs it had before the pin, and disarms.

What stays free: a project's own steps; project code that mcp-bdd calls inside a step (`free`:
an app's import and factory, a fake's setup and cleanup, the built-in fakes' included, and a
project's hooks that `chain_hooks` runs) and the threads and processes it starts; and every
process mcp-bdd starts, which gets every CPU the run may use back before it executes
(`every_cpu`, in the lifelines). What a pin does reach: what in-process code starts in the
loop's thread while a step waits on it (a process an in-memory server's tool runs, anyio's
worker threads for its synchronous tools, which keep the CPU they started on). Threads run
Python one at a time anyway; `pin_threads = false` turns it all off.

Linux only (`sched_setaffinity` per thread), and only with more than one CPU to choose from. An
affinity call that fails (a container that forbids it, a CPU taken away mid-run) turns it off
for the run: it is a speed-up, never a reason for a step to fail.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator

__all__ = ["Turns", "at_hop", "every_cpu", "free", "loop_thread_id"]

#: the CPUs the process may use as it starts (before any pin): what every child gets back
_ALL: frozenset[int] = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


def _cpu_getter() -> Callable[[], int] | None:
    try:
        getcpu = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):  # not Linux, or a libc without it
        return None
    getcpu.restype = ctypes.c_int
    getcpu.argtypes = []
    return getcpu


_GETCPU = _cpu_getter() if len(_ALL) > 1 else None


def every_cpu() -> None:
    """In a child between fork and exec (a `preexec_fn`, the lifelines): every CPU the run may use,
    whatever pin the thread that started it had. One system call (run in Python, like the other
    lifelines' prctl: subprocess's preexec_fn rules apply)."""
    if len(_ALL) > 1:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, _ALL)


async def loop_thread_id() -> int:
    """Run in the loop: its thread's id for the kernel (what `sched_setaffinity` takes)."""
    return threading.get_native_id()


#: the pair pinned right now, if any (one run a process): what `free` releases
_PINNED: Turns | None = None
#: the pair the next hop from behave's thread pins (`arm`), until its `release`
_ARMED: Turns | None = None


class Turns:
    """`pin()` behave's thread and the loop's thread to the CPU behave's is on; `release()`.

    Made, pinned and released in behave's thread (the hooks), the one that made it."""

    def __init__(self, loop_thread: int) -> None:
        """`loop_thread`: the loop thread's native id (`loop_thread_id`); 0 turns pinning off."""
        self._threads = (threading.get_native_id(), loop_thread)
        self._before: list[set[int]] = []
        self.on = loop_thread > 0 and _GETCPU is not None

    @property
    def pinned(self) -> bool:
        return _PINNED is self

    def arm(self) -> None:
        """Pin at the next hop into the loop from this thread (`at_hop`), until `release`."""
        global _ARMED
        if self.on:
            _ARMED = self

    def pin(self) -> None:
        global _PINNED
        if not self.on or self.pinned or _GETCPU is None:
            return
        cpu = _GETCPU()
        if cpu not in _ALL:  # -1 (an error), or a CPU this process was not given at its start
            return
        _PINNED = self  # first: an interruption between the calls below still gets released
        try:
            self._before = [os.sched_getaffinity(tid) for tid in self._threads]
            for tid in self._threads:
                os.sched_setaffinity(tid, (cpu,))
        except OSError:
            self.on = False
            self.release()

    def release(self) -> None:
        global _ARMED, _PINNED
        if _ARMED is self:
            _ARMED = None
        if not self.pinned:
            return
        _PINNED = None
        for tid, cpus in zip(self._threads, self._before or [set(_ALL), set(_ALL)], strict=True):
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                self.on = False


def at_hop() -> None:
    """A hop into the loop is about to be made from this thread (`session._hop`): pin the armed
    pair, if behave's thread is the one hopping (not a thread of the project's)."""
    turns = _ARMED
    if turns is not None and _PINNED is None and threading.get_native_id() == turns._threads[0]:
        turns.pin()


@contextlib.contextmanager
def free() -> Iterator[None]:
    """Run a project's code (or code that starts threads and processes) on every CPU, even inside
    a pinned step: a hop it makes pins nothing either. Armed again after (the next hop pins). Only
    in behave's thread."""
    turns = _ARMED or _PINNED
    if turns is None or threading.get_native_id() != turns._threads[0]:
        yield
        return
    armed = _ARMED is turns  # else pinned by hand (`pin`): pinned again after
    turns.release()
    try:
        yield
    finally:
        turns.arm() if armed else turns.pin()
