"""Fakes: stub and verify the HTTP services, databases and workspace the server under test depends on.

Every quoted parameter, table cell and doc string is interpolated first (`${fake.payments.url}`,
`${order}` ...). Set-up steps create the fake on first reference; verification steps require a
fake the scenario already uses, so a misspelt name is a usage error rather than a silent
"received 0 requests".

A fake that the run's profile replaced with a real dependency cannot be stubbed or checked: its
steps are reported as skipped, with the reason (`skip_replaced`), never silently passed.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from mcp_bdd._text import did_you_mean, pretty
from mcp_bdd.errors import ExpectationFailed, FakeReplaced, UsageError
from mcp_bdd.fakes import FakeHttpService, Fakes, FakeWorkspace, ReceivedRequest, TableStore
from mcp_bdd.fakes._database import check_identifier, coerce_cell, same_value
from mcp_bdd.fakes._http import check_method, split_target
from mcp_bdd.matchers import ABSENT, Mismatch, coerce_literal, compare, parse_json_docstring, query_one
from mcp_bdd.steps._base import StepContext, docstring, expected_text, state, table_rows, text, where
from mcp_bdd.steps._base import given as _given
from mcp_bdd.steps._base import then as _then

_F = TypeVar("_F", bound=Callable[..., object])


def skip_step(context: StepContext, reason: str) -> None:
    """Report the running step as skipped, with the reason (console, transcript, report).

    behave has no skip for one step: it keeps a status the step set itself, so the running step —
    the first of the scenario's steps not run yet — is marked skipped, and the scenario goes on.
    """
    from behave.model_core import Status  # type: ignore[import-untyped, unused-ignore]

    scenario = getattr(context, "scenario", None)
    steps = list(getattr(scenario, "all_steps", None) or [])
    step = next((s for s in steps if s.status == Status.untested), None)
    if step is None:  # not inside a scenario's own step (a nested step): an error rather than a silent pass
        raise FakeReplaced(reason)
    _count_skips_as_neutral()
    step.status = Status.skipped
    step.skip_reason = reason
    st = getattr(context, "mcp", None)
    if st is not None:
        st.transcript.record("info", "profile", f"step skipped: {reason}", {"reason": reason})
    print(f"\n  Skipped at {step.location}: {step.keyword} {step.name}\n    {reason}", file=sys.__stderr__)


def _count_skips_as_neutral() -> None:
    """A scenario's status ignores the steps a profile skipped (once installed, for the whole run).

    behave's Scenario.compute_status returns the status of the first step that did not pass: a
    skipped fake step before a failing call would report the scenario *skipped*, hiding the
    failure. Here the other steps decide (all skipped: skipped). behave itself never skips a step
    before one that runs, so nothing else changes.
    """
    from behave.model import Scenario  # type: ignore[import-untyped, unused-ignore]
    from behave.model_core import Status  # type: ignore[import-untyped, unused-ignore]

    original = Scenario.compute_status
    if getattr(original, "_mcp_bdd", False):
        return

    def compute_status(self: Any) -> Any:
        steps = list(self.all_steps)
        neutral = [s for s in steps if getattr(s, "skip_reason", None) and s.status == Status.skipped]
        if not neutral or len(neutral) == len(steps):
            return original(self)
        for step in neutral:
            step.status = Status.passed
        try:
            return original(self)
        finally:
            for step in neutral:
                step.status = Status.skipped

    compute_status._mcp_bdd = True  # type: ignore[attr-defined]
    Scenario.compute_status = compute_status


def skip_replaced(func: _F) -> _F:
    """A step function that reports itself skipped when it needs a fake the profile replaced."""

    @functools.wraps(func)  # behave unwraps __wrapped__ for the step's location
    def run(context: StepContext, *args: object, **kwargs: object) -> object:
        try:
            return func(context, *args, **kwargs)
        except FakeReplaced as exc:
            skip_step(context, str(exc))
            return None

    typed: _F = run  # type: ignore[assignment]
    return typed


def given(pattern: str) -> Callable[[_F], _F]:
    """mcp_bdd.steps._base's `given`, for steps that need a fake: skipped when a profile replaced it."""

    def register(func: _F) -> _F:
        _given(pattern)(skip_replaced(func))
        return func

    return register


