"""`$ref`s that lead nowhere in a JSON Schema, found before a validator or a generator follows them.

A server's inputSchema / outputSchema (or a feature's doc string) may hold a `$ref` chain that
comes back to where it started without stepping into the value: `{"$ref": "#"}`, or `a -> b -> a`
in `$defs`. Such a schema never resolves to anything that checks a value, and every evaluator
(jsonschema, hypothesis-jsonschema) follows it until Python's recursion limit. Recursion
*through* a keyword that steps into the value is fine (a tree whose `children` items refer to
the tree): each turn consumes a level of a finite value.

A local `$ref` may also point at nothing (`#/$defs/nope`, a typo for `#/definitions/...`, an
anchor no subschema declares) or at something that is no schema (`#/required`): jsonschema raises
an Unresolvable (or an AttributeError) from deep inside a validation, ajv refuses the schema.

`guarded` is the one way mcp-bdd hands a schema to jsonschema or hypothesis-jsonschema: a cycle
or a dangling `$ref` found up front, or a RecursionError or an Unresolvable all the same (a cycle
through a remote or dynamic `$ref` this walk does not follow, a value nested too deep, a `$ref`
to another document), becomes a `SchemaUnusable`: `SchemaLoops` or `RefUnresolved`.

Pure and iterative: no behave, no mcp, and no recursion of its own, so a hostile schema nested
thousands deep cannot crash the walk either (`referencing`, jsonschema's own dependency, only
names the error a validator raises). Local references only (`#...`, or the root's own `$id`): a
remote `$ref` is never followed, and `#...` is read against the document's root (a `$ref` inside
an embedded resource, a subschema with its own `$id`, is not judged: it reads against that).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import unquote

from referencing.exceptions import Unresolvable

__all__ = [
    "DanglingRef",
    "RefCycle",
    "RefUnresolved",
    "SchemaLoops",
    "SchemaUnusable",
    "find_dangling_ref",
    "find_ref_cycle",
    "fragment",
    "guarded",
]

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


@dataclass(frozen=True)
class DanglingRef:
    """A local `$ref` (in the subschema at `at`) whose target the document does not hold (`found`
    is "nothing"), or holds as something that is no schema ("an array", "a string", ...)."""

    at: Pointer
    ref: str
    found: str = "nothing"
    #: what the document defines, for the message: `#/$defs/x` and `#anchor` fragments
    defined: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"The $ref at {fragment(self.at)} names {self.ref}"
        if self.found != "nothing":
            return f"{where}, which is {self.found} in the schema, not a schema"
        listing = ", ".join(self.defined[:20]) + (", …" if len(self.defined) > 20 else "")
        return f"{where}, which is not in the schema (it defines {listing or 'no $defs'})"


class SchemaUnusable(Exception):
    """A schema no value can be checked against, because of its `$ref`s: SchemaLoops or RefUnresolved.

    `summary` follows "the inputSchema's" / "the schema's"; `details` says why, `tip` what to do.
    `up_front`: found by reading the schema alone (so `schemas.*-valid` report it), not raised by
    a validator on its way through a value.
    """

    @property
    def summary(self) -> str:
        raise NotImplementedError

    @property
    def details(self) -> str:
        raise NotImplementedError

    @property
    def tip(self) -> str:
        raise NotImplementedError

    @property
    def up_front(self) -> bool:
        raise NotImplementedError


class SchemaLoops(SchemaUnusable):
    """A schema whose evaluation never ends: `cycle` when found up front, None for a RecursionError."""

    def __init__(self, cycle: RefCycle | None) -> None:
        self.cycle = cycle
        super().__init__(self.details)

    @property
    def up_front(self) -> bool:
        return self.cycle is not None

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


class RefUnresolved(SchemaUnusable):
    """A `$ref` that leads to no schema: `dangling` when found up front (a local one), None when a
    validator could not resolve `ref` all the same (another document, an embedded resource's)."""

    def __init__(self, ref: str, dangling: DanglingRef | None = None) -> None:
        self.ref = ref
        self.dangling = dangling
        super().__init__(self.details)

    @property
    def up_front(self) -> bool:
        return self.dangling is not None

    @property
    def summary(self) -> str:
        if self.dangling is None:
            return f"$ref {self.ref} cannot be resolved"
        if self.dangling.found == "nothing":
            return f"$ref {self.ref} points at nothing"
        return f"$ref {self.ref} points at {self.dangling.found}, not a schema"

    @property
    def tip(self) -> str:
        if self.dangling is not None:
            return (
                "point the $ref at a schema the document defines (#/$defs/<name>), or add the missing "
                "definition; a local $ref is read from the root of the schema."
            )
        return "keep the schema's $refs within the document, pointing at schemas it defines under $defs."

    @property
    def details(self) -> str:
        if self.dangling is not None:
            return f"{self.dangling}, so no value can be checked against it."
        return (
            f"No validator can find {self.ref}: a $ref to another document (never fetched), or to a part "
            "of the schema that is not there, so no value can be checked against it."
        )


def guarded(schema: object, use: Callable[[], _T]) -> _T:
    """`use()` (which validates against or generates from `schema`), unless its `$ref`s lead nowhere.

    Raises SchemaLoops for a `$ref` cycle before `use` runs (RecursionError costs ~1,000 frames of
    stack and a 300 KB traceback), or when `use` recurses past the limit all the same; RefUnresolved
    for a local `$ref` to nothing before `use` runs, or when `use` cannot resolve a `$ref` all the same.
    """
    cycle = find_ref_cycle(schema)
    if cycle is not None:
        raise SchemaLoops(cycle)
    dangling = find_dangling_ref(schema)
    if dangling is not None:
        raise RefUnresolved(dangling.ref, dangling)
    try:
        return use()
    except RecursionError:
        raise SchemaLoops(None) from None
    except Unresolvable as exc:
        raise RefUnresolved(str(exc.ref)) from None


def find_ref_cycle(schema: object) -> RefCycle | None:
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


def find_dangling_ref(schema: object) -> DanglingRef | None:
    """The first local `$ref` (in document order) whose target the document does not hold, or holds
    as something that is no schema; None when each one lands on a schema (a remote one is never
    followed). Every subschema is judged, used or not: ajv (the TypeScript SDK's validator)
    resolves every `$ref` when it compiles a schema, jsonschema only the ones a value reaches."""
    if not isinstance(schema, dict):
        return None
    anchors = _anchors(schema)
    embedded: list[Pointer] = []
    for at, node in _subschemas(schema):  # root first, each parent before its children
        if at and _is_resource(node):
            embedded.append(at)
        if any(at[: len(e)] == e for e in embedded):
            continue  # its `#...` reads against its own `$id`, not the root
        for keyword in _REFS:
            ref = node.get(keyword)
            found = _dangles(schema, anchors, ref)
            if found is not None:
                return DanglingRef(at, str(ref), found, _defined(schema, anchors))
    return None


def _cycle_from(
    root: dict[str, object], anchors: dict[str, Pointer], start: Pointer, done: set[Pointer]
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


def _same_value(root: dict[str, object], anchors: dict[str, Pointer], at: Pointer) -> Iterator[Pointer]:
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


def _target(root: dict[str, object], anchors: dict[str, Pointer], ref: object) -> Pointer | None:
    """Where a local `$ref` points, if at a schema object; None for a remote or dangling one."""
    part = _local(root, ref)
    if part is None:
        return None
    if part and not part.startswith("/"):
        return anchors.get(part)
    pointer = _pointer(part)
    return pointer if isinstance(_resolve(root, pointer), dict) else None


def _dangles(root: dict[str, object], anchors: dict[str, Pointer], ref: object) -> str | None:
    """What a local `$ref` finds that is no schema ("nothing", "an array", ...); None when it finds
    a schema, or is not a local reference."""
    part = _local(root, ref)
    if part is None:
        return None
    if part and not part.startswith("/"):
        return None if part in anchors else "nothing"
    target = _resolve(root, _pointer(part), _NOWHERE)
    if target is _NOWHERE:
        return "nothing"
    if isinstance(target, dict | bool):  # `true` and `false` are schemas too
        return None
    kinds = {list: "an array", str: "a string", int: "a number", float: "a number"}
    return kinds.get(type(target), "null")


def _local(root: dict[str, object], ref: object) -> str | None:
    """The fragment of a `$ref` into this document, unquoted ("" and "#" are both its root); None
    for another document's (never followed) or a `$ref` that is no string."""
    if not isinstance(ref, str):
        return None
    base, _, part = ref.partition("#")
    own = root.get("$id")
    if base and not (isinstance(own, str) and own.partition("#")[0] == base):
        return None
    return unquote(part)


def _pointer(part: str) -> Pointer:
    """A JSON pointer fragment (`/$defs/a~1b`) as the keys it walks (RFC 6901 escapes undone)."""
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in part.split("/")[1:])


def _defined(root: dict[str, object], anchors: dict[str, Pointer]) -> tuple[str, ...]:
    """The schema's definitions and anchors, as a `$ref` names them."""
    names = [
        fragment((keyword, str(name)))
        for keyword in ("$defs", "definitions")
        if isinstance(defined := root.get(keyword), dict)
        for name in defined
    ]
    return (*names, *(f"#{anchor}" for anchor in anchors))


def _is_resource(node: dict[str, object]) -> bool:
    """Does the subschema start a resource of its own (an `$id` / draft 4 `id` with a URI, not `#name`)?"""
    return any(isinstance(uri := node.get(k), str) and uri.partition("#")[0] for k in ("$id", "id"))


#: what `_resolve` answers for a pointer into nothing, when asked to tell that from `null`
_NOWHERE = object()


def _resolve(root: object, pointer: Pointer, missing: object = None) -> object:
    node = root
    for part in pointer:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return missing
    return node


def _children(node: dict[str, object], keyword: str) -> Iterator[tuple[Pointer, dict[str, object]]]:
    """The subschema objects under one keyword of `node`, with their pointers relative to it."""
    value = node.get(keyword)
    if keyword in _MAPS and isinstance(value, dict):
        items: list[tuple[Pointer, object]] = [((keyword, str(k)), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [((keyword, str(i)), v) for i, v in enumerate(value)]
    else:
        items = [((keyword,), value)]
    for relative, child in items:
        if isinstance(child, dict):  # `true` / `false` schemas refer to nothing
            yield relative, child


def _subschemas(root: dict[str, object]) -> Iterator[tuple[Pointer, dict[str, object]]]:
    """Every subschema object of the document, root first, in document order (iterative: no depth limit).

    Only through schema keywords: a `{"$ref": "#"}` inside `const`, `enum` or `default` is data."""
    stack: list[tuple[Pointer, dict[str, object]]] = [((), root)]
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


def _anchors(root: dict[str, object]) -> dict[str, Pointer]:
    """Plain-name fragments (`#node`) to the subschema that declares them; the first one wins."""
    found: dict[str, Pointer] = {}
    for at, node in _subschemas(root):
        for keyword in _ANCHORS:
            name = node.get(keyword)
            if isinstance(name, str) and name and (keyword.endswith("nchor") or name.startswith("#")):
                found.setdefault(name.lstrip("#"), at)
    return found
