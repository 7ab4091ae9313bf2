"""Meta-tests of the resource, prompt, notification and client-side steps.

Each test reads one behave run of a temporary project wired like a user's (top-level
`environment.py` and `steps/mcp_steps.py` shims, an `mcp-bdd.toml`) against the demo shop:
both protocol eras in-memory (2026-07-28 via `protocol = "auto"`, 2025-11-25 via
`-D protocol=legacy`) and one stdio run. The three runs start together (module fixture) and
each test waits for its own; scenario names say what must happen: "pass ..." must pass,
"fail ..." must fail (or error) with the text in EXPECTED_FAILURES.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

CONFIG = """\
server = "shop"

[servers.shop]
app = "demo.shop:create_server"

[servers.mini]
app = "mini:create_server"

[servers.shared]                 # one session for the whole feature
app = "demo.shop:create_server"
scope = "feature"
"""

# A server with a resource and a tool only: no prompts, no completions, no subscriptions.
MINI = """\
from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("mini", version="0.1.0")

    @server.resource("mini://note", name="note", mime_type="text/plain")
    def note() -> str:
        \"\"\"A note.\"\"\"
        return "hello"

    @server.tool()
    def hello() -> str:
        \"\"\"Say hello.\"\"\"
        return "hello"

    return server
"""

ORDER = """
    When I call the tool "create_order" with:
      | product_id | quantity |
      | PROD-123   | 1        |
    And I remember the result at "$.id" as "order"
"""

USER = """
    When I call the tool "create_user" with:
      | email         | name |
      | ann@example.x | Ann  |
    And I remember the result at "$.id" as "user"
    And I call the tool "confirm_delete" with:
      | user_id |
      | ${user} |
