"""The living doc's run model never overwrites another output of the same run.

`behave -f json -o out.json -f living-doc -o out.html` used to leave out.json holding the mcp-bdd
run model instead of behave's JSON: the sidecar's default place (beside the HTML, .json) was
written over whatever else the run had put there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from behave_project import SHOP, make_project, run_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

FEATURE = """
Feature: one
  Scenario: the server runs
    Given the MCP server "shop" is running
"""
LIVING_DOC = "mcp_bdd.report:LivingDocFormatter"


def _run_model(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data.get("schema", "").startswith("mcp-bdd.run/"), path
    return data


def test_behave_json_at_the_sidecars_place_is_kept_and_the_run_model_goes_beside_it(tmp_path: Path) -> None:
    root = make_project(tmp_path, SHOP, {"one.feature": FEATURE})
    run = run_behave(root, "-f", "json", "-o", "out.json", "-f", LIVING_DOC, "-o", "out.html", "-f", "plain")
    assert run.returncode == 0, run.output
    behave_json = json.loads((root / "out.json").read_text(encoding="utf-8"))
    assert isinstance(behave_json, list) and behave_json[0]["keyword"] == "Feature", "out.json is not behave's"
    _run_model(root / "out.mcp-bdd.json")
    assert (
        "mcp-bdd: the run model goes to out.mcp-bdd.json, not out.json: that file is another output of this run "
        "(set -D mcp_bdd.json=PATH to choose)\n" in run.stderr
    ), run.stderr
    assert run.stderr.count("the run model goes to") == 1

    # without a clash the run model stays beside the HTML, without a word
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", LIVING_DOC, "-o", "c.html", "-f", "plain")
    assert run.returncode == 0, run.output
    _run_model(root / "c.json")
    assert not (root / "c.mcp-bdd.json").exists()
    assert "the run model goes to" not in run.stderr


def test_a_file_named_for_another_mcp_bdd_formatter_is_an_output_too(tmp_path: Path) -> None:
    root = make_project(tmp_path, SHOP, {"one.feature": FEATURE})
    cucumber = "mcp_bdd.report:CucumberJsonFormatter"
    run = run_behave(
        root, "-f", LIVING_DOC, "-o", "b.html", "-f", cucumber, "-D", "mcp_bdd.cucumber_json=b.json", "-f", "plain"
    )
    assert run.returncode == 0, run.output
    assert isinstance(json.loads((root / "b.json").read_text(encoding="utf-8")), list)  # Cucumber JSON
    _run_model(root / "b.mcp-bdd.json")
