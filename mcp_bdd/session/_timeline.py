"""The notification timeline of a session: what arrived, when, and waiting on arrival (not sleeping).

Bounded, like the transcript: a server that floods notifications must not take the run's memory
with it. The timeline keeps the first KEEP notifications of a scenario, KEEP_BYTES of them at
most (as JSON: a count alone let 100,000 messages of 1 MB each in), for the steps that read
them (a log message containing a text, the progress values) and counts every one exactly, so a
step that counts ("at least 3 progress notifications") is right however many arrived, and a
step that searches says how many it could not see.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mcp_bdd.transcript import Room, Weight

__all__ = ["KEEP", "KEEP_BYTES", "Timeline"]

#: notifications a timeline keeps per scenario
KEEP = 100_000
#: ... and how much of them, as JSON (`transcript.weigh`)
KEEP_BYTES = 256 * 1024 * 1024


class Timeline:
    """Notifications with arrival times; `wait_for` wakes on arrival instead of sleeping.

    It holds one scenario's notifications: a feature/run-scoped session clears it when the next
    scenario adopts the session (`Session.adopt_scenario`), so no step sees an earlier scenario's.
    """

    def __init__(self, keep: int = KEEP, keep_bytes: int = KEEP_BYTES) -> None:
        self._cond = threading.Condition()
        self._room = Room(keep, keep_bytes)
        self.items: list[tuple[float, str, dict[str, object], int | None]] = []  # (t, method, params, related)
        self._counts: dict[str, int] = {}
        self._last: dict[str, dict[str, object]] = {}  # method -> the last that arrived, kept or not

    def add(
        self, method: str, params: dict[str, object], related: int | None = None, weight: Weight | None = None
    ) -> None:
        """`weight`: the params', when the transcript weighs them too (it is taken once)."""
        size = self._room.weight(weight or Weight(params))  # outside the lock: a large one takes ms
        with self._cond:
            self._counts[method] = self._counts.get(method, 0) + 1
            self._last[method] = params
            if self._room.admit(size):  # the first that does not fit closes it: the kept stay "the first"
                self.items.append((time.monotonic(), method, params, related))
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self.items.clear()
            self._counts.clear()
            self._last.clear()
            self._room.clear()

    def of(self, method: str) -> list[dict[str, object]]:
        """The kept notifications of one method (all of them unless `unseen()` says otherwise)."""
        with self._cond:
            return [p for (_, m, p, _) in self.items if m == method]

    def last(self, method: str) -> dict[str, object] | None:
        """The last one of `method` that arrived, kept or only counted (None if none did)."""
        with self._cond:
            return self._last.get(method)

    def count(self, method: str) -> int:
        """How many notifications of `method` arrived, kept or not."""
        with self._cond:
            return self._counts.get(method, 0)

    def unseen(self) -> int:
        """How many notifications arrived after the timeline was full (counted, not kept)."""
        with self._cond:
            return sum(self._counts.values()) - len(self.items)

    def wait_for(self, predicate: Callable[[str, dict[str, object]], bool], timeout: float) -> bool:
        """Whether a kept notification satisfies `predicate`, waiting up to `timeout` s for one.

        Each notification is looked at once (a flood while a step waits is linear, not quadratic).
        """
        deadline = time.monotonic() + timeout
        checked = 0
        with self._cond:
            while True:
                fresh, checked = self.items[checked:], len(self.items)
                if any(predicate(m, p) for (_, m, p, _) in fresh):
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Whether `condition()` holds, re-checked on every arrival (kept or only counted) for up to
        `timeout` s: for conditions on the counts, which keep growing after the timeline is full."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def counts(self) -> dict[str, int]:
        with self._cond:
            return dict(self._counts)
