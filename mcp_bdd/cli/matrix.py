"""`mcp-bdd run`: one spec, every transport — behave once per matrix leg, in worker processes.

A *leg* is one (transport, protocol) pair. Each leg runs `python -m behave -D transport=...
-D protocol=...` in worker subprocesses (`--jobs N` splits the feature files of a leg across N
workers); every worker writes its run model (living-doc.json) through the report formatter,
and at the end the legs are merged into one report with a column per leg plus one JUnit file.

Why subprocesses: each behave process has its own servers, fakes and ports, so workers never
share state; and a worker can be stopped as a whole (its process group) on Ctrl-C.

Files (next to the report, `reports/` by default):

    reports/living-doc.html              the merged report (a column per leg)
    reports/junit.xml                    every leg's testsuites in one JUnit file
    reports/living-doc.legs/<leg>.json   each leg's run model (its jobs combined)
    reports/living-doc.legs/<leg>/job-<i>.{html,json,log}   what each worker wrote
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from mcp_bdd._process_tree import descendants, die_with_parent, kill_all, signal_group
from mcp_bdd._text import WARNING_PREFIX, split_lines, tail
from mcp_bdd.errors import ConfigError, NothingSelected, UsageError
from mcp_bdd.failures import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NOTHING_RAN, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE

if TYPE_CHECKING:
    import psutil

    from mcp_bdd.config import Config
    from mcp_bdd.report.model import Run, Scenario, ServerSurface

__all__ = [
    "Leg",
    "assign_jobs",
    "feature_units",
    "parse_shard",
    "plan_legs",
    "run_matrix",
    "select_shard",
    "split_behave_args",
]

RUN_MARKER = ".mcp-bdd-run"
_SCENARIO_LINE = re.compile(r"^\s*(Scenario|Scenario Outline|Scenario Template|Example)\s*:", re.M)
_LINE_SUFFIX = re.compile(r"^(?P<file>.+\.feature)(?::\d+)+$")
_GRACE_INT = 8.0  # seconds a worker gets after SIGINT to finish its hooks and write its report
_GRACE_TERM = 3.0
_LOG_PIECE = 65536  # characters of a job log read at a time, looking for warnings


# ---------------------------------------------------------------------------------------------
# planning: legs, feature files, shards, jobs


@dataclass(frozen=True)
class Leg:
    """One cell of the matrix. `None` means "as configured" (no -D override is passed)."""

    transport: str | None
    protocol: str | None
    label: str
    slug: str

    def defines(self) -> list[str]:
        out: list[str] = []
        if self.transport is not None:
            out += ["-D", f"transport={self.transport}"]
        if self.protocol is not None:
            out += ["-D", f"protocol={self.protocol}"]
        return out


def _split_list(values: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def plan_legs(transports: Sequence[str] | None, protocols: Sequence[str] | None, config: Config) -> list[Leg]:
    """The matrix: transports x protocols, validated (a ConfigError lists the valid values)."""
    from mcp_bdd.config import PROTOCOLS, TRANSPORTS, normalize_protocol, normalize_transport

    t_raw = _split_list(transports)
    p_raw = _split_list(protocols)
    t_list: list[str | None] = []
    for value in t_raw:
        names = list(TRANSPORTS) if value.lower() == "all" else [normalize_transport(value, "--transport")]
        t_list += [n for n in names if n not in t_list]
    p_list: list[str | None] = []
    for value in p_raw:
        names = list(PROTOCOLS) if value.lower() == "all" else [normalize_protocol(value, "--protocol")]
        p_list += [n for n in names if n not in p_list]
    if not t_list:
        t_list = [None]
    if not p_list:
        p_list = [None]
    legs = []
    for transport in t_list:
        for protocol in p_list:
            # Without --transport each server runs over its own configured transport: say so.
            configured = "transport" in getattr(config, "model_fields_set", ())
            shown_t = transport or (str(config.transport) if configured else "default")
            label = shown_t if protocol is None else f"{shown_t}/{protocol}"
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "run"
            legs.append(Leg(transport, protocol, label, slug))
    return legs


def _value_options() -> tuple[set[str], set[str]]:
    """behave's options that take a value (so that value is not mistaken for a feature path)."""
    try:
        from behave.configuration import OPTIONS
    except ImportError:  # pragma: no cover - behave is a dependency
        return set(), set()
    takes: set[str] = set()
    optional: set[str] = set()
    for fixed, keywords in OPTIONS:
        if not fixed:
            continue
        action = keywords.get("action")
        if action not in (None, "store", "append"):
            continue
        (optional if keywords.get("nargs") == "?" else takes).update(fixed)
    return takes, optional


