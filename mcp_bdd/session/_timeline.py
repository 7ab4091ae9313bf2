"""The notification timeline of a session: what arrived, when, and waiting on arrival (not sleeping)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Timeline"]


class Timeline:
    """Notifications with arrival times; `wait_for` wakes on arrival instead of sleeping.

    It holds one scenario's notifications: a feature/run-scoped session clears it when the next
    scenario adopts the session (`Session.adopt_scenario`), so no step sees an earlier scenario's.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.items: list[tuple[float, str, dict[str, Any], int | None]] = []  # (t, method, params, related)

    def add(self, method: str, params: dict[str, Any], related: int | None = None) -> None:
        with self._cond:
            self.items.append((time.monotonic(), method, params, related))
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self.items.clear()

    def of(self, method: str) -> list[dict[str, Any]]:
        with self._cond:
            return [p for (_, m, p, _) in self.items if m == method]

    def wait_for(self, predicate: Callable[[str, dict[str, Any]], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if any(predicate(m, p) for (_, m, p, _) in self.items):
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)

    def counts(self) -> dict[str, int]:
        with self._cond:
            out: dict[str, int] = {}
            for _, m, _, _ in self.items:
                out[m] = out.get(m, 0) + 1
            return out
