from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from behave_project import is_lifeline

# the sdist/wheel and the fresh venvs users get, built once per session (tests/userenv.py)
from userenv import dist, fastmcp_venv, mcp1_venv, user_venv  # noqa: F401


def _children() -> set[int]:
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


class Census:
    """The processes a test started (directly, or via behave and its servers): all carry the
    test's marker in their environment, which every process they start inherits."""

    def __init__(self) -> None:
        self.before = _children()
        self.marker = f"mcp-bdd-test-{os.getpid()}"
        os.environ["MCP_BDD_TEST_MARKER"] = self.marker

    def left(self, besides: Callable[[str], bool] = lambda command: False) -> list[str]:
        """Those still running (zombies are gone), as "pid: command line"; `besides` spares some."""
        leftovers = []
        for proc in psutil.process_iter(["pid", "cmdline", "environ"]):
            try:
                env = proc.info.get("environ") or {}
                alive = proc.status() != psutil.STATUS_ZOMBIE
            except (psutil.AccessDenied, psutil.NoSuchProcess):
                continue
            ours = env.get("MCP_BDD_TEST_MARKER") == self.marker and proc.pid not in self.before
            command = " ".join(proc.info.get("cmdline") or [])
            if ours and alive and proc.pid != os.getpid() and not besides(command):
                leftovers.append(f"{proc.pid}: {command}")
        return leftovers


@pytest.fixture
def no_leftover_processes() -> Iterator[Census]:
    """Fail the test if any process it started (directly or via behave) is still alive."""
    census = Census()
    yield census
    leftovers = census.left()
    assert not leftovers, "processes left behind:\n" + "\n".join(leftovers)


@pytest.fixture
def own_lifeline(no_leftover_processes: Census) -> Iterator[None]:
    """Servers the test process spawns itself (`spawn`, not through behave), counted before this
    process's lifeline (servers/_lifeline.py) ends with the test.

    The first `spawn` starts the lifeline, even one that fails, and it runs as long as this
    process does; closing it sweeps every server still registered with it, which would hide a
    server the test left running. So what is left is counted first, the lifeline aside; then
    the lifeline is closed, and `no_leftover_processes` finds it gone too."""
    from mcp_bdd.servers._process import lifeline

    yield
    leftovers = no_leftover_processes.left(besides=is_lifeline)
    lifeline().close()
    assert not leftovers, "processes left behind:\n" + "\n".join(leftovers)
