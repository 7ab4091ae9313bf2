"""Cost of the postgres fake: the first start of the run's server, and a fresh database per scenario.

Printed: the first start (initdb + start, paid once per run); the work done per scenario
(CREATE DATABASE ... TEMPLATE and DROP DATABASE, timed in the foreground); what a scenario waits
for (take the database, seed one row, give it back — the next one is copied during a scenario
body of `--body` seconds, as a server start and a few calls take, and the drop runs in the
background); and the baseline
measured in the same run — the cheapest fresh database there is, a SQLite fake file — as a
ratio. The load average is printed too: on a busy machine the copy costs several times more.
Target (docs/performance.md): a PostgreSQL database per scenario in under 0.15 s.

    python benchmarks/postgres_fake.py [--scenarios 20] [--body 0.5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from mcp_bdd.fakes import FakeDatabase, FakePostgres, PostgresCluster  # noqa: E402
from mcp_bdd.transcript import Transcript  # noqa: E402

SCHEMA = HERE.parent / "demo" / "db" / "orders.sql"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", type=int, default=20)
    parser.add_argument("--body", type=float, default=0.5, help="seconds a scenario's own steps take")
    args = parser.parse_args()
    n, body = args.scenarios, args.body
    transcript = Transcript()
    with tempfile.TemporaryDirectory(prefix="mcp-bdd-bench-") as tmp:
        run_dir = Path(tmp)
        t0 = time.perf_counter()
        cluster = PostgresCluster.start(run_dir / "shared-postgres")
        first_start = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            name = cluster.template(SCHEMA, None, SCHEMA.parent)
            template = time.perf_counter() - t0
            copy: list[float] = []
            drop: list[float] = []
            for _ in range(n):
                t0 = time.perf_counter()
                made = cluster._copy(name, cluster._admin)
                t1 = time.perf_counter()
                cluster._admin.execute(f'DROP DATABASE "{made}" WITH (FORCE)')  # in the foreground, to time it
                copy.append(t1 - t0)
                drop.append(time.perf_counter() - t1)
            per: list[float] = []
            for _ in range(n):
                t0 = time.perf_counter()
                db = FakePostgres.create(
                    "shop", cluster, options={"schema": str(SCHEMA)}, root=SCHEMA.parent, transcript=transcript
                )
                db.seed("products", ["id", "name", "price"], [["P-1", "Pen", "1.5"]])
                waited = time.perf_counter() - t0
                time.sleep(body)  # the scenario's own steps: the next database is copied meanwhile
                t0 = time.perf_counter()
                db.close()
                per.append(waited + time.perf_counter() - t0)
                transcript.drain()
        finally:
            cluster.close()
        base: list[float] = []
        for i in range(n):
            t0 = time.perf_counter()
            sqlite = FakeDatabase("shop", path=run_dir / f"s{i}.sqlite3", transcript=transcript)
            sqlite.seed("products", ["id", "name", "price"], [["P-1", "Pen", "1.5"]])
            sqlite.close()
            base.append(time.perf_counter() - t0)
            transcript.drain()
    median, baseline = statistics.median(per), statistics.median(base)
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"first start (initdb + start, once per run): {first_start:.2f} s")
    print(f"schema template (once per schema):          {template:.3f} s")
    print(
        f"the work per scenario, median of {n}: CREATE DATABASE ... TEMPLATE {statistics.median(copy):.3f} s, "
        f"DROP DATABASE {statistics.median(drop):.3f} s (both off the scenario's path: a spare copy, a background drop)"
    )
    print(
        f"a scenario waits (create + seed 1 row + drop, {body} s scenario body), median of {n}: {median:.3f} s "
        f"(min {min(per):.3f}, max {max(per):.3f}); target < 0.150 s: {'met' if median < 0.15 else 'NOT met'}"
    )
    print(f"baseline, a SQLite fake database + the same seed: {baseline * 1000:.1f} ms ({median / baseline:.0f}x)")
    print(f"first start / per scenario: {first_start / median:.0f}x")


if __name__ == "__main__":
    main()
