"""Meta-tests of the fake steps: write a temp project, run behave on it in a subprocess, read the outcome.

Two wirings:
- a minimal harness (its own environment.py: a portal, `Fakes`, `interpolate`), so the step
  phrases, failure messages and teardown are checked independently of the rest of the hooks;
- the real wiring of config.md (`from mcp_bdd.environment import *`), with the demo shop as
  the server under test, skipped while `mcp_bdd/environment.py` does not exist.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from behave_project import run_captured

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

HARNESS_ENVIRONMENT = """
import shutil
import tempfile
import threading
from pathlib import Path
from types import SimpleNamespace

from anyio.from_thread import start_blocking_portal

from mcp_bdd.fakes import Fakes
from mcp_bdd.transcript import Transcript
from mcp_bdd.variables import interpolate


def before_all(context):
    context._portal_cm = start_blocking_portal()
    context.portal = context._portal_cm.__enter__()


def before_scenario(context, scenario):
    tmp = Path(tempfile.mkdtemp(prefix="fakes-harness-"))
    transcript = Transcript()
    fakes = Fakes(portal=context.portal, transcript=transcript, tmpdir=tmp, declared={"ledger": "database"})
    variables = {}
    context.mcp = SimpleNamespace(
        fakes=fakes,
        tmpdir=tmp,
        transcript=transcript,
        variables=variables,
        location="",
        interpolate=lambda text, extra=None: interpolate(text, variables, fake=fakes.resolve, extra=extra),
        next_step_sends=None,  # a request the app sends as the next step begins (while it waits)
        senders=[],
    )


def before_step(context, step):
    context.mcp.location = str(step.location)
    send, context.mcp.next_step_sends = context.mcp.next_step_sends, None
    if send is not None:
        context.mcp.senders.append(threading.Thread(target=send))
        context.mcp.senders[-1].start()


def after_scenario(context, scenario):
    for sender in context.mcp.senders:
        sender.join(timeout=10)
    problems = context.mcp.fakes.close()
    shutil.rmtree(context.mcp.tmpdir, ignore_errors=True)
    assert problems == [], problems


def after_all(context):
    context._portal_cm.__exit__(None, None, None)
"""

# Steps that play the server under test: they call the fakes the way an app would.
HARNESS_STEPS = """
import json
import shutil
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path

from behave import then, when

import mcp_bdd.steps.fakes  # noqa: F401


def _send(context, method, url, timeout=5.0):
    url = context.mcp.interpolate(url)
    data = context.mcp.interpolate(context.text).encode() if context.text else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", "X-Trace": "t-1"}
    )
    context.answer = context.failure = None
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            context.answer = (response.status, dict(response.headers), response.read().decode())
    except urllib.error.HTTPError as exc:
        context.answer = (exc.code, dict(exc.headers), exc.read().decode())
    except Exception as exc:
        context.failure = exc


@when('the app sends {method:w} "{url}" with:')
def app_sends_body(context, method, url):
    _send(context, method, url)


@when('the app sends {method:w} "{url}" giving up after {seconds:g} seconds')
def app_sends_impatient(context, method, url, seconds):
    _send(context, method, url, timeout=seconds)


@when('the app sends {method:w} "{url}"')
def app_sends(context, method, url):
    _send(context, method, url)


@when('the app sends {method:w} "{url}" as the next step begins')
def app_sends_later(context, method, url):
    request = urllib.request.Request(context.mcp.interpolate(url), data=b"{}", method=method)

    def send():
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    context.mcp.next_step_sends = send


@then("the app got status {status:d}")
def app_status(context, status):
    assert context.answer is not None, f"no answer: {context.failure!r}"
    assert context.answer[0] == status, context.answer


@then('the app got the header "{name}" with "{value}"')
def app_header(context, name, value):
    headers = {k.lower(): v for k, v in context.answer[1].items()}
    assert headers.get(name.lower()) == value, headers


@then('the app got a body containing "{text}"')
def app_body(context, text):
    assert text in context.answer[2], context.answer


@then("the app got no answer")
def app_no_answer(context):
    assert context.answer is None and context.failure is not None, context.answer


@when('the app runs the SQL "{sql}" on "{url}"')
def app_sql(context, sql, url):
    target = context.mcp.interpolate(url).removeprefix("sqlite:///")
    with sqlite3.connect(target) as conn:
        conn.execute(sql)


@when('the app copies "{source}" to "{target}" in "{root}"')
def app_copy(context, source, target, root):
    base = Path(context.mcp.interpolate(root))
    (base / target).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(base / source, base / target)
