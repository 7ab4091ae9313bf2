"""Profiles: the same features against fakes by default, and against real dependencies on demand.

Unit tests of the configuration overlay, and behave runs where a profile swaps the payments fake
for a real HTTP service (a "sandbox" this test starts on 127.0.0.1): the steps that stub or count
the fake's requests are reported skipped with the reason, the rest run against the sandbox, and
the report and JUnit name the profile.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from behave_project import SHOP, make_project, run_behave

from mcp_bdd.config import FakeSpec, load_config
from mcp_bdd.errors import ConfigError
from mcp_bdd.report.render import unpack

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

PROFILES = """
timeout = 10
[fakes]
shopdb = "database"

[profiles.staging]
timeout = 30
[profiles.staging.servers.shop]
env = { REGION = "eu" }
[profiles.staging.replace]
payments = { url = "http://127.0.0.1:${env.SANDBOX_PORT}" }
[profiles.staging.fakes]
shopdb = { kind = "postgres", schema = "db/schema.sql" }
"""


def _config(tmp_path: Path, text: str, userdata: dict[str, str] | None = None) -> object:
    (tmp_path / "mcp-bdd.toml").write_text(SHOP + 'env = { KEEP = "1" }\n' + text)
    return load_config(start=tmp_path, userdata=userdata)


def test_without_a_profile_nothing_changes(tmp_path: Path) -> None:
    config = _config(tmp_path, PROFILES)
    assert config.profile is None and config.timeout == 10
    assert config.fakes == {"shopdb": "database"}
    assert "staging" in config.profiles


def test_a_profile_overrides_keys_merges_server_env_and_replaces_fakes(tmp_path: Path) -> None:
    config = _config(tmp_path, PROFILES, {"profile": "staging"})
    assert config.profile == "staging" and config.timeout == 30
    assert config.servers["shop"].env == {"KEEP": "1", "REGION": "eu"}
    payments = config.fakes["payments"]
    assert isinstance(payments, FakeSpec) and payments.kind == "real" and payments.profile == "staging"
    assert payments.options == {"url": "http://127.0.0.1:${env.SANDBOX_PORT}"}
    shopdb = config.fakes["shopdb"]
    assert isinstance(shopdb, FakeSpec) and shopdb.kind == "postgres" and shopdb.options == {"schema": "db/schema.sql"}


def test_userdata_still_wins_over_the_profile(tmp_path: Path) -> None:
    config = _config(tmp_path, PROFILES, {"profile": "staging", "timeout": "5"})
    assert config.timeout == 5


def test_an_unknown_profile_names_the_closest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'no profile "stagin"\. Did you mean "staging"\? Profiles: staging'):
        _config(tmp_path, PROFILES, {"profile": "stagin"})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[profiles.ci]\ntimout = 3\n", r'\[profiles\.ci\]: unknown key "timout"\. Did you mean "timeout"\?'),
        ("[profiles.ci.replace]\npayments = 3\n", r"\[profiles\.ci\.replace\]: must be a table"),
        (
            "[profiles.ci.replace]\npayments = { url = 3 }\n",
            r"\[profiles\.ci\.replace\.payments\]: the real dependency's values",
        ),
    ],
)
def test_profiles_are_checked_even_when_not_selected(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _config(tmp_path, body)


# ------------------------------------------------------------------------------------------------
# behave runs


class _Sandbox(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:  # the payment provider's sandbox: every charge succeeds
        length = int(self.headers.get("Content-Length") or 0)
        type(self).received.append(f"POST {self.path} {self.rfile.read(length).decode()}")
        body = json.dumps({"id": "ch_sandbox"}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def sandbox() -> Iterator[tuple[int, list[str]]]:
    _Sandbox.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sandbox)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Sandbox.received
    server.shutdown()
    server.server_close()
    thread.join(10)


PAY = """
Feature: payments
  Scenario: an order is paid
    Given the fake HTTP service "payments" responds to POST "/charges" with status 201
    When I call the tool "create_order" with:
      | product_id | quantity |
      | PROD-123   | 1        |
    And I remember the result at "$.id" as "order"
    And I call the tool "pay_order" with:
      | order_id |
      | ${order} |
    Then the tool call succeeds
    And the fake HTTP service "payments" received 1 request to "/charges"
"""

CONFIG = (
    SHOP
    + 'env = { PAYMENTS_URL = "${fake.payments.url}" }\n'
    + '[profiles.staging.replace]\npayments = { url = "http://127.0.0.1:${env.SANDBOX_PORT}" }\n'
)


def test_by_default_the_fake_is_stubbed_and_checked(tmp_path: Path, sandbox: tuple[int, list[str]]) -> None:
    root = make_project(tmp_path, CONFIG, {"pay.feature": PAY})
    run = run_behave(root)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]
    assert run.counts("steps")["skipped"] == 0
    assert sandbox[1] == []


def test_a_profile_runs_against_the_real_dependency_and_skips_the_fake_steps_with_the_reason(
    tmp_path: Path, sandbox: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, received = sandbox
    monkeypatch.setenv("SANDBOX_PORT", str(port))
    root = make_project(tmp_path, CONFIG, {"pay.feature": PAY})
    run = run_behave(
        root,
        "-D",
        "profile=staging",
        "-f",
        "mcp_bdd.report:JUnitFormatter",
        "-o",
        "junit.xml",
        "-f",
        "mcp_bdd.report:LivingDocFormatter",
        "-o",
        "report.html",
        "-f",
        "plain",
    )
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]
    assert run.counts("steps") == {"passed": 4, "failed": 0, "error": 0, "skipped": 2}, run.output[-3000:]
    assert len(received) == 1 and received[0].startswith("POST /charges ")  # the sandbox was charged
    reason = 'the profile "staging" replaces the fake "payments" with a real dependency'
    assert run.output.count(reason) == 2, run.output[-3000:]
    junit = (root / "junit.xml").read_text()
    assert '<property name="profile" value="staging"' in junit
    html = (root / "report.html").read_text()
    assert "profile <strong>staging</strong>" in html
    data = json.dumps(unpack(html), ensure_ascii=False)  # the page's packed (gzipped) data
    assert '"reason": ' + json.dumps(reason)[:-1] in data  # the step's evidence in the report


def test_a_failure_after_a_skipped_fake_step_still_fails_the_scenario(
    tmp_path: Path, sandbox: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """behave reports a scenario by its first step that did not pass: a skipped one must not hide a failure."""
    monkeypatch.setenv("SANDBOX_PORT", str(sandbox[0]))
    declined = PAY.replace("Then the tool call succeeds", "Then the tool call fails")
    root = make_project(tmp_path, CONFIG, {"pay.feature": declined})
    run = run_behave(root, "-D", "profile=staging")
    assert run.counts() == {"passed": 0, "failed": 1, "error": 0, "skipped": 0}, run.output[-3000:]
    assert run.returncode != 0


def test_an_unknown_profile_stops_the_run_before_any_scenario(tmp_path: Path) -> None:
    root = make_project(tmp_path, CONFIG, {"pay.feature": PAY})
    run = run_behave(root, "-D", "profile=prod")
    assert run.returncode != 0
    assert 'there is no profile "prod"' in run.output and "Profiles: staging" in run.output
