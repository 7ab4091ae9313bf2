"""The behave formatters: `mcp_bdd.report:LivingDocFormatter` and `mcp_bdd.report:JUnitFormatter`.

    behave -f mcp_bdd.report:LivingDocFormatter -o reports/living-doc.html features/

Both collect the run model during the run (cheap, no I/O) and write once in `close()`, which
behave calls after the after_all hook. Options come from behave userdata (`-D key=value`):

    mcp_bdd.label   name of this run in merged reports (default: the `transport` userdata, else "run")
    mcp_bdd.title   page title (default: "<project folder> — living documentation")
    mcp_bdd.json    where the run model goes (default: beside the HTML, .json; "none" to skip)
    mcp_bdd.junit   also write JUnit XML there (same as adding the JUnitFormatter)
    mcp_bdd.payload_limit   characters of one MCP payload kept before it is cut (default 20000)
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any

from behave.formatter.base import Formatter  # type: ignore[import-untyped, unused-ignore]

from mcp_bdd.report.collector import RunCollector
from mcp_bdd.report.coverage import compute_coverage, coverage_json
from mcp_bdd.report.evidence import PAYLOAD_LIMIT
from mcp_bdd.report.files import write_text
from mcp_bdd.report.glossary import from_registry
from mcp_bdd.report.junit import write_junit
from mcp_bdd.report.model import Run, dump_run
from mcp_bdd.report.render import write_html
from mcp_bdd.secrets import MASK, is_secret_name

__all__ = ["DEFAULT_HTML", "DEFAULT_JUNIT", "JUnitFormatter", "LivingDocFormatter", "write_run_json"]

DEFAULT_HTML = "reports/living-doc.html"
DEFAULT_JUNIT = "reports/junit.xml"


def _userdata(config: Any) -> dict[str, str]:
    data = getattr(config, "userdata", None) or {}
    return {str(k): str(v) for k, v in dict(data).items()}


def write_run_json(path: str | Path, run: Run) -> Path:
    """The run model plus its coverage map, as JSON (what `merge` reads back)."""
    data = dump_run(run)
    data["coverage"] = coverage_json(compute_coverage(run.features, run.servers))
    return write_text(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def _step_registry_steps() -> dict[str, list[Any]]:
    """The step definitions behave loaded for this run (complete by the time we close).

    Not simply `behave.step_registry.registry`: `behave` (its __main__) calls reset_runtime(),
    which rebinds that name to a new, empty registry *after* behave.runner bound the one it
    uses as `the_step_registry`; the steps are registered into the runner's. Take whichever
    holds steps (the runner's first). No import of the steps themselves is needed.
    """
    from behave import runner, step_registry  # type: ignore[import-untyped, unused-ignore]

    for registry in (getattr(runner, "the_step_registry", None), getattr(step_registry, "registry", None)):
        steps = getattr(registry, "steps", None)
        if isinstance(steps, dict) and any(steps.values()):
            return steps
    return {}


class _CollectingFormatter(Formatter):  # type: ignore[misc]
    """Forwards behave's callbacks to a RunCollector; subclasses decide what to write."""

    def __init__(self, stream_opener: Any, config: Any) -> None:
        super().__init__(stream_opener, config)
        self.userdata = _userdata(config)
        label = self.userdata.get("mcp_bdd.label") or self.userdata.get("transport") or "run"
        title = self.userdata.get("mcp_bdd.title") or f"{Path.cwd().name} — living documentation"
        try:
            limit = int(self.userdata.get("mcp_bdd.payload_limit", PAYLOAD_LIMIT))
        except ValueError:
            limit = PAYLOAD_LIMIT
        self.collector = RunCollector(label=label, title=title, payload_limit=limit)

    # -- behave's formatter interface (see collector.py for the order of calls) --------------------
    def uri(self, uri: Any) -> None:
        pass

    def feature(self, feature: Any) -> None:
        self.collector.feature(feature)

    def rule(self, rule: Any) -> None:
        self.collector.rule(rule)

    def rule_finished(self) -> None:
        self.collector.rule_finished()

    def background(self, background: Any) -> None:
        pass

    def scenario(self, scenario: Any) -> None:
        self.collector.scenario(scenario)

    def step(self, step: Any) -> None:
        pass

    def match(self, match: Any) -> None:
        self.collector.match(match)

    def result(self, step: Any) -> None:
        self.collector.result(step)

    def embedding(self, mime_type: str, data: bytes) -> None:
        self.collector.embedding(mime_type, data)

    def eof(self) -> None:
        self.collector.eof()

    def close(self) -> None:
        try:
            self.write(self._finish())
        finally:
            self.close_stream()

    # -- writing ---------------------------------------------------------------------------------------
    def _finish(self) -> Run:
        from behave import __version__ as behave_version

        meta = {
            "behave": str(behave_version),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        }
        if self.userdata:
            shown = {k: (MASK if is_secret_name(k) else v) for k, v in sorted(self.userdata.items())}
            meta["userdata"] = " ".join(f"{k}={v}" for k, v in shown.items())
        glossary = from_registry(_step_registry_steps(), self.collector.definition_uses)
        return self.collector.finish(glossary, meta)

    def output_path(self, default: str) -> Path:
        """`-o PATH` if given; stdout is no place for HTML (behave prints there), so a default file."""
        name = getattr(self.stream_opener, "name", None)
        if name and name != "-":
            return Path(name)
        print(f"mcp-bdd: no -o given for {type(self).__name__}; writing {default}", file=sys.stderr)
        return Path(default)

    def write(self, run: Run) -> None:
        raise NotImplementedError


class LivingDocFormatter(_CollectingFormatter):
    """One self-contained HTML page (plus the run as JSON beside it)."""

    name = "mcp_bdd.living_doc"
    description = "mcp-bdd living documentation: one self-contained HTML file + run JSON"

    def write(self, run: Run) -> None:
        html = self.output_path(DEFAULT_HTML)
        write_html(html, [run])
        json_path = self.userdata.get("mcp_bdd.json", "")
        if json_path.lower() not in ("none", "off", "false", "0"):
            write_run_json(json_path or html.with_suffix(".json"), run)
        junit = self.userdata.get("mcp_bdd.junit")
        if junit:
            write_junit(junit, run)


class JUnitFormatter(_CollectingFormatter):
    """JUnit XML that keeps Rules, outlines and hook errors right (see junit.py)."""

    name = "mcp_bdd.junit"
    description = "mcp-bdd JUnit XML (Rule-aware; hook errors count as errors)"

    def write(self, run: Run) -> None:
        write_junit(self.output_path(DEFAULT_JUNIT), run)
