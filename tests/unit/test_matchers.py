"""Unit tests for mcp_bdd.matchers: paths, markers, comparison, schema, doc strings, helpers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bdd import matchers
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.matchers import (
    ABSENT,
    Mismatch,
    all_different,
    assert_matches,
    assert_schema,
    coerce_literal,
    compare,
    count_items,
    format_path,
    known_markers,
    matcher,
    parse_json_docstring,
    query,
    query_one,
    regex_search,
    text_contains,
    validate_schema,
)

DATA: dict[str, Any] = {
    "user": {"name": "Ada", "tags": ["a", "b"]},
    "items": [{"id": 1, "price": 5}, {"id": 2, "price": 7}],
    "a b": 3,
}
UUID = "123e4567-e89b-12d3-a456-426614174000"


@pytest.fixture(autouse=True)
def _isolated_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Custom markers registered by one test must not leak into the next."""
    monkeypatch.setattr(matchers, "_CUSTOM_MARKERS", {})
    yield


def test_module_is_pure() -> None:
    tree = ast.parse(Path(matchers.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert "behave" not in imported
    assert "mcp" not in imported


def test_public_api_is_declared() -> None:
    for name in matchers.__all__:
        assert hasattr(matchers, name), name


# --------------------------------------------------------------------------------------------------
# Paths and queries
# --------------------------------------------------------------------------------------------------


def test_format_path_uses_dots_for_identifiers_and_brackets_otherwise() -> None:
    assert format_path([]) == "$"
    assert format_path(["items", 2, "id"]) == "$.items[2].id"
    assert format_path(["a b", "it's", "_x1"]) == "$['a b']['it\\'s']._x1"
    assert format_path(["9lives"]) == "$['9lives']"


def test_formatted_paths_are_valid_queries() -> None:
    assert query(DATA, format_path(["a b"])) == [3]
    assert query({"it's": 1}, format_path(["it's"])) == [1]


def test_query_returns_every_selected_value() -> None:
    assert query(DATA, "$.items[*].id") == [1, 2]
    assert query(DATA, "$.items[?@.price > 6].id") == [2]
    assert query(DATA, "$.items[-1].price") == [7]
    assert query(DATA, "$.nothing") == []
    assert query(DATA, "$") == [DATA]


def test_query_on_scalars_does_not_reparse_strings() -> None:
    assert query('{"a": 1}', "$.a") == []
    assert query('{"a": 1}', "$") == ['{"a": 1}']
    assert query(8, "$") == [8]
    assert query(None, "$.x") == []


def test_query_is_strict_rfc9535() -> None:
    with pytest.raises(UsageError, match="unexpected token '\\|'"):
        query(DATA, "$.user | $.items")
    with pytest.raises(UsageError, match="leading whitespace"):
        query(DATA, " $.user")


def test_invalid_path_is_a_usage_error_with_caret_and_tip() -> None:
    with pytest.raises(UsageError) as info:
        query(DATA, "$.items[")
    text = str(info.value)
    assert text.startswith('Invalid JSONPath "$.items[": unexpected end of query')
    assert "    $.items[\n            ^" in text
    assert "$.items[0].id" in text


def test_path_without_root_suggests_the_root() -> None:
    with pytest.raises(UsageError) as info:
        query(DATA, "user.name")
    text = str(info.value)
    assert "    user.name\n    ^^^^" in text
    assert 'Start the path at the root: "$.user.name"' in text


def test_query_one_singular_returns_the_value() -> None:
    assert query_one(DATA, "$.user.name") == "Ada"
    assert query_one(DATA, "$.items[0]") == {"id": 1, "price": 5}
    assert query_one({"x": None}, "$.x") is None


def test_query_one_non_singular_always_returns_a_list() -> None:
    assert query_one(DATA, "$.items[*].id") == [1, 2]
    assert query_one(DATA, "$.items[?@.id == 2].price") == [7]


def test_query_one_missing_key_says_where_and_suggests() -> None:
    with pytest.raises(ExpectationFailed) as info:
        query_one(DATA, "$.user.nmae")
    err = info.value
    assert err.title == "Nothing at path $.user.nmae in the result"
    assert err.details is not None
    assert 'The object at $.user has no key "nmae". Did you mean "name"?' in err.details
    assert 'Available keys: "name", "tags"' in err.details


def test_query_one_top_level_typo_in_non_singular_path() -> None:
    with pytest.raises(ExpectationFailed) as info:
        query_one(DATA, "$.itemz[*].id")
    assert 'The object at $ has no key "itemz". Did you mean "items"?' in str(info.value)


def test_query_one_index_out_of_range_and_wrong_type() -> None:
    with pytest.raises(ExpectationFailed, match=r"The array at \$.items has 2 items; \[5\] is out of range"):
        query_one(DATA, "$.items[5]")
    with pytest.raises(ExpectationFailed, match=r'\$.user.name is a string, so it has no key "x"'):
        query_one(DATA, "$.user.name.x")
    with pytest.raises(ExpectationFailed, match=r"\$.user is an object, so it has no index \[0\]"):
        query_one(DATA, "$.user[0]")


def test_query_one_empty_non_singular() -> None:
    with pytest.raises(ExpectationFailed, match=r"has a value at \$.items, but the rest of the path"):
        query_one(DATA, "$.items[*].zz")
    assert query_one(DATA, "$.items[*].zz", allow_empty=True) == []
    with pytest.raises(ExpectationFailed):  # a singular path never answers "nothing"
        query_one(DATA, "$.zz", allow_empty=True)


def test_query_one_names_what_was_queried() -> None:
    with pytest.raises(ExpectationFailed, match=r"Nothing at path \$.x in the resource"):
        query_one({}, "$.x", what="resource")


# --------------------------------------------------------------------------------------------------
# Markers
# --------------------------------------------------------------------------------------------------

MARKER_CASES: list[tuple[str, Any, bool]] = [
    ("#string", "x", True),
    ("#string", "", True),
    ("#string", 1, False),
    ("#string", None, False),
    ("#number", 1, True),
    ("#number", 1.5, True),
    ("#number", True, False),
    ("#number", "1", False),
    ("#integer", 3, True),
    ("#integer", 2.0, True),
    ("#integer", 2.5, False),
    ("#integer", False, False),
    ("#boolean", False, True),
    ("#boolean", 0, False),
    ("#array", [], True),
    ("#array", {}, False),
    ("#object", {}, True),
    ("#object", [], False),
    ("#null", None, True),
    ("#null", 0, False),
    ("#notnull", 0, True),
    ("#notnull", None, False),
    ("#present", None, True),
    ("#ignore", {"any": 1}, True),
    ("#notpresent", None, False),
    ("#uuid", UUID, True),
    ("#uuid", UUID.upper(), True),
    ("#uuid", UUID[:-1], False),
    ("#uuid", 5, False),
    ("#datetime", "2024-05-01T12:30:00Z", True),
    ("#datetime", "2024-05-01t12:30:00.123456789z", True),
    ("#datetime", "2024-05-01T12:30:00+02:00", True),
    ("#datetime", "2024-05-01 12:30", True),
    ("#datetime", "2024-05-01T12:30:00", True),
    ("#datetime", "2024-02-30T12:30:00Z", False),
    ("#datetime", "2024-05-01", False),
    ("#datetime", "yesterday", False),
    ("#regex [A-Z]{3}-\\d+", "ABC-12", True),
    ("#regex [A-Z]{3}-\\d+", "xABC-12", False),
    ("#regex [A-Z]{3}-\\d+", "ABC-12x", False),
    ("#regex [A-Z]{3}-\\d+", 12, False),
    ("#regex a b", "a b", True),
    ("##string", None, True),
    ("##string", "x", True),
    ("##string", 1, False),
    ("##regex \\d+", None, True),
    ("##regex \\d+", "12", True),
    ("##regex \\d+", "x", False),
]


@pytest.mark.parametrize(("marker", "value", "ok"), MARKER_CASES)
def test_marker_against_present_value(marker: str, value: Any, ok: bool) -> None:
    assert (compare(marker, value, subset=False) == []) is ok
    assert (compare({"k": marker}, {"k": value}, subset=False) == []) is ok


ABSENCE_CASES: list[tuple[str, bool]] = [
    ("#string", False),
    ("#null", False),
    ("#notnull", False),
    ("#present", False),
    ("#uuid", False),
    ("#regex x", False),
    ("#ignore", True),
    ("#notpresent", True),
    ("##string", True),
    ("##null", True),
    ("##regex x", True),
]


@pytest.mark.parametrize(("marker", "ok"), ABSENCE_CASES)
def test_marker_against_missing_key(marker: str, ok: bool) -> None:
    for subset in (False, True):
        assert (compare({"k": marker}, {}, subset=subset) == []) is ok


def test_marker_failure_reasons() -> None:
    assert compare({"k": "#integer"}, {"k": "7"}, subset=False) == [
        Mismatch("$.k", "#integer", "7", "#integer: got a string")
    ]
    assert compare({"k": "#integer"}, {"k": 2.5}, subset=False)[0].reason == "#integer: not a whole number"
    assert compare({"k": "#uuid"}, {"k": "x"}, subset=False)[0].reason == "#uuid: not a UUID"
    assert compare({"k": "#datetime"}, {"k": "x"}, subset=False)[0].reason == ("#datetime: not an ISO 8601 date-time")
    assert compare({"k": "#regex a+"}, {"k": "ab"}, subset=False)[0].reason == (
        "#regex a+: the pattern does not match the whole string"
    )
    assert compare({"k": "#notnull"}, {"k": None}, subset=False)[0].reason == "#notnull: got null"
    assert compare({"k": "#null"}, {"k": []}, subset=False)[0].reason == "#null: got an array"
    assert compare({"k": "#notpresent"}, {"k": None}, subset=True) == [
        Mismatch("$.k", "#notpresent", None, "#notpresent: the key should be absent")
    ]


def test_missing_key_with_marker_suggests_optional_form() -> None:
    assert compare({"k": "#string"}, {}, subset=False) == [
        Mismatch("$.k", "#string", ABSENT, 'missing key; "#string" requires it, "##string" would not')
    ]
    assert compare({"k": "#present"}, {}, subset=False) == [Mismatch("$.k", "#present", ABSENT, "missing key")]


def test_notpresent_inside_arrays_is_never_satisfied() -> None:
    assert compare(["#notpresent"], [1], subset=False)[0].path == "$[0]"


def test_unknown_marker_is_a_usage_error_with_did_you_mean() -> None:
    with pytest.raises(UsageError) as info:
        compare({"a": "#strng"}, {"a": "x"}, subset=False)
    text = str(info.value)
    assert text.startswith('Unknown marker "#strng" in the expected JSON. Did you mean "#string"?')
    assert '"#uuid"' in text
    assert 'write "#regex #strng"' in text


def test_unknown_marker_is_found_even_where_comparison_stops() -> None:
    with pytest.raises(UsageError, match="#nmber"):
        compare({"a": {"b": "#nmber"}}, {"a": 1}, subset=False)
    with pytest.raises(UsageError, match="##nmber"):
        compare([["##nmber"]], [], subset=True)


@pytest.mark.parametrize("literal", ["#1", "# heading", "#Fff", "#", "#a-b", "###x", "#string "])
def test_strings_that_do_not_look_like_markers_are_literal(literal: str) -> None:
    assert compare({"k": literal}, {"k": literal}, subset=False) == []
    assert compare({"k": literal}, {"k": "other"}, subset=False)[0].reason == "different value"


def test_regex_marker_matches_a_marker_looking_literal() -> None:
    assert compare("#regex #fff", "#fff", subset=False) == []


def test_regex_marker_needs_a_valid_pattern() -> None:
    with pytest.raises(UsageError, match="needs a pattern after one space"):
        compare("#regex", "x", subset=False)
    with pytest.raises(UsageError, match=r'Invalid regular expression "\(a" at position 0: missing \), unterminated'):
        compare("#regex (a", "x", subset=False)


def test_custom_matcher_registration_and_use() -> None:
    @matcher("#even")
    def even(value: Any) -> bool:
        return isinstance(value, int) and value % 2 == 0

    assert even(2) is True  # the decorator returns the function unchanged
    assert "#even" in known_markers()
    assert compare({"n": "#even"}, {"n": 4}, subset=False) == []
    assert compare({"n": "#even"}, {"n": 3}, subset=False) == [
        Mismatch("$.n", "#even", 3, "#even: the matcher returned false")
    ]
    assert compare({"n": "##even"}, {}, subset=False) == []
    assert compare({"n": "##even"}, {"n": None}, subset=False) == []
    assert compare({"n": "#even"}, {}, subset=False)[0].reason.startswith("missing key")


def test_custom_matcher_without_hash_and_call_form() -> None:
    matcher("short_code")(lambda v: isinstance(v, str) and len(v) == 3)
    assert compare("#short_code", "abc", subset=False) == []
    assert compare("#short_code", "abcd", subset=False)[0].reason == "#short_code: the matcher returned false"


def test_custom_matcher_that_raises_is_a_mismatch() -> None:
    matcher("#odd")(lambda v: v % 2 == 1)
    [mismatch] = compare({"n": "#odd"}, {"n": "x"}, subset=False)
    assert mismatch.reason.startswith("#odd: the matcher raised TypeError: not all arguments converted")


@pytest.mark.parametrize("name", ["#Even", "#", "##even", "#even-ish", "even number", "#1st"])
def test_custom_matcher_names_are_checked(name: str) -> None:
    with pytest.raises(UsageError, match='a marker is "#" followed by a lower-case word'):
        matcher(name)


def test_builtin_markers_cannot_be_replaced() -> None:
    with pytest.raises(UsageError, match='"#string": it is a built-in marker'):
        matcher("#string")


def test_known_markers_lists_builtins() -> None:
    markers = known_markers()
    for name in ("#string", "#integer", "#notpresent", "#uuid", "#datetime", "#regex", "#ignore"):
        assert name in markers


# --------------------------------------------------------------------------------------------------
# Whole match
# --------------------------------------------------------------------------------------------------


def test_equal_values_have_no_mismatches() -> None:
    assert compare(DATA, DATA, subset=False) == []
    assert compare({"a": 1}, {"a": 1.0}, subset=False) == []
    assert compare([], [], subset=False) == []


def test_booleans_are_not_numbers() -> None:
    assert compare(1, True, subset=False) == [Mismatch("$", 1, True, "expected a number, got a boolean")]
    assert compare(False, 0, subset=False) == [Mismatch("$", False, 0, "expected a boolean, got a number")]


def test_whole_match_collects_every_mismatch_with_exact_paths() -> None:
    expected = {"user": {"name": "Bob", "age": 3}, "items": [{"id": 1}, {"id": "#string"}], "ok": True}
    actual = {"user": {"name": "Ada", "tags": []}, "items": [{"id": 1}, {"id": 2}], "ok": None, "x": 1}
    assert compare(expected, actual, subset=False) == [
        Mismatch("$.user.name", "Bob", "Ada", "different value"),
        Mismatch("$.user.age", 3, ABSENT, "missing key"),
        Mismatch("$.user.tags", ABSENT, [], "unexpected key"),
        Mismatch("$.items[1].id", "#string", 2, "#string: got a number"),
        Mismatch("$.ok", True, None, "expected a boolean, got null"),
        Mismatch("$.x", ABSENT, 1, "unexpected key"),
    ]


def test_paths_quote_awkward_keys() -> None:
    assert compare({"a b": {"it's": 1}}, {"a b": {"it's": 2}}, subset=False)[0].path == "$['a b']['it\\'s']"


def test_type_mismatch_does_not_descend() -> None:
    assert compare({"a": {"b": 1}}, {"a": [1]}, subset=False) == [
        Mismatch("$.a", {"b": 1}, [1], "expected an object, got an array")
    ]


def test_whole_match_arrays_extra_and_missing_items() -> None:
    assert compare([1, 2], [1, 2, 3, 4], subset=False) == [
        Mismatch("$[2]", ABSENT, 3, "unexpected item (expected 2 items, got 4)"),
        Mismatch("$[3]", ABSENT, 4, "unexpected item (expected 2 items, got 4)"),
    ]
    assert compare({"a": [1, 9, 3]}, {"a": [1, 2]}, subset=False) == [
        Mismatch("$.a[1]", 9, 2, "different value"),
        Mismatch("$.a[2]", 3, ABSENT, "missing item (expected 3 items, got 2)"),
    ]


def test_whole_match_reports_reordering_once() -> None:
    assert compare({"a": [{"id": 1}, {"id": 2}]}, {"a": [{"id": 2}, {"id": 1}]}, subset=False) == [
        Mismatch("$.a", [{"id": 1}, {"id": 2}], [{"id": 2}, {"id": 1}], "same items in a different order")
    ]


def test_whole_match_objects_inside_arrays_must_not_have_extra_keys() -> None:
    assert compare([{"a": 1}], [{"a": 1, "b": 2}], subset=False) == [Mismatch("$[0].b", ABSENT, 2, "unexpected key")]


# --------------------------------------------------------------------------------------------------
# Subset match
# --------------------------------------------------------------------------------------------------


def test_subset_allows_extra_keys_at_every_depth() -> None:
    assert compare({"user": {"name": "Ada"}}, DATA, subset=True) == []
    assert compare({"items": [{"id": 2}]}, DATA, subset=True) == []


def test_subset_still_requires_expected_keys_and_values() -> None:
    assert compare({"user": {"name": "Bob", "age": 1}}, DATA, subset=True) == [
        Mismatch("$.user.name", "Bob", "Ada", "different value"),
        Mismatch("$.user.age", 1, ABSENT, "missing key"),
    ]


def test_subset_arrays_are_order_free() -> None:
    assert compare([3, 1], [1, 2, 3], subset=True) == []
    assert compare([], [1], subset=True) == []


def test_subset_arrays_match_one_to_one() -> None:
    assert compare(["#number", 1], [1, 2], subset=True) == []  # needs backtracking, not greedy
    assert compare([1, 1], [1, 2], subset=True) == [
        Mismatch(
            "$",
            1,
            [1, 2],
            "no item left for expected item [1]: it matches only $[0], which other expected items already use",
        )
    ]


def test_subset_array_reports_the_closest_item() -> None:
    expected = {"items": [{"id": 2, "price": 8, "name": "x"}]}
    assert compare(expected, DATA, subset=True) == [
        Mismatch(
            "$.items",
            {"id": 2, "price": 8, "name": "x"},
            {"id": 2, "price": 7},
            "no item matches expected item [0]; the closest, $.items[1], differs at $.items[1].price "
            "(different value) and 1 more",
        )
    ]


def test_subset_against_an_empty_array() -> None:
    assert compare({"a": [1]}, {"a": []}, subset=True) == [
        Mismatch("$.a", 1, [], "no item matches expected item [0]: the array is empty")
    ]


def test_subset_scalars_and_types() -> None:
    assert compare({"a": "x"}, {"a": ["x"]}, subset=True) == [
        Mismatch("$.a", "x", ["x"], "expected a string, got an array")
    ]


# --------------------------------------------------------------------------------------------------
# assert_matches
# --------------------------------------------------------------------------------------------------


def test_assert_matches_passes_silently() -> None:
    assert_matches({"id": "#uuid"}, {"id": UUID}, subset=False)
    assert_matches({"id": 1}, {"id": 1, "x": 2}, subset=True)


def test_assert_matches_failure_reads_like_a_bug_report() -> None:
    with pytest.raises(ExpectationFailed) as info:
        assert_matches({"a": 1, "b": 2}, {"a": 2, "c": 3, "b": 2}, subset=False, exchange="→ tools/call")
    err = info.value
    assert isinstance(err, AssertionError)
    assert err.title == "The result does not match (2 differences)"
    assert err.path is None
    text = str(err)
    assert "    1. $.a: different value\n         expected: 1\n         actual:   2" in text
    assert "    2. $.c: unexpected key\n         expected: (absent)\n         actual:   3" in text
    assert '  Expected (in full):\n    {\n      "a": 1,' in text
    assert "  Actual (in full):" in text
    assert "  The call that produced the value:\n    → tools/call" in text
    assert err.tip is not None
    assert 'use "Then the result contains:" instead of "Then the result is:"' in err.tip


def test_assert_matches_subset_title_single_difference_and_path() -> None:
    with pytest.raises(ExpectationFailed) as info:
        assert_matches({"a": 1}, {"a": 2}, subset=True, what="prompt result")
    err = info.value
    assert err.title == "The prompt result does not contain what was expected (1 difference)"
    assert err.path == "$.a"
    assert err.tip is not None
    assert "#regex <pattern>" in err.tip


def test_assert_matches_tips() -> None:
    with pytest.raises(ExpectationFailed) as info:
        assert_matches({"id": "abc"}, {"id": UUID}, subset=True)
    assert info.value.tip is not None
    assert '"#uuid", "#datetime" or "#ignore"' in info.value.tip
    with pytest.raises(ExpectationFailed) as info:
        assert_matches([1, 2], [2, 1], subset=False)
    assert info.value.tip is not None
    assert "ignores the order" in info.value.tip
    with pytest.raises(ExpectationFailed) as info:
        assert_matches({"k": "#string"}, {}, subset=False)
    assert info.value.tip is not None
    assert '"##string"' in info.value.tip


def test_assert_matches_caps_the_listing() -> None:
    with pytest.raises(ExpectationFailed) as info:
        assert_matches(list(range(40)), list(range(100, 140)), subset=False)
    assert info.value.title == "The result does not match (40 differences)"
    assert "    … and 10 more" in str(info.value)


# --------------------------------------------------------------------------------------------------
# JSON Schema
# --------------------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["id", "tags"],
    "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
}


def test_validate_schema_passes() -> None:
    assert validate_schema({"id": 1, "tags": ["a"]}, SCHEMA) == []
    assert validate_schema(5, True) == []


def test_validate_schema_lists_every_error_with_jsonpath() -> None:
    assert validate_schema({"id": "1", "tags": ["a", 2]}, SCHEMA) == [
        Mismatch("$.id", {"type": "integer"}, "1", "'1' is not of type 'integer'"),
        Mismatch("$.tags[1]", {"type": "string"}, 2, "2 is not of type 'string'"),
    ]
    assert validate_schema({}, SCHEMA) == [
        Mismatch("$", {"required": ["id", "tags"]}, {}, "'id' is a required property"),
        Mismatch("$", {"required": ["id", "tags"]}, {}, "'tags' is a required property"),
    ]


def test_validate_schema_defaults_to_2020_12_and_honours_dollar_schema() -> None:
    tuple_schema = {"prefixItems": [{"type": "integer"}], "items": False}
    assert [m.reason for m in validate_schema([1, 2], tuple_schema)] == ["Expected at most 1 item but found 1 extra: 2"]
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}]}
    assert validate_schema(["x"], draft7)[0].path == "$[0]"


