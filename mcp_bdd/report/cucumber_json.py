"""Cucumber JSON from the run model: what Xray, TestRail's trcli, Jenkins cucumber-reports and
ReportPortal ingest.

    behave -f cucumber-json -o reports/cucumber.json features/

The format has no official schema; this follows what those tools read, as cucumber-jvm and
cucumber-js write it (github.com/cucumber/cucumber-json-schema, schemas/cucumber-jvm.json, and
cucumber-js src/formatter/json_formatter.ts): a list of features, each with `elements` of type
"scenario"; steps with `result` {status, duration in nanoseconds, error_message}, `match`
{location}, `embeddings` [{mime_type, data (base64), name}], `doc_string`, `rows`; `before` /
`after` hooks; tags as {name: "@tag", line}.

The format knows no Rules and no Examples: as cucumber-js does, an outline row is a scenario of
its own (keyword "Scenario Outline") and a Rule's scenarios are elements of the feature,
inheriting the Rule's tags; their `id` names the Rule (ids are unique even when two Rules hold
scenarios of the same name). Background steps are part of each scenario's steps (as
cucumber-js writes them). An error in step code is "failed" (the format has no error status);
hook errors are a failed `before` hook; a run that did not start (its before_all failed) is a
"Run setup" feature whose one scenario has that failed `before` hook. Requirement links are listed in the scenario's
description (the tags themselves stay, for tools such as Xray that map tags to issues).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from mcp_bdd.report.cucumber_common import evidence_files, hook_errors, line_of, pickle_status
from mcp_bdd.report.files import write_text
from mcp_bdd.report.links import requirement_links
from mcp_bdd.report.model import Evidence, Feature, Outline, Rule, Run, Scenario, Step, not_started

__all__ = ["cucumber_json", "write_cucumber_json"]


def _tags(names: tuple[str, ...] | list[str], line: int) -> list[dict[str, object]]:
    seen: dict[str, dict[str, object]] = {}
    for name in names:
        tag = name if name.startswith("@") else f"@{name}"
        seen.setdefault(tag, {"name": tag, "line": max(1, line)})
    return list(seen.values())


def _nanos(seconds: float) -> int:
    return max(0, round(seconds * 1e9))


def _embeddings(evidence: Evidence) -> list[dict[str, object]]:
    items = []
    for file in evidence_files(evidence):
        item: dict[str, object] = {"mime_type": file.media_type, "data": file.base64()}
        if file.name:
            item["name"] = file.name
        items.append(item)
    return items


def _step(step: Step) -> dict[str, object]:
    result: dict[str, object] = {"status": pickle_status(step.status).lower(), "duration": _nanos(step.duration)}
    if step.error_message and result["status"] != "passed":
        result["error_message"] = step.error_message
    line = line_of(step.location)
    item: dict[str, object] = {"keyword": step.keyword.strip() + " ", "line": line, "name": step.name, "result": result}
    if step.definition:  # an undefined step has no match, as Cucumber writes it
        item["match"] = {"location": step.definition}
    if step.text is not None:
        item["doc_string"] = {"value": step.text, "content_type": "", "line": line + 1}
    if step.table is not None:
        rows = [step.table.headings, *step.table.rows] if step.table.headings else list(step.table.rows)
        item["rows"] = [{"cells": list(row)} for row in rows]
    embeddings = _embeddings(step.evidence)
    if embeddings:
        item["embeddings"] = embeddings
    return item


def _hook(error: str | None, evidence: Evidence) -> dict[str, object]:
    result: dict[str, object] = {"status": "failed" if error else "passed", "duration": 0}
    if error:
        result["error_message"] = error
    hook: dict[str, object] = {"match": {"location": "environment.py"}, "result": result}
    embeddings = _embeddings(evidence)
    if embeddings:
        hook["embeddings"] = embeddings
    return hook


def _element(
    scenario: Scenario, feature: Feature, rule: Rule | None, outline: Outline | None, links: dict[str, str]
) -> dict[str, object]:
    line = line_of(scenario.location)
    names = [*feature.tags, *(rule.tags if rule else ()), *(outline.tags if outline else ()), *scenario.tags]
    description = list(outline.description if outline else scenario.description)
    found = requirement_links(names, links)
    if found:
        description += ["", "Requirements:", *(f"- {link.id}: {link.url}" for link in found)]
    element: dict[str, object] = {
        "id": f"{feature.id};{scenario.id}",
        "keyword": outline.keyword if outline else scenario.keyword,
        "name": scenario.name,
        "description": "\n".join(description),
        "line": line,
        "type": "scenario",
        "tags": _tags(names, line - 1),
        "steps": [_step(step) for step in scenario.steps],
    }
    before, after = hook_errors(feature, rule, scenario)
    if before or scenario.evidence or scenario.skip_reason:
        hook = _hook(before, scenario.evidence)
        if before is None and scenario.skip_reason:  # why it was skipped: a scenario without steps reads as passed
            hook["result"] = {"status": "skipped", "duration": 0, "error_message": scenario.skip_reason}
        element["before"] = [hook]
    if after or scenario.after_evidence:
        element["after"] = [_hook(after, scenario.after_evidence)]
    return element


def _elements(
    children: Sequence[Scenario | Outline | Rule], feature: Feature, rule: Rule | None, links: dict[str, str]
) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for child in children:
        if isinstance(child, Rule):
            out += _elements(child.children, feature, child, links)
        elif isinstance(child, Outline):
            out += [_element(s, feature, rule, child, links) for s in child.scenarios]
        else:
            out.append(_element(child, feature, rule, None, links))
    return out


def _setup_feature(why: str) -> dict[str, object]:
    """A run that did not start, as a feature the tools count as failed (they know no run-level error)."""
    element = {
        "id": "run-setup;before-all",
        "keyword": "Scenario",
        "name": "before_all",
        "description": "",
        "line": 1,
        "type": "scenario",
        "tags": [],
        "steps": [],
        "before": [_hook(why, Evidence())],
    }
    return {
        "uri": "environment.py",
        "id": "run-setup",
        "keyword": "Feature",
        "name": "Run setup",
        "description": "",
        "line": 1,
        "tags": [],
        "elements": [element],
    }


def cucumber_json(run: Run) -> list[dict[str, object]]:
    """The run as Cucumber JSON data (a list of features)."""
    why = not_started(run)
    features = [] if why is None else [_setup_feature(why)]
    for feature in run.features:
        line = line_of(feature.location)
        features.append(
            {
                "uri": feature.filename,
                "id": feature.id,
                "keyword": feature.keyword,
                "name": feature.name,
                "description": "\n".join(feature.description),
                "line": line,
                "tags": _tags(feature.tags, line - 1),
                "elements": _elements(feature.children, feature, None, run.links),
            }
        )
    return features


def write_cucumber_json(path: str | Path, run: Run) -> Path:
    return write_text(path, json.dumps(cucumber_json(run), ensure_ascii=False, indent=1) + "\n")