def split_behave_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(options, paths): behave options pass through to every worker; paths are split among them."""
    takes, optional = _value_options()
    options: list[str] = []
    paths: list[str] = []
    i = 0
    items = list(args)
    while i < len(items):
        arg = items[i]
        if arg == "--":
            paths += items[i + 1 :]
            break
        if arg.startswith("-") and arg != "-":
            options.append(arg)
            name = arg.split("=", 1)[0]
            if "=" not in arg and i + 1 < len(items):
                nxt = items[i + 1]
                if name in takes or (name in optional and nxt in ("auto", "always", "never", "on", "off")):
                    options.append(nxt)
                    i += 1
        else:
            paths.append(arg)
        i += 1
    return options, paths


def feature_units(paths: Sequence[str], root: Path) -> list[str]:
    """Feature files named by `paths` (folders searched recursively), relative, sorted, unique.

    `file.feature:12` (a scenario by line) is kept as a unit of its own. The stable sort is what
    makes shards and job splits the same on every machine.
    """
    found: set[str] = set()
    for raw in paths or ["features"]:
        match = _LINE_SUFFIX.match(raw)
        candidate = Path(match.group("file") if match else raw)
        full = candidate if candidate.is_absolute() else root / candidate
        if full.is_dir():
            for file in full.rglob("*.feature"):
                if file.is_file() and not any(part.startswith(".") for part in file.relative_to(full).parts):
                    found.add(_rel(file, root))
        elif full.is_file():
            found.add(_rel(full, root) + (raw[len(match.group("file")) :] if match else ""))
        else:
            raise UsageError(f'No such feature file or folder: "{raw}" (looked in {root}).')
    return sorted(found)


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def parse_shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise UsageError(f'--shard "{text}" is not K/N (e.g. --shard 2/4: the second of four shards).')
    k, n = int(match.group(1)), int(match.group(2))
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"--shard {k}/{n}: K must be between 1 and N (N >= 1).")
    return k, n


def select_shard(units: Sequence[str], k: int, n: int) -> list[str]:
    """Shard K of N (1-based): the units whose position in the sorted list is K-1 modulo N."""
    ordered = sorted(units)
    return [u for i, u in enumerate(ordered) if i % n == k - 1]


def _weight(unit: str, root: Path) -> int:
    if _LINE_SUFFIX.match(unit):
        return 1
    try:
        text = (root / unit).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 1
    return max(1, len(_SCENARIO_LINE.findall(text)))


def assign_jobs(units: Sequence[str], jobs: int, root: Path) -> list[list[str]]:
    """Split units into at most `jobs` groups of similar scenario counts (deterministic LPT)."""
    jobs = max(1, min(jobs, len(units)))
    weighted = sorted(((_weight(u, root), u) for u in units), key=lambda wu: (-wu[0], wu[1]))
    bins: list[list[str]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for weight, unit in weighted:
        target = min(range(jobs), key=lambda j: (loads[j], j))
        bins[target].append(unit)
        loads[target] += weight
    return [sorted(b) for b in bins if b]


# ---------------------------------------------------------------------------------------------
# workers


@dataclass
class Job:
    leg: Leg
    index: int
    count: int
    units: list[str]
    html: Path
    json: Path
    log: Path
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    ended: float = 0.0
    returncode: int | None = None

    @property
    def name(self) -> str:
        return self.leg.label if self.count == 1 else f"{self.leg.label} {self.index}/{self.count}"


def _worker_argv(
    job_html: Path, job_json: Path, leg: Leg, options: list[str], units: list[str], title: str | None
) -> list[str]:
    # Our formatter first, so that its -o pairs with it whatever -f the user adds after it.
    return [
        sys.executable, "-m", "behave",
        "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(job_html),
        *leg.defines(),
        "-D", f"mcp_bdd.label={leg.label}",
        "-D", f"mcp_bdd.json={job_json}",
        "-D", "mcp_bdd.summary=off",  # one GitHub step summary for the merged run, written below
        *(["-D", f"mcp_bdd.title={title}"] if title else []),
        "-D", "mcp_bdd.allow_empty=true",  # a job whose share a tag filter empties is fine; the run checks the total
        "--no-color",
        "-f", "plain",  # to the job's log: what a human reads when a leg fails
        *options,
        # after the user's -D: one history entry per `mcp-bdd run`, recorded by the merge below,
        # not one per job (a leg's shards would read as separate runs)
        "-D", "mcp_bdd.history=none",
        *units,
    ]  # fmt: skip


def _start(job: Job, root: Path) -> None:
    job.log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with job.log.open("wb") as log:
        log.write(("$ " + " ".join(job.argv) + "\n").encode())
        log.flush()
        job.process = subprocess.Popen(
            job.argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as a whole, never by the terminal alone
            preexec_fn=_default_signals,
        )
    job.started = time.monotonic()


def _default_signals() -> None:
    """In the worker, before exec: SIGINT must interrupt behave even if ours was ignored, and the
    worker dies with `mcp-bdd run` (even `kill -9` of it); its lifeline then ends its servers."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()