def test_validate_schema_checks_formats() -> None:
    schema = {"properties": {"when": {"type": "string", "format": "date"}}}
    assert validate_schema({"when": "2024-02-30"}, schema)[0].reason == "'2024-02-30' is not a 'date'"


def test_invalid_schema_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as info:
        validate_schema({}, {"properties": {"a": {"type": "integr"}}})
    text = str(info.value)
    assert text.startswith("The schema for the result is not a valid JSON Schema:")
    assert "(at $.properties.a.type in the schema)" in text
    with pytest.raises(UsageError, match="must be a JSON object"):
        validate_schema({}, [1])
    with pytest.raises(UsageError, match='unknown dialect in "\\$schema"'):
        validate_schema({}, {"$schema": "https://example.com/nope"})


def test_assert_schema_lists_errors() -> None:
    assert_schema({"id": 1, "tags": []}, SCHEMA, title="unused")
    with pytest.raises(ExpectationFailed) as info:
        assert_schema({"id": "1", "tags": [2]}, SCHEMA, title="The result does not match the schema", exchange="x")
    err = info.value
    assert err.title == "The result does not match the schema"
    text = str(err)
    assert "  2 schema errors:\n    1. $.id: '1' is not of type 'integer'" in text
    assert '         expected: {"type": "integer"}' in text
    assert "    2. $.tags[0]: 2 is not of type 'string'" in text
    assert "  The result (in full):" in text


