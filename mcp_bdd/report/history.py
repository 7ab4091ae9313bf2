"""Run history: a compact record of the last runs, for trends, flaky marks and "new failure".

Each run adds one small JSON file to the history folder (`[tool.mcp-bdd] history =
".mcp-bdd/history"`, or `-D mcp_bdd.history=...`): its label, start, duration, counts and, per
scenario id, the outcome letter, the duration and the failure category. One file per run, not one
growing file, so parallel CI legs never write the same file; the oldest beyond `keep` (per label)
are deleted. A report reads the entries of its own label (a stdio leg compares with earlier stdio
runs), oldest first, with the current run last.

Pure module: no behave, no jinja2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_bdd.report.files import write_text
from mcp_bdd.report.model import OUTCOMES, Outcome, Run, outcome, walk_scenarios

__all__ = ["DEFAULT_KEEP", "HISTORY_SCHEMA", "Entry", "entry_of", "read_history", "record_entry", "record_run"]

HISTORY_SCHEMA = "mcp-bdd.history/1"
DEFAULT_KEEP = 20
_LETTER: dict[Outcome, str] = {
    "passed": "p",
    "failed": "f",
    "errored": "e",
    "pending": "n",
    "skipped": "s",
    "untested": "u",
}
_OUTCOME: dict[str, Outcome] = {v: k for k, v in _LETTER.items()}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Entry:
    """One past (or the current) run, as the history keeps it."""

    label: str
    started_at: float
    duration: float
    counts: dict[Outcome, int]
    scenarios: dict[str, tuple[Outcome, float, str | None]] = field(default_factory=dict)  # id -> outcome, s, kind

    @property
    def pass_rate(self) -> float | None:
        relevant = sum(self.counts.values()) - self.counts.get("skipped", 0)
        return None if relevant <= 0 else self.counts.get("passed", 0) / relevant


def entry_of(run: Run) -> Entry:
    """The history entry of a run (scenario outcomes come from the model's statuses)."""
    scenarios: dict[str, tuple[Outcome, float, str | None]] = {}
    counts: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
    for feature in run.features:
        for s in walk_scenarios(feature.children):
            kind = s.error_kind or next((st.error_kind for st in s.steps if st.error_kind), None)
            scenarios[s.id] = (outcome(s.status), s.duration, kind)
            counts[outcome(s.status)] += 1
    return Entry(run.label, run.started_at, run.duration, counts, scenarios)


def _dump(entry: Entry) -> str:
    data = {
        "schema": HISTORY_SCHEMA,
        "label": entry.label,
        "started_at": entry.started_at,
        "duration": round(entry.duration, 3),
        "counts": {k: v for k, v in entry.counts.items() if v},
        "scenarios": {
            sid: [_LETTER[o], round(d, 3), *([k] if k else [])] for sid, (o, d, k) in entry.scenarios.items()
        },
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _load(data: object) -> Entry | None:
    """An entry from a history file; None for anything that is not one (a foreign or broken file)."""
    if not isinstance(data, dict) or data.get("schema") != HISTORY_SCHEMA:
        return None
    try:
        counts: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
        for key, value in dict(data.get("counts") or {}).items():
            if key in counts:
                counts[key] = int(value)
        scenarios: dict[str, tuple[Outcome, float, str | None]] = {}
        for sid, row in dict(data.get("scenarios") or {}).items():
            letter, seconds, *rest = row
            if letter in _OUTCOME:
                scenarios[str(sid)] = (_OUTCOME[letter], float(seconds), str(rest[0]) if rest else None)
        return Entry(str(data["label"]), float(data["started_at"]), float(data["duration"]), counts, scenarios)
    except (KeyError, TypeError, ValueError):
        return None


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("run-*.json")) if folder.is_dir() else []


def read_history(folder: str | Path, label: str | None = None) -> list[Entry]:
    """The entries in `folder` (of `label` only, when given), oldest first; unreadable files are skipped."""
    entries = []
    for path in _files(Path(folder)):
        try:
            entry = _load(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            entry = None
        if entry is not None and (label is None or entry.label == label):
            entries.append(entry)
    return sorted(entries, key=lambda e: e.started_at)


def record_run(folder: str | Path, run: Run, keep: int = DEFAULT_KEEP) -> Path:
    """Add `run` to the history in `folder` and drop this label's entries beyond the newest `keep`."""
    return record_entry(folder, entry_of(run), keep)


def record_entry(folder: str | Path, entry: Entry, keep: int = DEFAULT_KEEP) -> Path:
    """Add `entry` to the history in `folder` and drop its label's entries beyond the newest `keep`."""
    target = Path(folder)
    stamp = f"{entry.started_at:017.6f}".replace(".", "")
    path = write_text(target / f"run-{stamp}-{_UNSAFE.sub('_', entry.label)[:40]}.json", _dump(entry))
    mine: list[tuple[float, Path]] = []
    for file in _files(target):
        try:
            loaded = _load(json.loads(file.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        if loaded is not None and loaded.label == entry.label:
            mine.append((loaded.started_at, file))
    for _, old in sorted(mine)[: max(0, len(mine) - keep)]:
        old.unlink(missing_ok=True)
    return path


def timeline(entries: Sequence[Entry], scenario_id: str) -> list[Outcome | None]:
    """The scenario's outcome in each entry (None where it did not exist), oldest first."""
    return [e.scenarios[scenario_id][0] if scenario_id in e.scenarios else None for e in entries]
