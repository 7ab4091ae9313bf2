"""Collect a `Run` from behave's formatter callbacks.

What behave 1.3.3 tells a formatter, and when (read from its runner/model source):
- `feature(f)` / `rule(r)` ... `rule_finished()` / `eof()` bracket a feature and its rules;
  `eof()` comes after the after_feature hook, so statuses are final there, which is where each
  feature is turned into a frozen record (then its behave objects are let go).
- `scenario(s)` once per scenario (outline rows arrive as plain scenarios whose `_row` tells
  the Examples row); then `step(x)` for every step up front; then, per executed step,
  `match(m)` -> `embedding(mime, data)`* (from before_step/after_step/the step) -> `result(x)`.
  So an embedding between `match` and `result` belongs to that step, any other one to the
  scenario (before_scenario / after_scenario hooks). Steps not executed get no callback, so
  when none ran (a before hook failed) nothing from behave marks where the after hooks begin:
  mcp-bdd's hooks say it (`after_hooks_begin`, called by environment.py).
- Hook errors set `hook_failed` and `error_message` on the feature/rule/scenario/step.

behave ships no type information: its objects are described here by what the collector reads of
them (the `Behave*` protocols), and whatever else it reads it reads with `getattr` and a default.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

from mcp_bdd.errors import ExpectationFailed, kind_of
from mcp_bdd.report.evidence import PAYLOAD_LIMIT, mask_again, merge_surfaces, parse_attachment
from mcp_bdd.report.model import (
    Attachment,
    Background,
    Evidence,
    ExampleRef,
    Examples,
    Exchange,
    Failure,
    Feature,
    Outline,
    Rule,
    Run,
    Scenario,
    ServerSurface,
    Status,
    StderrTail,
    Step,
    StepDef,
    StepText,
    Table,
    combine,
    ran,
    walk_scenarios,
)
from mcp_bdd.secrets import generation, mask, mask_data
from mcp_bdd.transcript import HOOKS_MIME, TEARDOWN_MIME

__all__ = ["BehaveFeature", "BehaveScenario", "RunCollector", "feature_id", "row_title", "slug"]


class BehaveRow(Protocol):
    cells: Sequence[str]


class BehaveTable(Protocol):
    headings: Sequence[str]
    rows: Sequence[BehaveRow]


class BehaveStepText(Protocol):
    """A step as written: behave's Step (the steps of a Background or an outline's template too)."""

    keyword: str
    name: str
    text: str | None
    table: BehaveTable | None


class BehaveStep(BehaveStepText, Protocol):
    step_type: str
    status: object  # behave's Status enum (its `name` is read)
    duration: float | None


class BehaveBackground(Protocol):
    keyword: str
    name: str | None
    steps: Sequence[BehaveStepText]


class BehaveScenario(Protocol):
    name: str
    keyword: str
    status: object
    hook_failed: bool
    exception: BaseException | None
    description: Sequence[str]
    tags: Sequence[str]
    background: BehaveBackground | None
    background_steps: Sequence[BehaveStep]
    all_steps: Sequence[BehaveStep]


class BehaveExamples(Protocol):
    keyword: str
    name: str | None
    table: BehaveTable | None
    tags: Sequence[str]


class BehaveOutline(Protocol):
    name: str
    keyword: str
    description: Sequence[str]
    tags: Sequence[str]
    steps: Sequence[BehaveStepText]
    examples: Sequence[BehaveExamples]
    scenarios: Sequence[BehaveScenario]


class BehaveRule(Protocol):
    """A Rule; also what a Feature shares with it (run_items: its scenarios, outlines and rules,
    each telling which it is by its `type`)."""

    name: str
    keyword: str
    hook_failed: bool
    description: Sequence[str]
    tags: Sequence[str]
    background: BehaveBackground | None
    run_items: Sequence[object]


class BehaveFeature(BehaveRule, Protocol):
    filename: str


# behave's Status enum names -> ours (cleanup errors are errors; dry-run "untested_*" keep meaning).
_STATUS: dict[str, Status] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "hook_error": "hook_error",
    "cleanup_error": "error",
    "undefined": "undefined",
    "untested_undefined": "undefined",
    "pending": "pending",
    "pending_warn": "pending",
    "untested_pending": "pending",
    "skipped": "skipped",
    "xfailed": "passed",
    "xpassed": "failed",
}


def _status(value: object) -> Status:
    return _STATUS.get(str(getattr(value, "name", value)), "untested")


def slug(text: str) -> str:
    """An anchor-friendly form of `text` (kept stable: deep links and merges rely on it)."""
    return re.sub(r"[^\w]+", "-", text.lower()).strip("-_") or "x"


def feature_id(filename: str) -> str:
    parts = [p for p in re.split(r"[\\/]", filename) if p and p != "."]
    if len(parts) > 1 and parts[0] == "features":
        parts = parts[1:]
    name = "/".join(parts)
    return slug(name[: -len(".feature")] if name.endswith(".feature") else name)


class _Ids:
    """Unique, deterministic ids within one feature (same file -> same ids in every run)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def make(self, base: str) -> str:
        candidate, n = base, 1
        while candidate in self.seen:
            n += 1
            candidate = f"{base}-{n}"
        self.seen.add(candidate)
        return candidate


