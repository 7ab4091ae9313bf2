"""What the template shows: one or more runs aligned into one feature tree.

A single run is the one-column case of a merge, so there is one template and one code path.
Runs are aligned by the model's deterministic ids (feature file + names), so shards and
transport runs of the same features line up; each scenario keeps one result per run (None
where that run did not have it) and is flagged `inconsistent` when executed runs disagree.

Pure module: no behave, no jinja2.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from mcp_bdd.failures import KINDS, kind_label
from mcp_bdd.report.coverage import CoverageItem, ServerCoverage, compute_coverage
from mcp_bdd.report.evidence import merge_surfaces
from mcp_bdd.report.glossary import split_doc
from mcp_bdd.report.history import Entry
from mcp_bdd.report.links import Link, requirement_links
from mcp_bdd.report.model import (
    OUTCOMES,
    Background,
    ExampleRef,
    Examples,
    Exchange,
    Feature,
    Outcome,
    Outline,
    Rule,
    Run,
    Scenario,
    ServerSurface,
    Status,
    Step,
    StepDef,
    StepText,
    Table,
    combine,
    outcome,
    walk_scenarios,
)

__all__ = [
    "CapabilityView",
    "ExamplesView",
    "FeatureView",
    "GlossaryEntry",
    "GlossaryGroup",
    "OutlineView",
    "ReportView",
    "RuleView",
    "RunView",
    "ScenarioView",
    "ServerView",
    "StepView",
    "build_report",
    "current_entry",
]

T = TypeVar("T")
TREND_RUNS = 10  # dots shown per scenario
SLOWER_BY = 0.2  # seconds: below this, a doubling is noise (an in-memory scenario takes ms)


def _align(groups: Sequence[Iterable[T]], key: Callable[[T], str]) -> list[list[T | None]]:
    """Rows of items with the same key, one column per group, in first-seen order."""
    rows: dict[str, list[T | None]] = {}
    for column, items in enumerate(groups):
        for item in items:
            row = rows.setdefault(key(item), [None] * len(groups))
            if row[column] is None:
                row[column] = item
    return list(rows.values())


def _first(items: Sequence[T | None]) -> T:
    for item in items:
        if item is not None:
            return item
    raise ValueError("empty row")  # _align never makes one


def _counts(statuses: Iterable[str]) -> dict[Outcome, int]:
    counts: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
    for status in statuses:
        counts[outcome(status)] += 1
    return counts


def pass_rate(counts: dict[Outcome, int]) -> float | None:
    """Passed out of the scenarios that were meant to run (skipped ones do not count)."""
    relevant = sum(counts.values()) - counts["skipped"]
    return None if relevant == 0 else counts["passed"] / relevant


@dataclass
class StepView:
    keyword: str
    name: str
    text: str | None
    table: Table | None
    background: bool
    results: list[Step | None]
    calls: list[tuple[Exchange, ...]] = field(default_factory=list)  # per run: the call behind a failure

    @property
    def status(self) -> Status:
        return combine(r.status for r in self.results if r is not None)


@dataclass
class ScenarioView:
    id: str
    name: str
    keyword: str
    location: str
    description: tuple[str, ...]
    own_tags: tuple[str, ...]
    tags: tuple[str, ...]
    results: list[Scenario | None]
    steps: list[StepView]
    example: ExampleRef | None
    feature_name: str
    rule_name: str | None
    labels: list[str]
    kind: str = "scenario"
    trend: list[Outcome | None] = field(default_factory=list)  # this scenario in the runs of the history, oldest first
    durations: list[float | None] = field(default_factory=list)  # its duration in those runs (s), oldest first

    @cached_property
    def flips(self) -> int:
        """How often the executed outcome changed from one run of the history to the next."""
        if len(self.trend) < 3:
            return 0
        done = [o for o in self.trend if o in ("passed", "failed", "errored")]
        return sum(1 for a, b in itertools.pairwise(done) if (a == "passed") != (b == "passed"))

    @cached_property
    def flaky(self) -> bool:
        """Passes and fails without a change in between: flipped twice in the history, or legs disagree."""
        return self.flips >= 2 or self.inconsistent

    @cached_property
    def change(self) -> str | None:
        """ "new failure", "still failing" (for N runs), "fixed" — against the previous run of the history."""
        if len(self.trend) < 2:
            return None
        *before, now = self.trend
        previous = next((o for o in reversed(before) if o not in (None, "skipped", "untested")), None)
        failing = ("failed", "errored")
        if now in failing:
            if previous not in failing:
                return "new failure"
            streak = 0
            for o in reversed(self.trend):
                if o not in failing:
                    break
                streak += 1
            return f"still failing · {streak} runs"
        if now == "passed" and previous in failing:
            return "fixed"
        return None

    @cached_property
    def slowdown(self) -> str | None:
        """ "slower · 2.40 s, usually 0.31 s" when this run took at least twice the median of the
        earlier runs (and 0.2 s more): a scenario creeping up is a regression a pass rate hides."""
        # passed runs only: a skipped run takes no time and a failing one stops early
        runs = [d if o == "passed" else None for o, d in zip(self.trend, self.durations, strict=False)]
        *before, now = runs or [None]
        earlier = sorted(d for d in before if d is not None)
        if now is None or len(earlier) < 2:
            return None
        median = statistics.median(earlier)
        if now < 2 * median or now - median < SLOWER_BY:
            return None
        return f"slower · {now:.2f} s, usually {median:.2f} s"

    @property
    def trend_title(self) -> str:
        """The dots' tooltip: each of the last runs' outcome and duration, oldest first."""
        shown = list(zip(self.trend, self.durations or [None] * len(self.trend), strict=False))[-TREND_RUNS:]
        parts = [f"{o or 'absent'}" + (f" {d:.2f} s" if d is not None else "") for o, d in shown]
        return f"Last {len(shown)} runs, oldest first: " + ", ".join(parts)

    @property
    def status(self) -> Status:
        return combine(r.status for r in self.results if r is not None)

    @property
    def disagreement(self) -> str:
        """E.g. "passed on stdio · failed on http" (runs that did not have it are left out)."""
        return " · ".join(
            f"{r.status.replace('_', ' ')} on {label}" for label, r in zip(self.labels, self.results, strict=True) if r
        )

    @property
    def first_error(self) -> str:
        """The first line of the first failure message, for the "Needs attention" list."""
        for result in self.results:
            if result is None:
                continue
            messages = [result.error_message, *(s.error_message for s in result.steps)]
            for message in messages:
                if message:
                    return message.strip().splitlines()[0][:300] if message.strip() else ""
        return ""

    @property
    def outcome(self) -> Outcome:
        return outcome(self.status)

    @cached_property
    def category(self) -> str | None:
        """The failure category (mcp_bdd.failures.KINDS) of the first problem in any run, from the typed error."""
        for result in self.results:
            if result is None:
                continue
            if result.error_kind:
                return result.error_kind
            for step in result.steps:
                if step.error_kind:
                    return step.error_kind
        return None

    @property
    def executed(self) -> list[Scenario]:
        return [r for r in self.results if r is not None and r.status not in ("skipped", "untested")]

    @property
    def inconsistent(self) -> bool:
        """Runs that executed this scenario disagree (passes on one transport, fails on another)."""
        return len({outcome(r.status) for r in self.executed}) > 1

    @property
    def duration(self) -> float:
        return max((r.duration for r in self.results if r is not None), default=0.0)

    def search_text(self) -> str:
        parts = [self.feature_name, self.rule_name or "", self.name, self.location, *self.tags]
        parts += [f"{s.keyword} {s.name}" for s in self.steps]
        return " ".join(parts).lower()


@dataclass
class ExamplesView:
    examples: Examples
    rows: list[tuple[tuple[str, ...], ScenarioView | None]]


@dataclass
class OutlineView:
    id: str
    name: str
    keyword: str
    location: str
    description: tuple[str, ...]
    own_tags: tuple[str, ...]
    steps: tuple[StepText, ...]
    examples: list[ExamplesView]
    scenarios: list[ScenarioView]
    kind: str = "outline"

    @property
    def status(self) -> Status:
        return combine(s.status for s in self.scenarios)

    @property
    def duration(self) -> float:
        return sum(s.duration for s in self.scenarios)


@dataclass
class RuleView:
    id: str
    name: str
    keyword: str
    location: str
    description: tuple[str, ...]
    own_tags: tuple[str, ...]
    background: Background | None
    children: list[ScenarioView | OutlineView]
    errors: list[tuple[str, str]]  # (run label, hook error)
    kind: str = "rule"

    @property
    def status(self) -> Status:
        own = "hook_error" if self.errors else "skipped"
        return combine([own, *(c.status for c in self.children)])

    def scenarios(self) -> list[ScenarioView]:
        out: list[ScenarioView] = []
        for child in self.children:
            out.extend(child.scenarios if isinstance(child, OutlineView) else [child])
        return out

    @property
    def duration(self) -> float:
        return sum(s.duration for s in self.scenarios())


@dataclass
class FeatureView:
    id: str
    name: str
    keyword: str
    filename: str
    location: str
    capability: str
    description: tuple[str, ...]
    own_tags: tuple[str, ...]
    background: Background | None
    children: list[ScenarioView | OutlineView | RuleView]
    results: list[Feature | None]
    errors: list[tuple[str, str]]

    @property
    def status(self) -> Status:
        return combine(r.status for r in self.results if r is not None)

    def scenarios(self) -> list[ScenarioView]:
        out: list[ScenarioView] = []
        for child in self.children:
            if isinstance(child, RuleView):
                out.extend(child.scenarios())
            elif isinstance(child, OutlineView):
                out.extend(child.scenarios)
            else:
                out.append(child)
        return out

    @property
    def duration(self) -> float:
        return max((r.duration for r in self.results if r is not None), default=0.0)


@dataclass
class CapabilityView:
    key: str
    title: str
    features: list[FeatureView]

    @property
    def id(self) -> str:
        return "cap-" + (self.key.replace("/", "-") or "general")

    @property
    def counts(self) -> dict[Outcome, int]:
        return _counts(s.status for f in self.features for s in f.scenarios())


@dataclass
class RunView:
    label: str
    run: Run
    counts: dict[Outcome, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def pass_rate(self) -> float | None:
        return pass_rate(self.counts)


@dataclass(frozen=True)
class CatalogPart:
    """What the page lists of one kind of a server's catalog (the model keeps it bounded:
    report/evidence.py): the records kept in full, those kept by name only that the scenarios
    exercised (each a row), the names of the others, and how many were not kept at all."""

    full: tuple[dict[str, object], ...]
    exercised: tuple[dict[str, object], ...]
    unexercised: tuple[str, ...]
    left_out: int

    @property
    def total(self) -> int:
        return len(self.full) + len(self.exercised) + len(self.unexercised) + self.left_out


@dataclass
class ServerView:
    surface: ServerSurface
    coverage: ServerCoverage | None
    identities: list[tuple[str, ServerSurface]]  # per run: transport/protocol may differ
    #: an earlier server that calls itself by the same name (the same app configured again, over
    #: another protocol or behind auth): this one lists only what differs from it, or was exercised
    same_app_as: ServerView | None = None
    _records: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict, repr=False)

    @property
    def id(self) -> str:
        return "server-" + "".join(c if c.isalnum() else "-" for c in self.surface.server).lower()

    @cached_property
    def _items(self) -> dict[tuple[str, object], CoverageItem]:
        # a lookup per listed record: scanning the items for each made a large catalog quadratic
        items = self.coverage.items if self.coverage is not None else ()
        return {(i.kind, i.name): i for i in reversed(items)}

    def shows(self, kind: str, field: str, key: str, record: dict[str, object]) -> bool:
        """Whether a catalog record gets a row here: always, unless the same app's first server
        listed the same record and this server never exercised it."""
        earlier = self.same_app_as
        if earlier is None:
            return True
        item = self.item(kind, record.get(key))
        if item is not None and item.exercised:
            return True
        return earlier.record(field, key, record.get(key)) != record

    def record(self, field: str, key: str, name: object) -> dict[str, object] | None:
        """This server's catalog record of a kind (`field`) by its name or URI (`key`), or None; a
        lookup, as a large catalog asked of every record of another made the page quadratic."""
        by_name = self._records.get(field)
        if by_name is None:
            records = getattr(self.surface, field) or ()
            by_name = self._records[field] = {str(r.get(key)): r for r in reversed(records) if isinstance(r, dict)}
        return by_name.get(str(name))

    def item(self, kind: str, name: object) -> CoverageItem | None:
        return self._items.get((kind, name))

    def catalog(self, kind: str, field_name: str, key: str) -> CatalogPart | None:
        """`kind` ("tool") of the surface's `field_name` ("tools"), as the page lists it."""
        records: tuple[dict[str, object], ...] | None = getattr(self.surface, field_name)
        if records is None:
            return None
        cut = len(records) - self.surface.named_only.get(field_name, 0)
        exercised, unexercised = [], []
        for record in records[cut:]:
            item = self.item(kind, record.get(key))
            if item is not None and item.exercised:
                exercised.append(record)
            else:
                unexercised.append(str(record.get(key)))
        left_out = self.surface.left_out.get(field_name, 0)
        return CatalogPart(records[:cut], tuple(exercised), tuple(unexercised), left_out)

    def uncatalogued(self) -> list[CoverageItem]:
        return [] if self.coverage is None else [i for i in self.coverage.items if not i.in_catalog]


