from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from behave_project import Census, is_lifeline

# the sdist/wheel and the fresh venvs users get, built once per session (tests/userenv.py)
from userenv import dist, fastmcp_venv, mcp1_venv, user_venv  # noqa: F401

#: The longest test files, longest first: the whole living spec once per transport, the workflows
#: that install mcp-bdd into fresh venvs from the index, third-party servers, the users' venvs.
#: `--dist worksteal` hands each worker a contiguous part of the collection, so they all go to one
#: worker, one after another, while the others run the short tests and take from its queue at
#: the end. Dealt out to every worker instead, they ran at once and slowed each other: the whole
#: run took longer.
LONGEST_FIRST = (
    "test_features.py",
    "test_init_workflows.py",
    "test_realworld.py",
    "test_init_projects.py",
    "test_packaging.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place


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
