"""`$ref` cycles in a JSON Schema, found before a validator or a generator follows them forever.

A server's inputSchema / outputSchema (or a feature's doc string) may hold a `$ref` chain that
comes back to where it started without stepping into the value: `{"$ref": "#"}`, or `a -> b -> a`
in `$defs`. Such a schema never resolves to anything that checks a value, and every evaluator
(jsonschema, hypothesis-jsonschema) follows it until Python's recursion limit. Recursion
*through* a keyword that steps into the value is fine (a tree whose `children` items refer to
the tree): each turn consumes a level of a finite value.

`guarded` is the one way mcp-bdd hands a schema to jsonschema or hypothesis-jsonschema: a cycle
found up front, or a RecursionError all the same (a cycle through a remote or dynamic `$ref`
this walk does not follow, a value nested too deep), becomes `SchemaLoops`.

Pure and iterative: no behave, no mcp, and no recursion of its own, so a hostile schema nested
thousands deep cannot crash the walk either. Local references only (`#...`, or the root's own
`$id`): a remote `$ref` is never followed, and `#...` is read against the document's root.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote

__all__ = ["RefCycle", "SchemaLoops", "find_ref_cycle", "fragment", "guarded"]

_T = TypeVar("_T")

#: a place in the schema document: the keys and indexes from its root
Pointer = tuple[str, ...]

#: keywords whose subschemas apply to the SAME value as their parent: a chain through them
#: steps into nothing, so coming back round is a cycle
_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies")
#: the other keywords holding subschemas: they step into the value (or, `$defs`, are not applied)
_DESCENDING = (
    *("properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames"),
    *("items", "prefixItems", "additionalItems", "unevaluatedItems", "contains", "contentSchema"),
    *("$defs", "definitions"),
)
#: keywords whose value maps names to subschemas (the rest hold one subschema or a list of them)
_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
_ANCHORS = ("$anchor", "$dynamicAnchor", "$id", "id")  # `$id: "#name"` is draft 6/7's anchor, `id` draft 4's


def fragment(pointer: Pointer) -> str:
    """A pointer as a `$ref` writes it: `#/$defs/a` (`~` and `/` in a key escaped as RFC 6901 says)."""
    return "#" + "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in pointer)


@dataclass(frozen=True)
class RefCycle:
    """The subschemas a looping `$ref` chain passes through, from where it is entered; the last
    one is an earlier one again."""

    chain: tuple[Pointer, ...]

    def __str__(self) -> str:
        path = " → ".join(fragment(p) for p in self.chain)
        return f"{path} comes back to {fragment(self.chain[-1])} without stepping into the value"


class SchemaLoops(Exception):
    """A schema whose evaluation never ends: `cycle` when found up front, None for a RecursionError."""

    def __init__(self, cycle: RefCycle | None) -> None:
        self.cycle = cycle
        super().__init__(self.details)

    @property
    def summary(self) -> str:
        """What is wrong, to follow "the inputSchema's" / "the schema's"."""
        return "$ref never resolves to a schema (a cycle)" if self.cycle else "evaluation recursed past Python's limit"

    @property
    def tip(self) -> str:
        if self.cycle is not None:
            return (
                "point each $ref at a schema that checks something (a type, properties, ...); a recursive "
                "schema recurses through properties or items, as a tree's children do."
            )
        return "keep the schema's $refs within the document, and the values it describes shallow."

    @property
    def details(self) -> str:
        if self.cycle is not None:
            return f"The $ref chain {self.cycle}, so no value can be checked against it."
        return (
            "A $ref cycle through a remote or dynamic reference (not followed up front), "
            "or a value nested too deep for the schema's recursion."
        )


def guarded(schema: Any, use: Callable[[], _T]) -> _T:
    """`use()` (which validates against or generates from `schema`), unless it would never end.

    Raises SchemaLoops for a `$ref` cycle before `use` runs (RecursionError costs ~1,000 frames of
    stack and a 300 KB traceback), or when `use` recurses past the limit all the same.
    """
    cycle = find_ref_cycle(schema)
    if cycle is not None:
        raise SchemaLoops(cycle)
    try:
        return use()
    except RecursionError:
        raise SchemaLoops(None) from None


def find_ref_cycle(schema: Any) -> RefCycle | None:
    """The first `$ref` chain (in document order) that comes back to itself without stepping into
    the value, or None. Depth-first over the "applies to the same value" edges (`$ref`s and
    `_IN_PLACE` keywords), iterative; each subschema is explored once."""
    if not isinstance(schema, dict):
        return None
    anchors = _anchors(schema)
    done: set[Pointer] = set()
    for start, _ in _subschemas(schema):
        if start in done:
            continue
        cycle = _cycle_from(schema, anchors, start, done)
        if cycle is not None:
            return cycle
    return None


def _cycle_from(
    root: dict[str, Any], anchors: dict[str, Pointer], start: Pointer, done: set[Pointer]
) -> RefCycle | None:
    """Depth-first from `start`: the path on the stack is the chain; an edge back into it, a cycle."""
    path: list[Pointer] = [start]
    on_path = {start}
    pending: list[Iterator[Pointer]] = [_same_value(root, anchors, start)]
    while pending:
        step = next(pending[-1], None)
        if step is None:  # every way on from the top was explored: it leads to no cycle
            pending.pop()
            on_path.discard(path[-1])
            done.add(path.pop())
        elif step in on_path:
            return RefCycle((*path, step))
        elif step not in done:
            path.append(step)
            on_path.add(step)
            pending.append(_same_value(root, anchors, step))
    return None


def _same_value(root: dict[str, Any], anchors: dict[str, Pointer], at: Pointer) -> Iterator[Pointer]:
    """The subschemas evaluated against the same value as the one at `at`: its `$ref` targets and
    its in-place subschemas."""
    node = _resolve(root, at)
    if not isinstance(node, dict):
        return
    for keyword in _REFS:
        target = _target(root, anchors, node.get(keyword))
        if target is not None:
            yield target
    for keyword in _IN_PLACE:
        for relative, _ in _children(node, keyword):
            yield (*at, *relative)


def _target(root: dict[str, Any], anchors: dict[str, Pointer], ref: Any) -> Pointer | None:
    """Where a local `$ref` points, if at a schema object; None for a remote or dangling one."""
    if not isinstance(ref, str):
        return None
    base, _, part = ref.partition("#")  # "" and "#" are both this document's root
    own = root.get("$id")
    if base and not (isinstance(own, str) and own.partition("#")[0] == base):
        return None  # another document: never followed
    part = unquote(part)
    if part and not part.startswith("/"):
        return anchors.get(part)
    pointer = tuple(p.replace("~1", "/").replace("~0", "~") for p in part.split("/")[1:])
    return pointer if isinstance(_resolve(root, pointer), dict) else None


def _resolve(root: Any, pointer: Pointer) -> Any:
    node = root
    for part in pointer:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _children(node: dict[str, Any], keyword: str) -> Iterator[tuple[Pointer, dict[str, Any]]]:
    """The subschema objects under one keyword of `node`, with their pointers relative to it."""
    value = node.get(keyword)
    if keyword in _MAPS and isinstance(value, dict):
        items: list[tuple[Pointer, Any]] = [((keyword, str(k)), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [((keyword, str(i)), v) for i, v in enumerate(value)]
    else:
        items = [((keyword,), value)]
    for relative, child in items:
        if isinstance(child, dict):  # `true` / `false` schemas refer to nothing
            yield relative, child


def _subschemas(root: dict[str, Any]) -> Iterator[tuple[Pointer, dict[str, Any]]]:
    """Every subschema object of the document, root first, in document order (iterative: no depth limit).

    Only through schema keywords: a `{"$ref": "#"}` inside `const`, `enum` or `default` is data."""
    stack: list[tuple[Pointer, dict[str, Any]]] = [((), root)]
    while stack:
        at, node = stack.pop()
        yield at, node
        found = [
            ((*at, *relative), child)
            for keyword in node
            if keyword in _IN_PLACE or keyword in _DESCENDING
            for relative, child in _children(node, keyword)
        ]
        stack.extend(reversed(found))


def _anchors(root: dict[str, Any]) -> dict[str, Pointer]:
    """Plain-name fragments (`#node`) to the subschema that declares them; the first one wins."""
    found: dict[str, Pointer] = {}
    for at, node in _subschemas(root):
        for keyword in _ANCHORS:
            name = node.get(keyword)
            if isinstance(name, str) and name and (keyword.endswith("nchor") or name.startswith("#")):
                found.setdefault(name.lstrip("#"), at)
    return found
