"""Per-scenario isolation cost on a Python stdio (and HTTP) server: cold spawn vs the zygote pool.

Every scenario gets a fresh server process either way. Cold: `python -m mcp_bdd.serve` per
scenario (~1.5 s of imports). Pool (default): a fork of a pre-imported process. Printed: wall
time per scenario beyond behave's fixed start-up (a 1-scenario run), and the ratio.
Targets (docs/performance.md): under 0.1 s of wall time per scenario over stdio, under 0.15 s over HTTP.

    python benchmarks/isolation.py [--scenarios 30]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _project import add_scenarios, write_project  # noqa: E402


def project(root: Path, n: int, command: bool = False) -> None:
    write_project(root, add_scenarios(n))
    if command:  # the same server as an arbitrary executable: pre-started ahead, not forked
        (root / "mcp-bdd.toml").write_text(
            f'[servers.bench]\ncommand = ["{sys.executable}", "{HERE / "bench_server.py"}"]\n'
        )


def wall(root: Path, *args: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "behave", "--format", "null", "features/", *args],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", type=int, default=30)
    n = parser.parse_args().scenarios
    print(f"{'transport':<16} {'cold s/scen':>12} {'pool s/scen':>12} {'speed-up':>9}")
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        project(Path(one), 1)
        project(Path(many), n)
        for transport in ("stdio", "streamable-http"):
            per = {}
            for pool in ("false", "true"):
                args = ("-D", f"transport={transport}", "-D", f"pool={pool}")
                per[pool] = (wall(Path(many), *args) - wall(Path(one), *args)) / (n - 1)
            print(f"{transport:<16} {per['false']:>11.3f}s {per['true']:>11.3f}s {per['false'] / per['true']:>8.1f}x")
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        project(Path(one), 1, command=True)
        project(Path(many), n, command=True)
        per = {}
        for pool in ("false", "true"):
            args = ("-D", f"prestart={2 if pool == 'true' else 0}")
            per[pool] = (wall(Path(many), *args) - wall(Path(one), *args)) / (n - 1)
        label = "command, prestart=2"
        print(f"{label:<16} {per['false']:>11.3f}s {per['true']:>11.3f}s {per['false'] / per['true']:>8.1f}x")
    print("Targets: < 0.1 s per scenario over stdio, < 0.15 s over HTTP (every scenario gets a fresh process).")


if __name__ == "__main__":
    main()
