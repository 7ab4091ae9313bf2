"""The GitHub step summary: a short Markdown verdict on the job's page, from the run model.

Appended to the file `$GITHUB_STEP_SUMMARY` names (GitHub concatenates what every step wrote):
counts per run, each failure with its first line, failure category (mcp_bdd.failures.KINDS) and
requirement links (report/links.py), a table of the linked requirements and how their scenarios
fared, and where the full report is: the run's artifacts page when GitHub tells us the run
(GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID), and the report's path.

Who writes it: the living-doc formatter at close (every plain `behave -f living-doc` run) and
`mcp-bdd run` once for the merged legs (its workers are told `-D mcp_bdd.summary=off`, so a
matrix gives one summary, not one per worker).

Names and messages come from feature files and servers: they are escaped for Markdown and HTML
(GitHub renders both) and bounded, so a hostile server cannot inject links or flood the page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcp_bdd.failures import KINDS, kind_label
from mcp_bdd.report.links import Link, requirement_links
from mcp_bdd.report.model import Feature, Outline, Rule, Run, Scenario, not_started, outcome

__all__ = ["append_step_summary", "artifact_url", "step_summary"]

MAX_FAILURES = 30
MAX_REQUIREMENTS = 30
_LINE = 200
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()|~])")
_COLUMNS = ("passed", "failed", "errored", "pending", "skipped", "untested")


def _md(text: str, limit: int = _LINE) -> str:
    """One line of untrusted text, safe inside Markdown (no markup, no HTML, no newlines)."""
    line = " ".join(text.split())
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    line = _MARKDOWN.sub(r"\\\1", line)
    return "\\" + line if line[:1] in ("-", "+", "#", "=") or line[:1].isdigit() else line  # no list/heading


def _code(text: str, limit: int = 120) -> str:
    """Untrusted text inside a `code span` (where Markdown escapes do not apply, and HTML is inert)."""
    return "`" + " ".join(text.replace("`", "'").split())[:limit] + "`"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("ASSERT FAILED:"):
            line = line[len("ASSERT FAILED:") :].strip()
        if line:
            return line
    return ""


def artifact_url(env: Mapping[str, str]) -> str | None:
    """The GitHub Actions run page (its artifacts section), when the environment says which run."""
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    if not (server and repo and run_id) or not re.fullmatch(r"https?://[^\s()<>]+", server):
        return None
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo) or not run_id.isdigit():
        return None
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}#artifacts"


def _scenarios(
    children: Iterable[Scenario | Outline | Rule], path: tuple[str, ...], tags: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], tuple[str, ...], Scenario]]:
    """Every scenario with its path of Rule names and every tag it inherits (Feature, Rule, Outline)."""
    for child in children:
        if isinstance(child, Rule):
            yield from _scenarios(child.children, (*path, child.name), (*tags, *child.tags))
        elif isinstance(child, Outline):
            for scenario in child.scenarios:
                yield path, (*tags, *child.tags, *scenario.tags), scenario
        else:
            yield path, (*tags, *child.tags), child


def _url(url: str) -> str:
    """A link target that cannot close the Markdown link early (templates are http(s) already)."""
    return "".join(f"%{ord(c):02X}" if c in "()<>[] " else c for c in url)


def _links(links: Iterable[Link]) -> str:
    return ", ".join(f"[{_md(link.id, 60)}]({_url(link.url)})" for link in links)


@dataclass
class _Failure:
    label: str
    title: str
    where: str
    category: str
    first: str
    links: tuple[Link, ...] = ()


def _failure(
    label: str, feature: Feature, path: tuple[str, ...], scenario: Scenario, links: tuple[Link, ...]
) -> _Failure:
    step = next((s for s in scenario.steps if s.status not in ("passed", "skipped", "untested")), None)
    message = scenario.error_message or (step.error_message if step else None) or scenario.status
    kind = scenario.error_kind or (step.error_kind if step else None) or "error"
    where = step.location if step and not scenario.error_message else scenario.location
    title = " › ".join((feature.name, *path, scenario.name))
    return _Failure(label, title, where, kind_label(kind, kind), _first_line(message), links)


@dataclass
class _Tally:
    """What the summary counts while it walks the runs."""

    totals: Counter[str] = field(default_factory=Counter)
    rows: list[str] = field(default_factory=list)
    failures: list[_Failure] = field(default_factory=list)
    hooks: int = 0  # features whose before_feature hook failed: none of their scenarios ran
    setups: int = 0  # runs whose before_all failed (a configuration error): nothing ran
    requirements: dict[str, tuple[Link, Counter[str]]] = field(default_factory=dict)

    def add(self, run: Run) -> None:
        counts: Counter[str] = Counter()
        why = not_started(run, one_line=True)
        if why is not None:
            self.setups += 1
            category = kind_label(run.error_kind, "Error")
            self.failures.append(_Failure(run.label, "Run setup", "before_all", category, why))
        for feature in run.features:
            if feature.error_message:
                self.hooks += 1
                first = _first_line(feature.error_message)
                self.failures.append(_Failure(run.label, feature.name, feature.location, KINDS["setup"], first))
            for path, tags, scenario in _scenarios(feature.children, (), feature.tags):
                bucket = outcome(scenario.status)
                counts[bucket] += 1
                links = requirement_links(tags, run.links)
                for link in links:
                    self.requirements.setdefault(link.url, (link, Counter()))[1][bucket] += 1
                if bucket in ("failed", "errored"):
                    self.failures.append(_failure(run.label, feature, path, scenario, links))
        self.totals.update(counts)
        cells = " | ".join(str(counts[c]) for c in _COLUMNS)
        self.rows.append(f"| {_md(run.label, 60)} | {cells} | {run.duration:.1f} s |")


def _headline(tally: _Tally) -> str:
    total = sum(tally.totals.values())
    bad = tally.totals["failed"] + tally.totals["errored"]
    mark = "✅" if bad == 0 and total else ("❌" if bad else "⚠️")
    verdict = f"{bad} of {total} scenarios failed" if bad else f"{tally.totals['passed']} of {total} scenarios passed"
    if tally.hooks:
        verdict += f", {tally.hooks} feature setup{'s' if tally.hooks > 1 else ''} failed"
        mark = "❌"
    if tally.setups:
        runs = f"{tally.setups} run{'s' if tally.setups > 1 else ''} did not start"
        alone = "the run did not start" if tally.setups == 1 else runs
        verdict = f"{verdict}, {runs}" if total else alone  # when other legs ran, say how many did not
        mark = "❌"
    return f"### {mark} mcp-bdd: {verdict}"


def _failure_lines(failures: list[_Failure], several: bool) -> list[str]:
    lines = [f"**Failures** ({len(failures)})", ""]
    for failure in failures[:MAX_FAILURES]:
        leg = f" \\[{_md(failure.label, 60)}\\]" if several else ""
        traced = f" · {_links(failure.links)}" if failure.links else ""
        lines.append(f"- **{_md(failure.title)}**{leg} — {_md(failure.category)} at {_code(failure.where)}{traced}  ")
        lines.append(f"  {_md(failure.first) or '(no message)'}")
    if len(failures) > MAX_FAILURES:
        lines.append(f"- … and {len(failures) - MAX_FAILURES} more (see the report)")
    return [*lines, ""]


def _requirement_lines(requirements: dict[str, tuple[Link, Counter[str]]]) -> list[str]:
    """Requirement -> how its scenarios fared: failing requirements first, then by id."""
    ordered = sorted(requirements.values(), key=lambda item: (-(item[1]["failed"] + item[1]["errored"]), item[0].id))
    lines = [f"**Requirements** ({len(ordered)})", "", "| Requirement | Scenarios | Passed | Failed |"]
    lines.append("| --- | ---: | ---: | ---: |")
    for link, counts in ordered[:MAX_REQUIREMENTS]:
        bad = counts["failed"] + counts["errored"]
        mark = "❌ " if bad else ""
        lines.append(f"| {mark}{_links([link])} | {sum(counts.values())} | {counts['passed']} | {bad} |")
    if len(ordered) > MAX_REQUIREMENTS:
        lines.append(f"| … and {len(ordered) - MAX_REQUIREMENTS} more (see the report) | | | |")
    return [*lines, ""]


def _report_line(report: str | Path | None, env: Mapping[str, str]) -> list[str]:
    url = artifact_url(env)
    where = _code(str(report), 200) if report else ""
    if url and where:
        return [f"Full report: {where} in [this run's artifacts]({url})."]
    if url:
        return [f"Full report: [this run's artifacts]({url})."]
    return [f"Full report: {where}."] if where else []


def step_summary(runs: list[Run], report: str | Path | None = None, env: Mapping[str, str] | None = None) -> str:
    """The Markdown for `runs` (one per transport leg, or one)."""
    tally = _Tally()
    for run in runs:
        tally.add(run)
    lines = [_headline(tally), ""]
    lines += ["| Run | " + " | ".join(c.capitalize() for c in _COLUMNS) + " | Time |"]
    lines += ["| --- |" + " ---: |" * len(_COLUMNS) + " ---: |", *tally.rows, ""]
    if tally.failures:
        lines += _failure_lines(tally.failures, len(runs) > 1)
    if tally.requirements:
        lines += _requirement_lines(tally.requirements)
    lines += _report_line(report, env or {})
    return "\n".join(lines).rstrip() + "\n"


def append_step_summary(
    target: str | Path, runs: list[Run], report: str | Path | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """Append the summary of `runs` to `target` (the file $GITHUB_STEP_SUMMARY names)."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(step_summary(runs, report, env) + "\n")
    return path
