"""The check steps in a user's project (behave meta-tests): they pass on a good server, fail on the
bad one with the findings in the message, attach findings to the report, and the contract step
records, keeps, classifies and updates its file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from behave_project import make_project, run_behave

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

CONFIG = f"""\
[servers.bad]
app = "tests.servers.bad_server:create_server"

[servers.shop]
app = "demo.shop:create_server"
env = {{ SHOP_DB = "${{fake.shop.path}}", PAYMENTS_URL = "${{fake.payments.url}}" }}
cwd = "{REPO}"
"""


def test_check_steps_pass_on_the_shop_and_fail_on_the_bad_server(tmp_path: Path) -> None:
    project = make_project(
        tmp_path,
        CONFIG,
        {
            "good.feature": """\
                Feature: good
                  Scenario: compliance
                    Given the MCP server "shop" is running
                    Then the server passes the MCP compliance checks, never calling the tools "slow"
                    And no tool description contains instructions to the model
                    And every tool's error for a missing argument names the argument
            """,
            "bad.feature": """\
                Feature: bad
                  Scenario: poisoned descriptions
                    Given the MCP server "bad" is running
                    Then no tool description contains instructions to the model

                  Scenario: unnamed arguments
                    Given the MCP server "bad" is running
                    Then every tool's error for a missing argument names the argument

                  Scenario Outline: per tool
                    Given the MCP server "bad" is running
                    Then the tool "<tool>" passes the checks
                    Examples:
                      | tool     |
                      | weather  |
                      | get_item |
                      | lokup    |
            """,
        },
    )
    run = run_behave(project, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "report.html", "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 4, "error": 1, "skipped": 0}, run.output[-6000:]
    out = run.output
    assert "poisoning.hidden-instructions" in out and "tool steal_notes" in out
    assert "poisoning.invisible-unicode" in out and "U+200B" in out
    assert "does not name the argument 'city'" in out
    assert 'the tool "get_item" does not pass the checks' in out and "quality.confusable-names" in out
    assert 'no tool "lokup". Did you mean "lookup"?' in out
    report = (project / "report.html").read_text(encoding="utf-8")
    assert "mcp-bdd check:" in report and "steal_notes" in report  # findings attached to the steps


def test_contract_step_records_keeps_classifies_and_updates(tmp_path: Path) -> None:
    feature = """\
        Feature: contract
          Scenario: locked
            Given the MCP server "shop" is running
            Then the tool surface matches the contract "contracts/shop.json"
    """
    breaking = """\
        Feature: contract
          Scenario: no breaking change
            Given the MCP server "shop" is running
            Then the tool surface has no breaking change against the contract "contracts/shop.json"
    """
    project = make_project(tmp_path, CONFIG, {"contract.feature": feature})
    first = run_behave(project, "-f", "plain")
    assert first.counts()["passed"] == 1, first.output[-3000:]
    contract = project / "contracts" / "shop.json"
    recorded = json.loads(contract.read_text())
    assert "check_stock" in recorded["tools"] and recorded["schema"] == "mcp-bdd.probe/1"

    again = run_behave(project, "-f", "plain")
    assert again.counts()["passed"] == 1, again.output[-3000:]

    # a description changed (routing) and a tool appeared (additive): the strict step fails, the lenient passes
    edited = json.loads(contract.read_text())
    edited["tools"]["check_stock"]["description"] = "An older description."
    del edited["tools"]["echo"]
    contract.write_text(json.dumps(edited))
    strict = run_behave(project, "-f", "plain")
    assert strict.counts()["failed"] == 1, strict.output[-3000:]
    assert '[routing] tool "check_stock": description changed' in strict.output
    assert '[additive] tool "echo": added' in strict.output
    (project / "features" / "contract.feature").write_text(
        breaking.replace("        ", "", 1).replace("\n        ", "\n")
    )
    lenient = run_behave(project, "-f", "plain")
    assert lenient.counts()["passed"] == 1, lenient.output[-3000:]

    # a tool the contract promises is gone, and an argument became required: breaking
    edited["tools"]["retired_tool"] = {"name": "retired_tool", "description": "Gone now."}
    add = edited["tools"]["add"]["inputSchema"]
    add["required"] = ["a"]
    contract.write_text(json.dumps(edited))
    broken = run_behave(project, "-f", "plain")
    assert broken.counts()["failed"] == 1, broken.output[-3000:]
    assert '[breaking] tool "retired_tool": removed' in broken.output
    assert "[breaking] tool \"add\": argument 'b' became required" in broken.output

    # -D mcp_bdd.update_contracts=true rewrites it
    updated = run_behave(project, "-f", "plain", "-D", "mcp_bdd.update_contracts=true")
    assert updated.counts()["passed"] == 1, updated.output[-3000:]
    assert json.loads(contract.read_text())["tools"] == recorded["tools"]
    shutil.rmtree(project / "contracts")
