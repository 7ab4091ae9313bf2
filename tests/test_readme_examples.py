"""The README's "Servers written with any framework" examples, run as written.

Every block marked `<!-- example: NAME -->` in README.md is read from the README itself (not
copied here), written into a throwaway project and run with behave, so the README cannot drift
from what works: fastmcp 4, a low-level Server, a factory taking fakes, a server pinned to
mcp<2 in its own venv (what `init` writes for it), `uv run`, `npx` and a Node server.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from behave_project import behave_env, make_project, run_behave
from userenv import REPO, Venv

pytestmark = pytest.mark.slow


def _examples() -> dict[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = {m[1]: m[2] for m in re.finditer(r"<!-- example: ([\w-]+) -->\n```\w*\n(.*?)```", text, re.S)}
    assert found, "no <!-- example: ... --> blocks in README.md"
    return found


EXAMPLES = _examples()


def _project(root: Path, config: str, features: dict[str, str], files: dict[str, str]) -> Path:
    make_project(root, config, features)
    for name, body in files.items():
        (root / name).write_text(body)
    return root


def _green(run_root: Path, *args: str, scenarios: int = 1) -> None:
    run = run_behave(run_root, *args)
    assert run.returncode == 0, run.output[-4000:]
    assert run.counts()["passed"] == scenarios, run.output[-4000:]


RECIPES_FEATURE = """\
Feature: Recipes
  Scenario: Scaling
    Given the MCP server "recipes" is running
    When I call the tool "scale" with:
      | grams | servings |
      | 150   | 4        |
    Then the result at "$.result" is 600
"""


@pytest.mark.parametrize("transport", ["in-memory", "stdio"])
def test_the_fastmcp_example(tmp_path: Path, transport: str) -> None:
    pytest.importorskip("fastmcp")
    files = {"recipes.py": EXAMPLES["fastmcp-server"]}
    root = _project(tmp_path, EXAMPLES["fastmcp-config"], {"recipes.feature": RECIPES_FEATURE}, files)
    _green(root, "-D", f"transport={transport}")


ECHO_FEATURE = """\
Feature: Echo
  Scenario: Echo
    Given the MCP server "echo" is running
    When I call the tool "echo" with:
      | text  |
      | hello |
    Then the result text is "echo: hello"
"""


@pytest.mark.parametrize("transport", ["in-memory", "streamable-http"])
def test_the_low_level_server_example(tmp_path: Path, transport: str) -> None:
    files = {"echo_server.py": EXAMPLES["lowlevel-server"]}
    root = _project(tmp_path, EXAMPLES["lowlevel-config"], {"echo.feature": ECHO_FEATURE}, files)
    _green(root, "-D", f"transport={transport}")


def test_the_factory_taking_fakes_example(tmp_path: Path) -> None:
    config = '[servers.payments]\napp = "payments_server:create_server"\n'
    files = {"payments_server.py": EXAMPLES["factory-server"]}
    root = _project(tmp_path, config, {"payments.feature": EXAMPLES["factory-feature"]}, files)
    _green(root)


WEATHER_SERVER = '''\
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("weather")


@mcp.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather for a city."""
    return f"Sunny in {city}"


if __name__ == "__main__":
    mcp.run()
'''

WEATHER_FEATURE = """\
Feature: Weather
  Scenario: Sunny
    Given the MCP server "weather" is running
    When I call the tool "forecast" with:
      | city  |
      | Paris |
    Then the result text is "Sunny in Paris"
"""


def test_the_mcp_1x_example_is_what_init_writes(tmp_path: Path, mcp1_venv: Venv) -> None:
    assert '"mcp>=1.20,<2"' in EXAMPLES["mcp1-shell"]  # the same pin as the venv built here
    (tmp_path / ".venv").symlink_to(mcp1_venv.path)
    (tmp_path / "server.py").write_text(WEATHER_SERVER)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "weather"\nversion = "0.1.0"\n')
    init = subprocess.run(
        [sys.executable, "-m", "mcp_bdd.cli", "init"], cwd=tmp_path, env=behave_env(), capture_output=True, text=True
    )
    assert init.returncode == 0, init.stdout + init.stderr
    pyproject = (tmp_path / "pyproject.toml").read_text()
    command_line = next(line for line in EXAMPLES["mcp1-config"].splitlines() if line.startswith("command"))
    assert command_line.split("#")[0].strip() in pyproject, pyproject
    (tmp_path / "features" / "weather.feature").write_text(WEATHER_FEATURE)
    _green(tmp_path, scenarios=2)


def test_the_uv_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is in the dev extra")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "weather"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = ["mcp>=1.20,<2"]\n'
    )
    env = {**os.environ, "UV_PYTHON": getattr(sys, "_base_executable", sys.executable)}
    env.pop("VIRTUAL_ENV", None)
    locked = subprocess.run([uv, "lock", "-q"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert locked.returncode == 0, locked.stderr
    synced = subprocess.run(
        [uv, "sync", "-q", "--frozen"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert synced.returncode == 0, synced.stderr
    (tmp_path / "server.py").write_text(WEATHER_SERVER)
    root = _project(tmp_path, EXAMPLES["uv-config"], {"weather.feature": WEATHER_FEATURE}, {})
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(uv).parent), os.environ.get("PATH", "")]))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    _green(root)


NPX_FEATURE = """\
Feature: Node servers
  Scenario: The reference server through npx
    Given the MCP server "everything" is running
    When I call the tool "echo" with:
      | message |
      | hello   |
    Then the result text contains "hello"

  Scenario: A TypeScript-SDK server
    Given the MCP server "notes" is running
    When I call the tool "add_note" with:
      | text  |
      | milk  |
    Then the result text is "noted: milk (1 notes)"
"""


def test_the_npx_and_node_example(tmp_path: Path) -> None:
    if shutil.which("npx") is None or not (REPO / "node_modules" / ".bin" / "mcp-server-everything").exists():
        pytest.skip("npx and this repo's node_modules (npm ci) are needed")
    (tmp_path / "node_modules").symlink_to(REPO / "node_modules")
    shutil.copy(REPO / "tests" / "node_server" / "server.mjs", tmp_path / "server.mjs")
    (tmp_path / "package.json").write_text('{"name": "notes", "type": "module"}\n')
    root = _project(tmp_path, EXAMPLES["npx-config"], {"node.feature": NPX_FEATURE}, {})
    _green(root, scenarios=2)
