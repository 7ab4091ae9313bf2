"""Long-lived sessions, fakes shared with them, server targeting, and servers that must die with the run."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import psutil
import pytest
from behave_project import REPO, SHOP, make_project, python_cmd, run_behave, start_behave

pytestmark = pytest.mark.usefixtures("no_leftover_processes")

PAY = """
  Scenario: pays {n}
    Given the fake HTTP service "payments" responds to POST "/charges" with status 201
    When I call the tool "create_order" with:
      | product_id | quantity |
      | PROD-123   | 1        |
    And I remember the result at "$.id" as "order"
    And I call the tool "pay_order" with:
      | order_id |
      | ${{order}} |
    Then the tool call succeeds
    And the fake HTTP service "payments" received 1 request to "/charges"
"""


def test_feature_scoped_server_shares_its_fakes_with_every_scenario(tmp_path: Path) -> None:
    config = SHOP + 'scope = "feature"\nenv = { PAYMENTS_URL = "${fake.payments.url}" }\n'
    feature = 'Feature: shared\n  Background:\n    Given the MCP server "shop" is running\n'
    feature += "".join(PAY.format(n=n) for n in range(3))
    root = make_project(tmp_path, config, {"s.feature": feature})
    for transport in ("in-memory", "stdio"):
        run = run_behave(root, "-D", f"transport={transport}")
        # each scenario sees exactly its own request: stubs and records are fresh per scenario
        assert run.counts() == {"passed": 3, "failed": 0, "error": 0, "skipped": 0}, (transport, run.output[-3000:])


def test_a_crashed_long_lived_server_is_restarted_for_the_next_scenario(tmp_path: Path) -> None:
    config = f'scope = "feature"\n[servers.crash]\ncommand = {python_cmd("demo.crash")}\ncwd = "{REPO}"\n'
    root = make_project(
        tmp_path,
        config,
        {
            "c.feature": """
        Feature: crash
          Scenario: crashes it
            Given the MCP server "crash" is running
            When I call the tool "crash"
            Then the tool call fails with an error mentioning "server went away"

          Scenario: a fresh one answers
            Given the MCP server "crash" is running
            When I call the tool "hello"
            Then the tool call succeeds
    """
        },
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 2, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


def test_naming_a_server_does_not_change_the_current_one(tmp_path: Path) -> None:
    config = SHOP + f'[servers.other]\napp = "demo.shop:create_server"\ncwd = "{REPO}"\n'
    root = make_project(
        tmp_path,
        'server = "shop"\n' + config,
        {
            "o.feature": """
        Feature: targeting
          Scenario: on another server, then back to the current one
            Given the MCP server "shop" is running
            When I call the tool "create_order" on "other" with:
              | product_id | quantity |
              | PROD-123   | 10       |
            And I call the tool "check_stock" with:
              | product_id |
              | PROD-123   |
            Then the result at "$.quantity" is 10
    """
        },
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


def test_a_failed_log_level_request_does_not_hang_the_run(tmp_path: Path) -> None:
    config = f'[servers.time]\ncommand = ["{Path(sys.executable).parent / "mcp-server-time"}"]\nprotocol = "legacy"\n'
    root = make_project(
        tmp_path,
        config,
        {
            "l.feature": """
        Feature: no logging capability
          Scenario: asks for logs from a server without logging
            Given the log level is "debug"
            And the MCP server "time" is running
          Scenario: the next scenario runs
            Given the MCP server "time" is running
            When I list the tools
            Then the tool list includes "get_current_time"
    """
        },
    )
    run = run_behave(root, timeout=120)
    assert run.counts()["passed"] == 1


def test_module_level_configuration_sees_the_scenario_environment_with_the_pool(tmp_path: Path) -> None:
    (tmp_path / "envserver.py").write_text(
        "import os\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "AT_IMPORT = os.environ.get('FLAVOUR', '-')\n"
        "def create_server():\n"
        "    server = MCPServer('env')\n"
        "    @server.tool()\n"
        "    def flavour() -> str:\n"
        "        return AT_IMPORT\n"
        "    return server\n"
    )
    config = f'[servers.env]\napp = "envserver:create_server"\ncwd = "{tmp_path}"\nenv = {{ FLAVOUR = "mint" }}\n'
    root = make_project(
        tmp_path / "p",
        config,
        {
            "e.feature": """
        Feature: env at import
          Scenario: module-level configuration
            Given the MCP server "env" is running
            When I call the tool "flavour"
            Then the result text is "mint"
    """
        },
    )
    for pool in ("true", "false"):
        run = run_behave(root, "-D", "transport=stdio", "-D", f"pool={pool}")
        assert run.counts()["passed"] == 1, (pool, run.output[-3000:])


@pytest.mark.parametrize("pool", ["true", "false"])
def test_servers_die_with_a_killed_run(tmp_path: Path, pool: str) -> None:
    """kill -9 of behave runs no hook at all: the servers' lifeline (PDEATHSIG) must end them."""
    root = make_project(
        tmp_path,
        SHOP,
        {
            "k.feature": """
        Feature: killed
          Scenario: long
            Given the MCP server "shop" is running over streamable HTTP
            When I call the tool "slow" with:
              | seconds |
              | 20      |
    """
        },
    )
    proc = start_behave(root, "-D", f"pool={pool}")

    def listening() -> bool:
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                if any(c.status == psutil.CONN_LISTEN for c in child.net_connections(kind="tcp")):
                    return True
            except psutil.Error:
                continue
        return False

    deadline = time.monotonic() + 120
    while not listening():  # the server is up (its port listens): an event another process brings about
        assert time.monotonic() < deadline and proc.poll() is None, "the server never started listening"
        time.sleep(0.05)
    servers = [p for p in psutil.Process(proc.pid).children(recursive=True)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    _gone, alive = psutil.wait_procs(servers, timeout=10)
    assert not alive, [p.cmdline() for p in alive]


def test_a_shared_fake_database_outlives_the_scenario_that_created_it(tmp_path: Path) -> None:
    config = SHOP + 'scope = "feature"\nenv = { SHOP_DB = "${fake.shop.path}" }\n'
    scenario = """
  Scenario: seeded {n}
    Given the MCP server "shop" is running
    And the table "inventory" of the fake database "shop" contains:
      | product_id | quantity | price |
      | PROD-{n}   | {n}      | 1.0   |
    When I call the tool "check_stock" with:
      | product_id |
      | PROD-{n}   |
    Then the result at "$.quantity" is {n}
"""
    feature = "Feature: shared db\n" + "".join(scenario.format(n=n) for n in (1, 2, 3))
    root = make_project(tmp_path, config, {"d.feature": feature})
    run = run_behave(root)
    assert run.counts() == {"passed": 3, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]


def test_the_server_name_check_ignores_scenarios_excluded_by_tags(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        SHOP,
        {
            "t.feature": """
        Feature: tags
          Scenario: runs
            Given the MCP server "shop" is running
          @wip
          Scenario: not yet configured
            Given the MCP server "payments-v2" is running
    """
        },
    )
    run = run_behave(root, "--tags", "not @wip")
    assert run.counts()["passed"] == 1, run.output[-3000:]
    assert "payments-v2" not in run.stderr


def test_prestarted_command_servers_are_used_and_cleaned_up(tmp_path: Path) -> None:
    config = f'prestart = 2\n[servers.time]\ncommand = ["{Path(sys.executable).parent / "mcp-server-time"}"]\n'
    scenario = """
  Scenario: call {n}
    Given the MCP server "time" is running
    When I call the tool "get_current_time" with:
      | timezone |
      | UTC      |
    Then the tool call succeeds
"""
    root = make_project(
        tmp_path, config, {"p.feature": "Feature: prestart\n" + "".join(scenario.format(n=n) for n in range(4))}
    )
    run = run_behave(root)
    assert run.counts() == {"passed": 4, "failed": 0, "error": 0, "skipped": 0}, run.output[-3000:]
    assert "Event loop is closed" not in run.output


def test_a_run_that_cannot_start_its_lifeline_leaves_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's directory is swept by the lifeline; without one, nobody else would remove it."""
    import tempfile

    import mcp_bdd.runtime._runtime
    from mcp_bdd.config import load_config

    def no_lifeline() -> None:
        raise OSError("cannot start the lifeline (out of processes)")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(mcp_bdd.runtime._runtime, "lifeline", no_lifeline)
    config = load_config(tmp_path, data={"servers": {"shop": {"app": "demo.shop:create_server"}}})
    with pytest.raises(OSError, match="out of processes"):
        mcp_bdd.runtime.Runtime(config)
    assert list(tmp_path.iterdir()) == []


def test_kill_all_reaches_the_group_a_reaped_process_leaves_behind() -> None:
    """`mcp-bdd run`'s interrupt path notes its workers' descendants, then kills them and the groups
    they lead. A noted process that exited and was reaped (a server killed with its worker) leaves
    its helpers alive in its group: they must go too, which a check of "is the leader still
    running" alone would skip."""
    import subprocess

    from mcp_bdd._process_tree import kill_all

    leader = subprocess.Popen(
        ["sh", "-c", "sleep 600 & echo $!; read line"],  # exits when its stdin closes
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # leads its own group, as a server does
    )
    assert leader.stdout is not None and leader.stdin is not None
    helper = psutil.Process(int(leader.stdout.readline()))
    noted = psutil.Process(leader.pid)
    leader.stdin.close()
    leader.wait(timeout=60)  # exited and reaped: its pid names only its group now
    try:
        assert helper.is_running() and os.getpgid(helper.pid) == leader.pid
        kill_all([noted], groups=True)
        _gone, alive = psutil.wait_procs([helper], timeout=60)
        assert not alive, "the helper left in the reaped leader's group is still running"
    finally:
        if helper.is_running():
            helper.kill()


@pytest.mark.usefixtures("own_lifeline")  # the run's lifeline, started in this process, ends with the test
def test_the_run_s_teardown_problems_survive_an_event_loop_that_cannot_be_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop of the run's event loop that raises (no thread can start while the interpreter shuts
    down) is one more problem of the run's end, not one that replaces the others."""
    from mcp_bdd.config import load_config
    from mcp_bdd.runtime import Runtime

    config = load_config(tmp_path, data={"servers": {"shop": {"app": "demo.shop:create_server"}}})
    runtime = Runtime(config)
    runtime.at_run_end(lambda: ["the browser did not close"])
    real_stop = runtime._loop.stop

    def refused() -> None:
        real_stop()
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(runtime._loop, "stop", refused)
    problems = runtime.close()
    assert problems[0] == "the browser did not close", problems
    assert "RuntimeError: can't create new thread" in problems[-1], problems
    assert not runtime.root.exists()