def then(pattern: str) -> Callable[[_F], _F]:
    """mcp_bdd.steps._base's `then`, for steps that need a fake: skipped when a profile replaced it."""

    def register(func: _F) -> _F:
        _then(pattern)(skip_replaced(func))
        return func

    return register


_SERVICE = 'the fake HTTP service "{name:Q}"'
_TABLE = 'the table "{table:Q}" of the fake database "{name:Q}"'
_SHOWN = 20  # requests / rows listed in a failure message

# ------------------------------------------------------------------------------------------------
# Plumbing


def _header_pairs(context: StepContext) -> list[tuple[str, str]]:
    headings, rows = table_rows(context)
    if [h.lower() for h in headings] not in (["name", "value"], ["header", "value"]):
        raise UsageError(
            f"{where(context)}headers are a two-column table with the headings `name` and `value`, e.g.\n"
            "      | name          | value     |\n      | Cache-Control | no-store  |"
        )
    return [(row[0], row[1]) for row in rows]


def _fakes(context: StepContext) -> Fakes:
    return state(context).fakes


def _service(context: StepContext, name: str) -> FakeHttpService:
    service: FakeHttpService = _fakes(context).existing(text(context, name), "http")
    return service


# ------------------------------------------------------------------------------------------------
# HTTP service: stubs


@given(_SERVICE + ' responds to {method:Method} "{path:Q}" with status {status:d}')
def step_http_status(context: StepContext, name: str, method: str, path: str, status: int) -> None:
    """Stub a fake HTTP service: answer a method and path with a status code and an empty body.

    Example: Given the fake HTTP service "payments" responds to DELETE "/charges/ch_1" with status 204
    """
    _fakes(context).http(text(context, name)).stub(method, text(context, path), status=status)


@given(_SERVICE + ' responds to {method:Method} "{path:Q}" with status {status:d} and body:')
def step_http_status_body(context: StepContext, name: str, method: str, path: str, status: int) -> None:
    """Stub a fake HTTP service with a status and a body (JSON bodies are sent as application/json).

    Example:
        Given the fake HTTP service "payments" responds to POST "/charges" with status 201 and body:
          \"\"\"
          {"id": "ch_1", "status": "succeeded"}
          \"\"\"
    """
    body = docstring(context)
    _fakes(context).http(text(context, name)).stub(method, text(context, path), status=status, body=body)


@given(_SERVICE + ' responds to {method:Method} "{path:Q}" with status {status:d} and headers:')
def step_http_status_headers(context: StepContext, name: str, method: str, path: str, status: int) -> None:
    """Stub a fake HTTP service with a status and response headers (table `name | value`), no body.

    Example:
        Given the fake HTTP service "files" responds to GET "/old" with status 301 and headers:
          | name     | value |
          | Location | /new  |
    """
    headers = _header_pairs(context)
    _fakes(context).http(text(context, name)).stub(method, text(context, path), status=status, headers=headers)


@given(_SERVICE + ' responds to {method:Method} "{path:Q}" with the headers:')
def step_http_add_headers(context: StepContext, name: str, method: str, path: str) -> None:
    """Add response headers (table `name | value`) to a stub defined by an earlier step.

    Example:
        Given the fake HTTP service "payments" responds to GET "/charges" with the headers:
          | name         | value |
          | X-Request-Id | r-42  |
    """
    headers = _header_pairs(context)
    _fakes(context).http(text(context, name)).amend(method, text(context, path), headers=headers)


@given(_SERVICE + ' responds to {method:Method} "{path:Q}" after a delay of {seconds:Seconds} {unit:SecondWord}')
def step_http_delay(context: StepContext, name: str, method: str, path: str, seconds: float, unit: str) -> None:
    """Make a stub defined by an earlier step answer only after a delay (to test the server's timeouts).

    Example: Given the fake HTTP service "payments" responds to POST "/charges" after a delay of 3 seconds
    """
    _fakes(context).http(text(context, name)).amend(method, text(context, path), delay=seconds)


