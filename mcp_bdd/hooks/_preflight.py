"""What is wrong with the features before anything runs: each finding would otherwise surface
late (a mistyped server name, after the slow scenarios before it) or never (an outline with no
example rows, a scenario with no steps, a misspelt keyword: behave runs nothing for them and
says nothing). The hooks print these at the start of the run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_bdd.config import Config
    from mcp_bdd.hooks._model import Feature, RunConfig, Scenario, Step

import behave.model as behave_model

__all__ = [
    "has_steps",
    "misspelt_keywords",
    "outlines_without_examples",
    "scenarios_without_steps",
    "servers_named",
    "unknown_server_references",
]

_SERVER_REFS = (
    re.compile(r'^the MCP server "([^"]+)"'),
    re.compile(r'^I connect to the MCP server "([^"]+)"'),
    # every `on "<server>"` of the vocabulary names a server (calls, listings, outcomes, notifications)
    re.compile(r'(?:^|\s)on "((?:[^"\\]|\\.)+)"'),
)


def servers_named(steps: tuple[Step, ...]) -> frozenset[str]:
    """The server names `steps` give (`the MCP server "x"`, `on "x"`)."""
    return frozenset(m.group(1) for step in steps for pattern in _SERVER_REFS for m in pattern.finditer(step.name))


def unknown_server_references(
    features: Sequence[Feature], config: Config, run_config: RunConfig | None = None
) -> list[str]:
    """Server names the features use that the configuration lacks, found before anything runs.

    A typo in a server name would otherwise surface only when its scenario runs (after the slow
    ones before it); names with `<placeholders>` or `${variables}` are left to run time.
    """
    from mcp_bdd._text import did_you_mean

    problems: list[str] = []
    for feature in features:
        for scenario in feature.walk_scenarios(with_outlines=False):
            if run_config is not None and not _will_run(scenario, run_config):
                continue  # excluded by --tags / --name: its servers do not matter for this run
            for step in scenario.all_steps:
                for match in (m for pattern in _SERVER_REFS for m in pattern.finditer(step.name)):
                    name = match.group(1)
                    if "<" in name or "${" in name or name in config.servers:
                        continue
                    problems.append(
                        f'  {step.location}: {step.keyword} {step.name}\n    unknown server "{name}". '
                        f"{did_you_mean(name, config.servers, 'server')}."
                    )
    return sorted(set(problems))


def outlines_without_examples(features: Sequence[Feature], run_config: RunConfig | None = None) -> list[str]:
    """Scenario Outlines of this run whose Examples tables have no rows: behave runs nothing for
    them and reports nothing, so the outline would vanish from the run without a word."""
    problems: list[str] = []
    for feature in features:
        for outline in feature.walk_scenarios(with_outlines=True):
            if not isinstance(outline, behave_model.ScenarioOutline):
                continue
            if run_config is not None and not _will_run(outline, run_config):
                continue
            tables = [examples.table for examples in outline.examples if examples.table is not None]
            if any(table.rows for table in tables):
                continue
            heading = next((" under | " + " | ".join(t.headings) + " |" for t in tables if t.headings), "")
            problems.append(
                f'{outline.location}: Scenario Outline "{outline.name}" has no example rows: it runs nothing.\n'
                f"  Tip: add a row of values{heading} in its Examples, or remove the outline."
            )
    return problems


def scenarios_without_steps(features: Sequence[Feature], run_config: RunConfig | None = None) -> list[str]:
    """Scenarios of this run with no step of their own: behave passes them (running the Background,
    when there is one), so a scenario written as a title only would count as a pass. They are
    skipped instead (`before_scenario`), and named before the run."""
    problems: list[str] = []
    for feature in features:
        rows: set[int] = set()  # an outline's rows: said once, at the outline
        for scenario in feature.walk_scenarios(with_outlines=True):
            if id(scenario) in rows:
                continue
            outline = isinstance(scenario, behave_model.ScenarioOutline)
            runs = list(scenario.scenarios) if isinstance(scenario, behave_model.ScenarioOutline) else [scenario]
            rows.update(id(s) for s in runs if outline)
            if run_config is not None:
                runs = [s for s in runs if _will_run(s, run_config)]
            if runs and not has_steps(scenario):
                kind = "Scenario Outline" if outline else "Scenario"
                problems.append(
                    f'{scenario.location}: {kind} "{scenario.name}" has no steps: it tests nothing, so it is '
                    "reported as skipped, not passed.\n  Tip: write its steps, or remove it."
                )
    return problems


def has_steps(scenario: Scenario) -> bool:
    """Steps of its own: a Background alone checks only what every scenario of the feature sets up."""
    return bool(scenario.steps)


def _will_run(scenario: Scenario, run_config: RunConfig) -> bool:
    try:
        return bool(scenario.should_run(run_config))
    except Exception:
        return True


#: the Gherkin keywords that start a block, which a misspelling turns into description text
_BLOCK_KEYWORDS = ("Scenario", "Scenario Outline", "Scenario Template", "Background", "Rule", "Example", "Examples")


def misspelt_keywords(features: Sequence[Feature]) -> list[str]:
    """`file:line: "Scenari:" reads as description text` for each line of a feature's description
    that looks like a misspelt block keyword, in features with no scenario: behave takes such a
    line for prose and runs nothing, without a word."""
    import difflib

    found: list[str] = []
    for feature in features:
        if list(feature.walk_scenarios()):
            continue
        for offset, line in enumerate(feature.description or (), start=1):
            word = line.strip().split(":", 1)[0] if ":" in line else ""
            close = difflib.get_close_matches(word, _BLOCK_KEYWORDS, n=1, cutoff=0.75) if word else []
            if close:
                where = f"{feature.filename}:{feature.line + offset}"
                found.append(f'{where}: "{word}:" is read as description text: did you mean "{close[0]}:"?')
    return found
