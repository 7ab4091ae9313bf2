"""What `init` reads from a project (mcp_bdd.cli.detect) and how it merges into the project's files.

Fast and in-process: behave's layout rule, where formatter aliases go, merging environment.py
and behave config files, hook chaining order, server detection by kind, and the CLI's `--name`
and "Next:" hints. The end-to-end runs (wheel + venv + behave) are in test_init_projects.py.
"""

from __future__ import annotations

import io
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mcp_bdd.chain import chain_hooks
from mcp_bdd.cli.detect import behave_layout, detect_server, formatter_config, go_module, node_project, project_python
from mcp_bdd.cli.scaffold import (
    ENVIRONMENT_PY,
    _aliases_in,
    init,
    merge_default_tags,
    merge_environment,
    merge_formatters,
)
from mcp_bdd.errors import UsageError
from mcp_bdd.report.formatter import ALIASES as FORMATTER_ALIASES

# ---------------------------------------------------------------------------------------------
# behave's layout


def test_a_new_project_gets_steps_beside_features(tmp_path: Path) -> None:
    layout = behave_layout(tmp_path)
    assert layout.base == tmp_path.resolve() and layout.steps == tmp_path.resolve() / "steps"
    assert layout.features == tmp_path.resolve() / "features"


def test_features_steps_is_behaves_default_layout(tmp_path: Path) -> None:
    (tmp_path / "features" / "steps").mkdir(parents=True)
    (tmp_path / "steps").mkdir()  # behave looks in features/ first, so this one is ignored
    layout = behave_layout(tmp_path)
    assert layout.base == tmp_path.resolve() / "features"
    assert layout.environment == tmp_path.resolve() / "features" / "environment.py"


def test_an_environment_file_alone_decides_the_base_too(tmp_path: Path) -> None:
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "environment.py").write_text("")
    assert behave_layout(tmp_path).base == tmp_path.resolve() / "features"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.behave]\npaths = ["spec/acceptance"]\nsteps_dir = "step_defs"\n'),
        ("behave.ini", "[behave]\npaths = spec/acceptance\nsteps_dir = step_defs\n"),
    ],
)
def test_configured_paths_and_steps_dir_are_honoured(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "spec" / "step_defs").mkdir(parents=True)
    (tmp_path / "spec" / "acceptance").mkdir()
    layout = behave_layout(tmp_path)
    assert layout.features == tmp_path.resolve() / "spec" / "acceptance"
    assert layout.steps == tmp_path.resolve() / "spec" / "step_defs"  # found one level up, as behave does


# ---------------------------------------------------------------------------------------------
# formatter aliases


def test_aliases_go_where_behave_reads_them_last(tmp_path: Path) -> None:
    assert formatter_config(tmp_path) == tmp_path / "behave.ini"
    (tmp_path / "pyproject.toml").write_text("")
    assert formatter_config(tmp_path) == tmp_path / "pyproject.toml"
    (tmp_path / "setup.cfg").write_text("")  # an .ini/.cfg file resets pyproject's aliases in behave
    assert formatter_config(tmp_path) == tmp_path / "setup.cfg"


def test_aliases_are_added_to_toml_without_touching_the_users_own() -> None:
    current = '[project]\nname = "x"\n\n[tool.behave.formatters]\nliving-doc = "mine:Formatter"\nhtml = "x:Y"\n'
    merged = merge_formatters(current, toml=True)
    table = tomllib.loads(merged)["tool"]["behave"]["formatters"]
    assert table == {**FORMATTER_ALIASES, "living-doc": "mine:Formatter", "html": "x:Y"}
    assert merge_formatters(merged, toml=True) == merged
    fresh = merge_formatters('[project]\nname = "x"\n', toml=True)
    assert tomllib.loads(fresh)["tool"]["behave"]["formatters"] == FORMATTER_ALIASES


def test_aliases_are_added_to_ini_files() -> None:
    merged = merge_formatters("[metadata]\nname = x\n\n[behave.formatters]\nhtml = x:Y\n", toml=False)
    assert _aliases_in(merged, toml=False) == {"html", *FORMATTER_ALIASES}
    assert merge_formatters(merged, toml=False) == merged
    assert _aliases_in(merge_formatters("", toml=False), toml=False) == set(FORMATTER_ALIASES)