def _stop_all(jobs: Sequence[Job]) -> None:
    """SIGINT every running worker's group (behave stops, its hooks reap servers and the formatter
    writes a partial report), then SIGTERM, then SIGKILL for whatever is left — descendants included."""
    running = [j for j in jobs if j.process is not None and j.process.poll() is None]
    known: dict[int, set[psutil.Process]] = {}
    for job in running:
        assert job.process is not None
        known[job.process.pid] = set(descendants(job.process.pid))
        signal_group(job.process.pid, signal.SIGINT)
    for sig, grace in ((signal.SIGTERM, _GRACE_INT), (signal.SIGKILL, _GRACE_TERM)):
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(j.process is not None and j.process.poll() is None for j in running):
            time.sleep(0.05)
        for job in running:
            assert job.process is not None
            if job.process.poll() is None:
                known[job.process.pid] |= set(descendants(job.process.pid))
                signal_group(job.process.pid, sig)
    for job in running:
        assert job.process is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            job.process.wait(timeout=2)
        kill_all(known[job.process.pid], groups=True)
        job.returncode = job.process.returncode
        job.ended = time.monotonic()


class _Interrupted(Exception):
    pass


@contextlib.contextmanager
def _interrupts() -> Iterator[None]:
    """Ctrl-C and SIGTERM both end up as KeyboardInterrupt in the scheduling loop."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    def on_int(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    # Explicit handlers: a shell starts background jobs with SIGINT ignored, and Ctrl-C must still work.
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
        signal.signal(signal.SIGINT, on_int)
        signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)


def _schedule(jobs: list[Job], concurrency: int, root: Path, out: TextIO) -> bool:
    """Run jobs, `concurrency` at a time. Returns False if interrupted."""
    pending = list(jobs)
    running: list[Job] = []
    try:
        with _interrupts():
            while pending or running:
                while pending and len(running) < concurrency:
                    job = pending.pop(0)
                    _start(job, root)
                    running.append(job)
                for job in list(running):
                    assert job.process is not None
                    code = job.process.poll()
                    if code is not None:
                        job.returncode = code
                        job.ended = time.monotonic()
                        running.remove(job)
                        print(f"  finished {job.name}: exit {code} ({job.ended - job.started:.1f} s)", file=out)
                time.sleep(0.05)
    except KeyboardInterrupt:
        print("\nmcp-bdd run: interrupted — stopping every worker ...", file=sys.stderr, flush=True)
        previous = signal.getsignal(signal.SIGINT)
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        try:
            _stop_all(jobs)  # all of them: one may have been started just as the signal came
        finally:
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGINT, previous)
        for job in jobs:
            if job.process is not None and job.returncode is None:
                job.returncode = job.process.poll()
                job.ended = job.ended or time.monotonic()
        return False
    return True


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class LegResult:
    leg: Leg
    jobs: list[Job]
    run: Run | None = None  # the jobs combined
    json_path: Path | None = None
    counts: Counter[str] = field(default_factory=Counter)
    severity: int = EXIT_OK
    problems: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the workers warned of (a slow stop), once each
    died: bool = False  # a worker was ended by something other than behave, before it wrote its report


def _combine_runs(runs: list[Run]) -> Run:
    """The runs of one leg's jobs as one run (features sorted by file, step uses added up)."""
    from mcp_bdd.report.model import StepDef, combine

    if len(runs) == 1:
        return runs[0]
    features = sorted((f for r in runs for f in r.features), key=lambda f: f.filename)
    servers: dict[str, ServerSurface] = {}
    for run in runs:
        for surface in run.servers:
            have = servers.get(surface.server)
            if have is None or (have.tools is None and surface.tools is not None):
                servers[surface.server] = surface
    glossary: dict[tuple[str, str, str], StepDef] = {}
    for run in runs:
        for entry in run.glossary:
            key = (entry.step_type, entry.pattern, entry.location)
            old = glossary.get(key)
            glossary[key] = entry if old is None else replace(old, uses=old.uses + entry.uses)
    started = [r.started_at for r in runs if r.started_at]
    failed = next((r for r in runs if r.error_kind), runs[0])
    return replace(
        runs[0],
        error_kind=failed.error_kind,
        error_message=failed.error_message,
        features=tuple(features),
        servers=tuple(servers.values()),
        glossary=tuple(glossary.values()),
        status=combine(r.status for r in runs),
        started_at=min(started) if started else 0.0,
        duration=max(r.duration for r in runs),
    )


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _whole(text: str, lines: int = 12) -> str:
    """A message whose first line leads into the next ones (`...not configured (nothing was run):`
    then each server it could not find), indented under the leg, at most `lines` of it."""
    kept = [line.rstrip() for line in text.strip().splitlines() if line.strip()][:lines]
    return "\n      ".join(line.strip() for line in kept)


