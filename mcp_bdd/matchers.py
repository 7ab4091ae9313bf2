"""Matching JSON values: JSONPath queries, fuzzy markers, whole/subset comparison, JSON Schema.

This module is pure (no behave, no MCP): steps hand it plain JSON-like values and it either
answers (`query`, `compare`, `validate_schema`) or raises an `ExpectationFailed` that reads like a
bug report. Failures collect *every* difference before raising (tavern style), because fixing one
mismatch per test run is slow.

Fuzzy markers (Karate style) are whole string values in the *expected* JSON:

    #string #number #integer #boolean #array #object   the value has that JSON type
    #null        present and null            #notnull     present and not null
    #present     present, any value (null too)
    #notpresent  the key is absent           #ignore      anything, or absent
    #uuid        a string holding a UUID (8-4-4-4-12 hex digits, any case)
    #datetime    a string holding an ISO 8601 / RFC 3339 date-time ("2024-05-01T12:30:00Z";
                 seconds, fraction and UTC offset are optional, the separator is T, t or a space)
    #regex <p>   a string that the Python regex <p> matches *in full* (all text after "#regex ")
    ##<marker>   optional: absent, null, or matching <marker> (e.g. "##string", "##regex \\d+")

Numbers: a boolean is never a number; `#integer` accepts an integer-valued float (2.0), as JSON
has a single number type; `1` equals `1.0`. Absence only means something for object keys: inside
an array or at the top level a value is always present.

Custom markers come from `@matcher("#even")`. A string that *looks* like a marker (`#` or `##`
followed by a lower-case word: `[a-z][a-z0-9_]*`) but names no known marker is a usage error with
a did-you-mean, because a typo such as "#strng" must not silently become a literal. Any other
string starting with `#` ("#1", "# heading", "#Fff") is literal text. To compare a marker-looking
literal such as "#fff", write "#regex #fff".
"""

from __future__ import annotations

import enum
import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn, TypeVar, cast

import jsonpath

# jsonschema ships no type information; the ignore stays quiet if types-jsonschema is installed.
import jsonschema  # type: ignore[import-untyped, unused-ignore]
import jsonschema.exceptions  # type: ignore[import-untyped, unused-ignore]
import jsonschema.validators  # type: ignore[import-untyped, unused-ignore]
from jsonpath.segments import JSONPathRecursiveDescentSegment
from jsonpath.selectors import IndexSelector, NameSelector
from jsonpath.token import TOKEN_EOF

from mcp_bdd._schema import SchemaUnusable, guarded
from mcp_bdd._text import did_you_mean, pretty
from mcp_bdd.errors import ExpectationFailed, JsonDiff, UsageError

__all__ = [
    "ABSENT",
    "Mismatch",
    "all_different",
    "assert_matches",
    "assert_schema",
    "coerce_literal",
    "compare",
    "count_items",
    "format_path",
    "known_markers",
    "matcher",
    "parse_json_docstring",
    "query",
    "query_one",
    "regex_search",
    "text_contains",
    "validate_schema",
]


class _Absent(enum.Enum):
    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent.ABSENT
"""Stands for "no value here" in a `Mismatch`: a missing key (actual) or an unexpected one (expected)."""


@dataclass(frozen=True)
class Mismatch:
    """One difference between an expected and an actual value.

    `path` is a JSONPath into the actual value (`$.items[2].id`) that can be pasted into
    `Then the result at "<path>" ...`; `expected`/`actual` may be `ABSENT`.
    """

    path: str
    expected: object
    actual: object
    reason: str


# --------------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSONPATH_ENV = jsonpath.JSONPathEnvironment(strict=True)
_JSONPATH_TIP = (
    "JSONPath (RFC 9535) starts at the root $, for example $.items[0].id, $.items[*].name, "
    "$.items[-1], $['key with spaces'] or $.items[?@.price > 5]."
)


def format_path(parts: Iterable[str | int], root: str = "$") -> str:
    """Render keys and indexes as a JSONPath (`$.items[2].id`, `$['a b']`) that `query` accepts."""
    path = root
    for part in parts:
        path = _child(path, part)
    return path