@given(_SERVICE + ' drops the connection on {method:Method} "{path:Q}"')
def step_http_drop(context: StepContext, name: str, method: str, path: str) -> None:
    """Make a fake HTTP service hang up without answering a method and path (a network failure).

    Example: Given the fake HTTP service "payments" drops the connection on POST "/charges"
    """
    _fakes(context).http(text(context, name)).stub(method, text(context, path), drop=True)


# ------------------------------------------------------------------------------------------------
# HTTP service: verification


def _matching(service: FakeHttpService, method: str | None, target: str, query: str = "") -> list[ReceivedRequest]:
    return _select(service.requests, method, target, query)


def _select(requests: list[ReceivedRequest], method: str | None, target: str, query: str = "") -> list[ReceivedRequest]:
    path, pairs = split_target(target)
    wanted = set(pairs) | set(parse_qsl(query, keep_blank_values=True))
    return [
        r
        for r in requests
        if r.path == path and (method is None or r.method == method) and wanted <= set(r.query_pairs)
    ]


def _received(service: FakeHttpService) -> str:
    requests = service.requests
    lines = [f'  Requests the fake HTTP service "{service.name}" received ({len(requests)}):']
    lines += [f"    {i}. {r.describe()}" for i, r in enumerate(requests[:_SHOWN], 1)]
    if len(requests) > _SHOWN:
        lines.append(f"    … and {len(requests) - _SHOWN} more")
    if not requests:
        lines.append("    (none)")
    return "\n".join(lines)


def _tip(service: FakeHttpService, target: str) -> str:
    requests = service.requests
    if not requests:
        return (
            f"The service received no requests at all. Is the server under test configured with its URL, "
            f"${{fake.{service.name}.url}} (here {service.url})? e.g. env = {{ API_URL = "
            f'"${{fake.{service.name}.url}}" }} in [tool.mcp-bdd.servers.<server>].'
        )
    path = target.split("?", 1)[0]
    paths = {r.path for r in requests}
    if path not in paths:
        return f'No request went to "{path}". ' + did_you_mean(path, paths, "path")
    return "Requests to that path did arrive: compare them, listed above, with what the step expects."


