"""The fake database: a real SQLite file in the scenario's temp dir; and what every fake database shares.

A connection is opened per operation and closed straight after, so the fake never holds a lock
the server under test (maybe another process) would wait on, and what a step seeds is committed
before the next step runs.

The table steps ("Given the table ... of the fake database ... contains:", the row checks) work on
any `TableStore` — this SQLite fake and the PostgreSQL one — and read cells the same way:
`check_headings` validates a table's heading row, `same_value` compares a cell with what the
database returned (numbers as numbers, booleans, JSON, timestamps), and an unknown table or
column is the same error with the ones that exist.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mcp_bdd._text import did_you_mean
from mcp_bdd.errors import UsageError
from mcp_bdd.transcript import Transcript

__all__ = [
    "FakeDatabase",
    "TableStore",
    "check_headings",
    "check_identifier",
    "coerce_cell",
    "no_column",
    "same_value",
]

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


_TRUE = {"true", "t", "yes", "y", "on", "1"}
_FALSE = {"false", "f", "no", "n", "off", "0"}


def same_value(expected: int | float | str | None, actual: object) -> bool:
    """Compare a coerced cell with a stored value, by the type the database returned.

    Numbers as numbers (an integer, a float or a Decimal), booleans by their usual spellings
    (true/false, yes/no, t/f, 1/0), JSON values as JSON (key order and spacing do not matter),
    timestamps as instants (a cell without a zone is UTC), everything else as text.
    """
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(actual, bool):
        word = str(expected).strip().lower()
        return (word in _TRUE) if actual else (word in _FALSE)
    if isinstance(actual, int | float | Decimal):
        return _same_number(expected, actual)
    if isinstance(actual, dict | list):
        try:
            return bool(json.loads(str(expected)) == actual)
        except ValueError:
            return False
    if isinstance(actual, dt.datetime | dt.date | dt.time):
        return _same_moment(str(expected), actual)
    if isinstance(actual, bytes):
        actual = actual.decode("utf-8", errors="replace")
    return _text(expected) == _text(actual)


def _same_number(expected: int | float | str, actual: int | float | Decimal) -> bool:
    if isinstance(expected, str):
        return _text(expected) == _text(actual)
    try:
        return Decimal(repr(expected) if isinstance(expected, float) else expected) == Decimal(
            repr(actual) if isinstance(actual, float) else actual
        )
    except InvalidOperation:
        return float(expected) == float(actual)


def _same_moment(expected: str, actual: dt.datetime | dt.date | dt.time) -> bool:
    text = expected.strip()
    try:
        if isinstance(actual, dt.datetime):
            wanted = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if (wanted.tzinfo is None) != (actual.tzinfo is None):
                # A cell without a zone means UTC (the fake database's own time zone).
                wanted = wanted.replace(tzinfo=dt.UTC) if wanted.tzinfo is None else wanted
                actual = actual.replace(tzinfo=dt.UTC) if actual.tzinfo is None else actual
            return wanted == actual
        if isinstance(actual, dt.date):
            return dt.date.fromisoformat(text) == actual
        return dt.time.fromisoformat(text) == actual
    except ValueError:
        return text == actual.isoformat()


def _text(value: object) -> str:
    # 2.0 stored from "2.0" reads back as the float 2.0; render it the way the table wrote it.
    return repr(value) if isinstance(value, float) else str(value)


def check_identifier(name: str, what: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise UsageError(
            f'The {what} "{name}" is not a valid SQL identifier: use letters, digits and "_", '
            "not starting with a digit (e.g. order_id)."
        )
    return name


def check_headings(table: str, headings: Sequence[str]) -> None:
    """The heading row of a seeding table: present, SQL identifiers, each once."""
    check_identifier(table, "table name")
    if not headings:
        raise UsageError(f'A table for "{table}" needs a heading row naming its columns.')
    for heading in headings:
        check_identifier(heading, "column heading")
    if len(set(headings)) != len(headings):
        twice = sorted({h for h in headings if list(headings).count(h) > 1})
        raise UsageError(f'The column heading "{twice[0]}" appears twice in the table for "{table}".')


def no_column(kind: str, db: str, table: str, column: str, columns: Sequence[str]) -> UsageError:
    """The error for a heading that names no column of an existing table."""
    return UsageError(
        f'The table "{table}" of the fake {kind} "{db}" has no column "{column}". '
        + did_you_mean(column, columns, "column")
    )


@runtime_checkable
class TableStore(Protocol):
    """What the table steps need from a fake database (SQLite, PostgreSQL, or a user's own)."""

    name: str

    def tables(self) -> list[str]: ...

    def columns(self, table: str) -> list[str]:
        """The table's column names ([] when the table does not exist)."""
        ...

    def seed(self, table: str, headings: Sequence[str], rows: Sequence[Sequence[str]]) -> int: ...

    def count(self, table: str) -> int:
        """LookupError when the table does not exist."""
        ...

    def rows(self, table: str) -> list[dict[str, object]]:
        """LookupError when the table does not exist."""
        ...


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
        check_headings(table, headings)
        values = [[coerce_cell(cell) for cell in row] for row in rows]
        columns = ", ".join(f'"{h}"' for h in headings)
        marks = ", ".join("?" for _ in headings)
        existing = self.columns(table)
        missing = [h for h in headings if existing and h not in existing]
        if missing:
            raise no_column("database", self.name, table, missing[0], existing)
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

    def rows(self, table: str) -> list[dict[str, object]]:
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
