"""The input-required rounds of 2026-07-28, stated in sentences, against the demo shop.

`features/client/input_rounds.feature` passes on every transport (tests/test_features.py runs it
with the rest of features/); here a copy with wrong expectations must fail, saying what the rounds
were, and a server that answers a listing with questions breaks the protocol.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.behave_project import REPO, SHOP, make_project, run_behave

pytestmark = pytest.mark.slow

FEATURE = (REPO / "features" / "client" / "input_rounds.feature").read_text()


WRONG = {
    "the server asked for input 2 times": "the server asked for input 3 times",
    "Then the request is rejected with error code -32602": "Then the request is rejected with error code -32603",
    'input round 2 asked for "gift_recipient" by elicitation': "the server asked for input 1 time",
}


def test_a_wrong_expectation_says_what_the_rounds_were(tmp_path: Path) -> None:
    wrong = FEATURE
    for right, bad in WRONG.items():
        assert right in wrong, right
        wrong = wrong.replace(right, bad, 1)
    root = make_project(tmp_path, SHOP, {"input_rounds.feature": wrong})
    run = run_behave(root, "-f", "plain", timeout=240)
    out = run.output
    assert run.counts()["failed"] == 3, run.failures()
    assert "asked for input 2 time(s) during tools/call, not 3" in out, run.failures()
    assert 'round 2: \\"demo.shop:create_server.<locals>.gift_card\\" by sampling/createMessage' in out, run.failures()
    assert "JSON-RPC error -32602: Invalid or expired requestState" in out, run.failures()


def test_an_input_required_answer_to_a_listing_breaks_the_protocol(tmp_path: Path) -> None:
    """Only a call, a prompt, a read or a task's result may be answered "input required" (SEP-2322):
    a server that answers a listing so fails the step as a protocol violation that says which."""
    hostile = json.dumps([sys.executable, str(REPO / "tests" / "servers" / "hostile.py"), "--ask-on-listing"])
    config = f'[servers.asker]\ncommand = {hostile}\nprotocol = "legacy"\n'
    feature = """
        Feature: a listing answered with questions
          Scenario: the tools are listed
            Given the MCP server "asker" is running
            When I list the tools
        """
    root = make_project(tmp_path, config, {"asker.feature": feature})
    run = run_behave(root, "-f", "plain", timeout=240)
    assert run.counts()["passed"] == 0, run.failures()
    assert 'answered tools/list "input required": only tools/call' in run.output, run.failures()