@pytest.mark.parametrize(
    ("name", "current"),
    [
        ("behave.ini", ""),
        ("behave.ini", "[behave]\nformat = progress\n\n[behave.formatters]\nhtml = x:Y\n"),
        ("setup.cfg", "[metadata]\nname = x\n"),
        ("pyproject.toml", '[project]\nname = "x"\n'),
        ("pyproject.toml", '[tool.behave]\nformat = ["progress"]\n\n[tool.behave.formatters]\nhtml = "x:Y"\n'),
        ("pyproject.toml", '[tool.behave.formatters]\nhtml = "x:Y"\n'),  # [tool.behave] after its sub-table
    ],
)
def test_scaffold_leaves_wip_out_of_plain_runs_as_behave_reads_it(tmp_path: Path, name: str, current: str) -> None:
    """`default_tags = not @wip`, read back by behave's own reader; a project's own value is kept."""
    from behave.configuration import read_configuration

    path = tmp_path / name
    path.write_text(merge_default_tags(current, toml=name.endswith(".toml")))
    assert read_configuration(str(path))["default_tags"] == ["not @wip"], path.read_text()
    assert merge_default_tags(path.read_text(), toml=name.endswith(".toml")) == path.read_text()
    if "format =" in current:
        assert read_configuration(str(path)).get("format") == ["progress"]
    own = "[behave]\ndefault_tags = @smoke\n"
    assert merge_default_tags(own, toml=False) == own


# ---------------------------------------------------------------------------------------------
# environment.py


def test_environment_py_is_written_kept_or_chained() -> None:
    assert merge_environment("") == ENVIRONMENT_PY
    wired = "from mcp_bdd.environment import *  # noqa\n\ndef before_tag(context, tag):\n    pass\n"
    assert merge_environment(wired) == wired
    own = "def before_scenario(context, scenario):\n    context.mine = 1\n"
    merged = merge_environment(own)
    assert merged.startswith(own) and merged.rstrip().endswith("chain_hooks(globals())")
    assert merge_environment(merged) == merged


def test_chained_hooks_run_ours_first_in_and_theirs_first_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_bdd.environment as ours

    calls: list[str] = []
    for name in ours.__all__:
        monkeypatch.setattr(ours, name, lambda *a, _n=name: calls.append(f"mcp-bdd {_n}"))

    def after_scenario(context: Any, scenario: Any) -> None:
        calls.append("user after_scenario")
        raise RuntimeError("the user's hook failed")

    namespace: dict[str, Any] = {
        "before_scenario": lambda context, scenario: calls.append("user before_scenario"),
        "after_scenario": after_scenario,
    }
    chain_hooks(namespace)
    chain_hooks(namespace)  # idempotent: never wrapped twice
    namespace["before_scenario"](None, None)
    with pytest.raises(RuntimeError):
        namespace["after_scenario"](None, None)
    namespace["before_all"](None)
    assert calls == [
        "mcp-bdd before_scenario",
        "user before_scenario",
        "user after_scenario",
        "mcp-bdd after_scenario",  # runs even though the user's hook raised
        "mcp-bdd before_all",
    ]


# ---------------------------------------------------------------------------------------------
# detection


