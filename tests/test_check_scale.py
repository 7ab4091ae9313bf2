"""`mcp-bdd check` grows with the catalog, no faster, and its report stays readable however many
findings a catalog makes (issue 51: `quality.confusable-names` compared every pair of names with
difflib, 28.8 s for 1,000 tools, killed after 150 s for 5,000; 4,364 findings for 1,000 tools).

The end-to-end test runs the command on tests/servers/catalog.py (standard library only) with
5,000 tools; benchmarks/check_scale.py prints the times for 100, 1,000 and 5,000."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from behave_project import run_captured
from jsonschema import Draft202012Validator

from mcp_bdd.check import CheckOptions, Finding, Severity
from mcp_bdd.check._runner import _folded
from mcp_bdd.check.checks.quality import _normal, _one_letter_partners
from mcp_bdd.check.checks.schemas import _flat_meta_schema

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "tests" / "servers" / "catalog.py"


@pytest.mark.slow
def test_check_on_5000_tools_is_done_in_seconds_with_a_bounded_report(tmp_path: Path) -> None:
    server = [sys.executable, str(CATALOG), "--tools", "5000", "--read-only", "3"]
    done = run_captured([str(Path(sys.executable).parent / "mcp-bdd"), "check", "--json", "--", *server],
                        cwd=tmp_path, timeout=90)  # fmt: skip
    data = json.loads(done.stdout)
    assert data["counts"]["tools"] == 5000, done.stderr[-2000:]
    per_group = Counter((f["check"], f["severity"]) for f in data["findings"])
    assert max(per_group.values()) <= CheckOptions().max_findings + 1, per_group
    folded = [f for f in data["findings"] if f["check"] == "quality.confusable-names" and "not listed" in f["title"]]
    assert folded and folded[0]["title"].split()[0].replace(",", "").isdigit(), folded  # "1,234 more findings ..."
    assert len(done.stdout) < 1_000_000


def _one_letter(a: str, b: str) -> bool:
    """Levenshtein distance 1, the slow way."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


@pytest.mark.parametrize("seed", range(5))
def test_confusable_names_are_every_pair_one_letter_apart_without_comparing_every_pair(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = rng.choice(["ab_", "ab-_.", "aB1_", "xyz"])
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(4, 9))) for _ in range(80)})
    expected: dict[str, list[str]] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if min(len(a), len(b)) >= 6 and _one_letter(_normal(a), _normal(b)):
                expected.setdefault(b, []).append(a)
    by_normal: dict[str, list[str]] = {}
    for name in names:
        by_normal.setdefault(_normal(name), []).append(name)
    assert _one_letter_partners(names, by_normal) == expected


def _random_schema(rng: random.Random, depth: int = 0) -> object:
    """A schema from the keywords real tools use, with a wrong value now and then."""
    if depth > 3 or rng.random() < 0.2:
        return rng.choice([{"type": "string"}, {"type": "strng"}, True, {"minimum": "x"}, {"enum": []}])
    choices = {
        "type": ["object", "string", ["string", "null"], ["string", "string"], 5],
        "required": [["a"], "a", ["a", "a"]],
        "minLength": [1, -1, 1.0, "2"],
        "pattern": ["^a+$", "("],
        "enum": [["a", "b"], 5],
        "additionalProperties": [False, True, "no"],
        "description": ["What it is.", 5],
        "$id": ["urn:x", "http://x y"],
        "format": ["date", 3],
    }
    schema: dict[str, object] = {k: rng.choice(v) for k, v in choices.items() if rng.random() < 0.3}
    if rng.random() < 0.6:
        schema["properties"] = {f"p{i}": _random_schema(rng, depth + 1) for i in range(rng.randint(0, 3))}
    if rng.random() < 0.2:
        schema[rng.choice(["anyOf", "allOf", "prefixItems"])] = [_random_schema(rng, depth + 1)]
    if rng.random() < 0.2:
        schema[rng.choice(["items", "not", "if", "contentSchema", "unevaluatedProperties"])] = _random_schema(
            rng, depth + 1
        )
    if rng.random() < 0.1:
        schema[rng.choice(["$defs", "definitions", "dependentSchemas"])] = {"d": _random_schema(rng, depth + 1)}
    if rng.random() < 0.05:
        schema["dependencies"] = {"a": rng.choice([["b"], ["b", "b"], _random_schema(rng, depth + 1)])}
    return schema


def test_the_flat_meta_schema_judges_as_the_published_one() -> None:
    """The fast meta-schema check says "valid" exactly when jsonschema's own does."""
    fast = _flat_meta_schema()
    assert fast is not None
    published = Draft202012Validator(
        Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    rng = random.Random(7)
    schemas = [_random_schema(rng) for _ in range(1500)]
    verdicts = Counter((fast.is_valid(s), published.is_valid(s)) for s in schemas)
    assert set(verdicts) == {(True, True), (False, False)}, verdicts


def _finding(check: str, target: str, severity: Severity = Severity.LOW) -> Finding:
    return Finding(check=check, group="quality", severity=severity, title=f"{target} is odd", target=target,
                   details="", tip="fix it")  # fmt: skip


def test_findings_past_the_limit_are_folded_into_one_that_counts_them() -> None:
    many = [_finding("quality.x", f"tool t{i:04d}") for i in range(1000)]
    few = [_finding("quality.x", "tool a", Severity.MEDIUM), _finding("quality.y", "tool b")]
    findings = sorted(many + few, key=lambda f: (-f.severity, f.group, f.check, f.target))
    kept = _folded(findings, CheckOptions(max_findings=25))
    assert kept[0].target == "tool a" and kept[-1].check == "quality.y"  # the others as they were, in order
    folded = kept[-2]
    assert len(kept) == 2 + 25 + 1 and folded.severity == Severity.LOW and folded.check == "quality.x"
    assert folded.title == "975 more findings of this check at low severity, not listed one by one"
    assert folded.target.startswith("tool t0025, tool t0026") and folded.target.endswith("… and 955 more")
    # the per-tool step's tool is never folded away; no limit keeps them all
    asked = _folded(findings, CheckOptions(max_findings=25, only_tools=("t0999",)))
    assert any(f.target == "tool t0999" for f in asked) and len(asked) == len(kept) + 1
    assert _folded(findings, CheckOptions(max_findings=0)) == findings
