"""`mcp-bdd steps --editor vscode`: the step file parses the way the Cucumber VS Code extension reads it.

The extension ("Cucumber (Gherkin) Full Support", alexkrechik.cucumberautocomplete 3.x) reads each
file of its `cucumberautocomplete.steps` globs with comments stripped, line by line: a Gherkin
word, then a step body between `/`, `'`, `"` or backquotes (backslash escapes allowed); the body
is rewritten (Cucumber-expression `{...}` -> `.*`, `(abc)` -> optional, `a/b` -> alternatives)
and compiled with JavaScript's `new RegExp`. A step line of a feature then needs one regex of
the same keyword (with `strictGherkinCompletion`) that matches the text after the keyword.

The harness below does those steps in Node (the JavaScript engine the extension runs on), so a
regex JavaScript rejects, a `/` that ends a literal early, or a rewrite that breaks a phrase
fails here — for every phrase of tests/data/contract.feature and every docstring example.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from behave.step_registry import registry
from contract_phrases import contract_steps as _contract_steps

import mcp_bdd.steps  # noqa: F401 - registers the vocabulary
from mcp_bdd.cli import main
from mcp_bdd.steps._editor import STEPS_FILE
from mcp_bdd.steps._phrases import split_doc

NODE = shutil.which("node")

# What the extension does with a step file (see the module docstring), as a Node script: reads the
# step file and a JSON list of [keyword, text], prints a JSON list of the texts no regex matched.
HARNESS = r"""
const fs = require("fs");
const [stepsPath, stepsJson] = process.argv.slice(2);
const source = fs.readFileSync(stepsPath, "utf8")
  .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))   // block comments, lines kept
  .replace(/^\s*\/\/.*$/gm, "");                                    // line comments
const lineRe = new RegExp(
  "^((?:[^'\"/]*?[^\\w])|.{0})(Given|When|Then|And|But|defineStep|Step|StepDefinition)" +
  "[^/'\"`\\w]*?(/|'|\"|`)((?:(?=(?:\\\\)*)\\\\.|.)*?)\\3", "i");
const steps = [];
for (const line of source.split(/\r?\n/)) {
  const m = line.match(lineRe);
  if (!m) continue;
  let body = m[4];
  body = body.replace(/\(([a-z]+)\)/g, "($1)?");                              // optional text
  body = body.replace(/([a-zA-Z]+)(?:\/([a-zA-Z]+))+/g, (x) => `(${x.replace(/\//g, "|")})`);
  body = body.replace(/([^\\]|^){(?![\d,])(.*?)}/g, "$1.*");                  // cucumber expressions
  steps.push({ keyword: m[2].toLowerCase(), reg: new RegExp(body) });
}
const wanted = JSON.parse(fs.readFileSync(stepsJson, "utf8"));
const missing = wanted.filter(([keyword, text]) =>
  !steps.some((s) => (s.keyword === keyword || s.keyword === "step") && s.reg.test(text)));
console.log(JSON.stringify({ parsed: steps.length, missing }));
"""


def _example_steps() -> list[tuple[str, str]]:
    """[keyword, text] of every Gherkin step line of the step definitions' docstring examples."""
    out: list[tuple[str, str]] = []
    for matchers in registry.steps.values():
        for matcher in matchers:
            _, example = split_doc(matcher.func.__doc__ or "")
            keyword = "given"
            for line in example.splitlines():
                match = re.match(r"^\s*(Given|When|Then|And|But) (.*)$", line)
                if match:
                    if match.group(1) not in ("And", "But"):
                        keyword = match.group(1).lower()
                    out.append((keyword, match.group(2).rstrip()))
    return out


@pytest.fixture
def written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.chdir(tmp_path)
    assert main(["steps", "--editor", "vscode"]) == 0
    out = capsys.readouterr().out
    assert STEPS_FILE in out and "alexkrechik.cucumberautocomplete" in out
    return tmp_path


def _unmatched(root: Path, steps: list[tuple[str, str]]) -> dict[str, object]:
    assert NODE is not None
    (root / "harness.js").write_text(HARNESS)
    (root / "wanted.json").write_text(json.dumps(steps))
    proc = subprocess.run(
        [NODE, str(root / "harness.js"), str(root / STEPS_FILE), str(root / "wanted.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_extension_parses_every_phrase_and_matches_the_contract(written: Path) -> None:
    result = _unmatched(written, _contract_steps())
    assert result["parsed"] == sum(len(m) for m in registry.steps.values())
    assert result["missing"] == []


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_every_docstring_example_matches_in_the_editor(written: Path) -> None:
    examples = _example_steps()
    assert len(examples) >= 100
    assert _unmatched(written, examples)["missing"] == []


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_mistyped_step_matches_nothing(written: Path) -> None:
    """The editor flags what behave would not run: a typo, a missing quote, the wrong keyword."""
    wrong = [
        ("then", "the tool call suceeds"),
        ("when", 'I call the tool "add'),
        ("given", "the tool call succeeds"),
        ("then", 'the result at "$.items" has many items'),
    ]
    assert _unmatched(written, wrong)["missing"] == [list(w) for w in wrong]


def test_the_file_is_javascript_and_the_regexes_compile_in_python(written: Path) -> None:
    text = (written / STEPS_FILE).read_text()
    bodies = re.findall(r"^(?:Given|When|Then|Step)\(/(.*)/\);$", text, re.M)
    assert len(bodies) == sum(len(m) for m in registry.steps.values())
    for body in bodies:
        re.compile(body.replace("\\/", "/"))
    if NODE is not None:
        proc = subprocess.run([NODE, "--check", str(written / STEPS_FILE)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    assert "{" not in "".join(bodies).replace("\\{", "")  # nothing the extension would read as a Cucumber expression


def test_settings_are_merged_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text(
        json.dumps({"editor.tabSize": 2, "cucumberautocomplete.steps": ["my/steps/*.js"]})
    )
    assert main(["steps", "--editor", "vscode"]) == 0
    assert main(["steps", "--editor", "vscode"]) == 0  # twice: nothing added twice
    settings = json.loads((tmp_path / ".vscode" / "settings.json").read_text())
    assert settings["editor.tabSize"] == 2
    assert settings["cucumberautocomplete.steps"] == [
        "my/steps/*.js",
        STEPS_FILE,
        "steps/**/*.py",
        "features/steps/**/*.py",
    ]
    assert settings["cucumberautocomplete.strictGherkinCompletion"] is True


def test_settings_with_comments_are_left_alone_with_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".vscode").mkdir()
    original = '{\n  // my settings\n  "editor.tabSize": 2,\n}\n'
    (tmp_path / ".vscode" / "settings.json").write_text(original)
    assert main(["steps", "--editor", "vscode"]) == 2
    err = capsys.readouterr().err
    assert "is not plain JSON" in err and '"cucumberautocomplete.steps"' in err
    assert (tmp_path / ".vscode" / "settings.json").read_text() == original
    assert (tmp_path / STEPS_FILE).is_file()
