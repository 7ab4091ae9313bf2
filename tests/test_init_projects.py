"""`mcp-bdd init` + `behave` from the wheel, in the projects people have (the issue's "Done when").

Each project lives in a temp folder outside the clone; mcp-bdd runs from a fresh venv holding
only the wheel built from this checkout (tests/userenv.py). The empty folder is covered by
tests/test_packaging.py. Here:

- a standard behave project (features/steps/, features/environment.py with its own hooks);
- a fastmcp 4 project (an in-memory app, fastmcp installed beside mcp-bdd);
- a server on the 1.x SDK in its own .venv (mcp<2), run as a command by that interpreter;
- a Node server on the TypeScript SDK (tests/node_server, node_modules from this repo's lock).

Every "Next:" hint init prints is run too: a hint that does not work is a bug.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from userenv import REPO, Venv, wheel_of

pytestmark = pytest.mark.slow


def _init_and_behave(venv: Venv, project: Path, scenarios: int) -> str:
    """`mcp-bdd init`, then `behave` and every command its Next: hint names; returns init's output."""
    init = venv.run(project, "mcp-bdd", "init").stdout
    run = venv.run(project, "behave", "--no-color", "-f", "progress", "features/", check=False)
    assert run.returncode == 0, f"init said:\n{init}\nbehave said:\n{run.stdout}\n{run.stderr}"
    assert f"{scenarios} scenario{'s' if scenarios != 1 else ''} passed, 0 failed" in run.stdout, run.stdout
    hint = re.search(r"\(or: (mcp-bdd run[^)]*)\)", init)
    assert hint, init
    matrix = venv.run(project, *hint.group(1).split(), check=False)
    assert matrix.returncode == 0, f"the hint `{hint.group(1)}` failed:\n{matrix.stdout}\n{matrix.stderr}"
    report = venv.run(project, "behave", "-f", "living-doc", "-o", "reports/living-doc.html", "features/", check=False)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (project / "reports" / "living-doc.html").stat().st_size > 10_000
    again = venv.run(project, "mcp-bdd", "init").stdout
    assert "created" not in again and "merged" not in again and "kept" in again, again
    return init


def test_a_standard_behave_project_keeps_its_hooks(user_venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "features" / "steps").mkdir(parents=True)
    (tmp_path / "features" / "environment.py").write_text(
        "from pathlib import Path\n\n\n"
        "def before_all(context):\n"
        "    Path('hooks.log').write_text('before_all\\n')\n\n\n"
        "def after_scenario(context, scenario):\n"
        "    with open('hooks.log', 'a') as log:\n"
        "        log.write(f'after_scenario {scenario.name} sessions={len(context.mcp.sessions)}\\n')\n"
    )
    (tmp_path / "features" / "steps" / "team_steps.py").write_text(
        "from behave import then\n\n\n"
        '@then("the team\'s own step sees the server")\n'
        "def step_impl(context):\n"
        "    assert context.mcp.sessions\n"
    )
    (tmp_path / "features" / "team.feature").write_text(
        "Feature: The team's own steps\n"
        "  Scenario: Mixed with mcp-bdd's\n"
        '    Given the MCP server "example" is running\n'
        "    Then the team's own step sees the server\n"
    )
    init = _init_and_behave(user_venv, tmp_path, scenarios=3)
    assert "behave uses features/ (found steps/ there)" in init
    assert "merged     features/environment.py" in init
    assert (tmp_path / "features" / "steps" / "mcp_steps.py").is_file()
    assert not (tmp_path / "steps").exists() and not (tmp_path / "environment.py").exists()
    log = (tmp_path / "hooks.log").read_text()
    assert log.startswith("before_all\n"), log
    assert "after_scenario Mixed with mcp-bdd's sessions=1" in log, log  # ran before mcp-bdd's teardown