"""

COMMON = f"""
Feature: Resources, prompts, notifications and the client's side (both eras)

  Scenario: pass resources are listed and read
    Given the MCP server "shop" is running
    When I list the resources
    Then the resources include "shop://catalog"
    When I list the resource templates
    Then the resource templates include "shop://docs/{{topic}}"
    When I read the resource "shop://catalog"
    Then the resource MIME type is "application/json"
    And the resource text contains "PROD-123"
    And the result at "$[0].product_id" is "PROD-123"
    When I read the resource "shop://docs/orders" on "shop"
    Then the resource text contains "How the shop handles orders"
    And the result text contains "# Orders"
    When I read the resource "shop://logo.png"
    Then the resource is binary
    And the resource MIME type is "image/png"

  Scenario: pass a subscribed resource reports its update
    Given the MCP server "shop" is running
    When I subscribe to the resource "shop://catalog"
{ORDER}
    Then I receive an update for the resource "shop://catalog" within 2 seconds
    And I receive a "resource updated" notification within 1 seconds

  Scenario: pass prompts and completions
    When I list the prompts
    Then the prompts include "greeting"
    When I get the prompt "greeting" with:
      | name |
      | Ada  |
    Then the prompt has 1 messages
    And prompt message 1 is from the "user" and contains "Ada"
    And the result text contains "greet our customer Ada"
    When I ask for completions of the argument "name" of the prompt "greeting" with "A"
    Then the completions include "Adam"
    When I ask for completions of the argument "topic" of the resource template "shop://docs/{{topic}}" with "o"
    Then the completions include "orders"

  Scenario: pass a prompt with two messages
{ORDER}
    When I get the prompt "order_confirmation" with:
      | order_id |
      | ${{order}} |
    Then the prompt has 2 messages
    And prompt message 2 is from the "assistant" and contains "${{order}}"

  Scenario: pass progress and logs
    Given the log level is "debug"
    And the MCP server "shop" is running
    When I call the tool "import_catalog" with:
      | count |
      | 4     |
    Then I received at least 4 progress notifications
    And the progress never decreased
    And the server logged a "info" message containing "Importing 4 products"
    And the server logged a "debug" message containing "Imported IMP-004"
    And I receive a "log message" notification within 1 seconds
    And I receive a "progress" notification within 1 seconds

  Scenario: pass the log level can be set after connecting
    Given the MCP server "shop" is running
    And the log level is "info"
    When I call the tool "import_catalog" with:
      | count |
      | 1     |
    Then the server logged a "info" message containing "Import finished"

  Scenario: pass a tools list change is seen even when it came before the step
    Given the MCP server "shop" is running
    When I call the tool "enable_admin_tools"
    Then I receive a "tools list changed" notification within 2 seconds
    When I list the tools
    Then the tool list includes "purge_orders"

  Scenario: pass sampling
    Given the client answers sampling requests with "A fine order."
    And the MCP server "shop" is running
{ORDER}
    When I call the tool "summarize_order" with:
      | order_id |
      | ${{order}} |
    Then the tool call succeeds
    And the result at "$.summary" is "A fine order."
    And the server requested sampling 1 time
    And the last sampling request contains "Summarize order ${{order}}"
    When I call the tool "summarize_order" with:
      | order_id |
      | ${{order}} |
    Then the server requested sampling 2 times

  Scenario: pass a tool that needs sampling says so when the client does not declare it
{ORDER}
    When I call the tool "summarize_order" with:
      | order_id |
      | ${{order}} |
    Then the tool call fails with an error mentioning "did not declare the sampling capability"

  Scenario: pass elicitation accepted
    Given the client accepts elicitation requests with:
      | confirm | reason         |
      | true    | customer asked |
    And the MCP server "shop" is running
{USER}
    Then the result at "$.action" is "accepted"
    And the result at "$.deleted" is true
    And the result at "$.reason" is "customer asked"
    And the server requested elicitation with a message containing "Delete the account of Ann"

  Scenario: pass elicitation declined
    Given the client declines elicitation requests
{USER}
    Then the result at "$.action" is "declined"

  Scenario: pass elicitation cancelled
    Given the client cancels elicitation requests
{USER}
    Then the result at "$.action" is "cancelled"

  Scenario: pass roots
    Given the client exposes the roots:
      | uri              | name |
      | file:///srv/app  | app  |
      | file:///srv/data |      |
    When I call the tool "list_roots"
    Then the tool call succeeds
    And the result at "$.roots[0].name" is "app"
    And the result at "$.roots[1].name" is null
    And the result text contains "file:///srv/data"

  Scenario: fail reading a resource that does not exist
    When I read the resource "shop://catalogue"

  Scenario: fail a client step after the server step
    Given the MCP server "shop" is running
    And the client answers sampling requests with "too late"

  Scenario: fail an elicitation answer that does not fit the schema
    Given the client accepts elicitation requests with:
      | confirm | reason |
      | maybe   | test   |
{USER}

  Scenario: fail a notification that never comes
    When I call the tool "import_catalog" with:
      | count |
      | 2     |
    Then I receive a "tools list changed" notification within 0.3 seconds

  Scenario: fail an unknown notification kind
    Then I receive a "tool list changed" notification within 1 seconds

  Scenario: fail an update without a subscription
{ORDER}
    Then I receive an update for the resource "shop://catalog" within 0.2 seconds

  Scenario: fail too few progress notifications
    When I call the tool "import_catalog" with:
      | count |
      | 2     |
    Then I received at least 3 progress notifications

  Scenario: fail a prompt that does not exist
    When I get the prompt "greting"

  Scenario: fail a prompt argument that does not exist
    When I get the prompt "greeting" with:
      | nam |
      | Ada |

  Scenario: fail sampling that never happened
    Then the server requested sampling 2 times

  Scenario: fail completions on a server without them
    Given the MCP server "mini" is running
    When I ask for completions of the argument "x" of the prompt "p" with "a"

  Scenario: fail debug messages below the log level
    Given the log level is "info"
    When I call the tool "import_catalog" with:
      | count |
      | 1     |
    Then the server logged a "debug" message containing "Imported IMP-001"
"""

AUTO = """
Feature: The 2026-07-28 era

  Scenario: pass the era is 2026-07-28
    Given the MCP server "shop" is running
    Then the protocol version is "2026-07-28"

  Scenario: pass a missing prompt is rejected with -32603
    When I get the prompt "nope"
    Then the request is rejected with error code -32603

  Scenario: fail log messages need a log level
    When I call the tool "import_catalog" with:
      | count |
      | 1     |
    Then the server logged a "info" message containing "Importing"

  Scenario: pass a feature-scoped session sees its notifications
    Given the MCP server "shared" is running
    When I call the tool "import_catalog" with:
      | count |
      | 2     |
    Then I received at least 2 progress notifications

  Scenario: fail a feature-scoped session does not carry notifications into the next scenario
    Given the MCP server "shared" is running
    Then I receive a "progress" notification within 0.1 seconds
