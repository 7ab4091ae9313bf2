"""The unit lane refuses what would make it slow: a process, a behave run (tests/unit/conftest.py)."""

from __future__ import annotations

import subprocess

import pytest


def test_the_lane_refuses_a_process() -> None:
    with pytest.raises(AssertionError, match="move it out of tests/unit"):
        subprocess.run(["true"], check=False)


def test_the_lane_refuses_a_behave_run() -> None:
    import behave.runner

    with pytest.raises(AssertionError, match="ran behave"):
        behave.runner.Runner.run(object())  # type: ignore[arg-type]
