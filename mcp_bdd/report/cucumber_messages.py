"""Cucumber Messages (NDJSON) from the run model: the stream every Cucumber tool reads.

    behave -f cucumber-messages -o reports/run.ndjson features/

One JSON envelope a line, in the order Cucumber itself writes them: meta; per feature its
source, gherkinDocument and pickles; stepDefinitions and hooks; testRunStarted; every testCase;
then per scenario testCaseStarted, (testStepStarted, attachment*, testStepFinished)*,
testCaseFinished; testRunFinished. Checked against the JSON schemas of `@cucumber/messages`
and rendered by `@cucumber/html-formatter` in tests/report/test_cucumber_outputs.py.

Built from the run model, not from behave, so Rules, Backgrounds (a Rule's adds to its
Feature's) and outline rows come out as Gherkin has them: an outline row's pickle points at
the outline *and* its Examples row. What the model does not keep (the columns of cells, the
lines of tags) is derived: tags one line above their keyword, cells in column 1.

Mapping choices: an error in step code is FAILED (Cucumber has no "error"); steps not run
after a failure are SKIPPED; a Scenario/Feature/Rule hook error is a failed Before hook step of
each scenario it stopped; what hooks attached before the first step hangs on a Before hook step,
what came after the steps on an After hook step; the
failure category (mcp_bdd.failures.KINDS) is the exception type (`mcp_bdd.<kind>`); requirement
links are `text/uri-list` attachments, as Cucumber's own `link()` writes them. A run that did
not start (its before_all failed) is a failed BEFORE_TEST_RUN hook (testRunHookStarted /
testRunHookFinished) and a testRunFinished with success false and that exception.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from mcp_bdd.report.cucumber_common import evidence_files, first_line, hook_errors, line_of, pickle_status
from mcp_bdd.report.files import write_text
from mcp_bdd.report.links import requirement_links
from mcp_bdd.report.model import (
    Background,
    Evidence,
    Examples,
    Feature,
    Outline,
    Rule,
    Run,
    Scenario,
    Step,
    StepText,
    Table,
    not_started,
)
from mcp_bdd.report.summary import artifact_url

__all__ = ["PROTOCOL_VERSION", "messages", "write_messages"]

#: The version of the messages schema these envelopes follow (package.json pins the same).
PROTOCOL_VERSION = "34.2.1"

#: behave's step_type -> Cucumber's PickleStep.type and Step.keywordType
_TYPE = {"given": "Context", "when": "Action", "then": "Outcome"}


def _timestamp(seconds: float) -> dict[str, int]:
    whole = int(seconds)
    return {"seconds": whole, "nanos": max(0, min(999_999_999, round((seconds - whole) * 1e9)))}


def _duration(seconds: float) -> dict[str, int]:
    return _timestamp(max(0.0, seconds))


def _location(line: int, column: int | None = None) -> dict[str, int]:
    return {"line": max(1, line)} if column is None else {"line": max(1, line), "column": column}


def _text(lines: tuple[str, ...]) -> str:
    return "\n".join(lines)


def _mcp_bdd_version() -> str:
    from mcp_bdd._version import __version__

    return __version__


class _Tag(TypedDict):
    location: dict[str, int]
    name: str
    id: str


class _Row(TypedDict):
    location: dict[str, int]
    cells: list[dict[str, object]]
    id: str


class _Step(TypedDict):
    """A gherkinDocument step: its id is what a pickle step points back at."""

    location: dict[str, int]
    keyword: str
    keywordType: str
    text: str
    id: str
    docString: NotRequired[dict[str, object]]
    dataTable: NotRequired[dict[str, object]]


class _PickleStep(TypedDict):
    astNodeIds: list[str]
    id: str
    text: str
    type: NotRequired[str]
    argument: NotRequired[dict[str, object]]


class _Background(TypedDict):
    location: dict[str, int]
    keyword: str
    name: str
    description: str
    steps: list[_Step]
    id: str


@dataclass
class _Node:
    """What a pickle needs from the gherkinDocument part of one scenario."""

    ast_id: str
    step_ids: list[str]
    background_ids: list[str]
    tags: list[tuple[str, str]]  # (name, tag node id), outermost first
    row_ids: list[list[str]] = field(default_factory=list)  # outline: per Examples, its body row ids
    examples_tags: list[list[tuple[str, str]]] = field(default_factory=list)


class _Writer:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.counter = 0
        self.out: list[dict[str, object]] = []
        self.nodes: dict[str, _Node] = {}  # model scenario/outline id -> its AST ids
        self.definitions: dict[str, str] = {}
        self.hooks: dict[str, str] = {}

    def id(self) -> str:
        self.counter += 1
        return str(self.counter)

    # -- gherkinDocument -----------------------------------------------------------------------
    def tags(self, names: tuple[str, ...], line: int) -> list[_Tag]:
        nodes: list[_Tag] = []
        column = 1
        for name in names:
            tag = name if name.startswith("@") else f"@{name}"
            nodes.append({"location": _location(line, column), "name": tag, "id": self.id()})
            column += len(tag) + 1
        return nodes

    def table(self, table: Table, line: int) -> list[_Row]:
        rows = [table.headings, *table.rows] if table.headings else list(table.rows)
        return [
            {
                "location": _location(line + i, 1),
                "cells": [{"location": _location(line + i, 1), "value": cell} for cell in row],
                "id": self.id(),
            }
            for i, row in enumerate(rows)
        ]

    def step(self, step: StepText | Step, line: int, previous: str) -> tuple[_Step, str]:
        keyword = step.keyword.strip()
        own = getattr(step, "step_type", None) or {"given": "given", "when": "when", "then": "then"}.get(
            keyword.lower(), previous
        )
        node: _Step = {
            "location": _location(line, 1),
            "keyword": keyword + " ",
            "keywordType": "Conjunction" if keyword.lower() in ("and", "but") else _TYPE.get(own, "Unknown"),
            "text": step.name,
            "id": self.id(),
        }
        if keyword == "*":
            node["keywordType"] = "Unknown"
        if step.text is not None:
            node["docString"] = {"location": _location(line + 1, 1), "content": step.text, "delimiter": '"""'}
        if step.table is not None:
            start = line + 1 + (step.text.count("\n") + 3 if step.text is not None else 0)
            rows = self.table(step.table, start)
            node["dataTable"] = {"location": _location(start, 1), "rows": rows}
        return node, own

    def steps(self, steps: Sequence[StepText | Step], lines: list[int], start: int) -> list[_Step]:
        nodes: list[_Step] = []
        previous = "given"
        for i, step in enumerate(steps):
            line = lines[i] if i < len(lines) else start + 1 + i
            node, previous = self.step(step, line, previous)
            nodes.append(node)
        return nodes

    def background(self, background: Background | None, lines: list[int]) -> _Background | None:
        if background is None:
            return None
        line = line_of(background.location)
        return {
            "location": _location(line, 1),
            "keyword": background.keyword,
            "name": background.name,
            "description": "",
            "steps": self.steps(background.steps, lines, line),
            "id": self.id(),
        }

    def scenario(self, scenario: Scenario, outer: list[tuple[str, str]], background: list[str]) -> dict[str, object]:
        line = line_of(scenario.location)
        tags = self.tags(scenario.tags, line - 1)
        own = tuple(s for s in scenario.steps if not s.background)
        steps = self.steps(own, [line_of(s.location) for s in own], line)
        ast_id = self.id()
        node: dict[str, object] = {
            "location": _location(line, 1),
            "tags": tags,
            "keyword": scenario.keyword,
            "name": scenario.name,
            "description": _text(scenario.description),
            "steps": steps,
            "examples": [],
            "id": ast_id,
        }
        self.nodes[scenario.id] = _Node(
            ast_id=ast_id,
            step_ids=[s["id"] for s in steps],
            background_ids=background,
            tags=[*outer, *((t["name"], t["id"]) for t in tags)],
        )
        return node

    def examples(self, examples: Examples) -> tuple[dict[str, object], list[str], list[tuple[str, str]]]:
        line = line_of(examples.location)
        tags = self.tags(examples.tags, line - 1)
        rows = self.table(examples.table, line + 1)
        body = rows[1:] if examples.table.headings else rows
        node: dict[str, object] = {
            "location": _location(line, 1),
            "tags": tags,
            "keyword": examples.keyword,
            "name": examples.name,
            "description": "",
            "tableBody": body,
            "id": self.id(),
        }
        if examples.table.headings:
            node["tableHeader"] = rows[0]
        return node, [r["id"] for r in body], [(t["name"], t["id"]) for t in tags]

    def outline(self, outline: Outline, outer: list[tuple[str, str]], background: list[str]) -> dict[str, object]:
        line = line_of(outline.location)
        tags = self.tags(outline.tags, line - 1)
        # behave gives each generated step its template's line: take them from a generated scenario
        located = next((s for s in outline.scenarios), None)
        lines = [line_of(s.location) for s in located.steps if not s.background] if located else []
        steps = self.steps(outline.steps, lines, line)
        built = [self.examples(ex) for ex in outline.examples]
        ast_id = self.id()
        node: dict[str, object] = {
            "location": _location(line, 1),
            "tags": tags,
            "keyword": outline.keyword,
            "name": outline.name,
            "description": _text(outline.description),
            "steps": steps,
            "examples": [b[0] for b in built],
            "id": ast_id,
        }
        self.nodes[outline.id] = _Node(
            ast_id=ast_id,
            step_ids=[s["id"] for s in steps],
            background_ids=background,
            tags=[*outer, *((t["name"], t["id"]) for t in tags)],
            row_ids=[b[1] for b in built],
            examples_tags=[b[2] for b in built],
        )
        return node

    def child(
        self, child: Scenario | Outline, outer: list[tuple[str, str]], background: list[str]
    ) -> dict[str, object]:
        if isinstance(child, Outline):
            return {"scenario": self.outline(child, outer, background)}
        return {"scenario": self.scenario(child, outer, background)}

    def rule(self, rule: Rule, outer: list[tuple[str, str]], background: list[str]) -> dict[str, object]:
        line = line_of(rule.location)
        tags = self.tags(rule.tags, line - 1)
        children: list[dict[str, object]] = []
        own = self.background(rule.background, _background_lines(rule.children, len(background)))
        ids = list(background)
        if own is not None:
            children.append({"background": own})
            ids += [s["id"] for s in own["steps"]]
        inner = [*outer, *((t["name"], t["id"]) for t in tags)]
        children += [self.child(c, inner, ids) for c in rule.children]
        return {
            "rule": {
                "location": _location(line, 1),
                "tags": tags,
                "keyword": rule.keyword,
                "name": rule.name,
                "description": _text(rule.description),
                "children": children,
                "id": self.id(),
            }
        }

    def document(self, feature: Feature) -> dict[str, object]:
        line = line_of(feature.location)
        tags = self.tags(feature.tags, line - 1)
        outer = [(t["name"], t["id"]) for t in tags]
        children: list[dict[str, object]] = []
        background = self.background(feature.background, _background_lines(feature.children, 0))
        ids: list[str] = []
        if background is not None:
            children.append({"background": background})
            ids = [s["id"] for s in background["steps"]]
        for child in feature.children:
            if isinstance(child, Rule):
                children.append(self.rule(child, outer, ids))
            else:
                children.append(self.child(child, outer, ids))
        return {
            "uri": feature.filename,
            "feature": {
                "location": _location(line, 1),
                "tags": tags,
                "language": "en",
                "keyword": feature.keyword,
                "name": feature.name,
                "description": _text(feature.description),
                "children": children,
            },
            "comments": [],
        }

    # -- pickles -------------------------------------------------------------------------------
    def pickle(
        self, scenario: Scenario, node: _Node, feature: Feature, row: str | None, extra_tags: list[tuple[str, str]]
    ) -> tuple[dict[str, object], str, list[str]]:
        """The pickle of `scenario`, its id, and its steps' ids."""
        background = [s for s in scenario.steps if s.background]
        own = [s for s in scenario.steps if not s.background]
        steps: list[_PickleStep] = []
        for i, step in enumerate(background):
            ids = node.background_ids
            ast = ids[min(i, len(ids) - 1)] if ids else node.ast_id
            steps.append(self.pickle_step(step, [ast]))
        for i, step in enumerate(own):
            ast = node.step_ids[min(i, len(node.step_ids) - 1)] if node.step_ids else node.ast_id
            steps.append(self.pickle_step(step, [ast] if row is None else [ast, row]))
        step_ids = [s["id"] for s in steps]
        tags: list[dict[str, str]] = []
        seen: set[str] = set()
        for name, tag_id in [*node.tags, *extra_tags]:
            if name not in seen:  # Gherkin keeps duplicates; a tag counted twice helps no reader
                seen.add(name)
                tags.append({"name": name, "astNodeId": tag_id})
        pickle_id = self.id()
        pickle: dict[str, object] = {
            "id": pickle_id,
            "uri": feature.filename,
            "location": _location(line_of(scenario.location), 1),
            "name": scenario.name,
            "language": "en",
            "steps": steps,
            "tags": tags,
            "astNodeIds": [node.ast_id] if row is None else [node.ast_id, row],
        }
        return pickle, pickle_id, step_ids

    def pickle_step(self, step: Step, ast_ids: list[str]) -> _PickleStep:
        item: _PickleStep = {"astNodeIds": ast_ids, "id": self.id(), "text": step.name}
        kind = _TYPE.get(step.step_type)
        if kind:
            item["type"] = kind
        argument: dict[str, object] = {}
        if step.text is not None:
            argument["docString"] = {"content": step.text}
        if step.table is not None:
            rows = [step.table.headings, *step.table.rows] if step.table.headings else list(step.table.rows)
            argument["dataTable"] = {"rows": [{"cells": [{"value": c} for c in row]} for row in rows if row]}
        if argument:
            item["argument"] = argument
        return item

    # -- the whole stream ----------------------------------------------------------------------
    def emit(self, kind: str, body: Mapping[str, object]) -> None:
        self.out.append({kind: body})

    def build(self, env: Mapping[str, str]) -> list[dict[str, object]]:
        run = self.run
        meta: dict[str, object] = {
            "protocolVersion": PROTOCOL_VERSION,
            "implementation": {"name": "mcp-bdd", "version": _mcp_bdd_version()},
            "runtime": {"name": "python", "version": run.meta.get("python") or platform.python_version()},
            "os": {"name": platform.system() or "unknown", "version": platform.release()},
            "cpu": {"name": platform.machine() or "unknown"},
        }
        ci = _github_ci(env)
        if ci:
            meta["ci"] = ci
        self.emit("meta", meta)
        cases: list[tuple[Scenario, str, list[str], Feature, Rule | None]] = []
        for feature in run.features:
            source = _source(feature.filename)
            if source is not None:
                self.emit(
                    "source",
                    {"uri": feature.filename, "data": source, "mediaType": "text/x.cucumber.gherkin+plain"},
                )
            self.emit("gherkinDocument", self.document(feature))
            for scenario, rule, outline in _executed(feature.children):
                owner = outline or scenario
                node = self.nodes[owner.id]
                row, extra = _row(scenario, outline, node)
                pickle, pickle_id, step_ids = self.pickle(scenario, node, feature, row, extra)
                self.emit("pickle", pickle)
                cases.append((scenario, pickle_id, step_ids, feature, rule))
        for definition in run.glossary:
            self.definition(definition.location, definition.pattern)
        run_id = self.id()
        self.emit("testRunStarted", {"timestamp": _timestamp(run.started_at), "id": run_id})
        plans = [self.test_case(run_id, *case) for case in cases]
        clock = run.started_at
        why = not_started(run)
        exception = {
            "type": f"mcp_bdd.{run.error_kind or 'error'}",
            "message": first_line(not_started(run, one_line=True) or ""),
        }
        if why is not None:
            self.run_setup_failed(run_id, why, exception, clock)
        for plan in plans:
            clock = self.execute(plan, clock)
        success = why is None and all(plan.scenario.status in ("passed", "skipped") for plan in plans)
        finished: dict[str, object] = {
            "timestamp": _timestamp(max(clock, run.started_at + run.duration)),
            "success": success,
            "testRunStartedId": run_id,
        }
        if why is not None:
            finished["message"] = why
            finished["exception"] = exception
        self.emit("testRunFinished", finished)
        # stepDefinitions and hooks are only known once every case was planned: move them before
        # testRunStarted, where readers expect them.
        order = {"meta": 0, "source": 1, "gherkinDocument": 1, "pickle": 1, "stepDefinition": 2, "hook": 2}
        return sorted(self.out, key=lambda e: order.get(next(iter(e)), 3))

    def definition(self, location: str, pattern: str) -> str:
        if location not in self.definitions:
            self.definitions[location] = self.id()
            uri, _, _ = location.rpartition(":")
            self.emit(
                "stepDefinition",
                {
                    "id": self.definitions[location],
                    "pattern": {"source": pattern, "type": "CUCUMBER_EXPRESSION"},
                    "sourceReference": {"uri": uri or location, "location": _location(line_of(location))},
                },
            )
        return self.definitions[location]

    def run_setup_failed(self, run_id: str, why: str, exception: dict[str, str], clock: float) -> None:
        """The before_all hook that failed, as Cucumber reports a failed BeforeAll."""
        hook = self.id()
        self.emit(
            "hook",
            {"id": hook, "name": "before_all", "type": "BEFORE_TEST_RUN", "sourceReference": {"uri": "environment.py"}},
        )
        started = self.id()
        self.emit(
            "testRunHookStarted",
            {"id": started, "testRunStartedId": run_id, "hookId": hook, "timestamp": _timestamp(clock)},
        )
        result = {
            "duration": _duration(0),
            "status": "FAILED",
            "message": why,
            "exception": exception,
        }
        self.emit(
            "testRunHookFinished", {"testRunHookStartedId": started, "result": result, "timestamp": _timestamp(clock)}
        )

    def hook(self, kind: str) -> str:
        if kind not in self.hooks:
            self.hooks[kind] = self.id()
            self.emit(
                "hook",
                {
                    "id": self.hooks[kind],
                    "name": "before_scenario" if kind == "BEFORE_TEST_CASE" else "after_scenario",
                    "type": kind,
                    "sourceReference": {"uri": "environment.py"},
                },
            )
        return self.hooks[kind]

    def _hook_step(self, kind: str, error: str | None, scenario: Scenario) -> _PlanStep:
        """A before/after hook step holding what the hooks did (and, when one broke, its error)."""
        evidence = scenario.evidence if kind == "BEFORE_TEST_CASE" else scenario.after_evidence
        if error is None:
            return _PlanStep(id=self.id(), hook=self.hook(kind), evidence=evidence)
        category = scenario.error_kind or "setup"
        return _PlanStep(
            id=self.id(), hook=self.hook(kind), status="hook_error", error=error, error_kind=category, evidence=evidence
        )

    def test_case(
        self, run_id: str, scenario: Scenario, pickle_id: str, step_ids: list[str], feature: Feature, rule: Rule | None
    ) -> _Plan:
        plan = _Plan(scenario=scenario, id=self.id())
        before, after = hook_errors(feature, rule, scenario)
        if before or scenario.evidence or scenario.skip_reason:
            hook = self._hook_step("BEFORE_TEST_CASE", before, scenario)
            if before is None and scenario.skip_reason:  # why it was skipped, where Cucumber tools look
                hook.status, hook.error = "skipped", scenario.skip_reason
            plan.steps.append(hook)
        if after or scenario.after_evidence:
            plan.after.append(self._hook_step("AFTER_TEST_CASE", after, scenario))
        for model_step, pickle_step in zip(scenario.steps, step_ids, strict=True):
            definition = self.definition(model_step.definition, model_step.name) if model_step.definition else None
            plan.steps.append(
                _PlanStep(
                    id=self.id(),
                    pickle_step=pickle_step,
                    definition=definition,
                    status=model_step.status,
                    duration=model_step.duration,
                    error=model_step.error_message,
                    error_kind=model_step.error_kind,
                    evidence=model_step.evidence,
                )
            )
        plan.steps += plan.after
        test_steps: list[dict[str, object]] = []
        for s in plan.steps:
            if s.hook:
                test_steps.append({"id": s.id, "hookId": s.hook})
            else:
                item: dict[str, object] = {"id": s.id, "pickleStepId": s.pickle_step}
                item["stepDefinitionIds"] = [s.definition] if s.definition else []
                item["stepMatchArgumentsLists"] = [{"stepMatchArguments": []}] if s.definition else []
                test_steps.append(item)
        self.emit(
            "testCase", {"id": plan.id, "pickleId": pickle_id, "testSteps": test_steps, "testRunStartedId": run_id}
        )
        plan.links = [link.url for link in requirement_links(_all_tags(scenario, feature, rule), self.run.links)]
        return plan

    def execute(self, plan: _Plan, clock: float) -> float:
        started, start = self.id(), clock
        self.emit(
            "testCaseStarted", {"attempt": 0, "id": started, "testCaseId": plan.id, "timestamp": _timestamp(clock)}
        )
        for index, step in enumerate(plan.steps):
            self.emit(
                "testStepStarted", {"testCaseStartedId": started, "testStepId": step.id, "timestamp": _timestamp(clock)}
            )
            files = list(evidence_files(step.evidence))
            for file in files:
                attachment: dict[str, object] = {
                    "body": file.body,
                    "contentEncoding": file.encoding,
                    "mediaType": file.media_type,
                    "testCaseStartedId": started,
                    "testStepId": step.id,
                    "timestamp": _timestamp(clock),
                }
                if file.name:
                    attachment["fileName"] = file.name
                self.emit("attachment", attachment)
            if index == 0 and plan.links:
                self.emit(
                    "attachment",
                    {
                        "body": "\n".join(plan.links),
                        "contentEncoding": "IDENTITY",
                        "mediaType": "text/uri-list",
                        "testCaseStartedId": started,
                        "testStepId": step.id,
                        "timestamp": _timestamp(clock),
                    },
                )
            clock += step.duration
            result: dict[str, object] = {"duration": _duration(step.duration), "status": pickle_status(step.status)}
            if step.error:
                result["message"] = step.error
                if result["status"] == "FAILED":
                    result["exception"] = {
                        "type": f"mcp_bdd.{step.error_kind or 'error'}",
                        "message": first_line(step.error),
                    }
            self.emit(
                "testStepFinished",
                {
                    "testCaseStartedId": started,
                    "testStepId": step.id,
                    "testStepResult": result,
                    "timestamp": _timestamp(clock),
                },
            )
        clock = max(clock, start + plan.scenario.duration)  # the scenario's hooks took time too
        self.emit(
            "testCaseFinished", {"testCaseStartedId": started, "timestamp": _timestamp(clock), "willBeRetried": False}
        )
        return clock