# --------------------------------------------------------------------------------------------------
# Doc strings and literals
# --------------------------------------------------------------------------------------------------


def test_parse_json_docstring_ok() -> None:
    assert parse_json_docstring('{\n  "a": [1, 2.5, null, true]\n}') == {"a": [1, 2.5, None, True]}


def test_parse_json_docstring_points_at_line_and_column() -> None:
    text = '{\n  "a": 1\n  "b": 2\n}'
    with pytest.raises(UsageError) as info:
        parse_json_docstring(text, where="features/shop.feature:12")
    message = str(info.value)
    assert message.startswith(
        "Malformed JSON in the doc string at line 3, column 3: Expecting ',' delimiter\n"
        "  Step: features/shop.feature:12\n"
    )
    assert '       2 |   "a": 1\n       3 |   "b": 2\n         |   ^\n' in message
    assert "count from the first line of the doc string" in message


def test_parse_json_docstring_tips() -> None:
    with pytest.raises(UsageError, match="need double quotes, not single quotes"):
        parse_json_docstring("{'a': 1}")
    with pytest.raises(UsageError, match="no comma before"):
        parse_json_docstring('{"a": 1,}')
    with pytest.raises(UsageError, match="true, false and null in lower case"):
        parse_json_docstring('{"a": True}')
    with pytest.raises(UsageError, match="more than one JSON value"):
        parse_json_docstring("{} {}")


