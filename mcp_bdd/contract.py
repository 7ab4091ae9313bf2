"""The contract lock: a server's surface, its fingerprint, and classified differences.

One implementation for `Then the tool surface matches the contract "contracts/shop.json"`,
`mcp-bdd contract`, `mcp-bdd check --contract` and `mcp-bdd probe --baseline`: the same file
(kept in version control), the same hash, the same classification, so the CI suite and the
post-deploy probe agree.

The hash: SHA-256 of the canonical JSON (sorted keys, no whitespace, tools sorted by name) of
each tool's `name`, `title`, `description`, `inputSchema`, `outputSchema` and `annotations`; absent and
null fields are left out, so it is the same over every transport and both protocol eras.

Each difference is classified:
    breaking     a client that worked yesterday fails today: tool / prompt / resource removed,
                 required argument added, argument removed, type narrowed, enum value removed,
                 output field removed or made optional
    routing      the text a model reads to choose, or a host shows, changed (descriptions, titles)
    annotations  readOnlyHint / destructiveHint / ... changed
    additive     something new that breaks no one: tool added, optional argument added, type widened
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_bdd.errors import McpBddError, UsageError
from mcp_bdd.secrets import mask, mask_data

__all__ = [
    "CATEGORIES",
    "UNIQUE",
    "Change",
    "Changes",
    "Surface",
    "canonical_tool",
    "compare",
    "load_contract",
    "read_surface",
    "save_contract",
    "tools_hash",
]

BASELINE_SCHEMA = "mcp-bdd.probe/1"
UNIQUE = "a name must be unique: a client keeps one of them, not always the same; rename the others"
#: each kind of the surface: how a name of it is said, and its findings' target
_CALLED = {
    "tools": ("tools named", "tool"),
    "prompts": ("prompts named", "prompt"),
    "resources": ("resources with the URI", "resource"),
    "resource_templates": ("resource templates with the URI template", "resource template"),
}
TOOL_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
#: Categories from worst to mildest; `--fail-on breaking` fails only on the first.
CATEGORIES = ("breaking", "routing", "annotations", "additive")


def canonical_tool(tool: Mapping[str, object]) -> dict[str, object]:
    return {k: tool[k] for k in TOOL_FIELDS if tool.get(k) is not None}


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tools_hash(tools: Sequence[Mapping[str, object]]) -> str:
    """SHA-256 (hex) of the canonical JSON of the tools, sorted by name."""
    canonical = sorted((canonical_tool(t) for t in tools), key=lambda t: str(t.get("name", "")))
    return hashlib.sha256(canonical_json(canonical).encode("utf-8")).hexdigest()


@dataclass
class Surface:
    name: str | None
    version: str | None
    protocol: str
    transport: str
    target: str
    tools: dict[str, dict[str, object]]
    resources: dict[str, dict[str, object]] = field(default_factory=dict)
    templates: dict[str, dict[str, object]] = field(default_factory=dict)
    prompts: dict[str, dict[str, object]] = field(default_factory=dict)
    #: kind ("tools", "resources", "resource_templates", "prompts") -> {name: times listed} of the
    #: names the server listed more than once; the surface keeps the first of each
    duplicates: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return tools_hash(list(self.tools.values()))

    def to_json(self) -> dict[str, object]:
        return {
            "schema": BASELINE_SCHEMA,
            "name": self.name,
            "version": self.version,
            "protocol": self.protocol,
            "tools_sha256": self.sha256,
            "tools": self.tools,
            "resources": self.resources,
            "resource_templates": self.templates,
            "prompts": self.prompts,
        } | ({"duplicates": self.duplicates} if self.duplicates else {})

    def duplicate_notes(self) -> list[str]:
        """One line per name listed more than once: the contract holds one of them, and says so."""
        return [f"{said}: the contract keeps the first one listed ({UNIQUE})" for _, said in self.duplicated()]

    def duplicated(self) -> list[tuple[str, str]]:
        """(target, what the server did) per name listed more than once: ("tool x", 'the server lists
        2 tools named "x"')."""
        return [
            (f"{_CALLED[kind][1]} {name}", f'the server lists {times} {_CALLED[kind][0]} "{name}"')
            for kind, names in self.duplicates.items()
            if kind in _CALLED
            for name, times in names.items()
        ]

    @classmethod
    def from_json(cls, data: object, where: str) -> Surface:
        if (
            not isinstance(data, dict)
            or data.get("schema") != BASELINE_SCHEMA
            or not isinstance(data.get("tools"), dict)
        ):
            raise UsageError(
                f"{where} is not a contract / probe baseline (written by `mcp-bdd contract update` or "
                "`mcp-bdd probe --save-baseline`)."
            )
        return cls(
            name=data.get("name"),
            version=data.get("version"),
            protocol=str(data.get("protocol", "")),
            transport="",
            target=where,
            tools=data["tools"],
            resources=data.get("resources") or {},
            templates=data.get("resource_templates") or {},
            prompts=data.get("prompts") or {},
            duplicates=data.get("duplicates") or {},
        )


def _keep(item: Mapping[str, object], keys: Sequence[str]) -> dict[str, object]:
    return {k: item[k] for k in keys if item.get(k) is not None}


def read_surface(session: Any) -> Surface:
    """The surface a session sees now: tools, and resources / templates / prompts when declared.

    `session` is an `mcp_bdd.session.Session`, which this module may not import (ARCHITECTURE.md)."""
    client = session.client
    caps = client.server_capabilities
    info = client.server_info
    tools = session.list_all("tools") if caps is None or caps.tools is not None else []
    resources: list[dict[str, object]] = []
    templates: list[dict[str, object]] = []
    prompts: list[dict[str, object]] = []
    if caps is not None and caps.resources is not None:
        resources = session.list_all("resources")
        with contextlib.suppress(McpBddError, AssertionError):  # servers may not implement templates
            templates = session.list_all("templates")
    if caps is not None and caps.prompts is not None:
        prompts = session.list_all("prompts")
    # masked here, once, for every reader (probe's output, `contract update`'s file meant for git,
    # the contract check): a server's own words may repeat a secret it was given
    tools, resources, templates, prompts = mask_data([tools, resources, templates, prompts])
    duplicates: dict[str, dict[str, int]] = {}
    kept = {
        kind: _by_key(items, key, keep, duplicates.setdefault(kind, {}))
        for kind, items, key, keep in (
            ("tools", tools, "name", canonical_tool),
            ("resources", resources, "uri", _keeping("uri", "name", "mimeType")),
            ("resource_templates", templates, "uriTemplate", _keeping("uriTemplate", "name", "mimeType")),
            ("prompts", prompts, "name", _keeping("name", "description", "arguments")),
        )
    }
    return Surface(
        name=_masked(info.name) if info else None,
        version=_masked(info.version) if info else None,
        protocol=str(client.protocol_version),
        transport=session.server.transport,
        target=session.server.display,
        tools=kept["tools"],
        resources=kept["resources"],
        templates=kept["resource_templates"],
        prompts=kept["prompts"],
        duplicates={kind: names for kind, names in duplicates.items() if names},
    )


def _keeping(*keys: str) -> Callable[[Mapping[str, object]], dict[str, object]]:
    return lambda item: _keep(item, keys)


def _by_key(
    items: Sequence[Mapping[str, object]],
    key: str,
    kept: Callable[[Mapping[str, object]], dict[str, object]],
    repeated: dict[str, int],
) -> dict[str, dict[str, object]]:
    """`items` by their name (or URI), the first of each kept; `repeated` gets how many times each
    name listed more than once was listed (a dict kept the last one without a word)."""
    out: dict[str, dict[str, object]] = {}
    seen: dict[str, int] = {}
    for item in items:
        name = str(item.get(key))
        seen[name] = seen.get(name, 0) + 1
        out.setdefault(name, kept(item))
    repeated.update({name: times for name, times in seen.items() if times > 1})
    return out


def _masked(text: str | None) -> str | None:
    return None if text is None else mask(text)


def load_contract(path: Path, what: str = "contract") -> Surface:
    """A contract (or probe baseline: the same file) from disk; every way it can be wrong is a UsageError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"The {what} {path} does not exist. Record it with `mcp-bdd contract update {path} ...` "
            "(or `mcp-bdd probe ... --save-baseline`)."
        ) from None
    except OSError as exc:
        raise UsageError(f"Cannot read the {what} {path}: {exc.strerror or exc}.") from None
    except ValueError as exc:
        raise UsageError(f"The {what} {path} is not JSON: {exc}.") from None
    return Surface.from_json(data, str(path))


def save_contract(path: Path, surface: Surface) -> None:
    from mcp_bdd.report.files import write_text

    write_text(path, json.dumps(surface.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------
# differences


@dataclass(frozen=True)
class Change:
    category: str  # one of CATEGORIES
    kind: str  # tool, resource, resource template, prompt
    key: str  # its name / URI
    text: str  # what changed, in words

    def render(self) -> str:
        return f'[{self.category}] {self.kind} "{self.key}": {self.text}'  # quoted: see secrets.mask


@dataclass
class Changes:
    lines: list[str] = field(default_factory=list)  # one line per changed item (probe's output)
    notes: list[str] = field(default_factory=list)  # identity changes (informational)
    items: list[Change] = field(default_factory=list)  # every difference, classified

    @property
    def changed(self) -> bool:
        return bool(self.lines)

    def worst(self) -> str | None:
        found = {c.category for c in self.items}
        return next((c for c in CATEGORIES if c in found), None)

    def of(self, category: str) -> list[Change]:
        return [c for c in self.items if c.category == category]


def _object(value: object) -> Mapping[str, object]:
    """A JSON object as the comparison reads it: anything else (absent, null, a `true` schema) has no keys."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _types(schema: object) -> set[str] | None:
    """The JSON types a property schema admits (None: anything / not stated)."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        out = {kind}
    elif isinstance(kind, list):
        out = {str(k) for k in kind}
    else:
        variants = schema.get("anyOf") or schema.get("oneOf")
        if not isinstance(variants, list):
            return None
        out = set()
        for variant in variants:
            inner = _types(variant)
            if inner is None:
                return None
            out |= inner
    if "number" in out:
        out.add("integer")
    return out


def _props(schema: object) -> dict[str, object]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _required(schema: object) -> set[str]:
    req = schema.get("required") if isinstance(schema, dict) else None
    return {str(r) for r in req} if isinstance(req, list) else set()


def _schema_changes(old: object, new: object, *, output: bool) -> Iterator[tuple[str, str]]:
    """(category, text) for each difference between two input (or output) schemas."""
    where = "output field" if output else "argument"
    old_props, new_props = _props(old), _props(new)
    old_req, new_req = _required(old), _required(new)
    for name in sorted(set(old_props) - set(new_props)):
        yield "breaking", f"{where} {name!r} removed"
    for name in sorted(set(new_props) - set(old_props)):
        if not output and name in new_req:
            yield "breaking", f"required {where} {name!r} added"
        else:
            yield "additive", f"{where} {name!r} added"
    for name in sorted(set(old_props) & set(new_props)):
        if not output and name in new_req and name not in old_req:
            yield "breaking", f"{where} {name!r} became required"
        if output and name in old_req and name not in new_req:
            yield "breaking", f"{where} {name!r} is no longer always present"
        if not output and name in old_req and name not in new_req:
            yield "additive", f"{where} {name!r} became optional"
        before, after = old_props[name], new_props[name]
        if canonical_json(before) == canonical_json(after):
            continue
        yield from _property_changes(name, before, after, where=where, output=output)
    rest_old = {k: v for k, v in _object(old).items() if k not in ("properties", "required")}
    rest_new = {k: v for k, v in _object(new).items() if k not in ("properties", "required")}
    if canonical_json(rest_old) != canonical_json(rest_new):
        keys = sorted(k for k in set(rest_old) | set(rest_new) if rest_old.get(k) != rest_new.get(k))
        routing = {"description", "title", "examples", "$comment"}
        yield ("routing" if set(keys) <= routing else "breaking"), f"schema {', '.join(keys)} changed"


def _property_changes(
    name: str, before: object, after: object, *, where: str, output: bool
) -> Iterator[tuple[str, str]]:
    old_t, new_t = _types(before), _types(after)
    if old_t != new_t:
        narrowed = old_t is None or (new_t is not None and not old_t <= new_t)
        widened = new_t is None or (old_t is not None and old_t < new_t)
        # An input accepting fewer types breaks callers; an output with more types breaks readers.
        if (narrowed and not output) or (widened and output) or (narrowed and widened):
            yield "breaking", f"{where} {name!r} type {sorted(old_t or ['any'])} -> {sorted(new_t or ['any'])}"
        else:
            yield "additive", f"{where} {name!r} type {sorted(old_t or ['any'])} -> {sorted(new_t or ['any'])}"
    old_enum = before.get("enum") if isinstance(before, dict) else None
    new_enum = after.get("enum") if isinstance(after, dict) else None
    if isinstance(old_enum, list) or isinstance(new_enum, list):
        old_values = [canonical_json(v) for v in old_enum or []]
        new_values = [canonical_json(v) for v in new_enum or []]
        removed = [v for v in old_values if v not in new_values] if new_enum is not None else []
        added = [v for v in new_values if v not in old_values] if old_enum is not None else []
        if old_enum is None and new_enum is not None:
            yield "breaking", f"{where} {name!r} now restricted to {', '.join(new_values)}"
        if removed:
            yield (
                ("additive" if output else "breaking"),
                f"{where} {name!r} enum value(s) removed: {', '.join(removed)}",
            )
        if added:
            yield ("breaking" if output else "additive"), f"{where} {name!r} enum value(s) added: {', '.join(added)}"
    rest = {"type", "enum", "anyOf", "oneOf"}
    others = sorted(
        k
        for k in set(_object(before)) | set(_object(after))
        if k not in rest and _object(before).get(k) != _object(after).get(k)
    )
    if others:
        routing = {"description", "title", "examples", "$comment"}
        category = "routing" if set(others) <= routing else ("additive" if set(others) <= {"default"} else "breaking")
        yield category, f"{where} {name!r} {', '.join(others)} changed"


def _tool_changes(old: Mapping[str, object], new: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    if old.get("title") != new.get("title"):  # what a host shows the user for the tool
        yield "routing", f"title changed: {old.get('title')!r} -> {new.get('title')!r}"
    if old.get("description") != new.get("description"):
        yield "routing", "description changed (it changes what the model picks)"
    if canonical_json(old.get("annotations")) != canonical_json(new.get("annotations")):
        before, after = _object(old.get("annotations")), _object(new.get("annotations"))
        keys = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        yield "annotations", f"annotations changed: {', '.join(f'{k} {before.get(k)} -> {after.get(k)}' for k in keys)}"
    if canonical_json(old.get("inputSchema")) != canonical_json(new.get("inputSchema")):
        yield from _schema_changes(old.get("inputSchema") or {}, new.get("inputSchema") or {}, output=False)
    if canonical_json(old.get("outputSchema")) != canonical_json(new.get("outputSchema")):
        if new.get("outputSchema") is None:
            yield "breaking", "outputSchema removed"
        elif old.get("outputSchema") is None:
            yield "additive", "outputSchema added"
        else:
            yield from _schema_changes(old["outputSchema"], new["outputSchema"], output=True)


def _prompt_changes(old: Mapping[str, object], new: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    if old.get("description") != new.get("description"):
        yield "routing", "description changed"
    before = {str(a.get("name")): a for a in _list(old.get("arguments")) if isinstance(a, dict)}
    after = {str(a.get("name")): a for a in _list(new.get("arguments")) if isinstance(a, dict)}
    for name in sorted(set(before) - set(after)):
        yield "breaking", f"argument {name!r} removed"
    for name in sorted(set(after) - set(before)):
        yield ("breaking" if after[name].get("required") else "additive"), f"argument {name!r} added"
    for name in sorted(set(before) & set(after)):
        if after[name].get("required") and not before[name].get("required"):
            yield "breaking", f"argument {name!r} became required"
        elif before[name].get("description") != after[name].get("description"):
            yield "routing", f"argument {name!r} description changed"


def compare(baseline: Surface, now: Surface) -> Changes:
    """What changed from `baseline` to `now`: probe's lines plus every difference, classified."""
    changes = Changes()
    for kind, old, new in (
        ("tool", baseline.tools, now.tools),
        ("resource", baseline.resources, now.resources),
        ("resource template", baseline.templates, now.templates),
        ("prompt", baseline.prompts, now.prompts),
    ):
        for key in sorted(set(new) - set(old)):
            changes.lines.append(f"+ {kind} added: {key}")
            changes.items.append(Change("additive", kind, key, "added"))
        for key in sorted(set(old) - set(new)):
            changes.lines.append(f"- {kind} removed: {key}")
            changes.items.append(Change("breaking", kind, key, "removed"))
        for key in sorted(set(old) & set(new)):
            if canonical_json(old[key]) == canonical_json(new[key]):
                continue
            fields = sorted(k for k in set(old[key]) | set(new[key]) if old[key].get(k) != new[key].get(k))
            changes.lines.append(f"~ {kind} changed: {key} ({', '.join(fields)})")
            if kind == "tool":
                found = list(_tool_changes(old[key], new[key]))
            elif kind == "prompt":
                found = list(_prompt_changes(old[key], new[key]))
            else:
                found = [("routing" if set(fields) <= {"name", "description", "title"} else "breaking",
                          f"{', '.join(fields)} changed")]  # fmt: skip
            changes.items.extend(Change(category, kind, key, text) for category, text in found)
    for what, old_value, new_value in (
        ("name", baseline.name, now.name),
        ("version", baseline.version, now.version),
        ("protocol", baseline.protocol, now.protocol),
    ):
        if old_value != new_value:
            changes.notes.append(f"{what}: {old_value} -> {new_value}")
    changes.notes.extend(now.duplicate_notes())
    return changes