@dataclass
class _Acc:
    exchanges: list[Exchange] = field(default_factory=list)
    stderr: list[StderrTail] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)

    def freeze(self) -> Evidence:
        return Evidence(exchanges=tuple(self.exchanges), stderr=tuple(self.stderr), attachments=tuple(self.attachments))

    def mask_again(self) -> None:
        self.exchanges = [mask_again(e) for e in self.exchanges]
        self.stderr = [mask_again(s) for s in self.stderr]
        self.attachments = [mask_again(a) for a in self.attachments]


_NO_EVIDENCE = _Acc()
#: The hooks' evidence says which side of the steps it belongs to (behave skips before_step for an
#: undefined step, so the position of an attachment cannot tell)
_PHASES = {HOOKS_MIME: "before", TEARDOWN_MIME: "after"}


def _texts(lines: str | Iterable[object] | None) -> tuple[str, ...]:
    if not lines:
        return ()
    if isinstance(lines, str):
        return tuple(lines.splitlines())
    return tuple(str(line) for line in lines)


def _tags(tags: Iterable[object] | None) -> tuple[str, ...]:
    return tuple(str(t) for t in tags or ())


def _location(item: object) -> str:
    return f"{getattr(item, 'filename', '?')}:{getattr(item, 'line', 0)}"


def _table(table: BehaveTable | None) -> Table | None:
    if table is None:
        return None
    return Table(
        headings=tuple(str(h) for h in table.headings),
        rows=tuple(tuple(str(c) for c in row.cells) for row in table.rows),
    )


def _step_text(step: BehaveStepText) -> StepText:
    text = step.text
    return StepText(
        keyword=str(step.keyword),
        name=str(step.name),
        text=None if text is None else str(text),
        table=_table(step.table),
    )


def _background(background: BehaveBackground | None) -> Background | None:
    if background is None:
        return None
    return Background(
        keyword=str(background.keyword),
        name=str(background.name or ""),
        location=_location(background),
        steps=tuple(_step_text(s) for s in background.steps),
    )


def _error(item: object) -> str | None:
    message = getattr(item, "error_message", None)
    return mask(str(message)) if message else None


def _masked(value: object, limit: int) -> object:
    """A JSON-able copy of a value from a failure, secrets masked; too big -> its cut text."""
    value = mask_data(value, any_key=True)
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return mask(repr(value))[:limit]
    if len(text) > limit:
        return text[:limit] + f"… ({len(text)} characters in all)"
    return json.loads(text)


def _failure(exc: object, limit: int) -> Failure | None:
    """The parts of an ExpectationFailed; None for any other exception (its message says it all)."""
    if not isinstance(exc, ExpectationFailed):
        return None
    diff = exc.diff
    expected = diff.expected if diff else exc.expected
    actual = diff.actual if diff else exc.actual
    has_expected, has_actual = bool(diff) or exc.has_expected, bool(diff) or exc.has_actual
    return Failure(
        sentence=mask(exc.sentence),
        title=mask(exc.title),
        expected=_masked(expected, limit) if has_expected else None,
        actual=_masked(actual, limit) if has_actual else None,
        has_expected=has_expected,
        has_actual=has_actual,
        path=exc.path,
        details=None if diff or not exc.details else mask(exc.details),
        tip=mask(exc.tip) if exc.tip else None,
        differences=diff.paths if diff else (),
        call_seq=exc.exchange_seq,
    )