@dataclass
class _PlanStep:
    id: str
    pickle_step: str | None = None
    hook: str | None = None
    definition: str | None = None
    status: str = "passed"
    duration: float = 0.0
    error: str | None = None
    error_kind: str | None = None
    evidence: Evidence = field(default_factory=Evidence)


@dataclass
class _Plan:
    scenario: Scenario
    id: str
    steps: list[_PlanStep] = field(default_factory=list)
    after: list[_PlanStep] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def _all_tags(scenario: Scenario, feature: Feature, rule: Rule | None) -> list[str]:
    return [*feature.tags, *(rule.tags if rule else ()), *scenario.tags]


def _background_lines(children: Sequence[Scenario | Outline | Rule], skip: int) -> list[int]:
    """The lines of a Background's steps, read off the first scenario that ran them."""
    for scenario, _rule, _outline in _executed(children):
        steps = [s for s in scenario.steps if s.background]
        if len(steps) > skip:
            return [line_of(s.location) for s in steps[skip:]]
    return []


def _executed(
    children: Sequence[Scenario | Outline | Rule], rule: Rule | None = None
) -> Iterator[tuple[Scenario, Rule | None, Outline | None]]:
    for child in children:
        if isinstance(child, Rule):
            yield from _executed(child.children, child)
        elif isinstance(child, Outline):
            for scenario in child.scenarios:
                yield scenario, rule, child
        else:
            yield child, rule, None


