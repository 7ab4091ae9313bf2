"""Cucumber Messages and Cucumber JSON: real tools accept what the formatters write.

The sample project (plus a feature with requirement tags, a Rule with its own Background and
an outline with two tagged Examples blocks) runs once through `-f cucumber-messages` and
`-f cucumber-json` (the aliases, from the project's [tool.behave.formatters]). Then:
- every NDJSON envelope validates against the JSON schema `@cucumber/messages` ships, and every
  id points at what it should (pickle -> AST, test step -> pickle step, ...);
- the official `@cucumber/html-formatter` renders the stream, and Chromium shows it (when installed);
- the Cucumber JSON validates against tests/report/cucumber_json.schema.json (written from the
  de-facto spec: see the schema's description).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from report_helpers import REPO, SAMPLE, run_behave

from mcp_bdd.report.formatter import ALIASES

pytestmark = pytest.mark.slow

MESSAGES_SCHEMA = REPO / "node_modules" / "@cucumber" / "messages" / "messages.schema.json"
HTML_FORMATTER = REPO / "node_modules" / "@cucumber" / "html-formatter"
RENDER = Path(__file__).parent / "js" / "cucumber_html.mjs"
GHERKIN = Path(__file__).parent / "js" / "gherkin_pickles.mjs"
JSON_SCHEMA = Path(__file__).parent / "cucumber_json.schema.json"

LINKS_FEATURE = """\
@JIRA-7
Feature: Orders are traced to requirements
  Background:
    Given the "shop" server is running

  @outline
  Scenario Outline: Adding <a> and <b>
    When I call "add" with <a> and <b>
    Then the result is <sum>

    @small
    Examples: small
      | a | b | sum |
      | 1 | 2 | 3   |

    @large
    Examples: large
      | a   | b   | sum |
      | 100 | 200 | 300 |
      | 7   | 7   | 15  |

  Scenario: Steps with a table and a text
    When I send the rows:
      | name | qty |
      | tea  | 2   |
    Then I receive the text:
      \"\"\"
      two teas
      \"\"\"

  Rule: Refunds follow the policy
    Background:
      Given the "shop" server is running

    @req:ABC-1 @smoke
    Scenario: A refund is totalled
      When I call "add" with 1 and 1
      Then the result is 2
"""

PYPROJECT = """\
[tool.mcp-bdd.links]
JIRA = "https://jira.example.com/browse/{}"
req = "https://reqs.example.com/items/{}"

