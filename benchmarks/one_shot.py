"""One-shot commands: `mcp-bdd list tools` and `mcp-bdd call` on a stdio server, each a fresh
process, side by side with the MCP Inspector's CLI doing the same (`--method tools/list`,
`--method tools/call`) and with a script of the raw Python SDK doing the same.

Target (issue 50): `mcp-bdd list` and `mcp-bdd call` within 1.3x of the Inspector's CLI (median
wall time of the whole command: start, spawn the server, connect, one request, print, exit). Both
start the same server, which is part of what is timed: the raw SDK script shows what a Python
client cannot avoid (importing `mcp`) on top of it. The commands run in turn, N rounds of all six,
each round in a rotated order, so a machine shared with other jobs slows all of them alike.

The server is mcp-server-time (a Python stdio server, installed with the dev extras); the
Inspector is the pinned @modelcontextprotocol/inspector of package.json (`npm ci`).

    python benchmarks/one_shot.py [--rounds 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"
TARGET = 1.3

#: The raw SDK doing what the commands do: connect, one request, print, leave.
SDK_SCRIPT = """\
import sys, anyio
from mcp import Client, StdioServerParameters

async def main():
    async with Client(StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])) as client:
        if sys.argv[1] == "list":
            print("\\n".join(t.name for t in (await client.list_tools()).tools))
        else:
            print((await client.call_tool("get_current_time", {"timezone": "UTC"})).structured_content)

anyio.run(main)
"""


def commands(server: list[str]) -> dict[str, tuple[list[str], str]]:
    """name -> (argv, a text its output must contain)."""
    inspector = [str(INSPECTOR), "--cli", *server]
    sdk = [sys.executable, "-c", SDK_SCRIPT]
    return {
        "list: mcp-bdd": ([str(BIN / "mcp-bdd"), "list", "tools", "--", *server], "get_current_time"),
        "list: Inspector": ([*inspector, "--method", "tools/list"], "get_current_time"),
        "list: raw SDK": ([*sdk, "list", *server], "get_current_time"),
        "call: mcp-bdd": ([str(BIN / "mcp-bdd"), "call", "get_current_time", "timezone=UTC", "--", *server], "UTC"),
        "call: Inspector": (
            [*inspector, "--method", "tools/call", "--tool-name", "get_current_time", "--tool-arg", "timezone=UTC"],
            "UTC",
        ),
        "call: raw SDK": ([*sdk, "call", *server], "UTC"),
    }


def timed(argv: list[str], expected: str) -> tuple[float, float]:
    """Wall time, and CPU time (the command's and the server's, which a loaded machine stretches less)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or expected not in proc.stdout:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--json", type=Path, help="also write the times here")
    options = parser.parse_args()
    if not INSPECTOR.exists():
        print(f"The MCP Inspector is not installed ({INSPECTOR}): run `npm ci` in {ROOT}.", file=sys.stderr)
        return 2
    server = shutil.which("mcp-server-time", path=str(BIN))
    if server is None:
        print(f"mcp-server-time is not in {BIN}: pip install -e '.[dev]'.", file=sys.stderr)
        return 2
    runs = commands([server])
    names = list(runs)
    for _ in range(2):  # warm the disk cache and the .pyc files; not counted
        for name in names:
            timed(*runs[name])
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    loads = []  # the 1-minute load average as each round starts: what the medians were measured under
    for i in range(options.rounds):
        loads.append(os.getloadavg()[0])
        for name in names[i % len(names) :] + names[: i % len(names)]:
            w, c = timed(*runs[name])
            wall[name].append(w)
            cpu[name].append(c)
    median = {name: statistics.median(wall[name]) for name in names}
    median_cpu = {name: statistics.median(cpu[name]) for name in names}
    print(f"{'command':<16} {'median s':>9} {'min s':>7} {'max s':>7} {'cpu s':>6}"
          f"   ({options.rounds} rounds, fresh processes; cpu: the command's and its server's, median)")  # fmt: skip
    for name in names:
        low, high = min(wall[name]), max(wall[name])
        print(f"{name:<16} {median[name]:>9.2f} {low:>7.2f} {high:>7.2f} {median_cpu[name]:>6.2f}")
    passed = True
    for verb in ("list", "call"):
        ours, theirs, sdk = (median[f"{verb}: {who}"] for who in ("mcp-bdd", "Inspector", "raw SDK"))
        ok = ours / theirs <= TARGET
        passed &= ok
        print(f"{verb}: mcp-bdd / Inspector {ours / theirs:.2f}x ({'PASS' if ok else 'FAIL'}, target <= {TARGET}x); "
              f"mcp-bdd / raw SDK {ours / sdk:.2f}x")  # fmt: skip
    print(f"load average (1 min) as the rounds started: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    if options.json:
        data = {"median_s": median, "median_cpu_s": median_cpu, "wall_s": wall, "cpu_s": cpu, "load_average": loads}
        options.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
