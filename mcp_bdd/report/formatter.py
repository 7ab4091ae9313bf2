"""The behave formatters of mcp-bdd (aliases in ALIASES, registered in [tool.behave.formatters]).

    behave -f living-doc -f pretty -D mcp_bdd.report=reports/living-doc.html features/
    behave -f cucumber-messages -o reports/run.ndjson -f cucumber-json -o reports/cucumber.json features/

All collect the run model during the run (cheap, no I/O) and write once in `close()`, which
behave calls after the after_all hook. Options come from behave userdata (`-D key=value`):

    mcp_bdd.label   name of this run in merged reports (default: the `transport` userdata, else "run")
    mcp_bdd.title   page title (default: "<project folder> — living documentation")
    mcp_bdd.report  where the HTML goes, whatever -o behave paired with the formatter
                    (also `[tool.mcp-bdd] report`); likewise mcp_bdd.junit_path,
                    mcp_bdd.cucumber_messages and mcp_bdd.cucumber_json for the other formatters
    mcp_bdd.json    where the run model goes (default: beside the HTML, .json; "none" to skip)
    mcp_bdd.junit   also write JUnit XML there (same as adding the JUnitFormatter)
    mcp_bdd.summary "off": no GitHub step summary even when $GITHUB_STEP_SUMMARY is set
    mcp_bdd.payload_limit   characters of one MCP payload kept before it is cut (default 20000)
    mcp_bdd.history   folder of the run history (default: `history` in [tool.mcp-bdd]; "none" for off)
    mcp_bdd.history_runs   runs the history keeps per label (default: `history_runs`, else 20)

Why a path option besides `-o`: behave pairs the n-th `-o` with the n-th `-f`, not with the
`-f` before it, so `-f pretty -f living-doc -o x.html` sends the console to x.html. A path given
by name cannot be mispaired. The order of precedence: `-D`, then an `-o` paired with this
formatter, then `[tool.mcp-bdd] report` (HTML only), then the default file.

The run model's default place, beside the HTML with .json (`out.html` -> `out.json`), may be
another output of the same run: `behave -f json -o out.json -f living-doc -o out.html`. Then
it goes to `<name>.mcp-bdd.json` instead (`out.mcp-bdd.json`), with one line on stderr saying
so, and the other formatter's file is left as it wrote it. An output of the run is any `-o` file
of any formatter, the HTML itself, and the files named by -D mcp_bdd.junit, mcp_bdd.junit_path,
mcp_bdd.cucumber_messages and mcp_bdd.cucumber_json. A path given with -D mcp_bdd.json is
used as given.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Protocol

from behave.formatter.base import Formatter  # type: ignore[import-untyped, unused-ignore]

from mcp_bdd.report.collector import BehaveFeature, BehaveScenario, RunCollector
from mcp_bdd.report.coverage import compute_coverage, coverage_json
from mcp_bdd.report.cucumber_json import write_cucumber_json
from mcp_bdd.report.cucumber_messages import write_messages
from mcp_bdd.report.evidence import PAYLOAD_LIMIT
from mcp_bdd.report.files import not_written, write_text
from mcp_bdd.report.glossary import from_registry
from mcp_bdd.report.history import DEFAULT_KEEP, read_history, record_run
from mcp_bdd.report.junit import write_junit
from mcp_bdd.report.model import Run, dump_run
from mcp_bdd.report.render import write_html
from mcp_bdd.report.summary import append_step_summary
from mcp_bdd.secrets import MASK, is_secret_name

__all__ = [
    "ALIASES",
    "DEFAULT_HTML",
    "DEFAULT_JUNIT",
    "CucumberJsonFormatter",
    "CucumberMessagesFormatter",
    "JUnitFormatter",
    "LivingDocFormatter",
    "write_run_json",
]

DEFAULT_HTML = "reports/living-doc.html"
DEFAULT_JUNIT = "reports/junit.xml"
DEFAULT_MESSAGES = "reports/run.ndjson"
DEFAULT_CUCUMBER_JSON = "reports/cucumber.json"

#: Short names for `-f`: what pyproject's [tool.behave.formatters] and `mcp-bdd init` register.
ALIASES: dict[str, str] = {
    "living-doc": "mcp_bdd.report:LivingDocFormatter",
    "junit-mcp": "mcp_bdd.report:JUnitFormatter",
    "cucumber-messages": "mcp_bdd.report:CucumberMessagesFormatter",
    "cucumber-json": "mcp_bdd.report:CucumberJsonFormatter",
}


def _userdata(config: object) -> dict[str, str]:
    data = getattr(config, "userdata", None) or {}
    return {str(k): str(v) for k, v in dict(data).items()}


def _project_settings(userdata: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    """`[tool.mcp-bdd] report` and `links`. A broken configuration is not this formatter's to
    report: the environment's before_all does (with where and a tip), so here it means defaults."""
    from mcp_bdd.config import load_config
    from mcp_bdd.errors import McpBddError

    try:
        config = load_config(userdata=userdata)
    except (McpBddError, OSError, ValueError):
        return None, {}
    report = str(Path(config.root) / config.report) if config.report else None  # relative to the config file
    return report, dict(config.links)