@dataclass
class GlossaryEntry:
    step_type: str
    pattern: str
    location: str
    summary: str
    example: str
    uses: int

    @property
    def id(self) -> str:
        """Short and stable ("g-1a2b3c4d"): every step of the page links here, so a long slug of
        the phrase, repeated a thousand times, was a tenth of a large report."""
        return "g-" + hashlib.sha1(f"{self.step_type} {self.pattern}".encode()).hexdigest()[:8]


@dataclass
class GlossaryGroup:
    title: str
    entries: list[GlossaryEntry]


@dataclass
class ReportView:
    title: str
    runs: list[RunView]
    capabilities: list[CapabilityView]
    servers: list[ServerView]
    glossary: list[GlossaryGroup]
    scenarios: list[ScenarioView] = field(default_factory=list)
    history: list[Entry] = field(default_factory=list)  # past runs of the same label, then this one
    links: dict[str, str] = field(default_factory=dict)  # requirement-link templates of the runs

    def link(self, tag: str) -> Link | None:
        """The requirement link of a tag (`@JIRA-123` under `[tool.mcp-bdd.links]`), if any."""
        found = requirement_links((tag,), self.links) if self.links else ()
        return found[0] if found else None

    @property
    def merged(self) -> bool:
        return len(self.runs) > 1

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    @property
    def counts(self) -> dict[Outcome, int]:
        return _counts(s.status for s in self.scenarios)

    @property
    def step_count(self) -> int:
        return sum(len(s.steps) for s in self.scenarios)

    @property
    def feature_count(self) -> int:
        return sum(len(c.features) for c in self.capabilities)

    @property
    def open_passed(self) -> bool:
        """Small reports open every scenario; big ones only those that need a look."""
        return len(self.scenarios) <= 150

    @cached_property
    def names(self) -> dict[str, str]:
        """Scenario id -> the title the page shows (outline rows by their example values)."""
        return {s.id: s.name for s in self.scenarios}

    @cached_property
    def definition_ids(self) -> dict[str, str]:
        """Step-definition location -> glossary anchor, to link each step to its phrase."""
        return {e.location: e.id for g in self.glossary for e in g.entries}

    @property
    def pass_rate(self) -> float | None:
        return pass_rate(self.counts)

    @property
    def attention(self) -> list[ScenarioView]:
        """Scenarios a reader should look at first: not passed (and not merely skipped), or inconsistent."""
        return [s for s in self.scenarios if s.outcome in ("failed", "errored", "pending") or s.flaky]

    @property
    def changes(self) -> dict[str, int]:
        """How many scenarios are flaky, newly failing, still failing, fixed, slower (against the history)."""
        out = {"flaky": 0, "new failure": 0, "still failing": 0, "fixed": 0, "slower": 0}
        for s in self.scenarios:
            change = s.change
            if s.flaky:
                out["flaky"] += 1
            if s.slowdown:
                out["slower"] += 1
            if change:
                out[change.split(" · ")[0]] += 1
        return out

    def trend_points(self, values: list[float | None], width: float = 200, height: float = 40) -> str:
        """SVG polyline points for a sparkline of `values` (None left out), scaled to the box."""
        known = [v for v in values if v is not None]
        if not known:
            return ""
        top, low = max(known), min(known)
        span = (top - low) or 1.0
        step = width / max(1, len(values) - 1)
        return " ".join(
            f"{i * step:.1f},{height - 2 - (v - low) / span * (height - 4):.1f}"
            for i, v in enumerate(values)
            if v is not None
        )

    @property
    def categories(self) -> list[tuple[str, str, int]]:
        """(kind, label, scenarios) for each failure category of the run, in the order of KINDS."""
        counts: dict[str, int] = {}
        for s in self.scenarios:
            kind = s.category
            if kind is not None:
                counts[kind] = counts.get(kind, 0) + 1
        order = [*KINDS, *sorted(k for k in counts if k not in KINDS)]
        return [(k, kind_label(k), counts[k]) for k in order if k in counts]

    def index(self) -> list[dict[str, object]]:
        """The search/filter index the page's script reads (embedded as JSON)."""
        return [
            {
                "id": s.id,
                "tags": list(s.tags),
                "outcome": s.outcome,
                "kind": s.category,
                "flaky": s.flaky,
                "text": s.search_text(),
            }
            for s in self.scenarios
        ]


