"""The unit lane (`make test-fast`): tests that start no process and run no behave, so the lane
stays fast and runs anywhere. A test here that does either fails, saying where it belongs."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest


def _refuse(what: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a unit test {what}: move it out of tests/unit (tests/ runs it in `make test`)")

    return refused


@pytest.fixture(autouse=True)
def _no_process_and_no_behave(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("started a process"))
    try:
        import behave.runner
    except ImportError:  # pragma: no cover - behave is a dependency
        return
    monkeypatch.setattr(behave.runner.Runner, "run", _refuse("ran behave"))