def write_run_json(path: str | Path, run: Run) -> Path:
    """The run model plus its coverage map, as JSON (what `merge` reads back)."""
    data = dump_run(run)
    data["coverage"] = coverage_json(compute_coverage(run.features, run.servers))
    return write_text(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def _step_registry_steps() -> dict[str, list[object]]:
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

    def __init__(self, stream_opener: object, config: object) -> None:
        super().__init__(stream_opener, config)
        self.userdata = _userdata(config)
        label = self.userdata.get("mcp_bdd.label") or self.userdata.get("transport") or "run"
        title = self.userdata.get("mcp_bdd.title") or f"{Path.cwd().name} — living documentation"
        try:
            limit = int(self.userdata.get("mcp_bdd.payload_limit", PAYLOAD_LIMIT))
        except ValueError:
            limit = PAYLOAD_LIMIT
        self.collector = RunCollector(label=label, title=title, payload_limit=limit)
        self.configured_report, self.links = _project_settings(self.userdata)
        self.cwd = Path.cwd()  # where the run started: see `_in_the_run_directory`
        self.writing = ("", "report")  # the file being written, and what it is: see `_not_written`

    # -- behave's formatter interface (see collector.py for the order of calls) --------------------
    def uri(self, uri: object) -> None:
        pass

    def feature(self, feature: BehaveFeature) -> None:
        self.collector.feature(feature)

    def rule(self, rule: object) -> None:
        self.collector.rule(rule)

    def rule_finished(self) -> None:
        self.collector.rule_finished()

    def background(self, background: object) -> None:
        pass

    def scenario(self, scenario: BehaveScenario) -> None:
        self.collector.scenario(scenario)

    def step(self, step: object) -> None:
        pass

    def match(self, match: object) -> None:
        self.collector.match(match)

    def result(self, step: object) -> None:
        self.collector.result(step)

    def embedding(self, mime_type: str, data: bytes) -> None:
        self.collector.embedding(mime_type, data)

    def eof(self) -> None:
        self.collector.eof()

    def after_hooks_begin(self) -> None:
        """Not behave's: mcp-bdd's hooks call it where the scenario's after hooks begin."""
        self.collector.after_hooks_begin()

    def run_failed(self, kind: str, message: str) -> None:
        """Not behave's: mcp-bdd's before_all calls it when the run cannot start (its configuration)."""
        self.collector.run_failed(kind, message)

    def close(self) -> None:
        try:
            with _in_the_run_directory(self.cwd):
                self.write(self._finish())
        except OSError as exc:  # a bad path: say which, and let the other formatters still write theirs
            self._not_written(exc)
        finally:
            self.close_stream()

    def _path(self, path: str | os.PathLike[str], what: str) -> str:
        """`path`, noted as the file being written and what it is (a formatter may write several)."""
        self.writing = (str(path), what)
        return str(path)

    def _not_written(self, exc: OSError) -> None:
        """Say what was not written, where, why and what to do, and fail the run: a CI job that
        asked for a report and got none must not be green."""
        path, what = self.writing
        tip = (
            "give a path in a folder you may write to (-o PATH, or -D mcp_bdd.<output>=PATH), or move "
            "what is in the way; the run's results are in behave's own output above."
        )
        print(not_written(what, path or exc.filename or "?", exc, tip), file=sys.stderr)
        runner = _runner_of(self)
        if runner is not None:
            runner.hook_failures += 1  # behave reads it after closing the formatters: the exit code is 1

    # -- writing ---------------------------------------------------------------------------------------
    def _finish(self) -> Run:
        from behave import __version__ as behave_version

        meta = {
            "behave": str(behave_version),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        }
        if self.userdata.get("profile"):  # the run's profile (-D profile=staging): fakes or real dependencies
            meta["profile"] = self.userdata["profile"]
        if self.userdata:
            shown = {k: (MASK if is_secret_name(k) else v) for k, v in sorted(self.userdata.items())}
            meta["userdata"] = " ".join(f"{k}={v}" for k, v in shown.items())
        glossary = from_registry(_step_registry_steps(), self.collector.definition_uses)
        return replace(self.collector.finish(glossary, meta), links=self.links)

    def output_path(self, default: str, option: str, configured: str | None = None) -> Path:
        """Where to write: `-D option=PATH`, else a paired `-o PATH`, else `configured`, else `default`.

        stdout is no place for a file (behave prints there), so an unpaired formatter writes the
        default file and says so.
        """
        explicit = self.userdata.get(option)
        if explicit:
            return Path(explicit)
        name = getattr(self.stream_opener, "name", None)
        if name and name != "-":
            return Path(name)
        if configured:
            return Path(configured)
        print(
            f"mcp-bdd: {type(self).__name__} writes {default} (no -o paired with it; "
            f"set -D {option}=PATH to choose the file)",
            file=sys.stderr,
        )
        return Path(default)

    def write(self, run: Run) -> None:
        raise NotImplementedError


class _Runner(Protocol):
    """What a formatter may touch of behave's runner: its count of hook failures."""

    hook_failures: int


def _runner_of(formatter: object) -> _Runner | None:
    """The behave runner closing `formatter` (None when something else closes it).

    Why look up the stack: a formatter's only way to fail the run is behave's own count of hook
    failures, which behave reads right after it closes the formatters (runner.run_model), and
    behave gives a formatter no reference to its runner."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(getattr(candidate, "hook_failures", None), int) and any(
            f is formatter for f in getattr(candidate, "formatters", None) or ()
        ):
            return candidate
        frame = frame.f_back
    return None


@contextlib.contextmanager
def _in_the_run_directory(cwd: Path) -> Iterator[None]:
    """Write the files from where the run started. Why: their paths (`-o`, `-D mcp_bdd.report=`,
    the history folder) are relative to it, and they are written at the end of the run, when an
    in-process server's code may have changed the working directory (`os.chdir` in a tool sent
    the living documentation to `/reports/`). A directory that is gone is left as it is."""
    try:
        back: Path | None = Path.cwd()
    except OSError:  # where that code went is gone
        back = None
    if back == cwd or not cwd.is_dir():
        yield
        return
    os.chdir(cwd)
    try:
        yield
    finally:
        if back is not None:
            with contextlib.suppress(OSError):
                os.chdir(back)


def history_settings(userdata: dict[str, str]) -> tuple[Path | None, int]:
    """The history folder and how many runs it keeps: `-D mcp_bdd.history` wins over `[tool.mcp-bdd]`.

    A relative folder from the configuration is relative to the file that names it. A broken
    configuration is not this formatter's to report (the environment hooks do, with the file and
    key): the history is then off.
    """
    folder = userdata.get("mcp_bdd.history")
    keep_text = userdata.get("mcp_bdd.history_runs")
    keep = DEFAULT_KEEP
    root = Path.cwd()
    if folder is None or keep_text is None:
        from mcp_bdd.config import load_config
        from mcp_bdd.errors import McpBddError

        try:
            config = load_config(userdata=userdata)
        except (McpBddError, OSError, ValueError):
            config = None
        if config is not None:
            root = Path(config.root)
            folder = folder if folder is not None else config.history
            keep = config.history_runs
    if keep_text is not None:
        try:
            keep = max(2, int(keep_text))
        except ValueError:
            print(f"mcp-bdd: -D mcp_bdd.history_runs={keep_text!r} is not a number; keeping {keep}", file=sys.stderr)
    if not folder or folder.lower() in ("none", "off", "false", "0"):
        return None, keep
    path = Path(folder)
    return (path if path.is_absolute() or "mcp_bdd.history" in userdata else root / path), keep


class LivingDocFormatter(_CollectingFormatter):
    """One self-contained HTML page (plus the run as JSON beside it, and a history entry when asked)."""

    name = "mcp_bdd.living_doc"
    description = "mcp-bdd living documentation: one self-contained HTML file + run JSON"

    def write(self, run: Run) -> None:
        html = self.output_path(DEFAULT_HTML, "mcp_bdd.report", self.configured_report)
        folder, keep = history_settings(self.userdata)
        history = read_history(folder, run.label)[-(keep - 1) :] if folder else []
        write_html(self._path(html, "living documentation"), [run], history=history)
        if folder:
            record_run(self._path(folder, "run history"), run, keep)
        json_path = self.userdata.get("mcp_bdd.json", "")
        if json_path.lower() not in ("none", "off", "false", "0"):
            write_run_json(self._path(json_path or self._run_json_beside(html), "run model (JSON)"), run)
        junit = self.userdata.get("mcp_bdd.junit")
        if junit:
            write_junit(self._path(junit, "JUnit report"), run)
        # The step summary comes from here, not from a formatter of its own: the living doc is the
        # formatter every mcp-bdd run has (and `mcp-bdd run` writes one for the merged run).
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary and self.userdata.get("mcp_bdd.summary", "").lower() not in ("off", "none", "false", "0"):
            append_step_summary(self._path(summary, "GitHub step summary"), [run], html, os.environ)

    def _run_json_beside(self, html: Path) -> Path:
        """`<name>.json` beside the HTML, or `<name>.mcp-bdd.json` when that is another output of
        this run (a `-f json -o <name>.json` next to this formatter): never over another file."""
        default = html.with_suffix(".json")
        if _absolute(default) not in self._run_outputs(html):
            return default
        sidecar = html.with_name(f"{html.stem}.mcp-bdd.json")
        print(
            f"mcp-bdd: the run model goes to {sidecar}, not {default}: that file is another output of this run "
            "(set -D mcp_bdd.json=PATH to choose)",
            file=sys.stderr,
        )
        return sidecar

    def _run_outputs(self, html: Path) -> set[str]:
        """Every file this run's formatters write: behave's `-o` files, the HTML, mcp-bdd's -D paths."""
        names = [getattr(opener, "name", None) for opener in getattr(self.config, "outputs", None) or ()]
        names += [self.userdata.get(option) for option in _OUTPUT_OPTIONS]
        return {_absolute(name) for name in names if name and name != "-"} | {_absolute(html)}


