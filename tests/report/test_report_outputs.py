"""Requirement links, the GitHub step summary, and output paths that do not depend on `-o` order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import REPO, SampleRun, feature, run, scenario
from test_cucumber_outputs import make_project

from mcp_bdd.config import parse_config
from mcp_bdd.errors import ConfigError
from mcp_bdd.report.links import requirement_links
from mcp_bdd.report.model import Rule, load_run, walk_scenarios
from mcp_bdd.report.summary import artifact_url, step_summary

TEMPLATES = {"JIRA": "https://jira.example.com/browse/{}", "req": "https://reqs.example.com/items/{}"}
GITHUB = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_RUN_ID": "42"}


# -- requirement links -------------------------------------------------------------------------
def test_tags_become_links_in_both_forms() -> None:
    links = requirement_links(["@JIRA-123", "req:ABC-1", "smoke", "@JIRA-123", "req:a b/c"], TEMPLATES)
    assert [(link.tag, link.id, link.url) for link in links] == [
        ("JIRA-123", "JIRA-123", "https://jira.example.com/browse/JIRA-123"),
        ("req:ABC-1", "ABC-1", "https://reqs.example.com/items/ABC-1"),
        ("req:a b/c", "a b/c", "https://reqs.example.com/items/a%20b%2Fc"),  # quoted: stays inside the template
    ]
    assert requirement_links(["JIRA-", "JIRAX-1", "req:", "req"], TEMPLATES) == ()
    assert requirement_links(["JIRA-1"], {}) == ()
    longest = requirement_links(["MY-PROJ-9"], {"MY": "https://a/{}", "MY-PROJ": "https://b/{}"})
    assert [link.url for link in longest] == ["https://b/MY-PROJ-9"]


@pytest.mark.parametrize(
    ("templates", "problem"),
    [
        ({"JIRA": "javascript:alert({})"}, "must be an http:// or https:// URL"),
        ({"JIRA": "https://jira.example.com/browse/"}, 'must contain "{}" exactly once'),
        ({"1x": "https://x/{}"}, "must start with a letter"),
    ],
)
def test_bad_link_templates_are_refused_with_the_reason(templates: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"links": templates}, source="pyproject.toml [tool.mcp-bdd]", root=Path("."))
    assert problem in str(caught.value) and "pyproject.toml [tool.mcp-bdd]" in str(caught.value)


# -- GitHub step summary -----------------------------------------------------------------------
def test_summary_counts_failures_categories_and_the_artifact_link(sample_run: SampleRun) -> None:
    text = step_summary([load_run(sample_run.data)], "reports/living-doc.html", GITHUB)
    assert text.startswith("### ❌ mcp-bdd: 4 of 14 scenarios failed, 1 feature setup failed\n")
    assert "| stdio | 7 | 2 | 2 | 1 | 1 | 1 |" in text
    assert "**Failures** (5)" in text and "Feature or step misuse" in text  # the undefined step
    assert "Expected result to be 5, but it was 4" in text and "Expectation failed" in text
    assert "Setup / start failure" in text and "the prompts fixture could not be created" in text
    assert "Calculator tools › Division by zero is refused" not in text  # that Rule passed
    assert "`features/tools/calculator.feature:" in text
    assert "[this run's artifacts](https://github.com/acme/shop/actions/runs/42#artifacts)" in text
    assert "`reports/living-doc.html`" in text


def test_summary_escapes_what_servers_and_feature_files_say() -> None:
    hostile = "Pay [now](https://evil.example) <img src=x onerror=alert(1)> **bold**"
    failing = scenario("s1", "failed", name=hostile, error=f"ASSERT FAILED: {hostile}\nsecond line")
    text = step_summary([run(feature("f", Rule(id="r", name="R", keyword="Rule", location="x:1", status="failed",
                                                children=(failing,))))])  # fmt: skip
    assert "<img" not in text and "](https://evil" not in text and "**bold**" not in text
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in text
    assert "second line" not in text  # first line only
    assert "R ›" in text  # the Rule is part of the title


def test_artifact_url_needs_a_plausible_github_run() -> None:
    assert artifact_url(GITHUB) == "https://github.com/acme/shop/actions/runs/42#artifacts"
    assert artifact_url({**GITHUB, "GITHUB_RUN_ID": "42) [x](y"}) is None
    assert artifact_url({**GITHUB, "GITHUB_SERVER_URL": "javascript:alert(1)"}) is None
    assert artifact_url({}) is None


def _behave(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update({"PYTHONPATH": path, **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "behave", "--no-color", *args, "features/"],
        cwd=project, env=full, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


# -- output paths: behave pairs the n-th -o with the n-th -f -------------------------------------
def test_console_and_report_in_any_order_and_the_step_summary(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n", encoding="utf-8")
    proc = _behave(
        project,
        "-f", "pretty", "-f", "living-doc", "-D", "mcp_bdd.report=out/doc.html",
        env={"GITHUB_STEP_SUMMARY": str(summary), **GITHUB},
    )  # fmt: skip
    assert "Scenario: Adding two numbers" in proc.stdout, proc.stdout + proc.stderr  # the console stays readable
    assert (project / "out" / "doc.html").stat().st_size > 10_000, proc.stderr
    assert (project / "out" / "doc.json").exists()
    assert not (project / "reports").exists()
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier step's summary\n### ❌ mcp-bdd:")  # appended, never replaced
    assert written.count("### ") == 1 and "`out/doc.html`" in written
    assert "runs/42#artifacts" in written


def test_make_demo_names_the_report_instead_of_pairing_o() -> None:
    shown = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "demo"], cwd=REPO, capture_output=True, text=True, check=False
    )
    if shown.returncode != 0:
        pytest.skip(f"make is not usable here: {shown.stderr.strip()}")
    command = " ".join(shown.stdout.replace("\\\n", " ").split())
    assert "-D mcp_bdd.report=reports/living-doc.html" in command and "-f pretty -f living-doc" in command
    assert " -o " not in command


def test_report_path_from_the_configuration_and_summary_off(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.mcp-bdd]\nreport = "docs/living.html"\n\n' + pyproject.read_text(encoding="utf-8"))
    summary = tmp_path / "summary.md"
    proc = _behave(
        project, "-f", "progress", "-f", "living-doc", "-f", "cucumber-json",
        "-D", "mcp_bdd.cucumber_json=out/c.json", "-D", "mcp_bdd.summary=off",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert (project / "docs" / "living.html").exists(), proc.stdout + proc.stderr
    assert (project / "out" / "c.json").exists()
    assert not summary.exists()


def test_mcp_bdd_run_writes_one_summary_for_the_merged_legs(tmp_path: Path) -> None:
    from test_cli import cli

    done = cli(tmp_path, "init")
    assert done.returncode == 0, done.stderr
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary), **GITHUB}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # test_cli.cli passes os.environ on
    try:
        ran = cli(tmp_path, "run", "--transport", "in-memory,stdio", timeout=180)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert ran.returncode == 0, ran.stdout + ran.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.count("### ") == 1, text  # not one per worker
    assert text.startswith("### ✅ mcp-bdd: 4 of 4 scenarios passed")
    assert "| in-memory | 2 |" in text and "| stdio | 2 |" in text


# -- allure-behave side by side --------------------------------------------------------------------
def test_allure_behave_runs_beside_the_living_doc_and_what_it_misses(tmp_path: Path) -> None:
    """Both formatters in one behave run (docs/report.md says how they combine). What this pins
    about allure-behave 2.x with behave 1.3 is what the docs warn of; if it changes, update them."""
    pytest.importorskip("allure_behave")
    import json

    project = make_project(tmp_path)
    proc = _behave(
        project, "-f", "allure_behave.formatter:AllureFormatter", "-o", "allure",
        "-f", "living-doc", "-D", "mcp_bdd.report=reports/living-doc.html",
    )  # fmt: skip
    results = [json.loads(p.read_text(encoding="utf-8")) for p in (project / "allure").glob("*-result.json")]
    assert results, proc.stdout + proc.stderr
    names = {r["name"] for r in results}
    assert {"Adding two numbers", "A wrong total is reported as a failure"} <= names
    ours = load_run(json.loads((project / "reports" / "living-doc.json").read_text(encoding="utf-8")))
    assert sum(len(list(walk_scenarios(f.children))) for f in ours.features) == 19
    # allure-behave drops scenarios inside a Rule, and never sees context.attach (the MCP exchanges)
    assert "Dividing normally" not in names and "A refund is totalled" not in names
    attached = {a["name"] for r in results for s in r.get("steps", []) for a in s.get("attachments", [])}
    assert attached <= {".table", ".text"}  # only the steps' own tables and doc strings


def test_a_path_that_cannot_be_written_is_named_and_the_other_outputs_still_come(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "taken").mkdir()
    proc = _behave(
        project, "-f", "progress", "-f", "cucumber-json", "-D", "mcp_bdd.cucumber_json=taken",
        "-f", "cucumber-messages", "-D", "mcp_bdd.cucumber_messages=out/run.ndjson",
    )  # fmt: skip
    assert "the Cucumber JSON was not written to taken: that is a folder, not a file." in proc.stderr
    assert "Tip: give a path in a folder you may write to" in proc.stderr and "Traceback" not in proc.stderr
    assert (project / "out" / "run.ndjson").stat().st_size > 0


def test_a_report_that_could_not_be_written_fails_the_run(tmp_path: Path) -> None:
    """A CI job that asked for a report and got none must not be green: a path through a file
    (`[Errno 17] File exists` from mkdir) fails the run, naming the report, the path and the file
    in the way; the other outputs are still written."""
    project = make_project(tmp_path)
    (project / "out").mkdir()
    (project / "out" / "notadir").write_text("a file where a folder would go\n", encoding="utf-8")
    passing = ("-i", "calculator", "-n", "Adding two numbers")
    assert _behave(project, *passing, "-f", "progress").returncode == 0  # the run itself passes
    proc = _behave(
        project, *passing, "-f", "living-doc", "-o", "out/notadir/x.html",
        "-f", "junit-mcp", "-D", "mcp_bdd.junit_path=out/junit.xml", "-f", "progress",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said = (
        "mcp-bdd: the living documentation was not written to out/notadir/x.html: out/notadir is a file, not a folder."
    )
    assert said in proc.stderr and "Tip: give a path in a folder you may write to" in proc.stderr
    assert "Errno" not in proc.stderr and "Traceback" not in proc.stderr
    assert (project / "out" / "junit.xml").stat().st_size > 0
