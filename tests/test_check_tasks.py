"""The `tasks` checks of `mcp-bdd check`: each tool's execution.taskSupport against what the server
offers and does, on both protocol revisions. Against tests/servers/lying_tasks.py (planted
defects, over stdio) and the demo reports server (every claim kept: no finding)."""

from __future__ import annotations

import json
import sys
from io import StringIO
from pathlib import Path

import pytest

from mcp_bdd.check._command import CheckCommand, run_check_command

ROOT = Path(__file__).resolve().parents[1]
LYING = [sys.executable, str(ROOT / "tests" / "servers" / "lying_tasks.py")]
REPORTS = [sys.executable, "-m", "mcp_bdd.serve", "demo.reports:create_server"]

pytestmark = pytest.mark.slow


def _findings(target: list[str], protocol: str, allow_writes: str | None = None) -> set[tuple[str, str]]:
    out = StringIO()
    run_check_command(
        CheckCommand(target=target, as_json=True, only=["tasks"], protocol=protocol, allow_writes=allow_writes), out
    )
    return {(f["check"], f["target"]) for f in json.loads(out.getvalue())["findings"]}


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_claims_a_server_that_offers_no_tasks_cannot_keep(protocol: str) -> None:
    assert _findings(LYING, protocol) == {
        ("tasks.offered", "tool archive"),
        ("tasks.offered", "tool report"),
        ("tasks.required-refuses-plain-calls", "tool archive"),
    }


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_a_task_only_tool_that_makes_no_task(protocol: str) -> None:
    """Tasks offered, none made: the optional tool's immediate result is allowed, the required one's is not."""
    assert _findings([*LYING, "--offer"], protocol) == {
        ("tasks.required-refuses-plain-calls", "tool archive"),
        ("tasks.task-created", "tool archive"),
    }


def test_a_task_support_no_client_understands() -> None:
    assert ("tasks.offered", "tool odd") in _findings([*LYING, "--odd"], "2026-07-28")


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_a_server_that_keeps_its_claims_has_no_finding(protocol: str) -> None:
    """The reports demo: archive refuses a plain call, report and archive make tasks (cancelled after)."""
    assert _findings(REPORTS, protocol, allow_writes="*") == set()