"""

LEGACY = """
Feature: The 2025-11-25 era

  Scenario: pass the era is 2025-11-25
    Given the MCP server "shop" is running
    Then the protocol version is "2025-11-25"

  Scenario: pass a missing prompt is rejected with code 0
    When I get the prompt "nope"
    Then the request is rejected with error code 0

  Scenario: pass log messages come without a log level
    When I call the tool "import_catalog" with:
      | count |
      | 1     |
    Then the server logged a "info" message containing "Importing"

  Scenario: fail subscribing without subscription support
    Given the MCP server "mini" is running
    When I subscribe to the resource "mini://note"
"""

STDIO = f"""
Feature: Over stdio (real bytes)

  Scenario: pass everything at once over stdio
    Given the log level is "debug"
    And the client answers sampling requests with "Fine."
    And the MCP server "shop" is running over stdio
    Then the protocol version is "2026-07-28"
    When I subscribe to the resource "shop://catalog"
{ORDER}
    Then I receive an update for the resource "shop://catalog" within 5 seconds
    And the server logged a "info" message containing "${{order}} created"
    When I call the tool "enable_admin_tools"
    Then I receive a "tools list changed" notification within 5 seconds
    When I call the tool "import_catalog" with:
      | count |
      | 3     |
    Then I received at least 3 progress notifications
    And the progress never decreased
    When I call the tool "summarize_order" with:
      | order_id |
      | ${{order}} |
    Then the result at "$.summary" is "Fine."
    And the server requested sampling 1 time
    When I read the resource "shop://catalog"
    Then the resource text contains "IMP-003"
    When I get the prompt "greeting" with:
      | name |
      | Ada  |
    Then prompt message 1 is from the "user" and contains "Ada"