[tool.behave.formatters]
""" + "".join(f'{alias} = "{target}"\n' for alias, target in ALIASES.items())


def make_project(root: Path) -> Path:
    project = root / "project"
    shutil.copytree(SAMPLE, project)
    (project / "features" / "tools" / "links.feature").write_text(LINKS_FEATURE, encoding="utf-8")
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return project


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    project = make_project(tmp_path_factory.mktemp("cucumber"))
    summary = project / "reports" / "summary.md"
    proc = run_behave(
        project,
        "-f", "cucumber-messages", "-o", "reports/run.ndjson",
        "-f", "cucumber-json", "-o", "reports/cucumber.json",
        "-f", "junit-mcp", "-o", "reports/junit.xml",
        "-f", "living-doc", "-o", "reports/living-doc.html",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    ndjson = project / "reports" / "run.ndjson"
    assert ndjson.exists(), f"no NDJSON written\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    envelopes = [json.loads(line) for line in ndjson.read_text(encoding="utf-8").splitlines()]
    data = json.loads((project / "reports" / "cucumber.json").read_text(encoding="utf-8"))
    return {"project": project, "ndjson": ndjson, "envelopes": envelopes, "json": data, "proc": proc,
            "summary": summary}  # fmt: skip


def _of(envelopes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e[kind] for e in envelopes if kind in e]


def test_aliases_are_the_ones_pyproject_registers() -> None:
    import tomllib

    registered = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["behave"]["formatters"]
    assert registered == ALIASES


# -- Cucumber Messages -------------------------------------------------------------------------
def test_every_envelope_validates_against_the_official_schema(outputs: dict[str, Any]) -> None:
    assert MESSAGES_SCHEMA.exists(), "run `npm ci`: @cucumber/messages (package.json devDependencies) is missing"
    validator = jsonschema.Draft202012Validator(json.loads(MESSAGES_SCHEMA.read_text(encoding="utf-8")))
    problems = [
        f"line {n} ({next(iter(env))}): {err.message} at {list(err.absolute_path)}"
        for n, env in enumerate(outputs["envelopes"], 1)
        for err in validator.iter_errors(env)
    ]
    assert not problems, "\n".join(problems[:20])
    kinds = Counter(next(iter(e)) for e in outputs["envelopes"])
    assert kinds["meta"] == kinds["testRunStarted"] == kinds["testRunFinished"] == 1
    assert kinds["gherkinDocument"] == kinds["source"] == 4
    assert kinds["pickle"] == kinds["testCase"] == kinds["testCaseStarted"] == kinds["testCaseFinished"] == 19
    # the validator is not vacuous: a wrong status and a missing field are refused
    broken = {"testStepFinished": {"testCaseStartedId": "1", "testStepId": "2", "timestamp": {"seconds": 1, "nanos": 0},
                                   "testStepResult": {"status": "ERROR", "duration": {"seconds": 0, "nanos": 0}}}}  # fmt: skip
    assert not validator.is_valid(broken)
    assert not validator.is_valid({"pickle": {"id": "1", "uri": "x.feature"}})


def _ast_ids(node: Any, into: dict[str, dict[str, Any]], kind: str = "") -> dict[str, dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("id"), str) and "location" in node:
            into[node["id"]] = {**node, "_kind": kind}
        for key, value in node.items():
            _ast_ids(value, into, key)
    elif isinstance(node, list):
        for item in node:
            _ast_ids(item, into, kind)
    return into


def test_every_id_points_at_what_it_should(outputs: dict[str, Any]) -> None:
    envelopes = outputs["envelopes"]
    ast: dict[str, dict[str, Any]] = {}
    for doc in _of(envelopes, "gherkinDocument"):
        _ast_ids(doc, ast)
    pickles = {p["id"]: p for p in _of(envelopes, "pickle")}
    pickle_steps = {s["id"]: s for p in pickles.values() for s in p["steps"]}
    definitions = {d["id"] for d in _of(envelopes, "stepDefinition")}
    hooks = {h["id"] for h in _of(envelopes, "hook")}
    for pickle in pickles.values():
        assert all(i in ast for i in pickle["astNodeIds"]), pickle["name"]
        assert all(t["astNodeId"] in ast and ast[t["astNodeId"]]["name"] == t["name"] for t in pickle["tags"])
        for step in pickle["steps"]:
            assert ast[step["astNodeIds"][0]]["_kind"] == "steps", step["text"]
    cases = {c["id"]: c for c in _of(envelopes, "testCase")}
    for case in cases.values():
        assert case["pickleId"] in pickles
        for step in case["testSteps"]:
            assert step.get("pickleStepId") in pickle_steps or step.get("hookId") in hooks
            assert set(step.get("stepDefinitionIds", [])) <= definitions
    started = {s["id"]: s for s in _of(envelopes, "testCaseStarted")}
    assert {s["testCaseId"] for s in started.values()} == set(cases)
    step_ids = {s["id"] for c in cases.values() for s in c["testSteps"]}
    for finished in _of(envelopes, "testStepFinished"):
        assert finished["testCaseStartedId"] in started and finished["testStepId"] in step_ids


def _pickle(envelopes: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(p for p in _of(envelopes, "pickle") if p["name"] == name)


def test_rules_backgrounds_and_outline_rows_are_gherkin_shaped(outputs: dict[str, Any]) -> None:
    envelopes = outputs["envelopes"]
    ast: dict[str, dict[str, Any]] = {}
    for doc in _of(envelopes, "gherkinDocument"):
        _ast_ids(doc, ast)
    doc = next(d for d in _of(envelopes, "gherkinDocument") if d["uri"].endswith("links.feature"))
    children = doc["feature"]["children"]
    assert [next(iter(c)) for c in children] == ["background", "scenario", "scenario", "rule"]
    rule = children[3]["rule"]
    assert rule["name"] == "Refunds follow the policy" and "background" in rule["children"][0]
    # the Rule's scenario runs the Feature's Background step, then the Rule's, then its own
    refund = _pickle(envelopes, "A refund is totalled")
    feature_bg = children[0]["background"]["steps"][0]["id"]
    rule_bg = rule["children"][0]["background"]["steps"][0]["id"]
    assert [s["astNodeIds"][0] for s in refund["steps"][:2]] == [feature_bg, rule_bg]
    assert [t["name"] for t in refund["tags"]] == ["@JIRA-7", "@req:ABC-1", "@smoke"]
    # an outline row's pickle points at the outline and at its Examples row, with that block's tags
    outline = children[1]["scenario"]
    rows = [r["id"] for ex in outline["examples"] for r in ex["tableBody"]]
    row_pickles = [p for p in _of(envelopes, "pickle") if p["astNodeIds"][0] == outline["id"]]
    assert [p["astNodeIds"][1] for p in row_pickles] == rows
    assert [[t["name"] for t in p["tags"]] for p in row_pickles] == [
        ["@JIRA-7", "@outline", "@small"],
        ["@JIRA-7", "@outline", "@large"],
        ["@JIRA-7", "@outline", "@large"],
    ]
    assert row_pickles[2]["steps"][1]["astNodeIds"] == [outline["steps"][0]["id"], rows[2]]
    assert [p["name"] for p in row_pickles] == ["Adding 1 and 2", "Adding 100 and 200", "Adding 7 and 7"]
    # two Rules' scenarios of the same name stay two test cases
    assert sum(p["name"] == "Dividing normally" for p in _of(envelopes, "pickle")) == 2


def _lines(envelopes: list[dict[str, Any]]) -> dict[str, int]:
    ast: dict[str, dict[str, Any]] = {}
    for doc in _of(envelopes, "gherkinDocument"):
        _ast_ids(doc, ast)
    return {node_id: node["location"]["line"] for node_id, node in ast.items()}


def _shape(envelopes: list[dict[str, Any]], uri: str) -> list[dict[str, Any]]:
    """What a pickle is, independent of ids: the lines its AST references sit on, its tags and steps."""
    lines = _lines(envelopes)
    return [
        {
            "line": p["location"]["line"],
            "ast": [lines[i] for i in p["astNodeIds"]],
            "tags": list(dict.fromkeys(t["name"] for t in p["tags"])),
            "steps": [
                (s["text"], s.get("type"), [lines[i] for i in s["astNodeIds"]], s.get("argument")) for s in p["steps"]
            ],
        }
        for p in _of(envelopes, "pickle")
        if p["uri"] == uri
    ]


def test_pickles_are_the_ones_the_official_gherkin_parser_derives(outputs: dict[str, Any]) -> None:
    """The same feature files through @cucumber/gherkin: the same scenarios, steps, tags and AST lines."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    uris = sorted(d["uri"] for d in _of(outputs["envelopes"], "gherkinDocument"))
    proc = subprocess.run(
        [node, str(GHERKIN), *uris], cwd=outputs["project"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    official = [json.loads(line) for line in proc.stdout.splitlines()]
    for uri in uris:
        theirs, ours = _shape(official, uri), _shape(outputs["envelopes"], uri)
        assert len(ours) == len(theirs), uri
        for mine, reference in zip(ours, theirs, strict=True):
            assert mine == reference, uri


def _results(envelopes: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    pickle = _pickle(envelopes, name)
    case = next(c for c in _of(envelopes, "testCase") if c["pickleId"] == pickle["id"])
    started = next(s["id"] for s in _of(envelopes, "testCaseStarted") if s["testCaseId"] == case["id"])
    return [f["testStepResult"] for f in _of(envelopes, "testStepFinished") if f["testCaseStartedId"] == started]


def test_statuses_failures_and_hooks(outputs: dict[str, Any]) -> None:
    envelopes = outputs["envelopes"]
    wrong = _results(envelopes, "A wrong total is reported as a failure")
    assert [r["status"] for r in wrong] == ["PASSED", "PASSED", "FAILED"]
    exception = wrong[2]["exception"]
    assert exception["type"] == "mcp_bdd.expectation"
    assert exception["message"] == "ASSERT FAILED: Expected result to be 5, but it was 4"
    assert [r["status"] for r in _results(envelopes, "A step nobody has written yet")] == ["PASSED", "UNDEFINED"]
    assert [r["status"] for r in _results(envelopes, "A pending step")] == ["PENDING"]
    hook = _results(envelopes, "A scenario whose setup hook breaks")
    assert [r["status"] for r in hook] == ["FAILED", "SKIPPED"] and "could not start" in hook[0]["message"]
    feature_hook = _results(envelopes, "Never runs because the feature hook fails")
    assert feature_hook[0]["status"] == "FAILED" and "prompts fixture" in feature_hook[0]["message"]
    finished = _of(envelopes, "testRunFinished")[0]
    assert finished["success"] is False


def test_mcp_exchanges_and_requirement_links_are_attachments(outputs: dict[str, Any]) -> None:
    attachments = _of(outputs["envelopes"], "attachment")
    exchanges = [a for a in attachments if a.get("fileName") == "mcp-exchanges.json"]
    assert exchanges and all(a["mediaType"] == "application/json" for a in exchanges)
    calls = [m for a in exchanges for m in json.loads(a["body"]) if m["method"] == "tools/call"]
    kinds = {m["kind"] for m in calls}
    assert {"request", "response"} <= kinds
    request = next(m for m in calls if m["kind"] == "request" and m["payload"].get("name") == "add")
    assert request["payload"]["arguments"] == {"a": 2, "b": 3}
    assert any(a["mediaType"] == "image/png" and a["contentEncoding"] == "BASE64" for a in attachments)
    stderr = next(a for a in attachments if a.get("fileName") == "stderr of shop")
    assert "s3cr3t" not in stderr["body"]  # masked when the model was built
    links = [a["body"].splitlines() for a in attachments if a["mediaType"] == "text/uri-list"]
    assert [
        "https://jira.example.com/browse/JIRA-7",
        "https://reqs.example.com/items/ABC-1",
    ] in links


@pytest.fixture(scope="module")
def official_page(outputs: dict[str, Any]) -> Path:
    """The NDJSON rendered by the official @cucumber/html-formatter (Node.js, from package.json)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    assert HTML_FORMATTER.exists(), "run `npm ci`: @cucumber/html-formatter (package.json devDependencies) is missing"
    proc = subprocess.run(
        [node, str(RENDER)],
        input=outputs["ndjson"].read_bytes(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    page = outputs["project"] / "reports" / "cucumber.html"
    page.write_bytes(proc.stdout)
    return page


def test_the_official_html_formatter_renders_it(official_page: Path) -> None:
    html = official_page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
    for name in ("A refund is totalled", "Dividing normally", "Refunds follow the policy", "Multiplying"):
        assert name in html, name  # the messages travel inside the page; Chromium draws them below


def test_the_official_page_draws_every_scenario_in_chromium(browser: Any, official_page: Path) -> None:
    """What a person sees: the React app of the html-formatter draws every scenario from the stream."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(official_page.as_uri())
    WebDriverWait(browser, 60).until(lambda d: "Refunds follow the policy" in d.find_element("tag name", "body").text)
    text = browser.find_element("tag name", "body").text
    shown_all = ("A refund is totalled", "Adding <a> and <b>", "Examples: large", "mcp-exchanges.json", "FAILED")
    for shown in shown_all:
        assert shown in text, shown


# -- Cucumber JSON -----------------------------------------------------------------------------
def _elements(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for f in data for e in f["elements"]]


def test_cucumber_json_has_the_shape_dashboards_read(outputs: dict[str, Any]) -> None:
    schema = json.loads(JSON_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    problems = [f"{err.message} at {list(err.absolute_path)}" for err in validator.iter_errors(outputs["json"])]
    assert not problems, "\n".join(problems[:20])
    assert not validator.is_valid([{"uri": "x", "elements": [{"type": "rule"}]}])  # not vacuous
    elements = _elements(outputs["json"])
    assert len(elements) == 19 and len({e["id"] for e in elements}) == 19
    dividing = [e for e in elements if e["name"] == "Dividing normally"]
    assert len(dividing) == 2 and "division-rounds-down" in dividing[1]["id"]
    rows = [e for e in elements if e["keyword"] == "Scenario Outline" and "links" in e["id"]]
    assert [[t["name"] for t in e["tags"]] for e in rows][1] == ["@JIRA-7", "@outline", "@large"]
    assert [e["name"] for e in rows] == ["Adding 1 and 2", "Adding 100 and 200", "Adding 7 and 7"]  # not "-- @1.1"
    refund = next(e for e in elements if e["name"] == "A refund is totalled")
    assert [s["name"] for s in refund["steps"]][:2] == ['the "shop" server is running'] * 2
    assert "JIRA-7: https://jira.example.com/browse/JIRA-7" in refund["description"]
    assert "ABC-1: https://reqs.example.com/items/ABC-1" in refund["description"]


def test_cucumber_json_results_and_embeddings(outputs: dict[str, Any]) -> None:
    elements = {e["name"]: e for e in _elements(outputs["json"])}
    wrong = elements["A wrong total is reported as a failure"]["steps"]
    assert [s["result"]["status"] for s in wrong] == ["passed", "passed", "failed"]
    assert wrong[2]["result"]["error_message"].startswith("ASSERT FAILED: Expected result to be 5, but it was 4")
    assert all(isinstance(s["result"]["duration"], int) for s in wrong)
    assert any(s["result"]["duration"] > 1_000 for s in wrong)  # nanoseconds: no step takes under 1 µs
    exchanges = next(e for e in wrong[1]["embeddings"] if e.get("name") == "mcp-exchanges.json")
    assert exchanges["mime_type"] == "application/json"
    decoded = json.loads(base64.b64decode(exchanges["data"]))
    assert any(m["method"] == "tools/call" and m["kind"] == "response" for m in decoded)
    assert "match" not in elements["A step nobody has written yet"]["steps"][1]
    assert elements["A step nobody has written yet"]["steps"][1]["result"]["status"] == "undefined"
    hook = elements["A scenario whose setup hook breaks"]["before"][0]["result"]
    assert hook["status"] == "failed" and "could not start" in hook["error_message"]


def test_junit_properties_carry_requirement_links(outputs: dict[str, Any]) -> None:
    import xml.etree.ElementTree as ET

    root = ET.parse(outputs["project"] / "reports" / "junit.xml").getroot()
    case = next(c for c in root.iter("testcase") if c.get("name") == "A refund is totalled")
    assert next(iter(case)).tag == "properties"
    props = [(p.get("name"), p.get("value")) for p in case.iter("property")]
    assert props == [
        ("requirements", "JIRA-7, ABC-1"),
        ("link:JIRA-7", "https://jira.example.com/browse/JIRA-7"),
        ("link:ABC-1", "https://reqs.example.com/items/ABC-1"),
    ]
    plain = next(c for c in root.iter("testcase") if c.get("name") == "Adding two numbers")
    assert plain.find("properties") is None


def test_meta_names_the_github_build() -> None:
    from report_helpers import feature, run, scenario

    from mcp_bdd.report.cucumber_messages import messages

    env = {
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_RUN_ID": "42",
        "GITHUB_RUN_NUMBER": "7", "GITHUB_SHA": "abc123", "GITHUB_REF_NAME": "main",
    }  # fmt: skip
    envelopes = messages(run(feature("f", scenario("s1"))), env)
    meta = envelopes[0]["meta"]
    assert meta["ci"] == {
        "name": "GitHub Actions",
        "url": "https://github.com/acme/shop/actions/runs/42",
        "buildNumber": "7",
        "git": {"remote": "https://github.com/acme/shop.git", "revision": "abc123", "branch": "main"},
    }
    validator = jsonschema.Draft202012Validator(json.loads(MESSAGES_SCHEMA.read_text(encoding="utf-8")))
    assert all(validator.is_valid(e) for e in envelopes)
    assert "ci" not in messages(run(feature("f", scenario("s1"))), {})[0]["meta"]


# -- GitHub step summary -----------------------------------------------------------------------
def test_the_step_summary_links_failures_and_requirements(outputs: dict[str, Any]) -> None:
    text = outputs["summary"].read_text(encoding="utf-8")
    jira = "[JIRA-7](https://jira.example.com/browse/JIRA-7)"
    # the failing outline row is titled by its values and carries its requirement
    row = next(line for line in text.splitlines() if "Adding 7 and 7" in line)
    assert jira in row, text
    assert "@1" not in text and "-- @" not in text
    requirements = text[text.index("**Requirements** (2)") :]
    lines = requirements.splitlines()
    assert lines[4] == f"| ❌ {jira} | 5 | 3 | 2 |", requirements  # failing first; the Feature tag covers all 5
    assert "| [ABC-1](https://reqs.example.com/items/ABC-1) | 1 | 1 | 0 |" in requirements