def _row(scenario: Scenario, outline: Outline | None, node: _Node) -> tuple[str | None, list[tuple[str, str]]]:
    """The Examples row an outline scenario came from, and that Examples block's tags."""
    if outline is None:
        return None, []
    position = outline.scenarios.index(scenario)
    if scenario.example is not None:
        block, index = scenario.example.examples - 1, scenario.example.row - 1
    else:  # count rows through the Examples blocks
        block, index = 0, position
        while block < len(node.row_ids) - 1 and index >= len(node.row_ids[block]):
            index -= len(node.row_ids[block])
            block += 1
    if 0 <= block < len(node.row_ids) and 0 <= index < len(node.row_ids[block]):
        return node.row_ids[block][index], node.examples_tags[block]
    return None, []


def _source(filename: str) -> str | None:
    """The feature file's text, when it is where the run found it (not when re-written from a merge)."""
    try:
        return Path(filename).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _github_ci(env: Mapping[str, str]) -> dict[str, object] | None:
    """Meta.ci on GitHub Actions: the build link Cucumber's HTML report shows at the top."""
    url = artifact_url(env)
    if url is None:
        return None
    ci: dict[str, object] = {"name": "GitHub Actions", "url": url.removesuffix("#artifacts")}
    if env.get("GITHUB_RUN_NUMBER", "").isdigit():
        ci["buildNumber"] = env["GITHUB_RUN_NUMBER"]
    if env.get("GITHUB_SHA"):
        git = {
            "remote": f"{env['GITHUB_SERVER_URL'].rstrip('/')}/{env['GITHUB_REPOSITORY']}.git",
            "revision": env["GITHUB_SHA"],
        }
        if env.get("GITHUB_REF_TYPE") == "tag" and env.get("GITHUB_REF_NAME"):
            git["tag"] = env["GITHUB_REF_NAME"]
        elif env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME"):
            git["branch"] = env.get("GITHUB_HEAD_REF") or env["GITHUB_REF_NAME"]
        ci["git"] = git
    return ci


def messages(run: Run, env: Mapping[str, str] | None = None) -> list[dict[str, object]]:
    """The run as Cucumber Messages envelopes (dicts), in stream order (`env`: os.environ, for Meta.ci)."""
    return _Writer(run).build(os.environ if env is None else env)


def write_messages(path: str | Path, run: Run) -> Path:
    """Write the run as NDJSON: one envelope a line."""
    # ASCII only: a server's text may hold U+2028, U+0085 ... which JSON keeps raw but which
    # line readers (Python's splitlines, some NDJSON tools) take for line breaks.
    lines = (json.dumps(envelope, ensure_ascii=True, separators=(",", ":")) for envelope in messages(run))
    return write_text(path, "".join(line + "\n" for line in lines))