"""

EXPECTED_FAILURES = {
    "fail reading a resource that does not exist": ['Did you mean "shop://catalog"', "shop://docs/{topic}"],
    "fail a client step after the server step": ["Move this step above the server step", "Background"],
    "fail an elicitation answer that does not fit the schema": ['elicitation field "confirm" expects boolean'],
    "fail a notification that never comes": ["arrived instead:", "× progress"],
    "fail an unknown notification kind": ['Did you mean "tools list changed"'],
    "fail an update without a subscription": ['add "When I subscribe to the resource "shop://catalog""'],
    "fail too few progress notifications": ["Only 2 progress notification(s) arrived"],
    "fail a prompt that does not exist": ['Did you mean "greeting"'],
    "fail a prompt argument that does not exist": ['has no argument "nam"', 'Did you mean "name"'],
    "fail sampling that never happened": ["requested sampling 0 time(s), not 2", "did not declare sampling"],
    "fail completions on a server without them": ["does not support completions"],
    "fail debug messages below the log level": ['below the log level "info" are not sent'],
    "fail log messages need a log level": ["only to requests that ask for them"],
    "fail a feature-scoped session does not carry notifications into the next scenario": [
        "arrived instead: no notifications at all"
    ],
    "fail subscribing without subscription support": ["resources.subscribe"],
}


@dataclass
class Run:
    """One behave run in a subprocess, started at once and read when a test needs it."""

    name: str
    proc: subprocess.Popen[str]
    out: Path
    started: float = field(default_factory=time.monotonic)
    _result: dict[str, Any] | None = None

    def result(self) -> dict[str, Any]:
        if self._result is None:
            try:
                stdout, stderr = self.proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                stdout, stderr = self.proc.communicate()
                pytest.fail(
                    f"behave run {self.name} hung (a leaked task or process?)\n{stdout[-3000:]}{stderr[-3000:]}"
                )
            elapsed = time.monotonic() - self.started
            features = json.loads(self.out.read_text()) if self.out.exists() else []
            # behave's json output drops the message of an errored step: read messages from the plain output
            plain = self.out.with_suffix(".txt").read_text() if self.out.with_suffix(".txt").exists() else ""
            messages: dict[str, str] = {}
            for block in plain.split("\n  Scenario: ")[1:]:
                title, _, body = block.partition("\n")
                messages[title.strip()] = body
            scenarios: dict[str, dict[str, Any]] = {}
            for feature in features:
                for element in feature.get("elements", []):
                    if element.get("type") == "scenario":
                        name = element["name"]
                        scenarios[name] = {"status": element.get("status"), "error": messages.get(name, "")}
            self._result = {"scenarios": scenarios, "stdout": stdout, "stderr": stderr, "elapsed": elapsed}
        return self._result


def _write(project: Path, name: str, text: str) -> None:
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    project = tmp_path_factory.mktemp("surface")
    _write(project, "environment.py", "from mcp_bdd.environment import *  # noqa: F401,F403\n")
    _write(project, "steps/mcp_steps.py", "from mcp_bdd.steps import *  # noqa: F401,F403\n")
    _write(project, "mcp-bdd.toml", CONFIG)
    _write(project, "mini.py", MINI)
    _write(project, "features/common.feature", COMMON)
    _write(project, "features/auto/auto.feature", AUTO)
    _write(project, "features/legacy/legacy.feature", LEGACY)
    _write(project, "features/stdio/stdio.feature", STDIO)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(project), env.get("PYTHONPATH", "")]))
    env.pop("MCP_BDD_DEBUG", None)
    env["MCP_BDD_TEST_MARKER"] = MARKER  # inherited by every server process the runs start

    def start(name: str, *args: str) -> Run:
        out = project / f"{name}.json"
        command = [sys.executable, "-m", "behave", "--no-color", "-f", "json", "-o", str(out)]
        command += ["-f", "plain", "-o", str(out.with_suffix(".txt")), *args]
        proc = subprocess.Popen(
            command, cwd=project, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        return Run(name, proc, out)

    started = {
        "stdio": start("stdio", "features/stdio"),
        "auto": start("auto", "features/common.feature", "features/auto"),
        "legacy": start("legacy", "-D", "protocol=legacy", "features/common.feature", "features/legacy"),
    }
    yield started
    for run in started.values():
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.communicate()


def _check(run: Run, feature_texts: list[str]) -> None:
    result = run.result()
    scenarios = result["scenarios"]
    expected = [
        line.strip().removeprefix("Scenario: ")
        for text in feature_texts
        for line in text.splitlines()
        if line.strip().startswith("Scenario: ")
    ]
    assert sorted(scenarios) == sorted(expected), (result["stdout"][-3000:], result["stderr"][-3000:])
    problems: list[str] = []
    for name, outcome in scenarios.items():
        if name.startswith("pass ") and outcome["status"] != "passed":
            problems.append(f"{name}: {outcome['status']}\n{outcome['error']}")
        if name.startswith("fail "):
            if outcome["status"] not in ("failed", "error"):
                problems.append(f"{name}: expected a failure, got {outcome['status']}")
            for needle in EXPECTED_FAILURES.get(name, []):
                if needle not in outcome["error"]:
                    problems.append(f"{name}: the failure does not mention {needle!r}:\n{outcome['error']}")
    assert not problems, "\n\n".join(problems)


def test_2026_era_in_memory(runs: dict[str, Run]) -> None:
    _check(runs["auto"], [COMMON, AUTO])


def test_2025_era_in_memory(runs: dict[str, Run]) -> None:
    _check(runs["legacy"], [COMMON, LEGACY])


def test_stdio(runs: dict[str, Run]) -> None:
    _check(runs["stdio"], [STDIO])
    if all(run.proc.poll() is not None for run in runs.values()):
        assert _leftovers() == []


MARKER = f"mcp-bdd-surface-{os.getpid()}"


def _leftovers() -> list[str]:
    """Processes started by the runs (they carry MARKER in their environment) that are still alive."""
    import psutil

    found: list[str] = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if proc.environ().get("MCP_BDD_TEST_MARKER") == MARKER and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{proc.pid}: {' '.join(proc.info.get('cmdline') or [])}")
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def test_listen_streams_end_with_the_session() -> None:
    """2026-07-28: the connect-time stream and a resource stream are open, and close() ends both tasks."""
    from anyio.from_thread import start_blocking_portal

    from demo.shop import create_server
    from mcp_bdd.servers import InMemoryServer
    from mcp_bdd.session import Session, covers, listening, open_stream
    from mcp_bdd.transcript import Transcript

    with start_blocking_portal() as portal:
        handle = InMemoryServer("shop", create_server(), "demo.shop")
        session = Session(
            "shop", handle, portal=portal, transcript=Transcript(), timeout=5, startup_timeout=5, protocol="auto"
        )
        session.open()
        assert session.protocol_version == "2026-07-28"
        assert all(covers(session, kind) for kind in ("tools", "prompts", "resources"))
        stream = open_stream(session, uris=["shop://catalog"])
        assert stream.honors_uri("shop://catalog")
        session.call_tool("create_order", {"product_id": "PROD-123", "quantity": 1})
        assert session.timeline.wait_for(lambda m, p: p.get("uri") == "shop://catalog", 2)
        streams = list(listening(session).streams)
        assert session.close() == []
        assert len(streams) == 2 and not any(s.running for s in streams)  # both tasks ended with the session
        assert session.streams is None
        methods = [item.method for item in session.transcript.items]
        assert methods.count("subscriptions/listen") == 4  # two requests, two acknowledgments


def test_an_unscripted_server_request_gets_a_clear_error_and_is_recorded(tmp_path: Path) -> None:
    from behave_project import REPO as REPO_ROOT
    from behave_project import make_project, run_behave

    config = f"""
        [servers.rude]
        app = "tests.servers.rude:create_server"
        cwd = "{REPO_ROOT}"
        protocol = "legacy"
    """
    root = make_project(
        tmp_path,
        config,
        {
            "r.feature": """
        Feature: unscripted
          Scenario: the server asks for sampling the scenario did not declare
            Given the MCP server "rude" is running
            When I call the tool "ask_llm" with:
              | question |
              | 2+2?     |
            Then the result text contains "the scenario did not declare it"
            And the result text contains "Given the client answers sampling requests with"
            And the server requested sampling 0 times
    """
        },
    )
    run = run_behave(root, "-f", "mcp_bdd.report:LivingDocFormatter", "-o", "r.html", "-f", "plain")
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]
    # the refused request is in the step's transcript (and so in the report)
    assert "sampling/createMessage" in next(root.glob("*.json")).read_text()


OWN_STEP_READS_CHANGES = """
from behave import then


