"""The GitHub Actions workflow `mcp-bdd init` writes: how it installs mcp-bdd, and that it works.

mcp-bdd is not on PyPI yet, so the workflow installs it the way it is installed where init ran,
read from the distribution's direct_url.json (PEP 610): an editable clone, a folder, a wheel, a
VCS URL — or, installed from an index, the version, with a comment on pointing it at a copy.

Then each layout's workflow is *run*, as a GitHub runner would: the project is written and `init`
runs in this process (so mcp-bdd is this clone's editable install, and the workflow installs it
from here); a checkout of the project (what git gives a runner: no .venv, no node_modules) runs
every step's `run:` lines in order with `bash -eo pipefail`, in a fresh venv standing in for
actions/setup-python. `uses:` steps are the runner's own (node, go and python are on PATH here).
For the fastmcp 4, `mcp<2`, mcp 2.x (src layout) and Node layouts.
"""

from __future__ import annotations

import fcntl
import io
import json
import re
import shutil
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml  # PyYAML: here through fastmcp's jsonschema-path (the dev extra); a real parser, as a runner's
from userenv import REPO, make_venv, user_env

from mcp_bdd.cli.detect import install_of, mcp_bdd_install
from mcp_bdd.cli.scaffold import init

#: The actions a runner provides here by what is on PATH (setup-*), or that change no file the test reads.
RUNNER_ACTIONS = {
    "actions/checkout",
    "actions/setup-python",
    "actions/setup-node",
    "actions/setup-go",
    "actions/upload-artifact",
}
STEP_TIMEOUT = 600  # one step: a venv and mcp-bdd's dependencies from the index, on a loaded machine


def _init(root: Path) -> str:
    out = io.StringIO()
    init(root, command=None, url=None, app=None, force=False, out=out)
    return out.getvalue()


def _workflow(root: Path) -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load((root / ".github" / "workflows" / "mcp-bdd.yml").read_text())
    return spec


def _run_lines(root: Path) -> str:
    return "\n".join(str(step.get("run", "")) for step in _workflow(root)["jobs"]["acceptance"]["steps"])


# ---------------------------------------------------------------------------------------------
# how mcp-bdd is installed (fast: init and direct_url.json only)


def test_the_workflow_installs_mcp_bdd_as_this_environment_did(tmp_path: Path) -> None:
    """It said `pip install mcp-bdd`, which fails: `Could not find a version that satisfies the
    requirement mcp-bdd`. This environment has this clone, editable."""
    assert mcp_bdd_install(tmp_path).args == ["-e", str(REPO)]
    said = _init(tmp_path)
    workflow = (tmp_path / ".github" / "workflows" / "mcp-bdd.yml").read_text()
    assert f"python -m pip install -e {REPO}\n" in workflow, workflow
    assert "pip install mcp-bdd\n" not in workflow
    assert (
        "# mcp-bdd is not on PyPI yet, so this installs it as it is installed where `mcp-bdd init` ran:\n" in workflow
    )
    assert f"# an editable install of the clone at {REPO}.\n" in workflow, workflow
    assert f"# {REPO} is on this machine only: on a hosted runner, point this at your copy instead:\n" in workflow
    assert '#   a VCS URL:   pip install "mcp-bdd @ git+https://github.com/<owner>/mcp-bdd@<commit>"\n' in workflow
    assert (
        f"note: .github/workflows/mcp-bdd.yml installs mcp-bdd as it is installed here (pip install -e {REPO})" in said
    ), said


