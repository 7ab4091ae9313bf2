"""A server that dies mid-call is quoted by the end of its stderr: the last line says why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from behave_project import REPO, make_project, run_behave

from mcp_bdd._text import TAIL_LINE, cut_middle, tail

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

FEATURE = """
Feature: a loud crash
  Scenario: the tool's server dies
    Given the MCP server "loud" is running
    When I call the tool "boom"
    Then the tool call succeeds
"""


def test_the_failure_quotes_the_last_stderr_line_of_a_server_that_died_mid_call(tmp_path: Path) -> None:
    server = REPO / "tests" / "servers" / "loud_crash.py"
    config = f'[servers.loud]\ncommand = ["{sys.executable}", "{server}"]\nprotocol = "legacy"\n'
    run = run_behave(make_project(tmp_path, config, {"c.feature": FEATURE}), "-f", "plain")
    assert run.counts()["failed"] == 1, run.failures()
    failure = run.output.split("ASSERT FAILED")[1].split("The call that produced the value")[0]
    assert "Exit code: 3" in failure and "LAST-LINE-BEFORE-CRASH" in failure, failure
    assert max(len(line) for line in failure.splitlines()) < TAIL_LINE + 150, failure  # long lines cut


def test_a_long_text_keeps_its_start_and_its_end() -> None:
    text = "start " + "x" * 5000 + " the end"
    cut = cut_middle(text, 200)
    assert cut.startswith("start ") and cut.endswith(" the end") and "left out" in cut and len(cut) < 260
    assert cut_middle("short", 200) == "short"


def test_a_stderr_tail_cuts_long_lines_in_the_middle(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("y" * 10_000 + "END\nlast words\n")
    assert tail(log, 2).splitlines()[1] == "last words"
    assert tail(log, 2).splitlines()[0].endswith("END")
