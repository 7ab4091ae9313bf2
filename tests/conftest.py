from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the sdist/wheel and the fresh venvs users get, built once per session (tests/userenv.py)
from userenv import dist, fastmcp_venv, mcp1_venv, user_venv  # noqa: F401


def _children() -> set[int]:
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


@pytest.fixture
def no_leftover_processes() -> Iterator[None]:
    """Fail the test if any process it started (directly or via behave) is still alive."""
    before = _children()
    marker = f"mcp-bdd-test-{os.getpid()}"
    os.environ["MCP_BDD_TEST_MARKER"] = marker
    yield
    leftovers = []
    for proc in psutil.process_iter(["pid", "cmdline", "environ"]):
        try:
            env = proc.info.get("environ") or {}
        except (psutil.AccessDenied, psutil.NoSuchProcess):
            continue
        ours = env.get("MCP_BDD_TEST_MARKER") == marker and proc.pid != os.getpid() and proc.pid not in before
        try:
            alive = proc.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            alive = False
        if ours and alive:
            leftovers.append(f"{proc.pid}: {' '.join(proc.info.get('cmdline') or [])}")
    assert not leftovers, "processes left behind:\n" + "\n".join(leftovers)
