from __future__ import annotations

import pytest

from mcp_bdd.errors import UsageError
from mcp_bdd.session import coerce_elicitation, coerce_value


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("2", {"type": "integer"}, 2),
        ("2.5", {"type": "number"}, 2.5),
        ("3", {"type": "number"}, 3),
        ("true", {"type": "boolean"}, True),
        ("no", {"type": "boolean"}, False),
        ("null", {"type": ["string", "null"]}, None),
        ("null", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
        ("[1, 2]", {"type": "array"}, [1, 2]),
        ("a, b", {"type": "array", "items": {"type": "string"}}, ["a", "b"]),
        ('{"k": 1}', {"type": "object"}, {"k": 1}),
        ("007", {"type": "string"}, "007"),
        ("x", {}, "x"),
        ("5", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 5),
    ],
)
def test_cells_are_coerced_by_schema(text: str, schema: dict[str, object], expected: object) -> None:
    assert coerce_value(text, schema, field_name="f") == expected


@pytest.mark.parametrize(
    "schema",
    [True, False, {"type": 42}, {"type": {"oops": 1}}, {"type": "oops"}, {"anyOf": 7}, {"anyOf": [True, {"type": 1}]}],
    ids=["true", "false", "type-42", "type-object", "type-unknown", "anyOf-7", "anyOf-junk"],
)
def test_a_schema_the_server_got_wrong_or_left_open_keeps_the_cell_as_text(schema: object) -> None:
    """A server's schema is not trusted. A boolean schema (valid JSON Schema: `true` allows anything)
    crashed the step with an AttributeError traceback, `"type": 42` with a TypeError, and `"type":
    {"oops": 1}` told the feature's author to write "a value of that type". A schema that names no
    JSON type keeps the cell as text, and the server decides."""
    assert coerce_value("5", schema, field_name="f") == "5"


def test_an_array_whose_items_schema_is_not_an_object_is_still_read_as_json_or_text() -> None:
    assert coerce_value("[1]", {"type": "array", "items": True}, field_name="f") == [1]
    with pytest.raises(UsageError):
        coerce_value("a, b", {"type": "array", "items": 3}, field_name="f")


def test_a_cell_that_does_not_fit_names_field_and_type() -> None:
    with pytest.raises(UsageError) as err:
        coerce_value("lots", {"type": "integer", "description": "How many"}, field_name="quantity")
    assert 'The argument "quantity" expects integer (How many)' in str(err.value)


def test_elicitation_answers_are_checked_against_the_requested_schema() -> None:
    schema = {
        "properties": {"confirm": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["confirm"],
    }
    assert coerce_elicitation({"confirm": "true", "reason": "ok"}, schema) == {
        "confirm": True,
        "reason": "ok",
    }
    with pytest.raises(UsageError, match='elicitation field "confirm" expects boolean'):
        coerce_elicitation({"confirm": "maybe"}, schema)
    with pytest.raises(UsageError, match="requires \\['confirm'\\]"):
        coerce_elicitation({"reason": "x"}, schema)
    with pytest.raises(UsageError, match='Did you mean "reason"'):
        coerce_elicitation({"confirm": "yes", "reasn": "x"}, schema)
