"""`mcp-bdd report merge a.json b.json -o out.html`: several runs, one report, a column per run.

Runs are the `living-doc.json` files the formatter writes beside each HTML report: shards of one
suite, or the same suite over several transports. Each run's `label` (userdata
`mcp_bdd.label`, else `transport`) names its column; labels that clash get the file name added.
A scenario executed by several runs shows each run's status, and is flagged when they disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from mcp_bdd.report.files import write_text
from mcp_bdd.report.history import DEFAULT_KEEP, read_history, record_entry
from mcp_bdd.report.model import Run, load_run
from mcp_bdd.report.render import render_view
from mcp_bdd.report.views import build_report, current_entry

__all__ = ["load_runs", "main"]


def load_runs(paths: list[Path]) -> list[Run]:
    """Read run files; raises ValueError naming the file that is not a run."""
    runs = []
    for path in paths:
        try:
            runs.append(load_run(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise ValueError(f"{path}: {exc}") from exc
    clashes = Counter(r.label for r in runs)
    return [
        replace(run, label=f"{run.label} ({path.stem})") if clashes[run.label] > 1 else run
        for run, path in zip(runs, paths, strict=True)
    ]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-bdd report merge",
        description="Merge run files (living-doc.json) into one living-documentation report, a column per run.",
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN.json", help="run files written by the formatter")
    parser.add_argument("-o", "--output", type=Path, default=Path("reports/merged.html"), help="HTML file to write")
    parser.add_argument("--title", help="page title (default: the first run's)")
    parser.add_argument(
        "--history",
        type=Path,
        metavar="DIR",
        help="history folder: show trends and flaky marks against earlier merged reports of the same runs, "
        "and add this one",
    )
    parser.add_argument("--history-runs", type=int, default=DEFAULT_KEEP, metavar="N", help="runs the history keeps")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and on bad usage; callers want a code
        return exc.code if isinstance(exc.code, int) else 2
    try:
        runs = load_runs(args.runs)
    except ValueError as exc:
        print(f"mcp-bdd report merge: error: {exc}", file=sys.stderr)
        return 1
    label = "+".join(r.label for r in runs) if len(runs) > 1 else runs[0].label
    keep = max(2, args.history_runs)
    history = read_history(args.history, label)[-(keep - 1) :] if args.history else []
    view = build_report(runs, args.title, history)
    path = write_text(args.output, render_view(view))
    if args.history:
        record_entry(args.history, view.history[-1] if view.history else current_entry(view), keep)
    labels = ", ".join(r.label for r in runs)
    print(f"merged {len(runs)} run(s) ({labels}) into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