def test_a_1x_sdk_server_is_recognised_by_its_import_or_its_pin(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(
        "from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP('weather')\n\nif __name__ == '__main__':\n    mcp.run()\n"
    )
    best, _ = detect_server(tmp_path)
    assert best is not None and best.sdk == "v1" and not best.in_process and best.has_main and best.label == "weather"
    (tmp_path / "server.py").write_text("from mcp.server.lowlevel import Server\n\nserver = Server('x')\n")
    best, _ = detect_server(tmp_path)
    assert best is not None and best.sdk == "v2"
    (tmp_path / "requirements.txt").write_text("mcp[cli]<2\nhttpx\n")
    best, _ = detect_server(tmp_path)
    assert best is not None and best.sdk == "v1"


def test_a_fastmcp_4_server_runs_in_process(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp")
    (tmp_path / "app.py").write_text("from fastmcp import FastMCP\n\nmcp = FastMCP('x')\n")
    best, _ = detect_server(tmp_path)
    assert best is not None and best.sdk == "fastmcp" and best.in_process and best.spec == "app:mcp"


def test_the_projects_own_interpreter(tmp_path: Path) -> None:
    assert not project_python(tmp_path).found
    (tmp_path / "uv.lock").write_text("")
    assert project_python(tmp_path).argv == ["uv", "run", "--frozen", "python"]
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("")
    assert project_python(tmp_path).argv == [".venv/bin/python"]  # relative: the config stays portable


@pytest.mark.parametrize(
    ("package", "command"),
    [
        ({"bin": {"x": "./build/index.js"}}, ["node", "build/index.js"]),
        ({"main": "dist/server.js"}, ["node", "dist/server.js"]),
        ({"scripts": {"start": "node --enable-source-maps out/main.js"}}, ["node", "out/main.js"]),
    ],
)
def test_a_node_server_entry_point(tmp_path: Path, package: dict[str, Any], command: list[str]) -> None:
    deps = {"dependencies": {"@modelcontextprotocol/sdk": "^1.0.0"}}
    (tmp_path / "package.json").write_text(json.dumps({"name": "@acme/files", **package, **deps}))
    node = node_project(tmp_path)
    assert node is not None and node.command == command and node.name == "files" and not node.built
    (tmp_path / "package.json").write_text(json.dumps({"name": "web", **package}))  # no MCP SDK: not a server
    assert node_project(tmp_path) is None


def test_a_go_server(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text(
        "module github.com/acme/mcp-files\n\nrequire github.com/mark3labs/mcp-go v0.30.0\n"
    )
    assert go_module(tmp_path) == "github.com/acme/mcp-files"


# ---------------------------------------------------------------------------------------------
# the command


def _init(root: Path, **kwargs: Any) -> str:
    out = io.StringIO()
    options: dict[str, Any] = {"command": None, "url": None, "app": None, "force": False, **kwargs}
    init(root, out=out, **options)
    return out.getvalue()


def test_name_and_hints_for_a_command_server(tmp_path: Path) -> None:
    said = _init(tmp_path, command="mcp-server-time --local-timezone UTC", name="clock")
    assert 'server = "clock"' in (tmp_path / "mcp-bdd.toml").read_text()
    assert 'Given the MCP server "clock" is running' in (tmp_path / "features" / "example.feature").read_text()
    assert "--transport" not in said and "(or: mcp-bdd run)" in said  # stdio is all a command serves
    app_project = tmp_path / "app"
    app_project.mkdir()
    assert "(or: mcp-bdd run --transport in-memory,stdio)" in _init(app_project)  # an app serves every transport
    with pytest.raises(UsageError, match='--name "My Server"'):
        _init(tmp_path, name="My Server")


def test_a_rerun_says_what_it_kept_and_never_touches_edited_files(tmp_path: Path) -> None:
    _init(tmp_path)
    feature = tmp_path / "features" / "example.feature"
    feature.write_text("Feature: edited by the team\n")
    (tmp_path / "mcp-bdd.toml").write_text((tmp_path / "mcp-bdd.toml").read_text() + "timeout = 5.0\n")
    said = _init(tmp_path)
    assert "kept the configuration there" in said
    assert "created" not in said and said.count("kept ") >= 6, said
    assert feature.read_text() == "Feature: edited by the team\n"


@pytest.mark.parametrize(
    ("requirement", "v1"),
    [
        ('"mcp>=1.20,<2"', True),
        ('"mcp[cli]>=1.2.0,<2.0.0"', True),
        ("mcp==1.9.0", True),
        ("mcp~=1.2", True),
        ('"mcp>=2.3,<3"', False),
        ("mcp>=1.0", False),  # allows 2.x: the import decides
        ('"mcp-server-time<2"', False),  # another package
    ],
)
def test_which_pins_mean_the_1x_sdk(tmp_path: Path, requirement: str, v1: bool) -> None:
    if requirement.startswith('"'):
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = [{requirement}]\n')
    else:
        (tmp_path / "requirements.txt").write_text(f"{requirement}\nhttpx\n")
    (tmp_path / "server.py").write_text("from mcp.server import Server\n\nserver = Server('x')\n")
    best, _ = detect_server(tmp_path)
    assert best is not None and (best.sdk == "v1") is v1


MCP1_SERVER = (
    "from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP('weather')\n\nif __name__ == '__main__':\n    mcp.run()\n"
)


def test_a_1x_sdk_server_is_configured_with_the_legacy_protocol_and_says_why(tmp_path: Path) -> None:
    """init knew the server is on the 1.x SDK and still left `auto`, whose server/discover probe the
    1.x SDK logs as 31 pydantic errors (`Input should be 'ping' [type=literal_error,
    input_value='server/discover'`) that the report shows under "Server stderr" of every failure."""
    from mcp_bdd.config import load_config

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "weather"\ndependencies = ["mcp>=1.20,<2"]\n')
    (tmp_path / "server.py").write_text(MCP1_SERVER)
    _init(tmp_path)
    text = (tmp_path / "pyproject.toml").read_text()
    section = text[text.index("[tool.mcp-bdd.servers.weather]") :]
    assert re.search(r'^protocol = "legacy" +# .*server/discover', section, re.M), section
    assert load_config(tmp_path).servers["weather"].protocol == "legacy"
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "server.py").write_text("from mcp.server.mcpserver import MCPServer\n\nmcp = MCPServer('x')\n")
    _init(tmp_path / "v2")
    assert "protocol" not in (tmp_path / "v2" / "mcp-bdd.toml").read_text()  # a 2.x server speaks both