def _child(path: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{path}[{part}]"
    if _IDENTIFIER.fullmatch(part):
        return f"{path}.{part}"
    escaped = part.replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{escaped}']"


@functools.lru_cache(maxsize=256)
def _compile_path(path: str) -> jsonpath.JSONPath | jsonpath.CompoundJSONPath:
    try:
        return _JSONPATH_ENV.compile(path)
    except jsonpath.JSONPathError as exc:
        lines = [f'Invalid JSONPath "{path}": {exc.message}']
        if exc.token is not None and "\n" not in path:
            at_end = exc.token.kind == TOKEN_EOF
            column = len(path) if at_end else min(max(exc.token.index, 0), len(path))
            lines += [f"    {path}", "    " + " " * column + "^" * max(len(exc.token.value), 1)]
        tip = _JSONPATH_TIP
        if not path.startswith("$"):
            tip = f'Start the path at the root: "$.{path.lstrip(".")}". ' + tip
        lines.append(f"  Tip: {tip}")
        raise UsageError("\n".join(lines)) from None


def query(data: object, path: str) -> list[object]:
    """All values that the RFC 9535 JSONPath `path` selects in `data` (possibly none).

    python-jsonpath runs in its strict (RFC 9535) mode so paths mean the same as in any other
    compliant tool. A string `data` is a JSON string value, never re-parsed as a JSON document
    (python-jsonpath would otherwise parse it), so only `$` selects anything in a scalar.
    """
    compiled = _compile_path(path)
    if isinstance(data, Mapping | Sequence) and not isinstance(data, str):
        return list(compiled.findall(data))
    # a scalar: only the root path selects it
    return [data] if isinstance(compiled, jsonpath.JSONPath) and compiled.empty() else []


def query_one(data: object, path: str, *, what: str = "result", allow_empty: bool = False) -> object:
    """The value at `path`, for `Then the result at "<path>" ...` steps.

    A *singular* path (only names and indexes: `$.a.b[0]`) returns the single value it selects.
    Any other path (wildcards, slices, filters, `..`) returns the list of values it selects, even
    when that list has one element, so the shape of the answer depends only on the path.
    Selecting nothing fails with a did-you-mean naming the keys found where the path broke off;
    `allow_empty` lets a non-singular path select nothing and return `[]` (for "has 0 items").
    """
    compiled = _compile_path(path)
    found = query(data, path)
    singular = isinstance(compiled, jsonpath.JSONPath) and compiled.singular_query()
    if singular and found:
        return found[0]
    if not singular and (found or allow_empty):
        return found
    raise ExpectationFailed(
        f"Nothing at path {path} in the {what}",
        details=_explain_nothing(data, compiled, what) + f"\n  The {what} (in full):\n" + _indent(pretty(data)),
        tip="Paths are JSONPath (RFC 9535): names and indexes start at the root $, e.g. $.items[0].id.",
    )


def _explain_nothing(data: object, compiled: jsonpath.JSONPath | jsonpath.CompoundJSONPath, what: str) -> str:
    """Walk the leading names/indexes of the path to say where it stopped matching and why."""
    current, here = data, "$"
    segments = compiled.segments if isinstance(compiled, jsonpath.JSONPath) else ()
    for segment in segments:
        if len(segment.selectors) != 1 or isinstance(segment, JSONPathRecursiveDescentSegment):
            break
        selector = segment.selectors[0]
        if isinstance(selector, NameSelector):
            if not isinstance(current, Mapping):
                return f'  {here} is {_a(_kind(current))}, so it has no key "{selector.name}".'
            if selector.name not in current:
                keys = [str(k) for k in current]
                return f'  The object at {here} has no key "{selector.name}". ' + did_you_mean(
                    selector.name, keys, "key"
                )
            current, here = current[selector.name], _child(here, selector.name)
        elif isinstance(selector, IndexSelector):
            if not isinstance(current, list):
                return f"  {here} is {_a(_kind(current))}, so it has no index [{selector.index}]."
            if not -len(current) <= selector.index < len(current):
                return f"  The array at {here} has {_items(len(current))}; [{selector.index}] is out of range."
            current, here = current[selector.index], _child(here, selector.index)
        else:
            break
    names = ", ".join(f'"{k}"' for k in current) if isinstance(current, Mapping) else ""
    listing = f" Keys there: {names}." if names else ""
    return f"  The {what} has a value at {here}, but the rest of the path selects nothing.{listing}"


# --------------------------------------------------------------------------------------------------
# Markers
# --------------------------------------------------------------------------------------------------

#: a custom marker's test: the user's function may take a narrower type than any JSON value
MatcherFn = Callable[[Any], bool]
_F = TypeVar("_F", bound=MatcherFn)
_V = TypeVar("_V")

_MARKER_NAME = re.compile(r"[a-z][a-z0-9_]*")
_MARKER_SHAPE = re.compile(r"(##?)([a-z][a-z0-9_]*)")
_BUILTIN_MARKERS = (
    *("string", "number", "integer", "boolean", "array", "object", "null", "notnull"),
    *("present", "notpresent", "ignore", "uuid", "datetime", "regex"),
)
_CUSTOM_MARKERS: dict[str, MatcherFn] = {}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?")


def matcher(name: str) -> Callable[[_F], _F]:
    """Register a custom fuzzy marker: `@matcher("#even")` over `fn(value) -> bool`.

    The function sees the actual value only when it is present (a missing key fails unless the
    marker is written optional, `##even`). A function that raises counts as a mismatch whose
    reason names the exception, so one odd value does not hide the other differences.
    Registering the same name again replaces the earlier function (re-imported step modules).
    """
    bare = name[1:] if name.startswith("#") and not name.startswith("##") else name
    if not _MARKER_NAME.fullmatch(bare):
        raise UsageError(
            f'Cannot register the marker "{name}": a marker is "#" followed by a lower-case word '
            '(letters, digits, "_"), e.g. "#even".'
        )
    if bare in _BUILTIN_MARKERS:
        raise UsageError(f'Cannot register the marker "#{bare}": it is a built-in marker.')

    def register(fn: _F) -> _F:
        _CUSTOM_MARKERS[bare] = fn
        return fn

    return register


def known_markers() -> list[str]:
    """Every marker usable in expected JSON, built-in then custom (`#regex` takes a pattern)."""
    return [f"#{name}" for name in (*_BUILTIN_MARKERS, *sorted(_CUSTOM_MARKERS))]


@dataclass(frozen=True)
class _Marker:
    text: str
    name: str
    optional: bool
    pattern: re.Pattern[str] | None = None


def _parse_marker(value: str) -> _Marker | None:
    """The marker a string of expected JSON stands for, or None when it is literal text."""
    if not value.startswith("#"):
        return None
    for prefix in ("##regex ", "#regex "):
        if value.startswith(prefix):
            return _Marker(value, "regex", prefix == "##regex ", _compile_regex(value[len(prefix) :]))
    shape = _MARKER_SHAPE.fullmatch(value)
    if shape is None:
        return None
    name = shape.group(2)
    if name == "regex":
        raise UsageError(
            f'The marker "{value}" needs a pattern after one space: "#regex [A-Z]{{3}}-\\d+" '
            "(the pattern must match the whole string)."
        )
    if name not in _BUILTIN_MARKERS and name not in _CUSTOM_MARKERS:
        raise UsageError(
            f'Unknown marker "{value}" in the expected JSON. '
            + did_you_mean(f"#{name}", known_markers(), "marker")
            + f'\n  Tip: to compare the literal text "{value}", write "#regex {value}"; '
            'register your own markers with @mcp_bdd.matcher("#name").'
        )
    return _Marker(value, name, shape.group(1) == "##")


def _check_markers(expected: object) -> None:
    """Reject unknown markers anywhere in `expected`, even in parts the comparison never reaches."""
    if isinstance(expected, str):
        _parse_marker(expected)
    elif isinstance(expected, Mapping):
        for value in expected.values():
            _check_markers(value)
    elif isinstance(expected, list | tuple):
        for value in expected:
            _check_markers(value)


def _is_datetime(value: str) -> bool:
    if not _DATETIME.fullmatch(value):
        return False
    text = value[:10] + "T" + value[11:]
    text = text[:-1] + "Z" if text.endswith("z") else text
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _marker_problem(marker: _Marker, value: object) -> str | None:
    """Why a *present* value fails `marker`, or None when it passes."""
    name, kind = marker.name, _kind(value)
    if marker.optional and value is None:
        return None
    problem: str | None = None
    if name in ("ignore", "present"):
        return None
    if name == "notpresent":
        return f"{marker.text}: the key should be absent"
    type_markers = {"string": "string", "boolean": "boolean", "array": "array", "object": "object"}
    if name in type_markers:
        problem = None if kind == type_markers[name] else f"got {_a(kind)}"
    elif name == "number":
        problem = None if kind == "number" else f"got {_a(kind)}"
    elif name == "integer":
        integral = kind == "number" and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
        problem = None if integral else ("not a whole number" if kind == "number" else f"got {_a(kind)}")
    elif name == "null":
        problem = None if value is None else f"got {_a(kind)}"
    elif name == "notnull":
        problem = "got null" if value is None else None
    elif name in ("uuid", "datetime", "regex"):
        if not isinstance(value, str):
            problem = f"got {_a(kind)}"
        elif name == "uuid":
            problem = None if _UUID.fullmatch(value) else "not a UUID"
        elif name == "datetime":
            problem = None if _is_datetime(value) else "not an ISO 8601 date-time"
        else:
            assert marker.pattern is not None
            problem = None if marker.pattern.fullmatch(value) else "the pattern does not match the whole string"
    else:
        try:
            ok = bool(_CUSTOM_MARKERS[name](value))
        except Exception as exc:  # a user's matcher crashing on an odd value is a mismatch, not a crash
            problem = f"the matcher raised {type(exc).__name__}: {exc}"
        else:
            problem = None if ok else "the matcher returned false"
    return None if problem is None else f"{marker.text}: {problem}"


def _absence_allowed(marker: _Marker) -> bool:
    return marker.optional or marker.name in ("ignore", "notpresent")


# --------------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------------


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _a(kind: str) -> str:
    if kind == "null":
        return "null"
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def compare(expected: object, actual: object, *, subset: bool) -> list[Mismatch]:
    """Every difference between `expected` (may hold fuzzy markers) and `actual`, in document order.

    Whole match (`subset=False`, "Then the result is:"): objects have exactly the same keys (a key
    may be missing only when its marker allows absence), arrays the same items in the same order.
    When an array holds the same items in another order that is reported once, at the array.

    Subset match (`subset=True`, "Then the result contains:"), at every depth: objects may have
    extra keys, and an expected array is satisfied when each of its items matches a *different*
    item of the actual array, in any order (so `[1, 1]` needs two 1s); extra actual items are fine.

    Raises UsageError for an unknown marker anywhere in `expected`.
    """
    _check_markers(expected)
    out: list[Mismatch] = []
    _compare(expected, actual, "$", subset, out)
    return out


def _compare(expected: object, actual: object, path: str, subset: bool, out: list[Mismatch]) -> None:
    if isinstance(expected, str):
        marker = _parse_marker(expected)
        if marker is not None:
            problem = _marker_problem(marker, actual)
            if problem is not None:
                out.append(Mismatch(path, expected, actual, problem))
            return
    kind, actual_kind = _kind(expected), _kind(actual)
    if kind != actual_kind:
        out.append(Mismatch(path, expected, actual, f"expected {_a(kind)}, got {_a(actual_kind)}"))
    elif isinstance(expected, Mapping) and isinstance(actual, Mapping):  # both of kind "object"
        _compare_objects(expected, actual, path, subset, out)
    elif isinstance(expected, list | tuple) and isinstance(actual, list | tuple):  # both of kind "array"
        if subset:
            _compare_arrays_subset(list(expected), list(actual), path, out)
        else:
            _compare_arrays_whole(list(expected), list(actual), path, out)
    elif expected != actual:
        out.append(Mismatch(path, expected, actual, "different value"))


def _compare_objects(
    expected: Mapping[str, object], actual: Mapping[str, object], path: str, subset: bool, out: list[Mismatch]
) -> None:
    for key, value in expected.items():
        here = _child(path, key)
        if key in actual:
            _compare(value, actual[key], here, subset, out)
            continue
        marker = _parse_marker(value) if isinstance(value, str) else None
        if marker is None:
            out.append(Mismatch(here, value, ABSENT, "missing key"))
        elif not _absence_allowed(marker):
            bare = marker.text.lstrip("#")
            hint = "" if marker.name == "present" else f'; "#{bare}" requires it, "##{bare}" would not'
            out.append(Mismatch(here, value, ABSENT, f"missing key{hint}"))
    if not subset:
        for key, value in actual.items():
            if key not in expected:
                out.append(Mismatch(_child(path, key), ABSENT, value, "unexpected key"))


def _compare_arrays_whole(expected: list[object], actual: list[object], path: str, out: list[Mismatch]) -> None:
    found: list[Mismatch] = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        _compare(want, got, _child(path, index), False, found)
    if found and len(expected) == len(actual) <= 200 and _perfect_matching(expected, actual, subset=False):
        out.append(Mismatch(path, expected, actual, "same items in a different order"))
        return
    out.extend(found)
    sizes = f"expected {_items(len(expected))}, got {len(actual)}"
    for index in range(len(actual), len(expected)):
        out.append(Mismatch(_child(path, index), expected[index], ABSENT, f"missing item ({sizes})"))
    for index in range(len(expected), len(actual)):
        out.append(Mismatch(_child(path, index), ABSENT, actual[index], f"unexpected item ({sizes})"))


def _match_table(expected: list[object], actual: list[object], subset: bool) -> list[list[bool]]:
    table = []
    for want in expected:
        row = []
        for got in actual:
            found: list[Mismatch] = []
            _compare(want, got, "$", subset, found)
            row.append(not found)
        table.append(row)
    return table


def _assign(table: list[list[bool]]) -> list[int | None]:
    """Maximum one-to-one assignment expected->actual (Kuhn's augmenting paths); None = unassigned.

    Greedy assignment is not enough: expected `["#number", 1]` against actual `[1, 2]` must pair
    "#number" with 2 so that 1 can take 1.
    """
    owner: dict[int, int] = {}

    def augment(row: int, seen: set[int]) -> bool:
        for col, ok in enumerate(table[row]):
            if ok and col not in seen:
                seen.add(col)
                if col not in owner or augment(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    for row in range(len(table)):
        augment(row, set())
    assigned: list[int | None] = [None] * len(table)
    for col, row in owner.items():
        assigned[row] = col
    return assigned


def _perfect_matching(expected: list[object], actual: list[object], *, subset: bool) -> bool:
    return all(col is not None for col in _assign(_match_table(expected, actual, subset)))


def _compare_arrays_subset(expected: list[object], actual: list[object], path: str, out: list[Mismatch]) -> None:
    table = _match_table(expected, actual, True)
    for index, col in enumerate(_assign(table)):
        if col is not None:
            continue
        want = expected[index]
        if not actual:
            out.append(Mismatch(path, want, actual, f"no item matches expected item [{index}]: the array is empty"))
            continue
        if any(table[index]):
            used = ", ".join(_child(path, c) for c, ok in enumerate(table[index]) if ok)
            reason = (
                f"no item left for expected item [{index}]: it matches only {used}, "
                "which other expected items already use"
            )
            out.append(Mismatch(path, want, actual, reason))
            continue
        best, best_found = 0, None
        for candidate, got in enumerate(actual):
            found: list[Mismatch] = []
            _compare(want, got, _child(path, candidate), True, found)
            if best_found is None or len(found) < len(best_found):
                best, best_found = candidate, found
        assert best_found
        first = best_found[0]
        more = f" and {len(best_found) - 1} more" if len(best_found) > 1 else ""
        reason = (
            f"no item matches expected item [{index}]; the closest, {_child(path, best)}, "
            f"differs at {first.path} ({first.reason}){more}"
        )
        out.append(Mismatch(path, want, actual[best], reason))


# --------------------------------------------------------------------------------------------------
# Failure messages
# --------------------------------------------------------------------------------------------------

_MAX_LISTED = 30


def _short(value: object, limit: int = 200) -> str:
    if value is ABSENT:
        return "(absent)"
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _render_mismatches(mismatches: Sequence[Mismatch], heading: str) -> list[str]:
    lines = [f"  {heading}:"]
    for number, m in enumerate(mismatches[:_MAX_LISTED], start=1):
        lines.append(f"    {number}. {m.path}: {m.reason}")
        lines.append(f"         expected: {_short(m.expected)}")
        lines.append(f"         actual:   {_short(m.actual)}")
    if len(mismatches) > _MAX_LISTED:
        lines.append(f"    … and {len(mismatches) - _MAX_LISTED} more")
    return lines


def _looks_generated(value: object) -> bool:
    return isinstance(value, str) and bool(_UUID.fullmatch(value) or _is_datetime(value))


def _tip(mismatches: Sequence[Mismatch], subset: bool, what: str) -> str:
    tips: list[str] = []
    reasons = [m.reason for m in mismatches]
    if not subset and any(r == "unexpected key" for r in reasons):
        tips.append(f'To allow extra keys, use "Then the {what} contains:" instead of "Then the {what} is:".')
    if not subset and any(r == "same items in a different order" for r in reasons):
        tips.append(f'"Then the {what} contains:" ignores the order of array items.')
    if any(r.startswith("missing key;") for r in reasons):
        tips.append('A "##" marker (e.g. "##string") also accepts a missing key or null.')
    if any(_looks_generated(m.actual) and not _looks_generated(m.expected) for m in mismatches):
        tips.append('Values that change on every run can be matched with "#uuid", "#datetime" or "#ignore".')
    if not tips:
        tips.append(
            'Fuzzy markers such as "#string", "#number", "#notnull", "#ignore" or "#regex <pattern>" '
            "match values that vary."
        )
    return " ".join(tips)


def assert_matches(
    expected: object, actual: object, *, subset: bool, what: str = "result", exchange: str | None = None
) -> None:
    """Raise ExpectationFailed listing every difference (see `compare`), with both values in full."""
    mismatches = compare(expected, actual, subset=subset)
    if not mismatches:
        return
    verb = "does not contain what was expected" if subset else "does not match"
    count = _plural(len(mismatches), "difference")
    details = _render_mismatches(mismatches, "Differences")
    details += [
        "  Expected (in full):",
        _indent(pretty(expected)),
        "  Actual (in full):",
        _indent(pretty(actual)),
    ]
    raise ExpectationFailed(
        f"The {what} {verb} ({count})",
        path=mismatches[0].path if len(mismatches) == 1 else None,
        details="\n".join(details),
        exchange=exchange,
        tip=_tip(mismatches, subset, what),
        diff=JsonDiff(expected, actual, tuple(m.path for m in mismatches)),
    )


# --------------------------------------------------------------------------------------------------
# JSON Schema
# --------------------------------------------------------------------------------------------------


def _validator(schema: object, what: str) -> jsonschema.protocols.Validator:
    if not isinstance(schema, Mapping | bool):
        raise UsageError(f"The schema for the {what} must be a JSON object (or true/false), not {_a(_kind(schema))}.")
    if isinstance(schema, Mapping) and "$schema" in schema:
        # validator_for falls back to its default for an unknown $schema (with only a warning);
        # a sentinel default tells us, so a typo in $schema is a usage error, not a silent fallback.
        cls = jsonschema.validators.validator_for(schema, default=cast(Any, _UnknownDialect))
        if cls is _UnknownDialect:
            raise UsageError(
                f'The schema for the {what} names an unknown dialect in "$schema": {schema["$schema"]!r}. '
                'Use "https://json-schema.org/draft/2020-12/schema" (the default) or an older draft.'
            )
    else:
        cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        where = format_path(exc.absolute_path)
        raise UsageError(
            f"The schema for the {what} is not a valid JSON Schema: {exc.message} (at {where} in the schema)"
        ) from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


class _UnknownDialect:
    """Default handed to validator_for so an unknown `$schema` can be told apart."""


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _schema_errors(instance: object, schema: object, what: str) -> list[Mismatch]:
    """`validate_schema`'s work; a `$ref` cycle or a `$ref` to nothing raises SchemaUnusable (see mcp_bdd._schema)."""

    # inside `guarded`: check_schema and iter_errors both follow $refs
    def errors() -> list[jsonschema.exceptions.ValidationError]:
        validator = _validator(schema, what)
        return sorted(validator.iter_errors(instance), key=lambda e: (format_path(e.absolute_path), e.message))

    return [
        Mismatch(
            path=format_path(error.absolute_path),
            expected={str(error.validator): error.validator_value},
            actual=error.instance,
            reason=error.message,
        )
        for error in guarded(schema, errors)
    ]


def validate_schema(instance: object, schema: object, *, what: str = "result") -> list[Mismatch]:
    """Every JSON Schema error of `instance`: path as JSONPath, the failing keyword as `expected`.

    Draft 2020-12 unless the schema names another draft in `$schema`. `format` is asserted for
    the formats jsonschema can check with what is installed (date, email, ipv4, uuid, ...).
    Raises UsageError when the schema itself is invalid, or its `$ref`s loop or point at nothing.
    """
    try:
        return _schema_errors(instance, schema, what)
    except SchemaUnusable as exc:
        message = f"The schema for the {what} cannot be used: its {exc.summary}.\n  {exc.details}"
        raise UsageError(f"{message}\n  Tip: {_sentence(exc.tip)}") from None


def assert_schema(
    instance: object, schema: object, *, title: str, what: str = "result", exchange: str | None = None
) -> None:
    """Raise ExpectationFailed(title) listing every schema error of `instance`, plus the value in full.

    A schema whose `$ref`s loop or point at nothing fails the same way: nothing can conform to it,
    and the caller's title says whose schema it is (`The structuredContent of "loop" breaks its
    output schema`).
    """
    try:
        errors = _schema_errors(instance, schema, what)
    except SchemaUnusable as exc:
        raise ExpectationFailed(
            title, details=f"  The schema's {exc.summary}.\n  {exc.details}", exchange=exchange, tip=_sentence(exc.tip)
        ) from None
    if not errors:
        return
    details = _render_mismatches(errors, f"{_plural(len(errors), 'schema error')}")
    details += [f"  The {what} (in full):", _indent(pretty(instance))]
    raise ExpectationFailed(
        title,
        path=errors[0].path if len(errors) == 1 else None,
        details="\n".join(details),
        exchange=exchange,
        tip=f"Each path points into the {what}; 'expected' is the schema keyword that failed.",
    )


# --------------------------------------------------------------------------------------------------
# Reading doc strings and literals
# --------------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _json_tip(message: str, line: str) -> str:
    if "'" in line and ("double quotes" in message or message.startswith("Expecting value")):
        return "JSON strings and keys need double quotes, not single quotes."
    if re.search(r"\b(True|False|None)\b", line):
        return "Write true, false and null in lower case."
    if "property name" in message:
        return "Keys need double quotes, and JSON allows no comma before } or ]."
    if message.startswith("Extra data"):
        return "The doc string holds more than one JSON value; wrap them in an array."
    if "control character" in message:
        return r"A JSON string cannot span lines; write \n for a line break."
    return "Check quotes, commas and brackets: JSON needs double quotes and allows no trailing commas."


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def parse_json_docstring(text: str, *, where: str = "") -> object:
    """Parse the JSON doc string of a step; a mistake is a UsageError pointing at line and column.

    Line and column count from the first line of the doc string (the line after the opening
    triple quotes), because that is what the author sees; `where` is the step's location
    (feature file:line). A key given twice is an error too: the second would silently win.
    """
    location = f"\n  Step: {where}" if where else ""
    if not text.strip():
        raise UsageError(f"The doc string is empty; JSON was expected.{location}")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        lines = text.splitlines() or [""]
        row = min(max(exc.lineno, 1), len(lines))
        shown = []
        for number in range(max(1, row - 2), row + 1):
            shown.append(f"    {number:>4} | {lines[number - 1]}")
        pad = "".join("\t" if ch == "\t" else " " for ch in lines[row - 1][: exc.colno - 1])
        shown.append(f"         | {pad}^")
        message = (
            f"Malformed JSON in the doc string at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            + f"{location}\n"
            + "\n".join(shown)
            + "\n  (line numbers count from the first line of the doc string)"
            + f"\n  Tip: {_json_tip(exc.msg, lines[row - 1])}"
        )
        raise UsageError(message) from None
    except _DuplicateKey as exc:
        raise UsageError(f'Malformed JSON in the doc string: the key "{exc.key}" appears twice.{location}') from None
    except ValueError as exc:
        raise UsageError(f"Malformed JSON in the doc string: {exc}.{location}") from None


def coerce_literal(text: str) -> object:
    """Read the JSON literal of `Then the result at "<path>" is <literal>` (8, true, null, [1, 2], "x")."""
    stripped = text.strip()
    try:
        return json.loads(stripped, parse_constant=_reject_constant)
    except ValueError as exc:
        raise UsageError(
            f"Cannot read {stripped!r} as a JSON literal ({exc}).\n"
            f'  Tip: to compare text, put it in double quotes: Then the result at "$.name" is "{stripped}". '
            "Numbers, true, false, null, arrays and objects are written as JSON."
        ) from None


# --------------------------------------------------------------------------------------------------
# Small helpers for steps
# --------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        position = exc.pos if exc.pos is not None else 0
        raise UsageError(
            f'Invalid regular expression "{pattern}" at position {position}: {exc.msg}\n'
            f"    {pattern}\n    {' ' * position}^\n"
            "  Tip: patterns use Python's re syntax; put a backslash before a special character "
            r"to match it literally, e.g. \. \( \[ \?"
        ) from None


def regex_search(pattern: str, text: str) -> re.Match[str] | None:
    """`re.search` (the pattern may match anywhere); an invalid pattern is a UsageError with its position."""
    return _compile_regex(pattern).search(text)


def text_contains(haystack: str, needle: str, *, case_insensitive: bool = False) -> bool:
    """Substring test; case-insensitive uses casefold so "STRASSE" finds "straße"."""
    if case_insensitive:
        return needle.casefold() in haystack.casefold()
    return needle in haystack


def _canonical(value: object) -> str:
    """One text per JSON value: 1 and 1.0 agree, true and 1 do not, key order does not matter."""

    def normal(v: object) -> object:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, Mapping):
            return {str(k): normal(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [normal(x) for x in v]
        return v

    return json.dumps(normal(value), sort_keys=True, default=repr)


def all_different(values: Iterable[_V]) -> list[_V]:
    """The values that occur more than once (each listed once, in order of first occurrence).

    Works for unhashable values (objects, arrays) and compares as JSON does.
    """
    counts: dict[str, int] = {}
    firsts: dict[str, _V] = {}
    for value in values:
        key = _canonical(value)
        counts[key] = counts.get(key, 0) + 1
        firsts.setdefault(key, value)
    return [firsts[key] for key, n in counts.items() if n > 1]


def count_items(value: object, *, path: str | None = None, what: str = "result") -> int:
    """Number of items of an array, keys of an object or characters of a string.

    Any other value fails the expectation, saying what it is, rather than answering 0 or 1.
    """
    if isinstance(value, list | tuple | Mapping | str):
        return len(value)
    where = f"at {path} " if path else ""
    raise ExpectationFailed(
        f"The {what} {where}is {_a(_kind(value))}, which has no items",
        path=path,
        actual=value,
        tip="Only arrays, objects and strings have items; check the path points at the collection.",
    )
