"""How the cyclic GC runs during a behave run: what the run set up is exempt, and the young
generation is collected ten times less often. Both are undone when the run ends.

Why the freeze: the run sets up ~10^5 objects that live as long as it does (mcp, pydantic,
behave's model); every full collection that a scenario's allocations triggered re-scanned them
all. Frozen, a 1,500-scenario in-memory run spent a third less time in the GC and ~0.2 ms less
a scenario.

Why the young generation: an in-memory scenario allocates about 700 objects the GC tracks, so
CPython's default young collection (every 700 net allocations) ran about once a scenario, in the
middle of it: it scanned the scenario's live objects (its session, transcript, behave's step
results), all of which survived and were promoted, to be scanned again in the middle generation
before they died by reference count. Collected every 7,000, most scenarios finish between two
young collections, their objects die unscanned, and the cyclic garbage they leave (~470 objects
a scenario under `gc.DEBUG_SAVEALL`) is freed young instead of being promoted. Measured on
1,000-scenario in-memory runs (interleaved, 2-core VM): ~0.22 ms less a scenario, and ~3 MB less
peak memory (116 vs 119 MB). (Leaving the young generation at 700 and collecting the middle one
ten times less often saved ~0.2 ms for +2 MB; both together saved no more.) Newer CPythons went
the same way: 3.13's young threshold is 2,000. `benchmarks/steps_overhead.py` measures it.

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
#: the young generation after 7,000 net allocations, not 700 (about ten scenarios, not one); the
#: older ones as CPython counts them
_DURING_A_RUN = (7000, 10, 10)


def spare_the_gc() -> Callable[[], None]:
    """Freeze what exists and widen the young generation, for the run; returns what undoes it."""
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
