"""One lookup per step text: what behave's registry matches a step to, remembered for a run.

Why: behave finds a step's definition by trying every definition of its keyword in order, then
parses the step's arguments and builds a `Match` (which looks up where its function is defined,
path arithmetic included). That is 11-16 µs a step on an idle machine and about three times that
inside a run, where the caches are cold, and the look-ahead (`_lookahead`) asks the same question
of a scenario's steps before behave runs them: some 0.19 ms of a 4.6 ms in-memory scenario went to
it (`benchmarks/steps_overhead.py`). A text seen before gets a copy of its first answer.

The answer is the one behave gives: anything that changes the registry's definitions (one
added by a hook mid-run, `registry.clear()`) forgets every remembered match; a text that matched
nothing is not remembered (a definition added later may match it); and only a match whose
arguments are immutable (text, numbers, booleans, None: every one of the vocabulary's) is
remembered, since a step may change a list or an object it was handed. Bounded: outlines vary
the text. Installed by `before_all` for its run, and taken away by `after_all`.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["forget_matches", "remember_matches"]

#: step texts remembered per run (an outline's rows each add one; past this, lookups just scan)
KEEP = 4096


#: argument types a step cannot change in place (a remembered match hands them to every step)
_IMMUTABLE = (str, int, float, bool, type(None))


class _Remembered:
    """Stands in for `registry.find_match`: each (step type, text)'s match, kept as a template."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.find = type(registry).find_match.__get__(registry)  # behave's own lookup
        self.lists: Any = None  # the definitions the remembered matches came from, and how many
        self.counts: tuple[int, ...] = ()
        self.found: dict[tuple[str, str], Any] = {}

    def __call__(self, step: Any) -> Any:
        lists = self.registry.steps
        counts = tuple(map(len, lists.values()))  # definitions are appended, or all replaced
        if lists is not self.lists or counts != self.counts:
            self.lists, self.counts, self.found = lists, counts, {}
        key = (step.step_type, step.name)
        template = self.found.get(key)
        if template is not None:
            return copy.copy(template)
        match = self.find(step)
        if match is not None and len(self.found) < KEEP and _immutable(match.arguments):
            self.found[key] = copy.copy(match)  # behave keeps the one it gets (step.match)
        return match


def _immutable(arguments: Any) -> bool:
    return all(type(argument.value) in _IMMUTABLE for argument in arguments or ())


def remember_matches(registry: Any) -> None:
    """Make `registry.find_match` remember what each step text matched (once per run)."""
    if not isinstance(registry.__dict__.get("find_match"), _Remembered):
        registry.find_match = _Remembered(registry)


def forget_matches(registry: Any) -> None:
    """Give `registry` back its own `find_match`."""
    if isinstance(registry.__dict__.get("find_match"), _Remembered):
        del registry.find_match