# -- building --------------------------------------------------------------------------------------


def producing_call(
    steps: Sequence[Step], index: int, hooks: Sequence[Exchange] = (), seq: int | None = None
) -> tuple[Exchange, ...]:
    """The call that produced the value step `index` checked, and its answer: the request the
    failure quotes (`seq`), else the last request up to that step (a Then step usually checks
    what an earlier When step's call returned), else the last one the before hooks made (`hooks`)."""
    for exchanges in [*(s.evidence.exchanges for s in reversed(steps[: index + 1])), hooks]:
        for x in reversed(exchanges):
            if x.kind == "request" and (seq is None or x.seq == seq):
                answers = [a for a in exchanges if a.related == x.seq and a.kind in ("response", "error")]
                return (x, *answers[-1:])
    return producing_call(steps, index, hooks) if seq is not None else ()


class _Builder:
    def __init__(self, runs: Sequence[Run]) -> None:
        self.runs = runs
        self.n = len(runs)
        self.scenarios: list[ScenarioView] = []

    def steps(self, results: list[Scenario | None]) -> list[StepView]:
        primary = _first(results)
        views = []
        for index, step in enumerate(primary.steps):
            per_run: list[Step | None] = []
            for result in results:
                ok = result is not None and index < len(result.steps)
                per_run.append(result.steps[index] if ok and result is not None else None)
            calls = [
                producing_call(r.steps, index, r.evidence.exchanges, s.failure.call_seq if s.failure else None)
                if r and s and s.error_message
                else ()
                for r, s in zip(results, per_run, strict=True)
            ]
            views.append(StepView(step.keyword, step.name, step.text, step.table, step.background, per_run, calls))
        return views

    def scenario(
        self, results: list[Scenario | None], inherited: tuple[str, ...], feature: str, rule: str | None
    ) -> ScenarioView:
        primary = _first(results)
        view = ScenarioView(
            id=primary.id,
            name=primary.name,
            keyword=primary.keyword,
            location=primary.location,
            description=primary.description,
            own_tags=primary.tags,
            tags=tuple(dict.fromkeys((*inherited, *primary.tags))),
            results=results,
            steps=self.steps(results),
            example=primary.example,
            feature_name=feature,
            rule_name=rule,
            labels=[r.label for r in self.runs],
        )
        self.scenarios.append(view)
        return view

    def outline(
        self, results: list[Outline | None], inherited: tuple[str, ...], feature: str, rule: str | None
    ) -> OutlineView:
        primary = _first(results)
        scenarios = [
            self.scenario(row, inherited, feature, rule)
            for row in _align([r.scenarios if r else () for r in results], lambda s: s.id)
        ]
        by_ref = {(s.example.examples, s.example.row): s for s in scenarios if s.example is not None}
        examples = [
            ExamplesView(ex, [(cells, by_ref.get((n, m))) for m, cells in enumerate(ex.table.rows, 1)])
            for n, ex in enumerate(primary.examples, 1)
        ]
        return OutlineView(
            id=primary.id,
            name=primary.name,
            keyword=primary.keyword,
            location=primary.location,
            description=primary.description,
            own_tags=primary.tags,
            steps=primary.steps,
            examples=examples,
            scenarios=scenarios,
        )

    def children(
        self,
        groups: list[Sequence[Scenario | Outline | Rule]],
        inherited: tuple[str, ...],
        feature: str,
        rule: str | None,
    ) -> list[ScenarioView | OutlineView | RuleView]:
        out: list[ScenarioView | OutlineView | RuleView] = []
        for row in _align(groups, lambda c: c.id):
            # Ids are unique within a feature whatever the kind, so a row holds one kind only.
            primary = _first(row)
            if isinstance(primary, Rule):
                out.append(self.rule(row, inherited, feature))  # type: ignore[arg-type]
            elif isinstance(primary, Outline):
                out.append(self.outline(row, inherited, feature, rule))  # type: ignore[arg-type]
            else:
                out.append(self.scenario(row, inherited, feature, rule))  # type: ignore[arg-type]
        return out

    def rule(self, results: list[Rule | None], inherited: tuple[str, ...], feature: str) -> RuleView:
        primary = _first(results)
        tags = (*inherited, *primary.tags)
        children = self.children([r.children if r else () for r in results], tags, feature, primary.name)
        return RuleView(
            id=primary.id,
            name=primary.name,
            keyword=primary.keyword,
            location=primary.location,
            description=primary.description,
            own_tags=primary.tags,
            background=primary.background,
            children=children,  # type: ignore[arg-type]
            errors=self.errors(results),
        )

    def errors(self, results: Sequence[Feature | Rule | None]) -> list[tuple[str, str]]:
        return [
            (run.label, r.error_message)
            for run, r in zip(self.runs, results, strict=True)
            if r is not None and r.error_message
        ]

    def feature(self, results: list[Feature | None], capability: str) -> FeatureView:
        primary = _first(results)
        children = self.children([r.children if r else () for r in results], primary.tags, primary.name, None)
        return FeatureView(
            id=primary.id,
            name=primary.name,
            keyword=primary.keyword,
            filename=primary.filename,
            location=primary.location,
            capability=capability,
            description=primary.description,
            own_tags=primary.tags,
            background=primary.background,
            children=children,
            results=results,
            errors=self.errors(results),
        )