FASTMCP_SERVER = '''\
from fastmcp import FastMCP

mcp = FastMCP("recipes")


@mcp.tool
def scale(grams: int, servings: int) -> int:
    """Scale a recipe quantity for a number of servings."""
    return grams * servings
'''


def test_a_fastmcp_4_project_is_an_in_memory_app(fastmcp_venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "recipes"\nversion = "0.1.0"\n')
    (tmp_path / "recipes.py").write_text(FASTMCP_SERVER)
    init = _init_and_behave(fastmcp_venv, tmp_path, scenarios=1)
    assert "(fastmcp 4)" in init and "mcp-bdd run --transport in-memory,stdio" in init
    assert 'app = "recipes:mcp"' in (tmp_path / "pyproject.toml").read_text()


MCP1_SERVER = '''\
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("weather")


@mcp.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather for a city."""
    return f"Sunny in {city}"


if __name__ == "__main__":
    mcp.run()
'''


def test_an_mcp_1x_project_runs_as_a_command_from_its_own_venv(
    user_venv: Venv, mcp1_venv: Venv, dist: Path, tmp_path: Path
) -> None:
    (tmp_path / ".venv").symlink_to(mcp1_venv.path)  # the project's own venv, pinned to mcp<2
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "weather"\nversion = "0.1.0"\ndependencies = ["mcp>=1.20,<2"]\n'
    )
    (tmp_path / "server.py").write_text(MCP1_SERVER)
    init = _init_and_behave(user_venv, tmp_path, scenarios=1)
    assert "written for the 1.x MCP SDK" in init and "--transport in-memory" not in init
    config = (tmp_path / "pyproject.toml").read_text()
    assert 'command = [".venv/bin/python", "server.py"]\nprotocol = "legacy"   # ' in config, config
    (tmp_path / "features" / "forecast.feature").write_text(
        "Feature: Forecast\n"
        "  Scenario: Sunny\n"
        '    Given the MCP server "weather" is running\n'
        '    When I call the tool "forecast" with:\n'
        "      | city  |\n"
        "      | Paris |\n"
        '    Then the result text is "Sunny in Paris"\n'
    )
    run = user_venv.run(tmp_path, "behave", "--no-color", "-f", "progress", "features/")
    assert "2 scenarios passed, 0 failed" in run.stdout, run.stdout
    workflow = (tmp_path / ".github" / "workflows" / "mcp-bdd.yml").read_text()
    assert "python -m venv .venv\n          .venv/bin/pip install 'mcp>=1.20,<2'\n" in workflow, workflow
    # mcp-bdd as this venv got it (the wheel: direct_url.json), not `pip install mcp-bdd`, which fails
    wheel = re.search(r"\.\./mcp-bdd-env/bin/pip install (\S+)\n", workflow)
    assert wheel is not None and Path(wheel.group(1)).name == wheel_of(dist).name, workflow
    assert "pipx install mcp-bdd" not in init and f"bin/pip install {wheel.group(1)}`" in init, init
    assert "../mcp-bdd-env/bin/mcp-bdd run" in workflow


def test_a_node_server_runs_as_a_command(user_venv: Venv, tmp_path: Path) -> None:
    if shutil.which("node") is None or not (REPO / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip("node and this repo's node_modules (npm ci) are needed")
    project = tmp_path / "notes"
    shutil.copytree(REPO / "tests" / "node_server", project)
    (project / "node_modules").symlink_to(REPO / "node_modules")  # what `npm install` would have made
    init = _init_and_behave(user_venv, project, scenarios=1)
    assert 'server "notes-mcp"' in init
    assert 'command = ["node", "server.mjs"]' in (project / "mcp-bdd.toml").read_text()
    assert "-f living-doc" in init and (project / "behave.ini").is_file()
    workflow = (project / ".github" / "workflows" / "mcp-bdd.yml").read_text()
    assert "actions/setup-node" in workflow and "npm install" in workflow  # no package-lock.json here