def _hook_kind(scenario: BehaveScenario, steps: tuple[Step, ...]) -> str | None:
    """A scenario hook's failure category: a plain exception before any step ran is the scenario's
    setup failing; after the steps (after_scenario) it is an error like any other."""
    return kind_of(scenario.exception, untyped="error" if ran(steps) else "setup")


def _step_kind(step: object, status: str) -> str | None:
    if status in ("passed", "skipped", "untested"):
        return None
    if status in ("undefined", "pending"):
        return "usage"
    return kind_of(getattr(step, "exception", None)) or "error"


class RunCollector:
    """Receives behave's formatter callbacks; `finish()` returns the frozen Run."""

    def __init__(
        self, *, label: str = "run", title: str = "Living documentation", payload_limit: int = PAYLOAD_LIMIT
    ) -> None:
        self.label = label
        self.title = title
        self.payload_limit = payload_limit
        self.started_at = time.time()
        self.definition_uses: Counter[str] = Counter()
        self._features: list[Feature] = []
        self._surfaces: dict[str, ServerSurface] = {}
        self._feature: BehaveFeature | None = None
        self._feature_started = 0.0
        self._steps: list[BehaveStep] = []
        self._index = 0
        self._in_step = False
        self._after_hooks = False  # the scenario's after hooks have begun (environment.py says so)
        self._open: BehaveScenario | None = None  # the scenario whose wall-clock time is running
        self._secrets_at_start = 0  # secrets.generation() when the open scenario began
        self._started: dict[int, float] = {}
        self._wall: dict[int, float] = {}
        self._step_evidence: dict[int, _Acc] = {}
        self._scenario_evidence: dict[int, _Acc] = {}  # before the first step
        self._scenario_after: dict[int, _Acc] = {}  # after a step ran
        self._definitions: dict[int, str] = {}
        self._run_error: tuple[str, str] | None = None  # (kind, message): the run's setup failed

    # -- formatter callbacks -------------------------------------------------------------------
    def _boundary(self) -> None:
        """Close the running scenario's clock: its after_scenario hook has run by now."""
        if self._open is not None:
            key = id(self._open)
            self._wall[key] = time.perf_counter() - self._started.pop(key)
            if generation() != self._secrets_at_start:
                self._mask_again(key)
            self._open = None

    def _mask_again(self, key: int) -> None:
        """The scenario remembered a secret it had already seen (a token its server issued, then
        remembered as `access_token`): its evidence is masked again, now that the value is known."""
        accs = [self._scenario_evidence.get(key), self._scenario_after.get(key)]
        accs += [self._step_evidence.get(id(step)) for step in self._steps]
        for acc in accs:
            if acc is not None:
                acc.mask_again()

    def feature(self, feature: BehaveFeature) -> None:
        if self._feature is not None and self._feature is not feature:
            self.eof()  # a feature that never got its eof (aborted run)
        self._boundary()
        self._feature = feature
        self._feature_started = time.perf_counter()

    def rule(self, rule: object) -> None:
        self._boundary()

    def rule_finished(self) -> None:
        self._boundary()

    def scenario(self, scenario: BehaveScenario) -> None:
        self._boundary()
        self._open = scenario
        self._started[id(scenario)] = time.perf_counter()
        self._secrets_at_start = generation()
        self._steps = list(scenario.all_steps)
        self._index = 0
        self._in_step = False
        self._after_hooks = False

    def after_hooks_begin(self) -> None:
        """The open scenario's after hooks start: what they attach goes after the steps."""
        self._after_hooks = True

    def run_failed(self, kind: str, message: str) -> None:
        """The run's setup (before_all) failed: nothing ran, and this is why."""
        self._run_error = (kind, mask(message))

    def match(self, match: object) -> None:
        self._in_step = True
        location = getattr(match, "location", None)
        if location and self._index < len(self._steps):
            self._definitions[id(self._steps[self._index])] = str(location)
            self.definition_uses[str(location)] += 1

    def result(self, step: object) -> None:
        self._in_step = False
        self._index += 1

    def embedding(self, mime_type: str, data: bytes) -> None:
        parsed = parse_attachment(mime_type, bytes(data), self.payload_limit)
        if isinstance(parsed, ServerSurface):
            old = self._surfaces.get(parsed.server)
            self._surfaces[parsed.server] = parsed if old is None else merge_surfaces(old, parsed)
            return
        phase = _PHASES.get(mime_type)
        if phase is None and self._in_step and self._index < len(self._steps):
            acc = self._step_evidence.setdefault(id(self._steps[self._index]), _Acc())
        elif self._open is not None:
            # anything else goes where it came: before the first step's result, or after the steps
            before = phase == "before" if phase else self._index == 0 and not self._after_hooks
            hooks = self._scenario_evidence if before else self._scenario_after
            acc = hooks.setdefault(id(self._open), _Acc())
        else:
            return  # before_all/before_feature attachments have no scenario to sit under
        if isinstance(parsed, tuple):
            acc.exchanges.extend(parsed)
        elif isinstance(parsed, StderrTail):
            acc.stderr.append(parsed)
        else:
            acc.attachments.append(parsed)

    def eof(self) -> None:
        self._boundary()
        if self._feature is None:
            return
        self._features.append(self._build_feature(self._feature))
        self._feature = None
        self._steps = []
        self._started.clear()
        self._wall.clear()
        self._step_evidence.clear()
        self._scenario_evidence.clear()
        self._scenario_after.clear()
        self._definitions.clear()

    def finish(self, glossary: tuple[StepDef, ...] = (), meta: dict[str, str] | None = None) -> Run:
        self.eof()
        features = tuple(self._features)
        return Run(
            label=self.label,
            title=self.title,
            started_at=self.started_at,
            duration=time.time() - self.started_at,
            status=combine(f.status for f in features) if features else "untested",
            features=features,
            servers=tuple(self._surfaces.values()),
            glossary=glossary,
            meta=meta or {},
            error_kind=self._run_error[0] if self._run_error else None,
            error_message=self._run_error[1] if self._run_error else None,
        )

    # -- building frozen records ---------------------------------------------------------------
    def _build_feature(self, feature: BehaveFeature) -> Feature:
        fid = feature_id(str(feature.filename))
        ids = _Ids()
        ids.seen.add(fid)
        children = tuple(self._child(item, fid, ids) for item in feature.run_items)
        return Feature(
            id=fid,
            name=str(feature.name),
            keyword=str(feature.keyword),
            filename=str(feature.filename),
            location=_location(feature),
            status="hook_error" if feature.hook_failed else combine(c.status for c in children),
            duration=time.perf_counter() - self._feature_started,
            description=_texts(feature.description),
            tags=_tags(feature.tags),
            background=_background(feature.background),
            children=children,
            error_message=_error(feature),
        )

    def _child(self, item: object, prefix: str, ids: _Ids) -> Scenario | Outline | Rule:
        kind = getattr(item, "type", "scenario")  # behave's run items say which they are
        if kind == "rule":
            return self._rule(cast(BehaveRule, item), prefix, ids)
        if kind == "scenario_outline":
            return self._outline(cast(BehaveOutline, item), prefix, ids)
        scenario = cast(BehaveScenario, item)
        return self._scenario(scenario, ids.make(f"{prefix}--{slug(str(scenario.name))}"))

    def _rule(self, rule: BehaveRule, prefix: str, ids: _Ids) -> Rule:
        rid = ids.make(f"{prefix}--{slug(str(rule.name))}")
        children = tuple(self._child(item, rid, ids) for item in rule.run_items)
        assert all(not isinstance(c, Rule) for c in children)  # Gherkin has no nested rules
        start, end = getattr(rule, "run_starttime", 0), getattr(rule, "run_endtime", 0)
        scenarios = list(walk_scenarios(children))
        return Rule(
            id=rid,
            name=str(rule.name),
            keyword=str(rule.keyword),
            location=_location(rule),
            status="hook_error" if rule.hook_failed else combine(c.status for c in children),
            duration=(end - start) if start and end else sum(s.duration for s in scenarios),
            description=_texts(rule.description),
            tags=_tags(rule.tags),
            background=_background(rule.background),
            children=children,  # type: ignore[arg-type]
            error_message=_error(rule),
        )

    def _outline(self, outline: BehaveOutline, prefix: str, ids: _Ids) -> Outline:
        oid = ids.make(f"{prefix}--{slug(str(outline.name))}")
        scenarios = []
        titles: set[str] = set()
        for scenario in outline.scenarios:
            row = getattr(scenario, "_row", None)
            ref = None
            match = re.fullmatch(r"(\d+)\.(\d+)", str(getattr(row, "id", "")))
            if match:
                ref = ExampleRef(examples=int(match[1]), row=int(match[2]))
            sid = ids.make(f"{oid}--{slug(str(scenario.name))}")
            title = row_title(
                str(scenario.name), str(outline.name), getattr(row, "headings", ()), getattr(row, "cells", ())
            )
            if title in titles and ref is not None:  # the same values twice: CI tools need distinct names
                title = f"{title} (row {ref.examples}.{ref.row})"
            titles.add(title)
            scenarios.append(self._scenario(scenario, sid, ref, title))
        examples = tuple(
            Examples(
                keyword=str(ex.keyword),
                name=str(ex.name or ""),
                location=_location(ex),
                table=_table(ex.table) or Table(headings=(), rows=()),
                tags=_tags(ex.tags),
            )
            for ex in outline.examples
        )
        return Outline(
            id=oid,
            name=str(outline.name),
            keyword=str(outline.keyword),
            location=_location(outline),
            status=combine(s.status for s in scenarios),
            duration=sum(s.duration for s in scenarios),
            description=_texts(outline.description),
            tags=_tags(outline.tags),
            steps=tuple(_step_text(s) for s in outline.steps),
            examples=examples,
            scenarios=tuple(scenarios),
        )

    def _scenario(
        self, scenario: BehaveScenario, sid: str, example: ExampleRef | None = None, title: str | None = None
    ) -> Scenario:
        background = {id(s) for s in scenario.background_steps} if scenario.background else set()
        steps = tuple(self._step(s, id(s) in background) for s in scenario.all_steps)
        raw = _status(scenario.status)
        status: Status = raw
        if scenario.hook_failed:
            status = "hook_error"
        elif raw == "error":
            worst = combine(s.status for s in steps)
            status = worst if worst in ("undefined", "pending", "hook_error") else "error"
        key = id(scenario)
        duration = self._wall.get(key)
        return Scenario(
            id=sid,
            name=title or str(scenario.name),
            keyword=str(scenario.keyword),
            location=_location(scenario),
            status=status,
            duration=duration if duration is not None else sum(s.duration for s in steps),
            description=_texts(scenario.description),
            tags=_tags(scenario.tags),
            steps=steps,
            error_message=_error(scenario) if scenario.hook_failed else None,
            error_kind=_hook_kind(scenario, steps) if scenario.hook_failed else None,
            evidence=self._scenario_evidence.get(key, _NO_EVIDENCE).freeze(),
            after_evidence=self._scenario_after.get(key, _NO_EVIDENCE).freeze(),
            example=example,
            skip_reason=mask(str(reason))
            if status == "skipped" and (reason := getattr(scenario, "skip_reason", None))
            else None,
        )

    def _step(self, step: BehaveStep, background: bool) -> Step:
        status = _status(step.status)
        error = _error(step)
        if status == "undefined" and not error:
            error = (
                f"Undefined step: no step definition matches “{step.keyword} {step.name}”.\n"
                "Tip: list the vocabulary with `behave --steps-catalog` (or see the Glossary) and use one "
                "of its phrases, or write a step definition for this one."
            )
        return Step(
            keyword=str(step.keyword),
            name=str(step.name),
            step_type=str(step.step_type),
            location=_location(step),
            status=status,
            duration=float(step.duration or 0.0),
            text=None if step.text is None else str(step.text),
            table=_table(step.table),
            error_message=error if status not in ("passed", "skipped") else None,
            error_kind=_step_kind(step, status),
            failure=_failure(getattr(step, "exception", None), self.payload_limit) if status == "failed" else None,
            background=background,
            definition=self._definitions.get(id(step)),
            evidence=self._step_evidence.get(id(step), _NO_EVIDENCE).freeze(),
        )


_ANNOTATION = re.compile(r"\s+-- @\d+\.\d+(?:\s.*)?$")


def row_title(name: str, template: str, headings: Sequence[str], cells: Sequence[str]) -> str:
    """An outline row's title from its example values: "Multiplying 4 by 5", not "... -- @1.2 small numbers".

    behave names each row "<outline name with the values filled in> -- @<table>.<row> <examples name>";
    without placeholders in the outline's name, the values themselves make the title. Titled here, in
    the model, so the HTML, JUnit, Cucumber JSON/Messages and the step summary all say the same.
    """
    base = _ANNOTATION.sub("", name).strip()
    if base and base != template.strip():
        return base
    return ", ".join(f"{h} = {c}" for h, c in zip(headings, cells, strict=False)) or base or name
