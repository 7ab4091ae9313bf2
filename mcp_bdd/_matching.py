"""One lookup per step text: what behave's registry matches a step to, remembered for a run.

Why: behave finds a step's definition by trying every definition of its keyword in order, then
parses the step's arguments and builds a `Match` (which looks up where its function is defined,
path arithmetic included). That is 11-16 µs a step on an idle machine and about three times that
inside a run, where the caches are cold, and the look-ahead (`_lookahead`) asks the same question
of a scenario's steps before behave runs them: some 0.19 ms of a 4.6 ms in-memory scenario went to
it (`benchmarks/steps_overhead.py`). A text seen before gets a copy of its first answer.

The answer is the one behave gives. Only the vocabulary's matches are remembered: their type
converters are pure and their values immutable (text, numbers), where a project's own type may
read the clock or the environment, count, or hand out a list a step changes, so its steps are
looked up every time, as are a text that matched nothing (a definition added later may match
it) and a match whose arguments failed to convert. A change to the registry's definitions (one
added mid-run, `registry.clear()`) forgets everything; one replaced in place, keeping the
count, is not noticed (behave never does that). Bounded: outlines vary the text. Installed by
`before_all` for its run, on top of whatever `find_match` the registry had, which `after_all`
puts back.
"""

from __future__ import annotations

import copy
from typing import Any

from mcp_bdd._lookahead import is_vocabulary

__all__ = ["forget_matches", "remember_matches", "step_function"]

#: step texts remembered per run (an outline's rows each add one; past this, lookups just scan)
KEEP = 4096


#: argument types a step cannot change in place (a remembered match hands them to every step)
_IMMUTABLE = (str, int, float, bool, type(None))


class _Remembered:
    """Stands in for `registry.find_match`: each (step type, text)'s match, kept as a template."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.before = registry.__dict__.get("find_match")  # another plugin's, put back by forget_matches
        self.find = registry.find_match  # behave's own lookup, or that plugin's
        self.lists: Any = None  # the definitions the remembered matches came from, and how many
        self.counts: tuple[int, ...] = ()
        self.found: dict[tuple[str, str], Any] = {}

    def __call__(self, step: Any) -> Any:
        template = self._known(step)
        if template is not None:
            return copy.copy(template)
        match = self.find(step)
        if match is not None and len(self.found) < KEEP and _pure(match):
            self.found[(step.step_type, step.name)] = copy.copy(match)  # the one handed out is the caller's own
        return match

    def function(self, step: Any) -> Any:
        """The function of `step`'s match (None: undefined), with no copy of the match made."""
        match = self._known(step)
        if match is None:
            match = self(step)
        return None if match is None else match.func

    def _known(self, step: Any) -> Any:
        """The remembered match of `step`'s text (a template: not to be handed out), or None."""
        lists = self.registry.steps
        counts = tuple(map(len, lists.values()))  # definitions are appended, or all replaced
        if lists is not self.lists or counts != self.counts:
            self.lists, self.counts, self.found = lists, counts, {}
        return self.found.get((step.step_type, step.name))


def _pure(match: Any) -> bool:
    """A vocabulary step's match whose arguments all converted to immutable values."""
    if match.arguments is None:
        return False  # a conversion that failed (behave's MatchWithError has none): asked again next time
    # the vocabulary's converters are mcp-bdd's own, and pure
    return is_vocabulary(match.func) and all(type(a.value) in _IMMUTABLE for a in match.arguments)


def step_function(registry: Any, step: Any) -> Any:
    """The function `registry` runs `step` with (None: undefined). Cheaper than `find_match` where
    the match is remembered: no copy of it (~5 µs), and the hooks ask this twice of every step."""
    remembered = registry.__dict__.get("find_match")
    if isinstance(remembered, _Remembered):
        return remembered.function(step)
    match = registry.find_match(step)
    return None if match is None else match.func


def remember_matches(registry: Any) -> None:
    """Make `registry.find_match` remember what each step text matched (once per run)."""
    if not isinstance(registry.__dict__.get("find_match"), _Remembered):
        registry.find_match = _Remembered(registry)


def forget_matches(registry: Any) -> None:
    """Give `registry` back its own `find_match`."""
    remembered = registry.__dict__.get("find_match")
    if isinstance(remembered, _Remembered):
        if remembered.before is None:
            del registry.find_match
        else:
            registry.find_match = remembered.before
