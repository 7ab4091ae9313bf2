"""While mcp-bdd's own steps and hooks run, behave's thread and the event loop's thread share a CPU.

Why: a synchronous step hands its work to the run's event loop in another thread and waits for
it (ARCHITECTURE.md: synchronous steps, one portal), so the two threads take turns, several
times a scenario. Left alone, the scheduler wakes each thread on the CPU it last ran on: on a
2-CPU machine, one CPU each. Every turn then moves the interpreter's hot data (the reference
counts of shared objects, the session's state, the GIL itself) from one CPU's cache to the
other's, and all Python code runs slower. Measured on a 2-core VM, 1,000 in-memory scenarios
interleaved (`benchmarks/steps_overhead.py` prints it): 7.8 ms of CPU a scenario on two CPUs,
5.9 ms with the two threads pinned to one while mcp-bdd's code runs, the same as `taskset` on
the whole process (6.0). Nothing that ran in parallel is lost: the GIL lets one of the two run
Python at a time, and each waits while the other works.

Pinned only while mcp-bdd's own code runs: its scenario hooks, and a vocabulary step from
before_step to the end of after_step. A project's own steps, behave between steps, and whatever
they start (a process or a thread inherits its thread's CPUs) run on every CPU the run may use.
The CPU is the one behave's thread is on when a pin begins, so the scheduler's balancing (a
loaded machine, `mcp-bdd run --jobs 2`) still moves the pair, and the loop's thread follows.
Every process mcp-bdd starts gets all the run's CPUs back before it executes (`every_cpu`, in
the lifelines each child runs). What a pin does reach: a process or thread that in-process code
starts in the loop's thread during a step (a server's tool; anyio's worker threads for
synchronous tools keep the CPU they were started on). `pin_threads = false` turns it off.

Linux only (`sched_setaffinity` per thread), and only with more than one CPU to choose from. An
affinity call that fails (a container that forbids it, a CPU taken away mid-run) turns it off
for the run: it is a speed-up, never a reason for a step to fail.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable

__all__ = ["Turns", "every_cpu", "loop_thread_id"]

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
    whatever pin the thread that started it had. One system call, async-signal-safe."""
    if len(_ALL) > 1:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, _ALL)


async def loop_thread_id() -> int:
    """Run in the loop: its thread's id for the kernel (what `sched_setaffinity` takes)."""
    return threading.get_native_id()


class Turns:
    """`pin()` behave's thread (the caller) and the loop's thread to the caller's CPU; `release()`."""

    def __init__(self, loop_thread: int) -> None:
        """`loop_thread`: the loop thread's native id (`loop_thread_id`); 0 turns pinning off."""
        self._loop = loop_thread
        self.on = loop_thread > 0 and _GETCPU is not None
        self.pinned = False

    def pin(self) -> None:
        if not self.on or self.pinned or _GETCPU is None:
            return
        cpu = _GETCPU()
        if cpu not in _ALL:  # -1 (an error), or a CPU this process was not given at its start
            return
        self._set((cpu,))
        self.pinned = self.on

    def release(self) -> None:
        if self.pinned:
            self.pinned = False
            self._set(_ALL)

    def _set(self, cpus: tuple[int, ...] | frozenset[int]) -> None:
        try:
            os.sched_setaffinity(0, cpus)
            os.sched_setaffinity(self._loop, cpus)
        except OSError:
            self.on = False
            if cpus != _ALL:
                self._set(_ALL)