def _tail(path: Path, lines: int = 12) -> str:
    return "\n".join("      " + line for line in split_lines(tail(path, lines)))


#: the statuses behave ends itself with: 0 (an option such as --help), 1 (a bad option, feature
#: file or hook), argparse's 2; any other status, or a signal, means something ended its process
_BEHAVE_OWN = (0, 1, 2)


def _died(code: int | None) -> bool:
    """Whether a worker's exit status says something ended behave, rather than behave itself."""
    return code not in _BEHAVE_OWN


def _no_report(code: int | None) -> str:
    """Why a worker wrote no report, from its exit status: behave's own (`_BEHAVE_OWN`) or not."""
    if code == 0:
        return "behave ended without running the features (exit code 0, no report): an option such as --help?"
    if not _died(code):
        return f"behave ended with exit code {code} without writing a report."
    how = f"killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exit code {code}"
    return (
        f"behave died during the run ({how}) without writing a report: something ended its process — "
        "a crash, the OOM killer, or code that exits it at once (os._exit() in an in-process server: run that "
        "server over stdio, where only its own process ends)."
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _analyse(result: LegResult, interrupted: bool) -> None:
    """A leg's verdict from its workers' run files: counts, failures, and what kept scenarios from running."""
    runs = _read_runs(result, interrupted)
    for run in runs:
        if run.error_kind == ConfigError.kind and run.error_message:  # the worker's before_all said so
            problem = f"configuration error: {_whole(run.error_message)}"
            if problem not in result.problems:  # once a leg, however many of its workers said it
                result.problems.append(problem)
            result.severity = max(result.severity, EXIT_USAGE)
    if not runs:
        return
    result.run = _combine_runs(runs)
    unservable, start_failures = _tally(result)
    for message, count in unservable.items():
        result.problems.append(f"{message} ({count} scenario{'s' if count != 1 else ''} not run on this leg)")
        result.severity = max(result.severity, EXIT_UNREACHABLE)
    for message, count in start_failures.items():
        # the "setup" category: a server that would not start, or a before_scenario hook that broke
        result.problems.append(f"setup failed: {message} ({count} scenario{'s' if count != 1 else ''})")
        result.severity = max(result.severity, EXIT_UNREACHABLE)
    if result.severity == EXIT_OK and any(j.returncode not in (0, None) for j in result.jobs) and not interrupted:
        result.severity = EXIT_FAILED
        result.problems.append("behave reported a failure (see the job logs).")


def _read_runs(result: LegResult, interrupted: bool) -> list[Run]:
    """Each worker's run file, read; a worker that left none is a problem of the leg (unless interrupted)."""
    import json

    from mcp_bdd.report.model import load_run

    runs = []
    for job in result.jobs:
        if job.json.is_file():
            try:
                runs.append(load_run(json.loads(job.json.read_text(encoding="utf-8"))))
            except (OSError, ValueError) as exc:
                result.problems.append(f"{job.name}: its run file {job.json} is unreadable ({exc}).")
                result.severity = max(result.severity, EXIT_USAGE)
            _collect_warnings(result, job.log)
        elif not interrupted:
            result.problems.append(
                f"{job.name}: {_no_report(job.returncode)} Its output ({job.log}):\n{_tail(job.log)}"
            )
            died = _died(job.returncode)  # behave's own status is a usage error; anything else ended it
            result.died = result.died or died
            result.severity = max(result.severity, EXIT_FAILED if died else EXIT_USAGE)
    return runs


def _tally(result: LegResult) -> tuple[Counter[str], Counter[str]]:
    """Count the combined run's scenarios by status and file each failure; returns the scenarios
    that could not run on this leg (not served, setup failed), by message."""
    from mcp_bdd.report.model import walk_scenarios

    assert result.run is not None
    unservable: Counter[str] = Counter()
    start_failures: Counter[str] = Counter()
    for feature in result.run.features:
        if feature.error_message:
            result.failures.append(
                f"{feature.location}  {feature.name}: hook error: {_first_line(feature.error_message)}"
            )
            result.severity = max(result.severity, EXIT_FAILED)
        for scenario in walk_scenarios(feature.children):
            result.counts[scenario.status] += 1
            if scenario.status in ("passed", "skipped", "untested"):
                continue
            first, kind = _first_failure(scenario)
            if kind == "not-served":
                unservable[first] += 1
            elif kind == "setup":
                start_failures[first] += 1
            else:
                result.failures.append(f"{scenario.location}  {scenario.name}: {scenario.status}: {first[:300]}")
                result.severity = max(result.severity, EXIT_FAILED)
    return unservable, start_failures


def _first_failure(scenario: Scenario) -> tuple[str, str | None]:
    """The first line of a scenario's first failure, without the exception's name, and its kind."""
    failed = [(s.error_message, s.error_kind) for s in scenario.steps if s.error_message]
    if scenario.error_message:
        failed.append((scenario.error_message, scenario.error_kind))
    message, kind = failed[0] if failed else (scenario.status, None)
    first = re.sub(r"^(?:[\w.]+Error|ERROR|HOOK-ERROR[^:]*|ASSERT FAILED): ", "", _first_line(message))
    return first, kind


def _collect_warnings(result: LegResult, log: Path) -> None:
    """The warnings a worker printed (the hooks write them to its real stderr, which is its job
    log): a job log is shown only when a leg fails, and a slow stop slows legs that pass. Read a
    bounded piece at a time: a server's output in the log may be gigabytes, or one endless line."""
    at_start = True  # the piece read begins a line (a long line comes in several pieces)
    with contextlib.suppress(OSError), log.open(encoding="utf-8", errors="replace") as lines:
        while piece := lines.readline(_LOG_PIECE):
            if at_start and piece.startswith(WARNING_PREFIX):
                warning = piece[len(WARNING_PREFIX) :].strip()
                if warning and warning not in result.warnings:
                    result.warnings.append(warning)
            at_start = piece.endswith("\n")


def _write_leg(result: LegResult, legs_dir: Path) -> None:
    from mcp_bdd.report import write_run_json

    if result.run is None:
        return
    run = replace(result.run, label=result.leg.label)
    result.json_path = write_run_json(legs_dir / f"{result.leg.slug}.json", run)


def _junit(results: list[LegResult], path: Path) -> Path | None:
    """Every leg's testsuites in one file; suite names and classnames carry the leg."""
    from mcp_bdd.report import junit_xml
    from mcp_bdd.report.files import write_text

    root = ET.Element("testsuites")
    root.set("name", "mcp-bdd")
    totals: Counter[str] = Counter()
    seconds = 0.0
    for result in results:
        if result.run is None:
            continue
        leg_root = ET.fromstring(junit_xml(result.run).split("?>", 1)[-1])
        for suite in leg_root.findall("testsuite"):
            suite.set("name", f"[{result.leg.label}] {suite.get('name', '')}")
            for case in suite.findall("testcase"):
                case.set("classname", f"{result.leg.slug}.{case.get('classname', '')}")
            for key in ("tests", "failures", "errors", "skipped"):
                totals[key] += int(suite.get(key, "0"))
            root.append(suite)
        seconds += float(leg_root.get("time", "0") or 0)
    if not len(root):
        return None
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    root.set("time", f"{seconds:.6f}")
    ET.indent(root)
    return write_text(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")


def _defines(options: list[str]) -> dict[str, str]:
    """The user's userdata among behave's options, in every spelling behave takes (`-D n=v`,
    `-Dn=v`, `--define n=v`, `--define=n=v`); the last one wins, as in behave."""
    out: dict[str, str] = {}
    for i, option in enumerate(options):
        if option in ("-D", "--define"):
            value = options[i + 1] if i + 1 < len(options) else ""
        elif option.startswith("--define="):
            value = option[len("--define=") :]
        elif option.startswith("-D") and len(option) > 2:
            value = option[2:]
        else:
            continue
        name, sep, text = value.partition("=")
        if sep:
            out[name] = text
    return out


def _merge_report(paths: list[Path], output: Path, title: str | None, behave_options: list[str]) -> int:
    """Delegate to `mcp-bdd report merge` (mcp_bdd.report.merge.main), with the run's history
    (`history` in [tool.mcp-bdd] or `-D mcp_bdd.history=...`): the merged page is the one people read."""
    from mcp_bdd.report.formatter import history_settings
    from mcp_bdd.report.merge import main as merge_main

    argv = [*map(str, paths), "-o", str(output)]
    if title:
        argv += ["--title", title]
    folder, keep = history_settings(_defines(behave_options))
    if folder is not None:
        argv += ["--history", str(folder), "--history-runs", str(keep)]
    return merge_main(argv)


# ---------------------------------------------------------------------------------------------
# the command


@dataclass
class RunOptions:
    transports: list[str]
    protocols: list[str]
    jobs: int
    shard: str | None
    report: Path
    junit: Path | None
    title: str | None
    behave_args: list[str]


def _prepare_dir(path: Path) -> None:
    """(Re)create a folder mcp-bdd owns; refuse to wipe one it did not create."""
    if path.exists():
        if not (path / RUN_MARKER).is_file():
            raise UsageError(
                f"{path} exists and was not written by mcp-bdd run; move it away or choose another --report."
            )
        shutil.rmtree(path)
    path.mkdir(parents=True)
    (path / RUN_MARKER).write_text("written by `mcp-bdd run`; wiped at the start of every run\n")


def run_matrix(options: RunOptions, out: TextIO | None = None) -> int:
    from mcp_bdd.config import load_config

    out = out or sys.stdout
    root = Path.cwd()
    config = load_config()  # a broken configuration stops here, before any worker starts
    legs = plan_legs(options.transports, options.protocols, config)
    if options.jobs < 1:
        raise UsageError(f"--jobs {options.jobs}: give at least 1.")
    behave_options, paths = split_behave_args(options.behave_args)
    units = _select_units(paths, options.shard, root, out)
    report = options.report
    legs_dir = report.parent / f"{report.stem}.legs"
    _prepare_dir(legs_dir)
    groups = assign_jobs(units, options.jobs, root)
    jobs = _plan_jobs(legs, groups, legs_dir, behave_options, options.title)
    print(
        f"mcp-bdd run: {len(legs)} leg(s) [{', '.join(leg.label for leg in legs)}] x {len(groups)} job(s), "
        f"{len(units)} feature file(s), at most {options.jobs} worker(s) at a time",
        file=out,
        flush=True,
    )
    started = time.monotonic()
    completed = _schedule(jobs, options.jobs, root, out)
    results = [LegResult(leg, [j for j in jobs if j.leg is leg]) for leg in legs]
    for result in results:
        _analyse(result, interrupted=not completed)
        _write_leg(result, legs_dir)
    elapsed = time.monotonic() - started
    print("", file=out)
    for result in results:
        _print_leg(result, out)
    _publish(results, options, behave_options, out)
    if not completed:
        print(f"Interrupted after {elapsed:.1f} s; the report holds what finished.", file=out)
        return EXIT_INTERRUPTED
    severity = max((r.severity for r in results), default=EXIT_OK)
    died = any(r.died for r in results)  # what ran is unknown: its report died with it
    if not died and severity in (EXIT_OK, EXIT_FAILED) and _scenarios_ran(results) == 0:
        _print_nothing_ran(len(units), behave_options, out)
        severity = EXIT_NOTHING_RAN
    print(f"mcp-bdd run: {_verdict(severity, died)} ({elapsed:.1f} s) — exit {severity}", file=out)
    return severity


def _select_units(paths: list[str], shard: str | None, root: Path, out: TextIO) -> list[str]:
    """The feature files to run (this shard's, if one is given); none is an error, not a pass."""
    units = feature_units(paths, root)
    if shard:
        k, n = parse_shard(shard)
        total = len(units)
        units = select_shard(units, k, n)
        digest = hashlib.sha256("\n".join(units).encode()).hexdigest()[:12]
        print(f"shard {k}/{n}: {len(units)} of {total} feature files (selection {digest})", file=out)
    if not units:
        where = " ".join(paths) or "features/"
        raise NothingSelected(
            f"no feature files to run under {where}"
            + (f" in shard {shard}" if shard else "")
            + ": nothing was tested, and that is not a pass.\n"
            "  Tip: check the paths you gave (feature files end in .feature)."
        )
    return units


def _plan_jobs(
    legs: list[Leg], groups: list[list[str]], legs_dir: Path, behave_options: list[str], title: str | None
) -> list[Job]:
    """One job per (leg, group of feature files), each with its own report, JSON and log files."""
    jobs: list[Job] = []
    for leg in legs:
        for index, group in enumerate(groups, 1):
            base = legs_dir / leg.slug / f"job-{index}"
            html, json_path, log = (
                base.with_suffix(".html"),
                base.with_suffix(".json"),
                base.with_suffix(".log"),
            )
            argv = _worker_argv(html, json_path, leg, behave_options, group, title)
            jobs.append(Job(leg, index, len(groups), group, html, json_path, log, argv))
    return jobs


def _publish(results: list[LegResult], options: RunOptions, behave_options: list[str], out: TextIO) -> None:
    """The merged report, the JUnit file and GitHub's step summary, from the legs that wrote a report."""
    report = options.report
    leg_files = [r.json_path for r in results if r.json_path is not None]
    if not leg_files:
        print("No leg wrote a report; nothing to merge.", file=out)
        return
    _merge_report(leg_files, report, options.title, behave_options)
    junit_path = _junit(results, options.junit or report.parent / "junit.xml")
    if junit_path is not None:
        print(f"JUnit: {junit_path}", file=out)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from mcp_bdd.report.summary import append_step_summary

        runs = [r.run for r in results if r.run is not None]
        append_step_summary(os.environ["GITHUB_STEP_SUMMARY"], runs, report, os.environ)


def _scenarios_ran(results: list[LegResult]) -> int:
    return sum(n for r in results for status, n in r.counts.items() if status not in ("skipped", "untested"))


def _print_nothing_ran(unit_count: int, behave_options: list[str], out: TextIO) -> None:
    tags = [v for flag, v in itertools.pairwise(behave_options) if flag in ("--tags", "-t")]
    print(
        f"mcp-bdd run: no scenario ran in {unit_count} feature file(s)"
        + (f" with the tags {' '.join(tags)}" if tags else "")
        + ": nothing was tested, and that is not a pass.\n"
        "  Tip: check --tags / --name, or the paths you gave; a scenario without steps is skipped "
        "(each is named in a warning above).",
        file=out,
    )


def _verdict(severity: int, died: bool) -> str:
    return {
        EXIT_NOTHING_RAN: "nothing ran",
        EXIT_OK: "all passed",
        EXIT_FAILED: "a worker died" if died else "scenarios failed",
        EXIT_USAGE: "usage or configuration error",
        EXIT_UNREACHABLE: "a server could not be started or reached",
    }[severity]


def _print_leg(result: LegResult, out: TextIO) -> None:
    order = ["passed", "failed", "error", "hook_error", "undefined", "pending", "skipped", "untested"]
    counts = ", ".join(f"{result.counts[s]} {s}" for s in order if result.counts.get(s))
    seconds = max((j.ended - j.started for j in result.jobs if j.ended), default=0.0)
    mark = "ok" if result.severity == EXIT_OK else "FAIL"
    if result.run is None and not result.problems:
        mark, counts = "--", "not run (interrupted)"
    print(
        f"[{mark}] {result.leg.label}: {counts or 'no scenarios'} ({seconds:.1f} s, {len(result.jobs)} job(s))",
        file=out,
    )
    for problem in result.problems:
        print(f"    ! {problem}", file=out)
    for warning in result.warnings:
        print(f"    warning: {warning}", file=out)
    for line in result.failures[:15]:
        print(f"    - {line}", file=out)
    if len(result.failures) > 15:
        print(f"    ... and {len(result.failures) - 15} more (see the report)", file=out)
