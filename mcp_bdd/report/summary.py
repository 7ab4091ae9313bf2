"""The GitHub step summary: a short Markdown verdict on the job's page, from the run model.

Appended to the file `$GITHUB_STEP_SUMMARY` names (GitHub concatenates what every step wrote):
counts per run, each failure with its first line and failure category (mcp_bdd.errors.KINDS),
and where the full report is: the run's artifacts page when GitHub tells us the run
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
from pathlib import Path

from mcp_bdd.errors import KINDS
from mcp_bdd.report.model import Feature, Outline, Rule, Run, Scenario, outcome

__all__ = ["append_step_summary", "artifact_url", "step_summary"]

MAX_FAILURES = 30
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
    children: Iterable[Scenario | Outline | Rule], path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Scenario]]:
    for child in children:
        if isinstance(child, Rule):
            yield from _scenarios(child.children, (*path, child.name))
        elif isinstance(child, Outline):
            for scenario in child.scenarios:
                yield path, scenario
        else:
            yield path, child


def _failure(run: Run, feature: Feature, path: tuple[str, ...], scenario: Scenario) -> tuple[str, str, str, str]:
    step = next((s for s in scenario.steps if s.status not in ("passed", "skipped", "untested")), None)
    message = scenario.error_message or (step.error_message if step else None) or scenario.status
    kind = scenario.error_kind or (step.error_kind if step else None) or "error"
    where = step.location if step and not scenario.error_message else scenario.location
    title = " › ".join((feature.name, *path, scenario.name))
    return title, where, KINDS.get(kind, kind), _first_line(message)


def step_summary(runs: list[Run], report: str | Path | None = None, env: Mapping[str, str] | None = None) -> str:
    """The Markdown for `runs` (one per transport leg, or one)."""
    totals: Counter[str] = Counter()
    rows, failures = [], []
    hooks: list[str] = []  # features whose before_feature hook failed: none of their scenarios ran
    for run in runs:
        counts: Counter[str] = Counter()
        for feature in run.features:
            if feature.error_message:
                hooks.append(feature.location)
                failures.append(
                    (run.label, feature.name, feature.location, KINDS["setup"], _first_line(feature.error_message))
                )
            for path, scenario in _scenarios(feature.children, ()):
                bucket = outcome(scenario.status)
                counts[bucket] += 1
                if bucket in ("failed", "errored"):
                    failures.append((run.label, *_failure(run, feature, path, scenario)))
        totals.update(counts)
        cells = " | ".join(str(counts[c]) for c in _COLUMNS)
        rows.append(f"| {_md(run.label, 60)} | {cells} | {run.duration:.1f} s |")
    total = sum(totals.values())
    bad = totals["failed"] + totals["errored"]
    mark = "✅" if bad == 0 and total else ("❌" if bad else "⚠️")
    verdict = f"{bad} of {total} scenarios failed" if bad else f"{totals['passed']} of {total} scenarios passed"
    broken = len(hooks)
    if broken:
        verdict += f", {broken} feature setup{'s' if broken > 1 else ''} failed"
        mark = "❌"
    lines = [f"### {mark} mcp-bdd: {verdict}", ""]
    lines += ["| Run | " + " | ".join(c.capitalize() for c in _COLUMNS) + " | Time |"]
    lines += ["| --- |" + " ---: |" * len(_COLUMNS) + " ---: |", *rows, ""]
    if failures:
        several = len(runs) > 1
        lines.append(f"**Failures** ({len(failures)})")
        lines.append("")
        for label, title, where, category, first in failures[:MAX_FAILURES]:
            leg = f" \\[{_md(label, 60)}\\]" if several else ""
            lines.append(f"- **{_md(title)}**{leg} — {_md(category)} at {_code(where)}  ")
            lines.append(f"  {_md(first) or '(no message)'}")
        if len(failures) > MAX_FAILURES:
            lines.append(f"- … and {len(failures) - MAX_FAILURES} more (see the report)")
        lines.append("")
    url = artifact_url(env or {})
    where_report = _code(str(report), 200) if report else ""
    if url and where_report:
        lines.append(f"Full report: {where_report} in [this run's artifacts]({url}).")
    elif url:
        lines.append(f"Full report: [this run's artifacts]({url}).")
    elif where_report:
        lines.append(f"Full report: {where_report}.")
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
