"""Whether a scenario's steps will read change notifications, asked before its session opens.

Why: on 2026-07-28 a server pushes list-changed notifications only on a `subscriptions/listen`
stream the client holds open, and a stream opened late misses what happened before it (the
protocol has no replay). So a session opens one at connect time (`session._listen`): one more
request, and a task to cancel at the end — about 0.4 ms of a 5 ms in-memory scenario, a round
trip over stdio or HTTP — while most scenarios never read a change notification.

behave knows every step of a scenario before the first one runs, so the server step asks here:
may a step of this scenario read them? It may when it is one of the vocabulary's steps that
read change notifications (`reads_change_notifications`), or a step of the project's own (its
code may read `session.timeline`); the rest of the vocabulary never does, and an undefined step
fails the scenario before any notification matters. The answer is kept per step text, so a
scenario costs a few dictionary lookups after the first one of its kind.

Only sessions that die with their scenario ask (also a feature-scoped server's, when a persona,
client headers or a scenario's own environment make it the scenario's): a session that serves
later scenarios always listens. Hooks are not looked at: a project's `after_scenario` that reads
`session.timeline` for list changes needs a step of its own in the scenario, or a longer scope.
A step that reads notifications on a session that did not listen (executed from a hook) still
opens a stream itself, and its failure says so.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["is_vocabulary", "may_read_changes", "reads_change_notifications"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: The vocabulary's step functions that read change notifications.
_READERS: set[Callable[..., Any]] = set()
#: registry -> (step type, step text) -> whether that step may read them; bounded (outlines vary
#: the text). Per registry: behave run twice in one process has a new one, with other steps.
_VERDICTS: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], bool]] = weakref.WeakKeyDictionary()
_KEEP = 4096
#: Where the vocabulary's step modules live: a step defined elsewhere is the project's own. (This
#: module is not among them: importing one registers the whole vocabulary with behave, and the
#: hooks ask here in projects that define all their steps themselves.)
_VOCABULARY = "mcp_bdd.steps."


def is_vocabulary(func: Any) -> bool:
    """Whether a step function is one of mcp-bdd's vocabulary (else the project's own)."""
    return str(getattr(func, "__module__", "")).startswith(_VOCABULARY)


def reads_change_notifications(func: _F) -> _F:
    """Mark a vocabulary step that reads change notifications (its scenario listens from connect time)."""
    _READERS.add(func)
    return func


def may_read_changes(steps: Iterable[Any], registry: Any) -> bool:
    """Whether any of `steps` (behave steps) is a project's own step or a vocabulary step that reads
    change notifications; `registry` is behave's step registry, which matches a step to its function."""
    known = _VERDICTS.get(registry)
    if known is None:
        known = _VERDICTS[registry] = {}
    for step in steps:
        key = (step.step_type, step.name)
        verdict = known.get(key)
        if verdict is None:
            verdict = _reads(registry.find_match(step))
            if len(known) < _KEEP:
                known[key] = verdict
        if verdict:
            return True
    return False


def _reads(match: Any) -> bool:
    if match is None:
        return False  # undefined: the scenario fails at that step before any notification matters
    func = match.func
    return func in _READERS or not is_vocabulary(func)