"""

HTTP_FEATURE = '''
Feature: Fake HTTP services

  Background:
    Given the fake HTTP service "payments" responds to POST "/charges" with status 201 and body:
      """
      {"id": "ch_1"}
      """

  Scenario: The scenario overrides the Background and checks what arrived
    Given the fake HTTP service "payments" responds to POST "/charges" with status 503
    When the app sends POST "${fake.payments.url}/charges" with:
      """
      {"amount": 1999, "currency": "eur", "key": "3f1c1f7e-8f5e-4a3b-9c55-2f1d2c3b4a5e"}
      """
    Then the app got status 503
    And the fake HTTP service "payments" received 1 request to "/charges"
    And the fake HTTP service "payments" received a POST request to "/charges"
    And the fake HTTP service "payments" received a POST request to "/charges" with body containing "1999"
    And the fake HTTP service "payments" received a POST request to "/charges" whose body at "$.amount" is 1999
    And the fake HTTP service "payments" received a POST request to "/charges" whose body at "$.currency" is "eur"
    And the fake HTTP service "payments" received a POST request to "/charges" with a JSON body containing:
      """
      {"amount": "#number", "key": "#uuid"}
      """
    And the fake HTTP service "payments" received a POST request to "/charges" with the header "X-Trace" set to "t-1"

  Scenario: The Background's stub answers when not overridden
    When the app sends POST "${fake.payments.url}/charges" with:
      """
      {"amount": 5}
      """
    And the app sends POST "${fake.payments.url}/charges" with:
      """
      {"amount": 6}
      """
    Then the app got status 201
    And the app got a body containing "ch_1"
    And the fake HTTP service "payments" received 2 requests to "/charges"

  Scenario: Queries, headers and unstubbed paths
    Given the fake HTTP service "catalog" responds to GET "/search?q=shoes" with status 200 and body:
      """
      ["boot"]
      """
    And the fake HTTP service "catalog" responds to GET "/search?q=shoes" with the headers:
      | name    | value |
      | X-Total | 1     |
    And the fake HTTP service "catalog" responds to GET "/old" with status 301 and headers:
      | name     | value                       |
      | Location | ${fake.catalog.url}/search  |
    When the app sends GET "${fake.catalog.url}/search?q=shoes&limit=2"
    Then the app got status 200
    And the app got the header "X-Total" with "1"
    And the fake HTTP service "catalog" received a request to "/search" with query "q=shoes"
    And the fake HTTP service "catalog" received a GET request to "/search" with query "limit=2"
    And the fake HTTP service "catalog" received 1 request to "/search?q=shoes"
    When the app sends GET "${fake.catalog.url}/nothing"
    Then the app got status 404
    And the app got a body containing "GET /search?q=shoes -> 200"
    And the fake HTTP service "catalog" received 1 request to "/nothing"

  Scenario: Failure injection: a slow answer and a dropped connection
    Given the fake HTTP service "payments" responds to POST "/charges" after a delay of 0.5 seconds
    And the fake HTTP service "payments" drops the connection on GET "/health"
    When the app sends POST "${fake.payments.url}/charges" giving up after 0.1 seconds
    Then the app got no answer
    When the app sends GET "${fake.payments.url}/health"
    Then the app got no answer
    And the fake HTTP service "payments" received 1 request to "/health"
    And the fake HTTP service "payments" received 1 request to "/charges"

  Scenario: A request that comes while the step waits, and one that came before it
    Given the fake HTTP service "hooks" responds to POST "/ping" with status 204
    When the app sends POST "${fake.hooks.url}/ping" as the next step begins
    Then the fake HTTP service "hooks" receives a POST request to "/ping" within 10 seconds
    And the fake HTTP service "hooks" receives a POST request to "/ping" within 0 seconds
    And the fake HTTP service "hooks" received 1 request to "/ping"

  Scenario: A service nobody calls
    Given the fake HTTP service "idle" responds to GET "/" with status 200
    Then the fake HTTP service "idle" received no requests
    And the fake HTTP service "idle" received 0 requests to "/"
'''

DATA_FEATURE = '''
Feature: Fake database and workspace

  Scenario: Seed a table and check it after the app wrote to it
    Given the table "products" of the fake database "shop" contains:
      | id | name   | price | zip   | note |
      | 1  | Widget | 9.99  | 007   |      |
      | 2  | Gadget | 20    | 10115 | x    |
    When the app runs the SQL "INSERT INTO products (id, name) VALUES (3, 'Doohickey')" on "${fake.shop.path}"
    Then the table "products" of the fake database "shop" has 3 rows
    And the table "products" of the fake database "shop" contains:
      | name   | price | zip | note |
      | Gadget | 20.0  | 10115 | x  |
      | Widget | 9.99  | 007 |      |

  Scenario: A declared database reached through its URL
    When the app runs the SQL "CREATE TABLE audit (event)" on "${fake.ledger.url}"
    Then the table "audit" of the fake database "ledger" has 0 rows

  Scenario: Files in the workspace
    Given the workspace contains the file "notes/todo.md" with:
      """
      - buy milk
      """
    When the app copies "notes/todo.md" to "out/done.md" in "${fake.workspace.path}"
    Then the workspace contains the file "out/done.md"
    And the workspace file "out/done.md" contains "buy milk"
    And the workspace file "out/done.md" is:
      """
      - buy milk
      """
    And the workspace does not contain the file "notes/other.md"
'''

FAILING_FEATURE = '''
Feature: Failures read like bug reports

  Background:
    Given the fake HTTP service "payments" responds to POST "/charges" with status 201
    When the app sends POST "${fake.payments.url}/charges" with:
      """
      {"amount": 5}
      """

  Scenario: wrong count
    Then the fake HTTP service "payments" received 2 requests to "/charges"

  Scenario: wrong path
    Then the fake HTTP service "payments" received 1 request to "/charge"

  Scenario: body mismatch
    Then the fake HTTP service "payments" received a POST request to "/charges" with a JSON body containing:
      """
      {"amount": 6}
      """

  Scenario: never arrives
    Then the fake HTTP service "payments" receives a GET request to "/charges" within 0.2 seconds

  Scenario: never set up
    Then the fake HTTP service "paymnts" received no requests

  Scenario: missing slash
    Given the fake HTTP service "payments" responds to GET "health" with status 200

  Scenario: unknown method
    Given the fake HTTP service "payments" responds to FETCH "/health" with status 200

  Scenario: missing row
    Given the table "orders" of the fake database "shop" contains:
      | id | status  |
      | 1  | pending |
    Then the table "orders" of the fake database "shop" contains:
      | id | status |
      | 1  | paid   |

  Scenario: bad heading
    Given the table "orders" of the fake database "shop" contains:
      | order id |
      | 1        |

  Scenario: escaping the workspace
    Given the workspace contains the file "../evil.txt" with:
      """
      x
      """

  Scenario: missing workspace file
    Given the workspace contains the file "a.txt" with:
      """
      x
      """
    Then the workspace contains the file "b.txt"
'''


def _run_behave(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "behave", "--no-color", "--format=plain", "--no-timings", *args, "features/"]
    return run_captured(argv, cwd=project, env=env, timeout=300)


def _harness(tmp_path: Path, features: dict[str, str]) -> Path:
    (tmp_path / "features").mkdir()
    (tmp_path / "steps").mkdir()
    (tmp_path / "environment.py").write_text(HARNESS_ENVIRONMENT)
    (tmp_path / "steps" / "harness_steps.py").write_text(HARNESS_STEPS)
    for name, text in features.items():
        (tmp_path / "features" / name).write_text(textwrap.dedent(text))
    return tmp_path


def test_fake_steps_pass(tmp_path: Path) -> None:
    project = _harness(tmp_path, {"http.feature": HTTP_FEATURE, "data.feature": DATA_FEATURE})
    result = _run_behave(project)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "9 scenarios passed, 0 failed" in output, output
    assert "Started server process" not in output


def test_failures_read_like_bug_reports(tmp_path: Path) -> None:
    project = _harness(tmp_path, {"failing.feature": FAILING_FEATURE})
    result = _run_behave(project)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "0 scenarios passed" in output, output
    assert "uvicorn" not in output, output  # the fakes' lifecycle logs stay out of failure reports
    expected = [
        # wrong count: title, the requests it did receive, a tip
        'The fake HTTP service "payments" received 1 request to "/charges", not 2',
        'Requests the fake HTTP service "payments" received (1):',
        '1. POST /charges -> 201  body: {"amount": 5}',
        # wrong path
        'No request went to "/charge". Did you mean "/charges"?',
        # body mismatch: the difference from the closest request
        "Differences from the closest request:",
        "$.amount",
        # never arrives: what did arrive, and where
        'The fake HTTP service "payments" received no GET request to "/charges" within 0.2 seconds',
        "Requests to that path did arrive",
        # never set up
        'The fake HTTP service "paymnts" was never set up in this scenario; fakes in use: "payments"',
        # stub errors
        'The path "health" must start with "/": write "/health"',
        '"FETCH" is not an HTTP method',
        # database
        'The table "orders" of the fake database "shop" lacks 1 expected row',
        "| 1  | paid   |",
        'The column heading "order id" is not a valid SQL identifier',
        # workspace
        '"../evil.txt" leaves the workspace',
        'The workspace has no file "b.txt"',
        'Did you mean "a.txt"?',
    ]
    missing = [text for text in expected if text not in output]
    assert not missing, f"missing {missing} in:\n{output}"


def test_steps_are_catalogued_with_docstrings(tmp_path: Path) -> None:
    project = _harness(tmp_path, {"empty.feature": "Feature: nothing\n"})
    result = _run_behave(project, "--steps-catalog")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for phrase in [
        'Given the fake HTTP service "{name:Q}" responds to {method:Method} "{path:Q}" with status',
        'Then the fake HTTP service "{name:Q}" received {count:d} {noun:Requests} to "{path:Q}"',
        'Then the fake HTTP service "{name:Q}" receives a {method:Method} request to "{path:Q}" within',
        'Given the workspace contains the file "{path:Q}" with:',
        'Then the table "{table:Q}" of the fake database "{name:Q}" has {count:d} {noun:Rows}',
    ]:
        assert phrase in output, output
    assert "Stub a fake HTTP service" in output


# ------------------------------------------------------------------------------------------------
# The real wiring (config.md), with the demo shop as the server under test

REAL_PYPROJECT = """
[tool.mcp-bdd]
server = "shop"
transport = "in-memory"

