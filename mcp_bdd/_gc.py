"""How the cyclic GC runs during a behave run: what the run set up is exempt, and the middle
generation is collected ten times less often. Both are undone when the run ends.

Why the freeze: the run sets up ~10^5 objects that live as long as it does (mcp, pydantic,
behave's model); every full collection that a scenario's allocations triggered re-scanned them
all. Frozen, a 1,500-scenario in-memory run spent a third less time in the GC and ~0.2 ms less
a scenario.

Why the middle generation: a scenario's objects (its session, transcript, behave's step
results) live for milliseconds, long enough to survive the young collection that runs about
once a scenario; CPython then scans the survivors again in the middle generation every 10
young collections, before most have died by reference count. Collected every 100 instead, a
1,000-scenario in-memory run spends ~0.2 ms less a scenario (interleaved runs, 2-core VM), for
~5 MB more peak memory (cyclic garbage waits longer). `benchmarks/steps_overhead.py` measures it.

A project that tuned the GC itself keeps its settings: objects it froze before the run stay
frozen after it, and thresholds it set before or during the run stay. (Objects it froze during
the run, after mcp-bdd's freeze, are thawed with mcp-bdd's at the end: one freeze, one count.)
"""

from __future__ import annotations

import gc
from collections.abc import Callable

__all__ = ["spare_the_gc"]

#: CPython 3.11-3.12's own thresholds: anything else was chosen by someone, and is kept
_DEFAULT = (700, 10, 10)
#: the young generation as CPython collects it; the middle one after 100 of its collections, not 10
_DURING_A_RUN = (700, 100, 10)


def spare_the_gc() -> Callable[[], None]:
    """Freeze what exists and widen the middle generation, for the run; returns what undoes it."""
    undo: list[Callable[[], None]] = []
    if gc.get_freeze_count() == 0:
        gc.freeze()
        undo.append(gc.unfreeze)
    if gc.get_threshold() == _DEFAULT:
        gc.set_threshold(*_DURING_A_RUN)
        undo.append(_default_thresholds_again)

    def restore() -> None:
        for step in reversed(undo):
            step()
        undo.clear()  # once, however many ends the run has (after_all, atexit)

    return restore


def _default_thresholds_again() -> None:
    """Unless the project set thresholds of its own during the run (its before_all runs after
    mcp-bdd's under `chain_hooks`): those it keeps."""
    if gc.get_threshold() == _DURING_A_RUN:
        gc.set_threshold(*_DEFAULT)
