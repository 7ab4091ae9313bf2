"""Listing steps follow nextCursor to the end; a repeated cursor or an endless listing fails clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import REPO, make_project, run_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def config(mode: str) -> str:
    return f"""
        [servers.paging]
        app = "tests.servers.paging:create_server"
        cwd = "{REPO}"
        env = {{ PAGING_MODE = "{mode}" }}
    """


FEATURE = """
    Feature: pagination
      Scenario: every page is read
        Given the MCP server "paging" is running
        When I list the tools
        Then the tools are:
          | name     |
          | tool_0_0 |
          | tool_0_1 |
          | tool_1_0 |
          | tool_1_1 |
          | tool_2_0 |
          | tool_2_1 |
"""


def test_listing_follows_every_page(tmp_path: Path) -> None:
    run = run_behave(make_project(tmp_path, config("ok"), {"p.feature": FEATURE}))
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


def test_a_repeated_cursor_is_caught(tmp_path: Path) -> None:
    run = run_behave(make_project(tmp_path, config("repeat"), {"p.feature": FEATURE}))
    assert run.counts()["failed"] == 1
    assert "repeated the cursor 'p1' while listing tools" in run.stdout


def test_an_endless_listing_is_caught(tmp_path: Path) -> None:
    run = run_behave(make_project(tmp_path, config("endless"), {"p.feature": FEATURE}))
    assert run.counts()["failed"] == 1
    assert "did not end after 1000 pages" in run.stdout