_CAPABILITY_TAG = re.compile(r"capability[:=](.+)", re.IGNORECASE)


def _capabilities(features: Sequence[Feature]) -> dict[str, str]:
    """Feature file -> its capability: a `@capability:<name>` tag, else its folder relative to the
    folder all features share, else (a feature straight in that folder) the feature file's own name.

    So a flat `features/` reads as one capability per feature file, never as one "General" heap.
    """
    filenames = [f.filename for f in features]
    dirs = [os.path.dirname(f.replace("\\", "/")) for f in filenames]
    if not dirs:
        return {}
    root = os.path.commonpath(dirs) if all(dirs) else ""
    if len(set(dirs)) == 1:
        root = dirs[0]
    out = {}
    for feature, name, folder in zip(features, filenames, dirs, strict=True):
        tagged = next((m[1] for t in feature.tags if (m := _CAPABILITY_TAG.fullmatch(t))), None)
        rel = os.path.relpath(folder, root) if root else folder
        if tagged:
            out[name] = tagged.strip("/")
        elif rel not in (".", ""):
            out[name] = rel.replace("\\", "/")
        else:
            out[name] = os.path.splitext(os.path.basename(name.replace("\\", "/")))[0]
    return out


def capability_title(key: str) -> str:
    if not key:
        return "General"
    return " \u203a ".join(part.replace("_", " ").replace("-", " ").capitalize() for part in key.split("/"))