def test_parse_json_docstring_rejects_duplicates_empty_and_nan() -> None:
    with pytest.raises(UsageError, match='the key "a" appears twice'):
        parse_json_docstring('{"a": 1, "a": 2}')
    with pytest.raises(UsageError, match="The doc string is empty"):
        parse_json_docstring("  \n ", where="x.feature:3")
    with pytest.raises(UsageError, match="NaN is not valid JSON"):
        parse_json_docstring('{"a": NaN}')


@pytest.mark.parametrize(
    ("text", "value"),
    [("8", 8), (" 2.5 ", 2.5), ("true", True), ("null", None), ("[1, 2]", [1, 2]), ('"x"', "x"), ("{}", {})],
)
def test_coerce_literal(text: str, value: Any) -> None:
    result = coerce_literal(text)
    assert result == value
    assert type(result) is type(value)


def test_coerce_literal_suggests_quoting() -> None:
    with pytest.raises(UsageError) as info:
        coerce_literal("Alice")
    text = str(info.value)
    assert text.startswith("Cannot read 'Alice' as a JSON literal")
    assert 'Then the result at "$.name" is "Alice"' in text


# --------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------


def test_text_contains() -> None:
    assert text_contains("Hello World", "World")
    assert not text_contains("Hello World", "world")
    assert text_contains("Hello World", "WORLD", case_insensitive=True)
    assert text_contains("STRASSE", "straße", case_insensitive=True)


