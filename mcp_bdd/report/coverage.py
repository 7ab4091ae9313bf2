"""The MCP surface coverage map: which tools, resources and prompts the scenarios exercised.

Derived from the transcripts alone (tools/call name, resources/read uri, prompts/get name)
against each server's surface as seen during the run; an "error path" is a call answered with
`isError: true` or a JSON-RPC error. Calls to names the server never listed are kept too
("not in the catalog"): testing an unknown tool's error is a legitimate scenario.

Pure module: no behave, no mcp.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from mcp_bdd.report.model import Exchange, Feature, Scenario, ServerSurface, walk_scenarios
from mcp_bdd.transcript import GATE_PROBE_NAME

__all__ = [
    "CoverageItem",
    "ItemKind",
    "ServerCoverage",
    "compute_coverage",
    "coverage_json",
    "template_regex",
]

ItemKind = Literal["tool", "resource", "resource_template", "prompt"]
_METHOD_KIND: dict[str, ItemKind] = {
    "tools/call": "tool",
    "resources/read": "resource",
    "prompts/get": "prompt",
}


@dataclass(frozen=True, kw_only=True)
class CoverageItem:
    kind: ItemKind
    name: str
    in_catalog: bool = True
    calls: int = 0
    error_calls: int = 0
    scenarios: tuple[tuple[str, str], ...] = ()  # (scenario id, scenario name), first use first

    @property
    def exercised(self) -> bool:
        return self.calls > 0


@dataclass(frozen=True, kw_only=True)
class ServerCoverage:
    server: str
    items: tuple[CoverageItem, ...] = ()
    methods: tuple[tuple[str, int], ...] = ()  # every request method seen, with its count
    unlisted: int = 0  # catalog items the report did not keep, not even by name (ServerSurface.left_out)

    def of_kind(self, kind: ItemKind) -> list[CoverageItem]:
        return [i for i in self.items if i.kind == kind]

    @property
    def catalog_total(self) -> int:
        return sum(1 for i in self.items if i.in_catalog) + self.unlisted

    @property
    def catalog_exercised(self) -> int:
        return sum(1 for i in self.items if i.in_catalog and i.exercised)


def template_regex(template: str) -> re.Pattern[str]:
    """RFC 6570 URI template -> regex: `{id}` matches one path segment, `{+path}` anything."""
    out: list[str] = []
    for literal, expr in re.findall(r"([^{]*)(\{[^}]*\})?", template):
        out.append(re.escape(literal))
        if expr:
            out.append(".+" if expr[1:2] in ("+", "#") else "[^/?#]+")
    return re.compile("".join(out))


@dataclass
class _Acc:
    kind: ItemKind
    name: str
    in_catalog: bool
    calls: int = 0
    error_calls: int = 0
    scenarios: dict[str, str] = field(default_factory=dict)

    def freeze(self) -> CoverageItem:
        return CoverageItem(
            kind=self.kind,
            name=self.name,
            in_catalog=self.in_catalog,
            calls=self.calls,
            error_calls=self.error_calls,
            scenarios=tuple(self.scenarios.items()),
        )


def _names(records: Sequence[Mapping[str, object]] | None, key: str) -> list[str]:
    return [str(r[key]) for r in records or () if isinstance(r.get(key), str)]


class _Server:
    def __init__(self, surface: ServerSurface | None, name: str) -> None:
        self.name = name
        self.items: dict[tuple[ItemKind, str], _Acc] = {}
        self.methods: dict[str, int] = {}
        self.templates: list[tuple[re.Pattern[str], str]] = []
        self.unlisted = sum(surface.left_out.values()) if surface is not None else 0
        if surface is not None:
            catalog: tuple[tuple[ItemKind, Sequence[Mapping[str, object]] | None, str], ...] = (
                ("tool", surface.tools, "name"),
                ("resource", surface.resources, "uri"),
                ("resource_template", surface.resource_templates, "uriTemplate"),
                ("prompt", surface.prompts, "name"),
            )
            for kind, records, key in catalog:
                for item in _names(records, key):
                    self.items[(kind, item)] = _Acc(kind, item, True)
            self.templates = [(template_regex(t), t) for t in _names(surface.resource_templates, "uriTemplate")]

    def slot(self, kind: ItemKind, target: str) -> _Acc:
        acc = self.items.get((kind, target))
        if acc is None and kind == "resource":
            for regex, template in self.templates:
                if regex.fullmatch(target):
                    return self.items[("resource_template", template)]
        if acc is None:
            acc = self.items[(kind, target)] = _Acc(kind, target, False)
        return acc


def _scenario_exchanges(scenario: Scenario) -> list[Exchange]:
    out = list(scenario.evidence.exchanges)
    for step in scenario.steps:
        out.extend(step.evidence.exchanges)
    out.extend(scenario.after_evidence.exchanges)
    return out


def compute_coverage(features: Iterable[Feature], surfaces: Iterable[ServerSurface]) -> list[ServerCoverage]:
    """One ServerCoverage per server that has a surface or received a request, surface order first."""
    servers: dict[str, _Server] = {s.server: _Server(s, s.server) for s in surfaces}
    for feature in features:
        for scenario in walk_scenarios(feature.children):
            exchanges = _scenario_exchanges(scenario)
            failed_seqs = {x.related for x in exchanges if x.is_error and x.related is not None}
            for x in exchanges:
                if x.kind != "request":
                    continue
                server = servers.get(x.server)
                if server is None:
                    server = servers[x.server] = _Server(None, x.server)
                server.methods[x.method] = server.methods.get(x.method, 0) + 1
                kind = _METHOD_KIND.get(x.method)
                if kind is None or x.target is None or GATE_PROBE_NAME in x.target:  # the gate's probe, not a use
                    continue
                acc = server.slot(kind, x.target)
                acc.calls += 1
                if x.seq in failed_seqs:
                    acc.error_calls += 1
                acc.scenarios.setdefault(scenario.id, scenario.name)
    return [
        ServerCoverage(
            server=s.name,
            items=tuple(a.freeze() for a in s.items.values()),
            methods=tuple(sorted(s.methods.items())),
            unlisted=s.unlisted,
        )
        for s in servers.values()
    ]


def coverage_json(coverage: Sequence[ServerCoverage]) -> list[dict[str, object]]:
    """The coverage map as plain JSON (written into living-doc.json for other tools)."""
    return [
        {
            "server": c.server,
            "exercised": c.catalog_exercised,
            "total": c.catalog_total,
            "methods": dict(c.methods),
            "items": [
                {
                    "kind": i.kind,
                    "name": i.name,
                    "in_catalog": i.in_catalog,
                    "calls": i.calls,
                    "error_calls": i.error_calls,
                    "scenarios": [sid for sid, _ in i.scenarios],
                }
                for i in c.items
            ],
        }
        for c in coverage
    ]
