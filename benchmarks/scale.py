"""Scale: a 1,000-scenario in-memory suite vs the same checks as pytest + the raw SDK client,
peak memory, and `mcp-bdd run --jobs 2` vs `--jobs 1` on a stdio-bound suite. One run, ratios.

Targets (docs/performance.md): in-memory suite within 1.15x of pytest + raw SDK; peak memory < 300 MB;
--jobs 2 at least 1.8x faster than --jobs 1 on a stdio-bound suite (2 cores).

    python benchmarks/scale.py [--scenarios 1000] [--stdio-files 8] [--stdio-per-file 4]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _project import add_scenarios, write_project  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}


def bdd_project(root: Path, files: int, per_file: int, extra: str = "") -> None:
    write_project(root, add_scenarios(files * per_file), files=files, extra_config=extra)


def pytest_project(root: Path, n: int) -> None:
    tests = [
        "import anyio\nfrom mcp import Client\nfrom bench_server import create_server\n\n"
        "async def check(i):\n"
        "    async with Client(create_server(), cache=None) as client:\n"
        "        result = await client.call_tool('add', {'a': i, 'b': 1})\n"
        "        assert not result.is_error\n"
        "        assert result.structured_content['result'] == i + 1\n"
    ]
    tests += [f"\ndef test_add_{i}():\n    anyio.run(check, {i})\n" for i in range(n)]
    (root / "test_bench.py").write_text("".join(tests))


def timed(argv: list[str], cwd: Path) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) // 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--stdio-files", type=int, default=8)
    parser.add_argument("--stdio-per-file", type=int, default=4)
    args = parser.parse_args()
    n = args.scenarios
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        bdd_project(Path(a), 10, n // 10)
        pytest_project(Path(b), n)
        raw_wall, _ = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bench.py"], Path(b))
        bdd_wall, _ = timed([sys.executable, "-m", "behave", "-f", "null", "features/"], Path(a))
        # the report is part of the main job: measure memory with the living-doc formatter on
        with_report, peak = timed(
            [sys.executable, "-m", "behave", "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "r.html", "features/"],
            Path(a),
        )
    print(
        f"in-memory, {n} scenarios:  pytest + raw SDK {raw_wall:.1f} s | mcp-bdd {bdd_wall:.1f} s "
        f"({bdd_wall / raw_wall:.2f}x, target <= 1.15x) | with the HTML report {with_report:.1f} s"
    )
    print(f"peak memory of the run with the report: {peak} MB (target < 300 MB)")
    with tempfile.TemporaryDirectory() as c:
        bdd_project(Path(c), args.stdio_files, args.stdio_per_file, extra="pool = false\n")
        cli = [sys.executable, "-m", "mcp_bdd.cli", "run", "--transport", "stdio"]
        one, _ = timed([*cli, "--jobs", "1", "--report", "r1/r.html"], Path(c))
        two, _ = timed([*cli, "--jobs", "2", "--report", "r2/r.html"], Path(c))
    total = args.stdio_files * args.stdio_per_file
    print(
        f"stdio-bound ({total} scenarios, cold spawns): --jobs 1 {one:.1f} s | --jobs 2 {two:.1f} s "
        f"({one / two:.2f}x faster, target >= 1.8x)"
    )


if __name__ == "__main__":
    main()
