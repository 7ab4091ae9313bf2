"""protocol = "auto" probes `server/discover`; an older server's log of that probe is no failure's cause."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from behave_project import REPO, make_project, run_behave

from mcp_bdd.transcript import STDERR_MIME

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

SCENARIO = """
  Scenario: {name}
    Given the MCP server "noisy" is running
    When I call the tool "fail"
    Then the tool call succeeds
"""


def test_the_probes_stderr_is_set_aside_and_the_run_says_once_how_to_spare_it(tmp_path: Path) -> None:
    server = REPO / "tests" / "servers" / "noisy_legacy.py"
    config = f'[servers.noisy]\ncommand = ["{sys.executable}", "{server}"]\n'
    feature = "Feature: noisy\n" + SCENARIO.format(name="first") + SCENARIO.format(name="second")
    root = make_project(tmp_path, config, {"n.feature": feature})
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain")
    assert run.counts()["failed"] == 2, run.failures()
    tails = [
        json.loads(base64.b64decode(embedding["data"]))["text"]
        for scenario in json.loads((root / "behave.json").read_text())[0]["elements"]
        for step in scenario["steps"]
        for embedding in step.get("embeddings", [])
        if embedding["mime_type"].startswith(STDERR_MIME)
    ]
    assert len(tails) == 2 and all("REAL-CAUSE" in tail for tail in tails), tails
    assert not any("literal_error" in tail for tail in tails), tails  # the probe's noise, not the cause
    assert run.stderr.count('set protocol = "legacy" in [servers.noisy]') == 1, run.stderr[-3000:]