def _fail(
    service: FakeHttpService, title: str, target: str, tip: str | None = None, *, expected: str, actual: str
) -> ExpectationFailed:
    return ExpectationFailed(
        title, expected=expected, actual=actual, details=_received(service), tip=tip or _tip(service, target)
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@then(_SERVICE + ' received {count:d} {noun:Requests} to "{path:Q}"')
def step_http_received_count(context: StepContext, name: str, count: int, noun: str, path: str) -> None:
    """Check how many requests (any method) a fake HTTP service received for a path (`?k=v` narrows it).

    Example: Then the fake HTTP service "payments" received 1 request to "/charges"
    """
    service, target = _service(context, name), text(context, path)
    found = _matching(service, None, target)
    if len(found) != count:
        tip = None
        if len(found) > count:
            tip = "More requests than expected: look for retries or repeated calls in the server under test."
        raise _fail(
            service,
            f'The fake HTTP service "{service.name}" received {_plural(len(found), "request")} to '
            f'"{target}", not {count}',
            target,
            tip,
            expected=_plural(count, "request"),
            actual=_plural(len(found), "request"),
        )


@then(_SERVICE + " received no requests")
def step_http_received_none(context: StepContext, name: str) -> None:
    """Check that a fake HTTP service received no request at all.

    Example: Then the fake HTTP service "payments" received no requests
    """
    service = _service(context, name)
    if service.requests:
        raise ExpectationFailed(
            f'The fake HTTP service "{service.name}" received {_plural(len(service.requests), "request")}, '
            "expected none",
            details=_received(service),
            tip="The server under test called the service: check the input that should have stopped it.",
        )


def _expect_one(
    context: StepContext,
    name: str,
    method: str | None,
    path: str,
    what: str,
    accept: Callable[[ReceivedRequest], bool],
    query: str = "",
) -> None:
    service, target = _service(context, name), text(context, path)
    method = check_method(method) if method else None
    candidates = _matching(service, method, target, query)
    if not any(accept(r) for r in candidates):
        verb = f"a {method} request" if method else "a request"
        raise _fail(
            service,
            f'The fake HTTP service "{service.name}" received no {verb[2:]} to "{target}"{what}',
            target,
            expected=f"{verb} to {target}{what}",
            actual=f"{_plural(len(candidates), 'request')} to that path"
            + (f" with method {method}" if method else "")
            + (", none of them matching" if candidates and what else ""),
        )


@then(_SERVICE + ' received a {method:Method} request to "{path:Q}"')
def step_http_received_method(context: StepContext, name: str, method: str, path: str) -> None:
    """Check that a fake HTTP service received at least one request with this method and path.

    Example: Then the fake HTTP service "payments" received a POST request to "/charges"
    """
    _expect_one(context, name, method, path, "", lambda r: True)


@then(_SERVICE + ' receives a {method:Method} request to "{path:Q}" within {seconds:Seconds} {unit:SecondWord}')
def step_http_receives_within(
    context: StepContext, name: str, method: str, path: str, seconds: float, unit: str
) -> None:
    """Wait until a fake HTTP service receives a request with this method and path, at most a number of
    seconds: for a server that calls on its own schedule (a scheduler, a webhook, a retry). Passes as soon
    as the request arrives, or at once when one arrived earlier in the scenario.

    Example: Then the fake HTTP service "hooks" receives a POST request to "/ping" within 5 seconds
    """
    service, target, wanted = _service(context, name), text(context, path), check_method(method)
    split_target(target)  # a malformed path is a usage error now, not once the wait is over
    if service.wait_for(lambda requests: bool(_select(requests, wanted, target)), seconds):
        return
    raise _fail(
        service,
        f'The fake HTTP service "{service.name}" received no {wanted} request to "{target}" within {seconds:g} {unit}',
        target,
        expected=f"a {wanted} request to {target} within {seconds:g} {unit}",
        actual="none arrived",
    )


@then(_SERVICE + ' received a {method:Method} request to "{path:Q}" with body containing "{needle:Q}"')
def step_http_received_body(context: StepContext, name: str, method: str, path: str, needle: str) -> None:
    """Check that a request with this method and path arrived whose body contains a text.

    Example: Then the fake HTTP service "payments" received a POST request to "/charges" with body containing "1999"
    """
    wanted = expected_text(context, needle)
    _expect_one(context, name, method, path, f' with body containing "{wanted}"', lambda r: wanted in r.body)


@then(_SERVICE + ' received a request to "{path:Q}" with query "{query:Q}"')
def step_http_received_query(context: StepContext, name: str, path: str, query: str) -> None:
    """Check that a request (any method) arrived at a path with these query parameters (others may follow).

    Example: Then the fake HTTP service "catalog" received a request to "/search" with query "q=shoes&limit=10"
    """
    wanted = text(context, query).lstrip("?")
    if not parse_qsl(wanted, keep_blank_values=True):
        raise UsageError(f'{where(context)}"{wanted}" is not a query: write it as k=v, e.g. "q=shoes&limit=10".')
    _expect_one(context, name, None, path, f' with query "{wanted}"', lambda r: True, query=wanted)


@then(_SERVICE + ' received a {method:Method} request to "{path:Q}" with query "{query:Q}"')
def step_http_received_method_query(context: StepContext, name: str, method: str, path: str, query: str) -> None:
    """Check that a request with this method arrived at a path carrying these query parameters.

    Example: Then the fake HTTP service "catalog" received a GET request to "/search" with query "q=shoes"
    """
    wanted = text(context, query).lstrip("?")
    if not parse_qsl(wanted, keep_blank_values=True):
        raise UsageError(f'{where(context)}"{wanted}" is not a query: write it as k=v, e.g. "q=shoes&limit=10".')
    _expect_one(context, name, method, path, f' with query "{wanted}"', lambda r: True, query=wanted)


@then(_SERVICE + ' received a {method:Method} request to "{path:Q}" with the header "{header:Q}" set to "{value:Q}"')
def step_http_received_header(context: StepContext, name: str, method: str, path: str, header: str, value: str) -> None:
    """Check that a request arrived carrying a header with exactly this value (header names ignore case).

    Example: Then the fake HTTP service "payments" received a POST request to "/charges" with the header "Authorization" set to "Bearer ${env.PAY_TOKEN}"
    """  # noqa: E501
    key, wanted = text(context, header).lower(), text(context, value)
    what = f' with the header "{key}" set to "{wanted}"'
    _expect_one(context, name, method, path, what, lambda r: r.headers.get(key) == wanted)


def _json_body(request: ReceivedRequest) -> tuple[bool, object]:
    try:
        return True, request.json()
    except ValueError:
        return False, None


def _difference(mismatch: Mismatch) -> str:
    def show(value: object) -> str:
        return "(absent)" if value is ABSENT else pretty(value, limit=80).replace("\n", " ")

    expected, actual = show(mismatch.expected), show(mismatch.actual)
    return f"    {mismatch.path}: expected {expected}, got {actual} ({mismatch.reason})"


def _expected_literal(context: StepContext, value: str) -> object:
    stripped = value.strip()
    if re.fullmatch(r'"[^"]*"', stripped):
        return text(context, stripped[1:-1])  # a quoted text: interpolate inside the quotes only
    return coerce_literal(text(context, stripped))


@then(_SERVICE + ' received a {method:Method} request to "{path:Q}" whose body at "{jpath:Q}" is {value}')
def step_http_received_body_at(context: StepContext, name: str, method: str, path: str, jpath: str, value: str) -> None:
    """Check that a request arrived whose JSON body holds a value at a JSONPath (fuzzy markers allowed).

    Example: Then the fake HTTP service "payments" received a POST request to "/charges" whose body at "$.amount" is 1999
    """  # noqa: E501
    where = text(context, jpath)
    expected = _expected_literal(context, value)

    def accept(request: ReceivedRequest) -> bool:
        ok, data = _json_body(request)
        if not ok:
            return False
        try:
            found = query_one(data, where, what="request body")
        except ExpectationFailed:
            return False
        return not compare(expected, found, subset=False)

    _expect_one(context, name, method, path, f" whose body at {where} is {pretty(expected)}", accept)


@then(_SERVICE + ' received a {method:Method} request to "{path:Q}" with a JSON body containing:')
def step_http_received_json(context: StepContext, name: str, method: str, path: str) -> None:
    """Check that a request arrived whose JSON body contains the doc string's JSON (subset match).

    Example:
        Then the fake HTTP service "payments" received a POST request to "/charges" with a JSON body containing:
          \"\"\"
          {"amount": 1999, "currency": "eur", "idempotency_key": "#uuid"}
          \"\"\"
    """
    expected = parse_json_docstring(docstring(context), where=state(context).location)
    service, target = _service(context, name), text(context, path)
    candidates = _matching(service, check_method(method), target)
    best: tuple[int, list[Mismatch]] | None = None
    for request in candidates:
        ok, data = _json_body(request)
        if not ok:
            continue
        mismatches = compare(expected, data, subset=True)
        if not mismatches:
            return
        if best is None or len(mismatches) < best[0]:
            best = (len(mismatches), mismatches)
    closest = ""
    if best is not None:
        closest = "\n  Differences from the closest request:\n" + "\n".join(_difference(m) for m in best[1][:_SHOWN])
    raise ExpectationFailed(
        f'The fake HTTP service "{service.name}" received no {method.upper()} request to "{target}" '
        "with a JSON body containing what was expected",
        expected=expected,
        details=_received(service) + closest,
        tip=_tip(service, target)
        if not candidates
        else 'Objects may carry more keys than expected; markers such as "#uuid", "#number" or "#ignore" '
        "match values that vary.",
    )


# ------------------------------------------------------------------------------------------------
# Database


@given(_TABLE + " contains:")
def step_db_seed(context: StepContext, table: str, name: str) -> None:
    """Seed a table of a fake database (empty cell = NULL).

    SQLite creates the table from the headings if needed; PostgreSQL needs it in the schema and
    reads each cell by its column's type (numbers, true/false, JSON, timestamps).

    Example:
        Given the table "products" of the fake database "shop" contains:
          | id       | name   | price | stock |
          | PROD-123 | Widget | 9.99  | 12    |
    """
    headings, rows = table_rows(context)
    _fakes(context).database(text(context, name)).seed(text(context, table), headings, rows)


def _database(context: StepContext, name: str) -> TableStore:
    db: TableStore = _fakes(context).existing(text(context, name), "database")
    return db


def _no_table(db: TableStore, table: str) -> ExpectationFailed:
    tables = db.tables()
    return ExpectationFailed(
        f'The fake database "{db.name}" has no table "{table}"',
        details=f"  Tables: {', '.join(tables) if tables else '(none)'}",
        tip=(did_you_mean(table, tables, "table") + ". " if tables else "")
        + f'A table exists once a step seeds it (Given the table "{table}" of the fake database '
        f'"{db.name}" contains:) or the server under test creates it.',
    )


@then(_TABLE + " has {count:d} {noun:Rows}")
def step_db_count(context: StepContext, table: str, name: str, count: int, noun: str) -> None:
    """Check the number of rows in a table of a fake database.

    Example: Then the table "orders" of the fake database "shop" has 1 row
    """
    db, table = _database(context, name), text(context, table)
    check_identifier(table, "table name")
    try:
        actual = db.count(table)
    except LookupError:
        raise _no_table(db, table) from None
    if actual != count:
        rows = db.rows(table)
        raise ExpectationFailed(
            f'The table "{table}" of the fake database "{db.name}" has {_plural(actual, "row")}, not {count}',
            expected=_plural(count, "row"),
            actual=_plural(actual, "row"),
            details="  Its rows:\n" + _render_rows(db.columns(table), rows),
        )


def _cell(value: object) -> str:
    """A stored value as a table cell: NULL empty, booleans and JSON as they are written in a feature."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _render_rows(columns: Sequence[str], rows: Sequence[dict[str, object]] | Sequence[Sequence[object]]) -> str:
    """A Gherkin-style table, as a product owner wrote it (NULL as an empty cell)."""
    grid = [list(columns)]
    for row in rows[:_SHOWN]:
        cells = [row.get(c) for c in columns] if isinstance(row, dict) else list(row)
        grid.append([_cell(v) for v in cells])
    widths = [max(len(r[i]) for r in grid) for i in range(len(columns))]
    lines = ["    | " + " | ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) + " |" for r in grid]
    if len(rows) > _SHOWN:
        lines.append(f"    … and {len(rows) - _SHOWN} more rows")
    if not rows:
        lines.append("    (no rows)")
    return "\n".join(lines)


@then(_TABLE + " contains:")
def step_db_contains(context: StepContext, table: str, name: str) -> None:
    """Check that a table holds these rows (listed columns only, in any order, numbers as numbers).

    Example:
        Then the table "orders" of the fake database "shop" contains:
          | product_id | quantity | status  |
          | PROD-123   | 2        | pending |
    """
    headings, expected_rows = table_rows(context, expectations=True)
    db, table = _database(context, name), text(context, table)
    check_identifier(table, "table name")
    try:
        actual = db.rows(table)
    except LookupError:
        raise _no_table(db, table) from None
    columns = db.columns(table)
    for heading in headings:
        if heading not in columns:
            raise UsageError(
                f'{where(context)}the table "{table}" of the fake database "{db.name}" has no column '
                f'"{heading}". ' + did_you_mean(heading, columns, "column")
            )
    unmatched = list(actual)
    missing: list[list[str]] = []
    for row in expected_rows:
        wanted = [coerce_cell(cell) for cell in row]
        # Cells compare by equality, so the first equal row is as good as any (no backtracking needed).
        hit = next(
            (a for a in unmatched if all(same_value(w, a[h]) for h, w in zip(headings, wanted, strict=True))),
            None,
        )
        if hit is None:
            missing.append(row)
        else:
            unmatched.remove(hit)
    if missing:
        raise ExpectationFailed(
            f'The table "{table}" of the fake database "{db.name}" lacks {_plural(len(missing), "expected row")}',
            details="  Missing:\n"
            + _render_rows(headings, missing)
            + f"\n  The table holds ({_plural(len(actual), 'row')}):\n"
            + _render_rows(headings, actual),
            tip="Rows are compared on the listed columns only and in any order; cells that read as numbers "
            "are compared as numbers, and an empty cell means NULL.",
        )


# ------------------------------------------------------------------------------------------------
# Workspace


def _workspace(context: StepContext) -> FakeWorkspace:
    ws: FakeWorkspace = _fakes(context).existing("workspace", "workspace")
    return ws


def _no_file(ws: FakeWorkspace, relative: str) -> ExpectationFailed:
    files = ws.files()
    return ExpectationFailed(
        f'The workspace has no file "{relative}"',
        details="  Files in the workspace:\n"
        + ("\n".join(f"    {f}" for f in files[:_SHOWN]) if files else "    (none)"),
        tip=did_you_mean(relative, files, "file"),
    )


@given('the workspace contains the file "{path:Q}" with:')
def step_workspace_write(context: StepContext, path: str) -> None:
    """Write a file (doc string content) into the workspace, at a path relative to it.

    Example:
        Given the workspace contains the file "notes/todo.md" with:
          \"\"\"
          - buy milk
          \"\"\"
    """
    content = docstring(context)
    _fakes(context).workspace().write(text(context, path), content)


@then('the workspace contains the file "{path:Q}"')
def step_workspace_has(context: StepContext, path: str) -> None:
    """Check that a file exists in the workspace.

    Example: Then the workspace contains the file "reports/summary.txt"
    """
    ws, relative = _workspace(context), text(context, path)
    if not ws.exists(relative):
        raise _no_file(ws, relative)


@then('the workspace does not contain the file "{path:Q}"')
def step_workspace_lacks(context: StepContext, path: str) -> None:
    """Check that a file does not exist in the workspace.

    Example: Then the workspace does not contain the file "notes/todo.md"
    """
    ws, relative = _workspace(context), text(context, path)
    if ws.exists(relative):
        raise ExpectationFailed(
            f'The workspace still contains the file "{relative}"',
            actual=ws.read(relative),
            tip="The server under test did not remove it (or wrote it again).",
        )


@then('the workspace file "{path:Q}" contains "{needle:Q}"')
def step_workspace_file_contains(context: StepContext, path: str, needle: str) -> None:
    """Check that a workspace file's text contains a piece of text.

    Example: Then the workspace file "notes/todo.md" contains "buy milk"
    """
    needle = expected_text(context, needle)
    ws, relative = _workspace(context), text(context, path)
    if not ws.exists(relative):
        raise _no_file(ws, relative)
    content = ws.read(relative)
    if needle not in content:
        raise ExpectationFailed(
            f'The workspace file "{relative}" does not contain "{needle}"',
            expected=f"text containing {needle!r}",
            actual=content,
            tip="The comparison is case-sensitive and exact about spaces.",
        )


@then('the workspace file "{path:Q}" is:')
def step_workspace_file_is(context: StepContext, path: str) -> None:
    """Check a workspace file's whole text against the doc string (trailing newlines ignored).

    Example:
        Then the workspace file "notes/todo.md" is:
          \"\"\"
          - buy milk
          \"\"\"
    """
    ws, relative, expected = _workspace(context), text(context, path), docstring(context)
    if not ws.exists(relative):
        raise _no_file(ws, relative)
    content = ws.read(relative)
    if content.rstrip("\r\n") != expected.rstrip("\r\n"):
        raise ExpectationFailed(
            f'The workspace file "{relative}" does not hold the expected text',
            expected=expected,
            actual=content,
        )