def _glossary(runs: Sequence[Run]) -> list[GlossaryGroup]:
    rows = _align([r.glossary for r in runs], lambda d: f"{d.step_type}\0{d.pattern}")
    groups: dict[str, list[GlossaryEntry]] = {}
    for row in rows:
        primary: StepDef = _first(row)
        summary, example = split_doc(primary.doc)
        location = primary.location
        path = location.rsplit(":", 1)[0]
        title = os.path.splitext(os.path.basename(path))[0].replace("_", " ").capitalize() or "Steps"
        groups.setdefault(title, []).append(
            GlossaryEntry(
                step_type=primary.step_type,
                pattern=primary.pattern,
                location=location,
                summary=summary,
                example=example,
                uses=sum(d.uses for d in row if d is not None),
            )
        )
    return [GlossaryGroup(title, entries) for title, entries in groups.items()]


def _servers(runs: Sequence[Run], features: Sequence[Feature]) -> list[ServerView]:
    rows = _align([r.servers for r in runs], lambda s: s.server)
    merged: list[ServerSurface] = []
    views: list[ServerView] = []
    for row in rows:
        surface: ServerSurface | None = None
        for item in row:
            if item is not None:
                surface = item if surface is None else merge_surfaces(surface, item)
        assert surface is not None
        merged.append(surface)
        identities = [(run.label, s) for run, s in zip(runs, row, strict=True) if s is not None]
        views.append(ServerView(surface, None, identities))
    coverage = {c.server: c for c in compute_coverage(features, merged)}
    for view in views:
        view.coverage = coverage.pop(view.surface.server, None)
    for rest in coverage.values():  # requests to servers that never sent their surface
        views.append(ServerView(ServerSurface(server=rest.server), rest, []))
    _note_same_apps(views)
    return views


