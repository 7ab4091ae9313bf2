"""JSON Schemas whose `$ref`s loop, or point at nothing: found up front (mcp_bdd._schema), never
a RecursionError or a `referencing` Unresolvable.

`mcp-bdd check` reports such a schema as a finding (with --allow-writes or not), and the schema
steps fail with a typed assertion naming the tool, where the chain starts and how it loops (or
which `$ref` points at nothing). The server (tests/servers/raw_server.py, RAW_SERVER_MODE=refloop
or danglingref) writes its own bytes and runs over stdio, as any server in any language would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from behave_project import make_project, run_behave
from unit.test_layering import _imports, _modules

from mcp_bdd._schema import SchemaLoops, SchemaUnusable, find_dangling_ref, find_ref_cycle, fragment, guarded
from mcp_bdd.check.checks.honest import draw_calls
from mcp_bdd.cli import main
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.matchers import assert_schema, validate_schema

SERVER = Path(__file__).resolve().parent / "servers" / "raw_server.py"
OUTPUT_LOOP = {"type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}}


def _chain(schema: Any) -> str | None:
    cycle = find_ref_cycle(schema)
    return None if cycle is None else " → ".join(fragment(at) for at in cycle.chain)


# ---------------------------------------------------------------------------------------------
# the walk itself


@pytest.mark.parametrize(
    ("schema", "chain"),
    [
        ({"$ref": "#"}, "# → #"),
        ({"$ref": ""}, "# → #"),
        (OUTPUT_LOOP, "#/properties/n → #/$defs/a → #/$defs/a"),
        (
            {
                "properties": {"n": {"$ref": "#/$defs/a"}},
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            },
            "#/properties/n → #/$defs/a → #/$defs/b → #/$defs/a",
        ),
        # in-place keywords step into nothing: allOf / anyOf / not ... back to the root loop too
        ({"type": "object", "allOf": [{"$ref": "#"}]}, "# → #/allOf/0 → #"),
        (
            {"anyOf": [{"type": "string"}, {"not": {"$ref": "#node"}}], "$anchor": "node"},
            "# → #/anyOf/1 → #/anyOf/1/not → #",
        ),
        ({"$defs": {"a/b": {"$ref": "#/$defs/a~1b"}}, "$ref": "#/$defs/a~1b"}, "# → #/$defs/a~1b → #/$defs/a~1b"),
        ({"$id": "https://x.test/s.json", "$ref": "https://x.test/s.json#"}, "# → #"),
    ],
)
def test_a_chain_that_comes_back_without_stepping_into_the_value_is_a_cycle(schema: Any, chain: str) -> None:
    assert _chain(schema) == chain


@pytest.mark.parametrize(
    "schema",
    [
        # a tree: each turn steps into the value (a child), so a finite value ends the recursion
        {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}},
        {"$defs": {"node": {"properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"},
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}},
        {"const": {"$ref": "#"}, "enum": [{"$ref": "#"}], "default": {"$ref": "#"}},  # data, not schemas
        {"$ref": "other.json#"},  # another document: never followed
        {"$ref": "#/$defs/missing"},
        True,
        [{"$ref": "#"}],
    ],
)
def test_recursion_through_the_value_and_data_that_looks_like_a_ref_are_no_cycle(schema: Any) -> None:
    assert find_ref_cycle(schema) is None


def test_a_schema_nested_thousands_deep_is_walked_without_recursion() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        schema = {"allOf": [schema]}
    assert find_ref_cycle(schema) is None


def test_guarded_turns_a_cycle_and_a_recursion_error_into_schema_loops() -> None:
    with pytest.raises(SchemaLoops) as found:
        guarded({"$ref": "#"}, lambda: pytest.fail("a cycle must be found before the schema is used"))
    assert found.value.cycle is not None and found.value.summary == "$ref never resolves to a schema (a cycle)"

    def recurse(n: int) -> int:
        return recurse(n + 1)

    with pytest.raises(SchemaLoops) as deep:
        guarded({"type": "object"}, lambda: recurse(0))
    assert deep.value.cycle is None
    assert guarded({"type": "object"}, lambda: 42) == 42


def test_the_walk_is_a_pure_module() -> None:
    imported = _imports("mcp_bdd._schema", _modules()["mcp_bdd._schema"])
    assert not {t for t in imported if t.split(".")[0] in ("behave", "mcp", "mcp_types", "jsonschema")}


# ---------------------------------------------------------------------------------------------
# matchers (the schema steps)


def test_assert_schema_fails_typed_naming_the_chain() -> None:
    with pytest.raises(ExpectationFailed) as failed:
        assert_schema({"n": 5}, OUTPUT_LOOP, title='The structuredContent of "loop" breaks its output schema')
    text = str(failed.value)
    assert text.startswith('The structuredContent of "loop" breaks its output schema\n')
    assert "The schema's $ref never resolves to a schema (a cycle)." in text
    assert "#/properties/n → #/$defs/a → #/$defs/a comes back to #/$defs/a without stepping into the value" in text
    assert failed.value.tip and "recursive schema recurses through properties or items" in failed.value.tip


def test_validate_schema_calls_a_loop_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"^The schema for the result cannot be used: its \$ref never resolves"):
        validate_schema(1, {"$ref": "#"})


def test_no_argument_is_drawn_from_a_looping_input_schema() -> None:
    assert draw_calls({"type": "object", "properties": {"n": {"$ref": "#"}}, "allOf": [{"$ref": "#"}]}, 3, 0) == []


# ---------------------------------------------------------------------------------------------
# a real server over stdio: `mcp-bdd check` and the steps


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["check", "--json", *args, "--", sys.executable, str(SERVER)])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("writes", [[], ["--allow-writes"]], ids=["read-only", "allow-writes"])
def test_check_reports_the_loops_as_findings(
    writes: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAW_SERVER_MODE", "refloop")
    code, data = _check(capsys, "--only", "schemas,honest", *writes)
    assert code == 1 and data["status"] == "findings", data
    loops = {f["check"]: f for f in data["findings"] if "cycle" in f["title"]}
    assert set(loops) == {"schemas.input-valid", "schemas.output-valid"}, data["findings"]
    found = loops["schemas.input-valid"]
    assert found["title"] == "the inputSchema's $ref never resolves to a schema (a cycle)"
    assert found["target"] == "tool loop" and found["tip"].startswith("point each $ref at a schema")
    assert "#/properties/n → #/$defs/a → #/$defs/b → #/$defs/a comes back to #/$defs/a" in found["details"]
    assert "#/properties/n → #/$defs/a → #/$defs/a" in loops["schemas.output-valid"]["details"]
    # the tool was called (it is read-only): structured-output met the loop and left it to output-valid
    assert data["counts"]["tool calls"] > 0 and data["skipped"] == {}
    assert not [f for f in data["findings"] if f["check"] == "schemas.structured-output"]


def _run_schema_steps(tmp_path: Path, mode: str, inline_schema: str) -> Any:
    """The two schema steps against raw_server in `mode`: the tool's own output schema, and a
    schema written in the feature."""
    argv = ", ".join(json.dumps(a) for a in [sys.executable, str(SERVER)])
    call = '''
    Given the MCP server "raw" is running
    When I call the tool "{tool}" with arguments:
      """json
      {{"n": 5}}
      """'''.format(tool="loop" if mode == "refloop" else "dangling")
    feature = f'''
Feature: schemas no value can be checked against
  Scenario: the tool's output schema{call}
    Then the result conforms to the tool's output schema

  Scenario: a schema in the feature{call}
    Then the result matches the schema:
      """json
      {inline_schema}
      """
'''
    config = f'[servers.raw]\ncommand = [{argv}]\nprotocol = "legacy"\nenv = {{ RAW_SERVER_MODE = "{mode}" }}\n'
    return run_behave(make_project(tmp_path, config, {"s.feature": feature}), "--no-capture", "-f", "plain")


@pytest.mark.slow
def test_the_schema_steps_fail_typed_not_with_a_recursion_error(tmp_path: Path) -> None:
    run = _run_schema_steps(tmp_path, "refloop", '{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}')
    assert "RecursionError" not in run.output and len(run.output) < 20_000, run.output[-3000:]
    assert run.counts() == {"passed": 0, "failed": 2, "error": 0, "skipped": 0}, run.failures()
    assert 'ASSERT FAILED: The structuredContent of "loop" breaks its output schema' in run.output
    assert "The $ref chain #/properties/n → #/$defs/a → #/$defs/a comes back" in run.output
    # the call that produced the value is the tool call, not the listing the step made to find the schema
    assert "→ [raw] tools/call" in run.output and "→ [raw] tools/list" not in run.output, run.output[-3000:]
    assert "The $ref chain # → #/$defs/a → #/$defs/a comes back" in run.output


# ---------------------------------------------------------------------------------------------
# a local $ref that points at nothing: found by the same walk, reported the same way


DANGLING_OUTPUT = {"type": "object", "properties": {"n": {"$ref": "#/$defs/nope"}}}


@pytest.mark.parametrize(
    ("schema", "at", "ref", "found"),
    [
        (DANGLING_OUTPUT, "#/properties/n", "#/$defs/nope", "nothing"),
        (
            {"$defs": {"number": {"type": "number"}}, "$ref": "#/definitions/number"},
            "#",
            "#/definitions/number",
            "nothing",
        ),
        ({"properties": {"n": {"$ref": "#node"}}}, "#/properties/n", "#node", "nothing"),
        ({"required": ["n"], "properties": {"n": {"$ref": "#/required"}}}, "#/properties/n", "#/required", "an array"),
        ({"allOf": [{"$ref": "#/allOf/7"}]}, "#/allOf/0", "#/allOf/7", "nothing"),
        # a definition nobody uses yet: ajv (the TypeScript SDK's validator) refuses it up front
        ({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}}}, "#/$defs/a", "#/$defs/b", "nothing"),
        (
            {"$id": "https://x.test/s.json", "$ref": "https://x.test/s.json#/$defs/x"},
            "#",
            "https://x.test/s.json#/$defs/x",
            "nothing",
        ),
    ],
)
def test_a_local_ref_to_nothing_is_found_up_front(schema: Any, at: str, ref: str, found: str) -> None:
    dangling = find_dangling_ref(schema)
    assert dangling is not None
    assert (fragment(dangling.at), dangling.ref, dangling.found) == (at, ref, found)


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/t", "$defs": {"t": True}},  # `true` is a schema
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}},
        {"properties": {"n": {"$ref": "#node"}}, "$defs": {"x": {"$anchor": "node", "type": "string"}}},
        {"definitions": {"x": {"$id": "#x"}}, "$ref": "#x"},  # draft 6/7's anchor
        {"properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}}},
        {"const": {"$ref": "#/nope"}, "enum": [{"$ref": "#/nope"}]},  # data, not schemas
        {"$ref": "other.json#/nope"},  # another document: never followed
        # an embedded resource reads its `#...` against itself, not the root
        {"$defs": {"x": {"$id": "https://x.test/y", "$defs": {"z": {}}, "properties": {"n": {"$ref": "#/$defs/z"}}}}},
        True,
    ],
)
def test_refs_that_land_on_a_schema_or_leave_the_document_do_not_dangle(schema: Any) -> None:
    assert find_dangling_ref(schema) is None


def test_guarded_reports_a_dangling_ref_before_the_schema_is_used() -> None:
    with pytest.raises(SchemaUnusable) as found:
        guarded(DANGLING_OUTPUT, lambda: pytest.fail("a dangling $ref must be found before the schema is used"))
    assert found.value.summary == "$ref #/$defs/nope points at nothing" and found.value.up_front
    assert "The $ref at #/properties/n names #/$defs/nope, which is not in the schema" in found.value.details


def test_a_ref_no_validator_can_resolve_is_typed_all_the_same() -> None:
    # another document: the walk does not follow it, the validator cannot find it
    with pytest.raises(UsageError, match=r"^The schema for the result cannot be used: its \$ref other.json#/a cannot"):
        validate_schema(1, {"$ref": "other.json#/a"})


def test_assert_schema_fails_typed_naming_the_dangling_ref() -> None:
    with pytest.raises(ExpectationFailed) as failed:
        assert_schema({"n": 5}, DANGLING_OUTPUT, title='The structuredContent of "dangling" breaks its output schema')
    text = str(failed.value)
    assert text.startswith('The structuredContent of "dangling" breaks its output schema\n')
    assert "The schema's $ref #/$defs/nope points at nothing." in text
    assert failed.value.tip and "$defs" in failed.value.tip


def test_validate_schema_calls_a_dangling_ref_a_usage_error() -> None:
    with pytest.raises(
        UsageError, match=r"^The schema for the result cannot be used: its \$ref #nope points at nothing"
    ):
        validate_schema(1, {"$ref": "#nope"})


def test_no_argument_is_drawn_from_an_input_schema_whose_ref_dangles() -> None:
    assert draw_calls({"type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}, "required": ["n"]}, 3, 0) == []


@pytest.mark.slow
def test_check_reports_dangling_refs_as_findings_not_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAW_SERVER_MODE", "danglingref")
    code, data = _check(capsys, "--only", "schemas,honest")
    assert code == 1 and data["status"] == "findings", data
    dangling = {f["check"]: f for f in data["findings"] if "points at nothing" in f["title"]}
    assert set(dangling) == {"schemas.input-valid", "schemas.output-valid"}, data["findings"]
    assert dangling["schemas.output-valid"]["title"] == "the outputSchema's $ref #/$defs/nope points at nothing"
    found = dangling["schemas.input-valid"]
    assert found["title"] == "the inputSchema's $ref #/definitions/number points at nothing"
    assert found["target"] == "tool dangling" and "#/$defs/number" in found["details"]
    # the tool was called (it is read-only, n is optional): structured-output left the ref to output-valid
    assert data["counts"]["tool calls"] > 0
    assert not [f for f in data["findings"] if f["check"] == "schemas.structured-output"]


@pytest.mark.slow
def test_the_schema_steps_fail_typed_on_a_dangling_ref(tmp_path: Path) -> None:
    run = _run_schema_steps(
        tmp_path, "danglingref", '{"type": "object", "properties": {"n": {"$ref": "#/$defs/count"}}}'
    )
    assert "Traceback" not in run.output and "Unresolvable" not in run.output, run.output[-3000:]
    assert run.counts() == {"passed": 0, "failed": 2, "error": 0, "skipped": 0}, run.failures()
    assert 'ASSERT FAILED: The structuredContent of "dangling" breaks its output schema' in run.output
    assert "The schema's $ref #/$defs/nope points at nothing." in run.output
    assert "ASSERT FAILED: The result does not match the schema" in run.output
    assert "The schema's $ref #/$defs/count points at nothing." in run.output