[tool.mcp-bdd.servers.shop]
app = "demo.shop:create_server"
env = { SHOP_DB = "${fake.shop.path}", PAYMENTS_URL = "${fake.payments.url}" }
"""

REAL_FEATURE = '''
Feature: Paying orders through a fake payment provider

  Background:
    Given the table "inventory" of the fake database "shop" contains:
      | product_id | quantity | price |
      | PROD-1     | 10       | 9.5   |
    And the fake HTTP service "payments" responds to POST "/charges" with status 201 and body:
      """
      {"id": "ch_test"}
      """

  Scenario: A paid order charges the provider once
    Given the MCP server "shop" is running
    When I call the tool "create_order" with:
      | product_id | quantity |
      | PROD-1     | 2        |
    And I remember the result at "$.id" as "order"
    And I call the tool "pay_order" with:
      | order_id |
      | ${order} |
    Then the tool call succeeds
    And the fake HTTP service "payments" received 1 request to "/charges"
    And the fake HTTP service "payments" received a POST request to "/charges" whose body at "$.amount" is 19
    And the fake HTTP service "payments" received a POST request to "/charges" with body containing "${order}"
    And the table "orders" of the fake database "shop" contains:
      | product_id | quantity | status | charge_id |
      | PROD-1     | 2        | paid   | ch_test   |

  Scenario: The provider is down
    Given the fake HTTP service "payments" responds to POST "/charges" with status 503
    And the MCP server "shop" is running
    When I call the tool "create_order" with:
      | product_id | quantity |
      | PROD-1     | 1        |
    And I remember the result at "$.id" as "order"
    And I call the tool "pay_order" with:
      | order_id |
      | ${order} |
    Then the tool call fails with an error mentioning "unavailable"
    And the table "orders" of the fake database "shop" contains:
      | status  |
      | pending |

  Scenario: The connection drops
    Given the fake HTTP service "payments" drops the connection on POST "/charges"
    And the MCP server "shop" is running
    When I call the tool "create_order" with:
      | product_id | quantity |
      | PROD-1     | 1        |
    And I remember the result at "$.id" as "order"
    And I call the tool "pay_order" with:
      | order_id |
      | ${order} |
    Then the tool call fails with an error mentioning "unreachable"
'''


@pytest.mark.skipif(not (ROOT / "mcp_bdd" / "environment.py").exists(), reason="mcp_bdd/environment.py not there yet")
def test_real_wiring_with_the_demo_shop(tmp_path: Path) -> None:
    (tmp_path / "features").mkdir()
    (tmp_path / "steps").mkdir()
    (tmp_path / "pyproject.toml").write_text(REAL_PYPROJECT)
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (tmp_path / "features" / "pay.feature").write_text(textwrap.dedent(REAL_FEATURE))
    result = _run_behave(tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "3 scenarios passed, 0 failed" in output, output