def _note_same_apps(views: Sequence[ServerView]) -> None:
    """A server that calls itself as an earlier one does is the same app configured again: it lists
    only the records that differ from the first one's or that it exercised (three configurations of
    one app made the report three catalogs long)."""
    first: dict[str, ServerView] = {}
    for view in views:
        name = view.surface.name
        if name is None:
            continue
        if name in first:
            view.same_app_as = first[name]
        else:
            first[name] = view


def current_entry(view: ReportView) -> Entry:
    """This report as a history entry (a merged report: each scenario's combined outcome)."""
    return Entry(
        label=view.runs[0].label if not view.merged else "+".join(view.labels),
        started_at=max(r.run.started_at for r in view.runs),  # the newest leg: re-merging keeps its entry
        duration=max(r.run.duration for r in view.runs),
        counts=view.counts,
        scenarios={s.id: (s.outcome, s.duration, s.category) for s in view.scenarios},
    )


def build_report(runs: Sequence[Run], title: str | None = None, history: Sequence[Entry] = ()) -> ReportView:
    """Align `runs` (one or more) into the view the template renders; `history`: earlier runs, oldest first."""
    if not runs:
        raise ValueError("no runs to report")
    builder = _Builder(runs)
    rows = _align([r.features for r in runs], lambda f: f.id)
    capability_of = _capabilities([_first(row) for row in rows])
    capabilities: dict[str, CapabilityView] = {}
    for row in rows:
        key = capability_of[_first(row).filename]
        view = builder.feature(row, key)
        capabilities.setdefault(key, CapabilityView(key, capability_title(key), [])).features.append(view)
    all_features = [f for r in runs for f in r.features]
    run_views = [
        RunView(r.label, r, _counts(s.status for f in r.features for s in walk_scenarios(f.children))) for r in runs
    ]
    report = ReportView(
        title=title or runs[0].title,
        runs=run_views,
        capabilities=sorted(capabilities.values(), key=lambda c: (c.key == "", c.key)),
        servers=_servers(runs, all_features),
        glossary=_glossary(runs),
        scenarios=builder.scenarios,
        links={k: v for r in runs for k, v in r.links.items()},
    )
    if history:
        report.history = [*history, current_entry(report)]
        for s in report.scenarios:
            s.trend = [e.scenarios[s.id][0] if s.id in e.scenarios else None for e in report.history]
            s.durations = [e.scenarios[s.id][1] if s.id in e.scenarios else None for e in report.history]
    return report