def test_regex_search() -> None:
    match = regex_search(r"id=(\d+)", "order id=42 ok")
    assert match is not None
    assert match.group(1) == "42"
    assert regex_search("^ok", "not ok") is None


def test_regex_search_invalid_pattern() -> None:
    with pytest.raises(UsageError) as info:
        regex_search("a[b", "x")
    text = str(info.value)
    assert text.startswith('Invalid regular expression "a[b" at position 1: unterminated character set')
    assert "    a[b\n     ^" in text


def test_all_different() -> None:
    assert all_different([1, 2, 3]) == []
    assert all_different([1, 2, 1, 3, 2, 1]) == [1, 2]
    assert all_different([1, 1.0]) == [1]
    assert all_different([1, True]) == []
    assert all_different([{"a": 1, "b": 2}, {"b": 2, "a": 1}, [1]]) == [{"a": 1, "b": 2}]
    assert all_different(["1", 1]) == []


def test_count_items() -> None:
    assert count_items([1, 2, 3]) == 3
    assert count_items({"a": 1}) == 1
    assert count_items("abcd") == 4
    assert count_items([]) == 0


def test_count_items_of_a_scalar_fails_naming_its_type() -> None:
    with pytest.raises(ExpectationFailed) as info:
        count_items(8, path="$.total")
    err = info.value
    assert err.title == "The result at $.total is a number, which has no items"
    assert err.actual == 8
    with pytest.raises(ExpectationFailed, match="The result is null, which has no items"):
        count_items(None)
