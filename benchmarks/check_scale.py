"""`mcp-bdd check` against generated stdio servers of 100, 1,000 and 5,000 tools: does its time grow
with the catalog, and no faster?

Target (issue 51): 5,000 tools in under 10 s. The server is tests/servers/catalog.py (standard
library only, one tools/list page, distinct schemas and descriptions, names from a few verbs and
nouns so that some are one letter apart); `--read-only N` of its tools (default 5, whatever the
size) are annotated read-only, so the generated calls are made and cost the same at every size.
The baseline, measured in the same run, is `mcp-bdd probe` on the same command (spawn, connect,
list): what listing a large catalog costs before any check. Growth is the exponent k of
cpu ~ tools^k between two sizes, on the CPU time of the check and its server, which a machine
shared with other jobs stretches less than wall time (1: linear; 2: every pair compared, as the
confusable-names check once did).

    python benchmarks/check_scale.py [--sizes 100,1000,5000] [--read-only 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SERVER = ROOT / "tests" / "servers" / "catalog.py"
TARGET_S = 10.0
TARGET_TOOLS = 5000


def _timed(args: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall time, CPU time (the command's and its server's: what a loaded machine does not stretch)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run([str(BIN / "mcp-bdd"), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), proc


@dataclass
class Row:
    tools: int
    check_s: float
    check_cpu_s: float
    probe_s: float
    calls: int
    findings: int
    folded: int  # findings past the first of their check and severity, folded into one that counts them
    json_kb: int


def measure(tools: int, read_only: int) -> Row:
    server = [sys.executable, str(SERVER), "--tools", str(tools), "--read-only", str(read_only)]
    probe_s, _, _ = _timed(["probe", "--", *server])
    check_s, check_cpu_s, proc = _timed(["check", "--json", "--", *server])
    data = json.loads(proc.stdout)
    if data.get("counts", {}).get("tools") != tools:
        raise SystemExit(f"check did not read {tools} tools:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    findings = data.get("findings", [])
    return Row(
        tools=tools,
        check_s=round(check_s, 2),
        check_cpu_s=round(check_cpu_s, 2),
        probe_s=round(probe_s, 2),
        calls=data["counts"].get("tool calls", 0),
        findings=len(findings),
        folded=sum(1 for f in findings if "not listed one by one" in f["title"]),
        json_kb=round(len(proc.stdout) / 1024),
    )


def growth(a: Row, b: Row) -> float:
    """k of time ~ tools^k from a to b, on the CPU time (a loaded machine stretches wall time)."""
    return math.log(b.check_cpu_s / a.check_cpu_s) / math.log(b.tools / a.tools)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000", help="tool counts, comma-separated")
    parser.add_argument("--read-only", type=int, default=5, help="tools check calls, at every size")
    parser.add_argument("--json", type=Path, help="also write the results here")
    options = parser.parse_args()
    rows = [measure(int(n), options.read_only) for n in options.sizes.split(",")]
    print(f"{'tools':>6} {'check s':>8} {'cpu s':>6} {'probe s':>8} {'calls':>6} {'findings':>9} {'folded':>7}"
          f" {'json KB':>8} {'growth':>7}   target: {TARGET_TOOLS:,} tools < {TARGET_S:g} s")  # fmt: skip
    for i, r in enumerate(rows):
        k = f"{growth(rows[i - 1], r):.2f}" if i else "-"
        print(f"{r.tools:>6} {r.check_s:>8.2f} {r.check_cpu_s:>6.2f} {r.probe_s:>8.2f} {r.calls:>6} {r.findings:>9} "
              f"{r.folded:>7} {r.json_kb:>8} {k:>7}")  # fmt: skip
    print("cpu: the check's and its server's CPU time; growth: k in cpu ~ tools^k (1 is linear, 2 quadratic)")
    if options.json:
        options.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0 if all(r.check_s < TARGET_S for r in rows if r.tools >= TARGET_TOOLS) else 1


if __name__ == "__main__":
    sys.exit(main())
