"""The fake database: a real SQLite file in the scenario's temp dir.

A connection is opened per operation and closed straight after, so the fake never holds a lock
the server under test (maybe another process) would wait on, and what a step seeds is committed
before the next step runs.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from mcp_bdd.errors import UsageError, did_you_mean
from mcp_bdd.transcript import Transcript

__all__ = ["FakeDatabase", "coerce_cell", "same_value"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Integers without leading zeros (so "007" and zip codes stay text); decimals and exponents.
_INTEGER = re.compile(r"[+-]?(0|[1-9][0-9]*)")
_NUMBER = re.compile(r"[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def coerce_cell(cell: str) -> int | float | str | None:
    """A table cell as SQLite should store it: empty -> NULL, integers and numbers -> numbers, else text."""
    if cell == "":
        return None
    if _INTEGER.fullmatch(cell):
        return int(cell)
    if _NUMBER.fullmatch(cell):
        return float(cell)
    return cell


def same_value(expected: int | float | str | None, actual: Any) -> bool:
    """Compare a coerced cell with a stored value: numbers as numbers, everything else as text."""
    if expected is None or actual is None:
        return expected is None and actual is None
    numeric = (int, float)
    if isinstance(expected, numeric) and isinstance(actual, numeric) and not isinstance(actual, bool):
        return float(expected) == float(actual)
    if isinstance(actual, bytes):
        actual = actual.decode("utf-8", errors="replace")
    return _text(expected) == _text(actual)


def _text(value: Any) -> str:
    # 2.0 stored from "2.0" reads back as the float 2.0; render it the way the table wrote it.
    return repr(value) if isinstance(value, float) else str(value)


def check_identifier(name: str, what: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise UsageError(
            f'The {what} "{name}" is not a valid SQL identifier: use letters, digits and "_", '
            "not starting with a digit (e.g. order_id)."
        )
    return name


class FakeDatabase:
    """A real SQLite database file; placeholder attributes `path` and `url` (`sqlite:///<path>`)."""

    kind = "database"
    ATTRS: tuple[str, ...] = ("path", "url")

    def __init__(self, name: str, *, path: Path, transcript: Transcript) -> None:
        self.name = name
        self.path = path
        self._transcript = transcript
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect():  # create the file now, so the server under test can open it at once
            pass

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=10)) as conn, conn:  # `with conn` commits
            yield conn

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one SQL statement (committed at once) and return its rows: an escape hatch for user steps."""
        with self._connect() as conn:
            return conn.execute(sql, parameters).fetchall()

    def tables(self) -> list[str]:
        rows = self.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return [str(r[0]) for r in rows]

    def columns(self, table: str) -> list[str]:
        """The table's column names ([] when the table does not exist)."""
        check_identifier(table, "table name")
        return [str(r[1]) for r in self.execute(f'PRAGMA table_info("{table}")')]

    def seed(self, table: str, headings: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
        """Insert rows of text cells (see `coerce_cell`); create the table from the headings if needed."""
        check_identifier(table, "table name")
        if not headings:
            raise UsageError(f'A table for "{table}" needs a heading row naming its columns.')
        for heading in headings:
            check_identifier(heading, "column heading")
        if len(set(headings)) != len(headings):
            twice = sorted({h for h in headings if list(headings).count(h) > 1})
            raise UsageError(f'The column heading "{twice[0]}" appears twice in the table for "{table}".')
        values = [[coerce_cell(cell) for cell in row] for row in rows]
        columns = ", ".join(f'"{h}"' for h in headings)
        marks = ", ".join("?" for _ in headings)
        existing = self.columns(table)
        missing = [h for h in headings if existing and h not in existing]
        if missing:
            raise UsageError(
                f'The table "{table}" of the fake database "{self.name}" has no column "{missing[0]}". '
                + did_you_mean(missing[0], existing, "column")
            )
        with self._connect() as conn:
            # Columns without a declared type keep each value's own type (INTEGER, REAL, TEXT, NULL).
            conn.execute(f'CREATE TABLE IF NOT EXISTS "{table}" ({columns})')
            conn.executemany(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', values)
        self._transcript.record(
            "fake",
            self.name,
            f"seed {table}",
            {"table": table, "columns": list(headings), "rows": values, "path": str(self.path)},
        )
        return len(values)

    def count(self, table: str) -> int:
        self._require_table(table)
        return int(self.execute(f'SELECT COUNT(*) FROM "{table}"')[0][0])

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of the table, as dicts keyed by column name (in rowid order when there is one)."""
        self._require_table(table)
        with self._connect() as conn:
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _require_table(self, table: str) -> None:
        check_identifier(table, "table name")
        if table not in self.tables():
            raise LookupError(table)

    def close(self) -> None:
        """Nothing to release: connections are per operation and the file goes with the temp dir."""

    def __repr__(self) -> str:
        return f"<FakeDatabase {self.name!r} {self.path}>"