@then("my own step sees the tools change")
def step_own(context):
    session = context.mcp.sessions["shop"]
    assert session.timeline.wait_for(lambda m, p: m == "notifications/tools/list_changed", 2), session.timeline.counts()
"""


def _listen_requests(scenario: dict[str, Any]) -> int:
    """How many subscriptions/listen requests the transcript of a scenario (behave json) records."""
    import base64

    from mcp_bdd.transcript import TRANSCRIPT_MIME

    items = [
        item
        for step in scenario["steps"]
        for embedding in step.get("embeddings", [])
        if embedding["mime_type"].startswith(TRANSCRIPT_MIME)
        for item in json.loads(base64.b64decode(embedding["data"]))
    ]
    assert any(i["method"] == "tools/call" for i in items), items  # the transcript is there at all
    return sum(1 for i in items if i["method"] == "subscriptions/listen" and i["kind"] == "request")


def test_every_session_listens_for_change_notifications_from_connect_time(tmp_path: Path) -> None:
    """2026-07-28: every session opens the list-changed stream as it connects, whatever its
    scenario's steps are, so a project's hook or own step that reads `session.timeline` sees the
    changes a vocabulary step would (a stream opened late misses them: the protocol has no replay)."""
    from behave_project import REPO as REPO_ROOT
    from behave_project import make_project, run_behave

    config = f"""
        [servers.shop]
        app = "demo.shop:create_server"
        cwd = "{REPO_ROOT}"

        [servers.second]
        app = "demo.shop:create_server"
        cwd = "{REPO_ROOT}"

        [servers.kept]
        app = "demo.shop:create_server"
        cwd = "{REPO_ROOT}"
        scope = "feature"
    """
    change = """
            When I call the tool "enable_admin_tools"
            Then the tool call succeeds
    """
    root = make_project(
        tmp_path,
        config,
        {
            "l.feature": f"""
        Feature: listening
          Scenario: quiet
            Given the MCP server "shop" is running{change}
          Scenario: reader
            Given the MCP server "shop" is running{change}
            And I receive a "tools list changed" notification within 2 seconds
          Scenario: own step
            Given the MCP server "shop" is running{change}
            And my own step sees the tools change
          Scenario: kept for the feature
            Given the MCP server "kept" is running{change}
          Scenario: two servers, the second one read
            Given the MCP server "shop" is running
            And the MCP server "second" is running
            When I call the tool "enable_admin_tools" on "second"
            Then I receive a "tools list changed" notification on "second" within 2 seconds
    """
        },
    )
    (root / "steps" / "own.py").write_text(OWN_STEP_READS_CHANGES)
    run = run_behave(root, "-f", "json", "-o", "behave.json", "-f", "plain")
    assert run.counts()["passed"] == 5, run.failures()
    scenarios = {s["name"]: s for s in json.loads((root / "behave.json").read_text())[0]["elements"]}
    listens = {name: _listen_requests(scenario) for name, scenario in scenarios.items()}
    # each session once, whoever reads its notifications; the feature-scoped one in the scenario that opened it
    expected = {
        "quiet": 1,
        "reader": 1,
        "own step": 1,
        "kept for the feature": 1,
        "two servers, the second one read": 2,
    }
    assert listens == expected, listens