def test_a_1x_sdk_projects_note_says_how_to_install_mcp_bdd_for_real(tmp_path: Path) -> None:
    """The note said `pipx install mcp-bdd`, which fails as `pip install mcp-bdd` does."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "w"\ndependencies = ["mcp>=1.20,<2"]\n')
    (tmp_path / "server.py").write_text("from mcp.server.fastmcp import FastMCP\n\nmcp = FastMCP('w')\n")
    said = _init(tmp_path)
    assert "pipx install mcp-bdd" not in said
    assert f"python -m venv ~/.mcp-bdd && ~/.mcp-bdd/bin/pip install -e {REPO}" in said, said


def _dist(tmp_path: Path, direct_url: dict[str, Any] | None) -> metadata.Distribution:
    """A real dist-info folder, as pip writes it."""
    info = tmp_path / "site" / "mcp_bdd-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: mcp-bdd\nVersion: 0.1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return metadata.PathDistribution(info)


WHEEL = "mcp_bdd-0.1.0-py3-none-any.whl"
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("direct_url", "args", "portable"),
    [
        ({"url": "file://{project}/wheels/" + WHEEL, "archive_info": {}}, ["./wheels/" + WHEEL], True),
        ({"url": "file:///opt/dist/" + WHEEL, "archive_info": {}}, ["/opt/dist/" + WHEEL], False),
        ({"url": "https://example.com/" + WHEEL, "archive_info": {}}, ["mcp-bdd @ https://example.com/" + WHEEL], True),
        (
            {
                "url": "https://github.com/acme/mcp-bdd",
                "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "main"},
            },
            [f"mcp-bdd @ git+https://github.com/acme/mcp-bdd@{SHA}"],
            True,
        ),
        ({"url": "file://{project}/vendor/mcp-bdd", "dir_info": {"editable": True}}, ["-e", "./vendor/mcp-bdd"], True),
        ({"url": "file:///src/mcp-bdd", "dir_info": {}}, ["/src/mcp-bdd"], False),
        (None, ["mcp-bdd==0.1.0"], False),  # from an index: which one is not recorded
    ],
)
def test_direct_url_json_says_how_mcp_bdd_was_installed(
    tmp_path: Path, direct_url: dict[str, Any] | None, args: list[str], portable: bool
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if direct_url is not None:
        direct_url = {**direct_url, "url": direct_url["url"].replace("{project}", str(project))}
    install = install_of(_dist(tmp_path, direct_url), project)
    assert install.args == args
    assert (install.advice == "") is portable, install.advice
    if not portable:
        assert "point this at your copy instead" in install.advice


# ---------------------------------------------------------------------------------------------
# the workflows, run


def run_workflow(project: Path, runner: Path) -> subprocess.CompletedProcess[str]:
    """Run the workflow `init` wrote in `project` as a runner does; the last step's result."""
    steps = _workflow(project)["jobs"]["acceptance"]["steps"]
    checkout = runner / "work" / project.name  # the workflow's `..` is the runner's work folder
    shutil.copytree(project, checkout, ignore=shutil.ignore_patterns(".venv", "node_modules", "__pycache__"))
    python = make_venv(runner / "python")  # actions/setup-python: a Python on PATH, nothing installed
    env = user_env(python.bin) | {"npm_config_prefer_offline": "true", "npm_config_audit": "false"}
    done = None
    for step in steps:
        if "uses" in step:
            assert step["uses"].split("@")[0] in RUNNER_ACTIONS, step
            continue
        with _one_install_from(REPO):  # concurrent editable builds of one clone share its egg-info
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=checkout, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT, check=False,
            )  # fmt: skip
        assert done.returncode == 0, (
            f"step {step.get('name')!r} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    assert done is not None and (checkout / "reports" / "living-doc.html").is_file()
    return done


class _one_install_from:
    """An exclusive lock per clone while a step runs (xdist workers install from the same one)."""

    def __init__(self, clone: Path) -> None:
        self.path = Path(tempfile.gettempdir()) / f"mcp-bdd-install-{abs(hash(str(clone)))}.lock"

    def __enter__(self) -> None:
        self.file = open(self.path, "w")  # held until __exit__
        fcntl.flock(self.file, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        self.file.close()


def _feature(project: Path, name: str, server: str, call: str, table: str, expected: str) -> None:
    (project / "features" / f"{name}.feature").write_text(
        f"Feature: {name}\n"
        "  Scenario: The server's own tool answers\n"
        f'    Given the MCP server "{server}" is running\n'
        f'    When I call the tool "{call}" with:\n'
        f"{table}"
        f'    Then the result text is "{expected}"\n'
    )


def _passed(run: subprocess.CompletedProcess[str], scenarios: int, legs: int = 1) -> None:
    """`mcp-bdd run` said each of its legs passed every scenario (`[ok] stdio: 2 passed`)."""
    said = re.findall(r"^\[ok\] \S+: (\d+) passed", run.stdout + run.stderr, re.M)
    assert said == [str(scenarios)] * legs, run.stdout + run.stderr


FASTMCP_SERVER = '''\
from fastmcp import FastMCP

mcp = FastMCP("recipes")


@mcp.tool
def scale(grams: int, servings: int) -> int:
    """Scale a recipe quantity for a number of servings."""
    return grams * servings
'''


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_workflow_of_a_fastmcp_4_project_runs(tmp_path: Path) -> None:
    """fastmcp was never installed: the project declares nothing (it was in the author's venv)."""
    project = tmp_path / "recipes"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "recipes"\nversion = "0.1.0"\n')
    (project / "recipes.py").write_text(FASTMCP_SERVER)
    _init(project)
    assert f"fastmcp=={metadata.version('fastmcp')}" in _run_lines(project)
    _feature(project, "scale", "recipes", "scale", "      | grams | servings |\n      | 100   | 2        |\n", "200")
    _passed(run_workflow(project, tmp_path / "runner"), 2, legs=2)  # in-memory and stdio


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


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_workflow_of_an_mcp_1x_project_runs(tmp_path: Path) -> None:
    """`pip install -e .` of the project folder failed (`neither 'setup.py' nor 'pyproject.toml'
    found`, or setuptools finding features/ and steps/ as packages), and mcp<2 was never installed."""
    project = tmp_path / "weather"
    (project / ".venv" / "bin").mkdir(parents=True)  # the author's own venv: git leaves it out
    (project / ".venv" / "bin" / "python").write_text("")
    (project / ".venv" / "pyvenv.cfg").write_text("")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "weather"\nversion = "0.1.0"\ndependencies = ["mcp>=1.20,<2"]\n'
    )
    (project / "server.py").write_text(MCP1_SERVER)
    _init(project)
    assert ".venv/bin/pip install 'mcp>=1.20,<2'" in _run_lines(project)
    _feature(project, "forecast", "weather", "forecast", "      | city  |\n      | Paris |\n", "Sunny in Paris")
    _passed(run_workflow(project, tmp_path / "runner"), 2)


NOTES_SERVER = '''\
from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    server = MCPServer("notes")

    @server.tool()
    def shout(text: str) -> str:
        """The text, in capitals."""
        return text.upper()

    return server
'''


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_workflow_of_an_mcp_2x_src_layout_project_runs(tmp_path: Path) -> None:
    project = tmp_path / "notes"
    (project / "src" / "notes_mcp").mkdir(parents=True)
    (project / "src" / "notes_mcp" / "__init__.py").write_text("")
    (project / "src" / "notes_mcp" / "server.py").write_text(NOTES_SERVER)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "notes-mcp"\nversion = "0.1.0"\ndependencies = ["mcp>=2.3,<3"]\n'
    )
    assert 'server "notes_mcp"' in _init(project)
    assert "python -m pip install -e ." in _run_lines(project)  # a src layout imports once installed
    _feature(project, "shout", "notes_mcp", "shout", "      | text |\n      | hey  |\n", "HEY")
    _passed(run_workflow(project, tmp_path / "runner"), 2, legs=2)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.skipif(shutil.which("npm") is None, reason="node and npm are needed")
def test_the_workflow_of_a_node_project_runs(tmp_path: Path) -> None:
    project = tmp_path / "notes"
    shutil.copytree(REPO / "tests" / "node_server", project)
    _init(project)
    assert "npm install" in _run_lines(project)
    _feature(project, "add", "notes-mcp", "add_note", "      | text |\n      | milk |\n", "noted: milk (1 notes)")
    _passed(run_workflow(project, tmp_path / "runner"), 2)
