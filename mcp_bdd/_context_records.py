"""Where behave records a context attribute was set: the same record, without reading source files.

Why: behave's `Context.__setattr__` calls `traceback.extract_stack(limit=2)` on every attribute
it sets, to name the file and line in a later "masking" warning. It sets two for every step
(`context.text`, `context.table`) and two for every scenario, and mcp-bdd sets `context.mcp`
twice: 12 an in-memory scenario of four steps. `extract_stack` builds its summary through
generators, registers each frame's module with `linecache`, stats each source file, and reads
the lines at once. Inside a run, where the caches are cold, that is ~15 µs a call: 0.19 ms of a
~5 ms scenario (`benchmarks/steps_overhead.py`), about as much as mcp-bdd's teardown of it.

What behave keeps is the first frame's `FrameSummary` (file, line, function), and it reads the
source line only for a warning's text (built when an attribute is set over one of a lower
layer). So, for the run, `behave.runner`'s name `traceback` is a stand-in whose `extract_stack`
walks the frames itself and makes the same summaries with `lookup_line=False`: the line is read
when behave asks for it, from the same `linecache` (a module loaded from a zip is registered
with it, as `extract_stack` does). ~4 µs a call in a run.
Everything else `behave.runner` does with `traceback` (printing a hook's error) is the module's.

Installed by `before_all` for its run, only over the real module (another plugin's stand-in is
left alone), and put back by `after_all`.
"""

from __future__ import annotations

import linecache
import sys
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["lighten_context_records"]


def lighten_context_records() -> Callable[[], None]:
    """Give `behave.runner` the stand-in for the run; returns what puts the module back."""
    import behave.runner

    if behave.runner.__dict__.get("traceback") is not traceback:
        return lambda: None
    stand_in = _Traceback()
    behave.runner.traceback = stand_in

    def restore() -> None:
        if behave.runner.__dict__.get("traceback") is stand_in:
            behave.runner.traceback = traceback

    return restore


class _Traceback:
    """The `traceback` module, but for `extract_stack`, whose lines are looked up when read."""

    def __getattr__(self, name: str) -> Any:
        return getattr(traceback, name)

    @staticmethod
    def extract_stack(f: FrameType | None = None, limit: int | None = None) -> traceback.StackSummary:
        frame: FrameType | None = sys._getframe(1) if f is None else f
        if limit is None or limit < 0:  # all frames, or the newest ones: never behave's question
            return traceback.extract_stack(frame, limit)
        frames: list[traceback.FrameSummary] = []
        while frame is not None and len(frames) < limit:
            code = frame.f_code
            linecache.lazycache(code.co_filename, frame.f_globals)  # a module from a zip can show its line later
            frames.append(traceback.FrameSummary(code.co_filename, frame.f_lineno, code.co_name, lookup_line=False))
            frame = frame.f_back
        frames.reverse()  # oldest first, as traceback.extract_stack has them
        summary = traceback.StackSummary()
        summary.extend(frames)
        return summary
