"""A run that did not start (its before_all failed: a configuration error) is a failure in every
output CI reads, not an empty file: JUnit, Cucumber JSON, Cucumber Messages, the step summary.

Checked on a real behave run whose feature names a server the configuration lacks.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from behave_project import REPO, behave_env, make_project, run_captured

pytestmark = pytest.mark.slow

MESSAGES_SCHEMA = REPO / "node_modules" / "@cucumber" / "messages" / "messages.schema.json"
JSON_SCHEMA = Path(__file__).parent / "cucumber_json.schema.json"
NEEDLE = 'unknown server "nosuch"'


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(
        tmp_path_factory.mktemp("not-started"),
        f'[servers.shop]\napp = "demo.shop:create_server"\ncwd = "{REPO}"\n',
        {"f.feature": 'Feature: F\n  Scenario: S\n    Given the MCP server "nosuch" is running\n'},
    )
    env = {**behave_env(), "GITHUB_STEP_SUMMARY": str(root / "summary.md")}
    formats = [
        *("-f", "mcp_bdd.report:JUnitFormatter", "-o", "junit.xml"),
        *("-f", "mcp_bdd.report:CucumberJsonFormatter", "-o", "cucumber.json"),
        *("-f", "mcp_bdd.report:CucumberMessagesFormatter", "-o", "run.ndjson"),
        *("-f", "mcp_bdd.report:LivingDocFormatter", "-o", "living-doc.html"),
    ]
    done = run_captured([sys.executable, "-m", "behave", "--no-color", *formats, "features/"], cwd=root, env=env)
    assert done.returncode != 0 and NEEDLE in done.stdout + done.stderr, done.stdout + done.stderr
    return root


def test_junit_has_an_erroring_setup_testcase(outputs: Path) -> None:
    root = ET.parse(outputs / "junit.xml").getroot()
    assert (root.get("tests"), root.get("errors")) == ("1", "1"), ET.tostring(root, encoding="unicode")
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == "(before_all)"
    error = case.find("error")
    assert error is not None and "The run did not start (config)" in (error.get("message") or "")
    assert NEEDLE in (error.get("message") or "")  # the one line Jenkins shows names the server
    assert NEEDLE in (error.text or "")


def test_cucumber_json_has_a_failed_before_hook(outputs: Path) -> None:
    data = json.loads((outputs / "cucumber.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(json.loads(JSON_SCHEMA.read_text(encoding="utf-8")))
    assert not [e.message for e in validator.iter_errors(data)]
    [feature] = data
    [element] = feature["elements"]
    [hook] = element["before"]
    assert hook["result"]["status"] == "failed" and NEEDLE in hook["result"]["error_message"], hook


def test_cucumber_messages_fail_the_run_with_a_before_all_hook(outputs: Path) -> None:
    envelopes = [json.loads(line) for line in (outputs / "run.ndjson").read_text(encoding="utf-8").splitlines()]
    validator = jsonschema.Draft202012Validator(json.loads(MESSAGES_SCHEMA.read_text(encoding="utf-8")))
    assert not [e.message for env in envelopes for e in validator.iter_errors(env)]
    by_kind = {next(iter(env)): next(iter(env.values())) for env in envelopes}
    assert by_kind["hook"]["type"] == "BEFORE_TEST_RUN"
    assert by_kind["testRunHookStarted"]["hookId"] == by_kind["hook"]["id"]
    result = by_kind["testRunHookFinished"]["result"]
    assert result["status"] == "FAILED" and NEEDLE in result["message"], result
    finished = by_kind["testRunFinished"]
    assert finished["success"] is False and finished["exception"]["type"] == "mcp_bdd.config", finished
    assert NEEDLE in finished["exception"]["message"] and NEEDLE in result["exception"]["message"], finished


def test_the_step_summary_says_the_run_did_not_start(outputs: Path) -> None:
    summary = (outputs / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### ❌ mcp-bdd: the run did not start"), summary
    assert "Configuration error" in summary and "nosuch" in summary, summary


def test_a_leg_that_did_not_start_beside_legs_that_passed_is_counted() -> None:
    from report_helpers import feature, run, scenario

    from mcp_bdd.report.summary import step_summary

    passed = run(feature("f", scenario("s1", "passed")))
    failed = replace(run(), label="sse", error_kind="not-served", error_message="the server cannot serve SSE")
    text = step_summary([passed, failed])
    assert text.startswith("### ❌ mcp-bdd: 1 of 1 scenarios passed, 1 run did not start"), text
    assert "the server cannot serve SSE" in text, text