#: -D options that name a file an mcp-bdd formatter writes (besides the HTML and the run model)
_OUTPUT_OPTIONS = ("mcp_bdd.junit", "mcp_bdd.junit_path", "mcp_bdd.cucumber_messages", "mcp_bdd.cucumber_json")


def _absolute(path: str | Path) -> str:
    return os.path.abspath(os.path.expanduser(path))


class JUnitFormatter(_CollectingFormatter):
    """JUnit XML that keeps Rules, outlines and hook errors right (see junit.py)."""

    name = "mcp_bdd.junit"
    description = "mcp-bdd JUnit XML (Rule-aware; hook errors count as errors)"

    def write(self, run: Run) -> None:
        write_junit(self._path(self.output_path(DEFAULT_JUNIT, "mcp_bdd.junit_path"), "JUnit report"), run)


class CucumberMessagesFormatter(_CollectingFormatter):
    """Cucumber Messages (NDJSON): what every Cucumber tool reads (see cucumber_messages.py)."""

    name = "mcp_bdd.cucumber_messages"
    description = "Cucumber Messages NDJSON (Rules, outlines, MCP exchanges as attachments)"

    def write(self, run: Run) -> None:
        path = self.output_path(DEFAULT_MESSAGES, "mcp_bdd.cucumber_messages")
        write_messages(self._path(path, "Cucumber Messages"), run)


class CucumberJsonFormatter(_CollectingFormatter):
    """Cucumber JSON: what Xray, TestRail, Jenkins and ReportPortal ingest (see cucumber_json.py)."""

    name = "mcp_bdd.cucumber_json"
    description = "Cucumber JSON (features/elements/steps; MCP exchanges as embeddings)"

    def write(self, run: Run) -> None:
        path = self.output_path(DEFAULT_CUCUMBER_JSON, "mcp_bdd.cucumber_json")
        write_cucumber_json(self._path(path, "Cucumber JSON"), run)
