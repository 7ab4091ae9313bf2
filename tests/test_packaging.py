"""The package as users get it: declared dependencies, the wheel's contents, the sdist, POSIX only.

The slow tests build the sdist and the wheel from this checkout (`python -m build`, the wheel
from the sdist), check their metadata as PyPI would (`twine check --strict`), and install the
wheel into a fresh venv where `mcp-bdd init` + `behave` must be green in an empty folder.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from userenv import REPO, Venv, wheel_of

PACKAGE = REPO / "mcp_bdd"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _direct_imports() -> dict[str, set[str]]:
    """Top-level third-party modules the package imports itself -> the files that import them."""
    found: dict[str, set[str]] = {}
    for file in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "mcp_bdd":
                    found.setdefault(top, set()).add(file.relative_to(REPO).as_posix())
    return found


def _declared(*, extras: bool = False) -> set[str]:
    """[project] dependencies; with `extras`, also the optional features' extras (not `dev`): the
    postgres and oauth fakes import their drivers only when such a fake is used."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    if extras:
        reqs += [r for name, group in project["optional-dependencies"].items() if name != "dev" for r in group]
    return {_canonical(re.split(r"[ <>=!~;\[]", req, maxsplit=1)[0]) for req in reqs}


def test_every_direct_import_is_a_declared_dependency_and_back() -> None:
    imports = _direct_imports()
    owners = importlib.metadata.packages_distributions()
    declared = _declared()
    with_extras = _declared(extras=True)
    undeclared = {
        module: f"{sorted(files)[0]} imports it (distribution {owners.get(module)})"
        for module, files in imports.items()
        if not {_canonical(d) for d in owners.get(module, [module])} & with_extras
    }
    assert not undeclared, f"imported but not in [project] dependencies or an optional extra: {undeclared}"
    imported = {_canonical(d) for module in imports for d in owners.get(module, [module])}
    unused = declared - imported
    assert not unused, f"declared in [project] dependencies but never imported by mcp_bdd: {sorted(unused)}"


def test_the_version_is_the_one_pyproject_declares() -> None:
    import tomllib

    from mcp_bdd import __version__

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert __version__ == declared


def test_the_package_never_imports_fastmcp() -> None:
    # Importing fastmcp monkeypatches the SDK's types for everything in the process:
    # its objects are recognised by duck typing in mcp_bdd/apps.py instead.
    assert "fastmcp" not in _direct_imports()


def test_importing_it_off_posix_says_so_clearly() -> None:
    code = "import os; os.name = 'nt'\ntry:\n    import mcp_bdd\nexcept ImportError as exc:\n    print(exc)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "mcp-bdd runs on POSIX systems only" in done.stdout
    assert "WSL" in done.stdout


# ---------------------------------------------------------------------------------------------
# the built distributions


@pytest.mark.slow
def test_the_wheel_installs_mcp_bdd_only(dist: Path) -> None:
    with zipfile.ZipFile(wheel_of(dist)) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert {n.split("/")[0] for n in names} == {"mcp_bdd", "mcp_bdd-0.1.0.dist-info"}
    assert "mcp_bdd/py.typed" in names
    assert any(n.startswith("mcp_bdd/report/templates/") for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: MIT" in metadata
    assert "Classifier: Operating System :: POSIX" in metadata
    for requirement in ("mcp-types", "httpx2", "starlette", "uvicorn", "parse", "markupsafe"):
        assert re.search(rf"^Requires-Dist: {requirement}\b", metadata, re.M | re.I), requirement


@pytest.mark.slow
def test_the_sdist_holds_the_whole_project(dist: Path) -> None:
    (sdist,) = dist.glob("mcp_bdd-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {Path(*Path(n).parts[1:]).as_posix() for n in archive.getnames()}
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    missing = [f for f in tracked if f not in names and f != ".gitignore" and (REPO / f).exists()]
    assert not missing, f"tracked files missing from the sdist: {missing}"
    assert not [n for n in names if n.startswith(("node_modules/", ".venv/", "reports/")) or "__pycache__" in n]


@pytest.mark.slow
def test_twine_accepts_both_distributions(dist: Path) -> None:
    files = sorted(str(p) for p in dist.glob("mcp_bdd-*"))
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


@pytest.mark.slow
def test_init_then_behave_is_green_in_an_empty_folder_with_the_wheel(user_venv: Venv, tmp_path: Path) -> None:
    where = user_venv.run(tmp_path, "python", "-c", "import mcp_bdd, demo", check=False)
    assert where.returncode != 0 and "No module named 'demo'" in where.stderr  # no top-level demo installed
    origin = user_venv.run(tmp_path, "python", "-c", "import mcp_bdd; print(mcp_bdd.__file__)").stdout
    assert origin.startswith(str(user_venv.path)), origin  # the wheel, not this checkout
    init = user_venv.run(tmp_path, "mcp-bdd", "init")
    assert 'server "example"' in init.stdout
    run = user_venv.run(tmp_path, "behave", "--no-color", "-f", "progress", "features/")
    assert "2 scenarios passed, 0 failed" in run.stdout, run.stdout + run.stderr
    report = user_venv.run(tmp_path, "behave", "-f", "living-doc", "-o", "reports/living-doc.html", "features/")
    assert (tmp_path / "reports" / "living-doc.html").stat().st_size > 10_000, report.stdout + report.stderr
    # a second run, and `mcp-bdd report merge` as installed puts the two side by side
    user_venv.run(tmp_path, "behave", "-f", "living-doc", "-o", "reports/again.html", "features/")
    merged = user_venv.run(
        tmp_path, "mcp-bdd", "report", "merge", "reports/living-doc.json", "reports/again.json",
        "-o", "reports/merged.html", "--title", "Twice",
    )  # fmt: skip
    assert "merged 2 run(s)" in merged.stdout, merged.stdout + merged.stderr
    page = (tmp_path / "reports" / "merged.html").read_text(encoding="utf-8")
    assert "<title>Twice</title>" in page and "(living-doc)" in page and "(again)" in page, page[:2000]
    if sys.platform == "linux":  # the wheel ships the keeper every spawned server runs under; it works from there
        kept = user_venv.run(tmp_path, "python", "-c", _KEPT_EXIT)
        keeper, code = kept.stdout.split()
        assert code == "3" and keeper.startswith(str(user_venv.path)), kept.stdout + kept.stderr
        assert keeper.endswith("mcp_bdd/servers/_keeper.py"), keeper


#: spawn a command as mcp-bdd spawns a server (under its keeper): the keeper's file and the exit code
_KEPT_EXIT = """
import os, pathlib
from mcp_bdd._process_tree import wait_exit
from mcp_bdd.servers._process import spawn
process = spawn(["sh", "-c", "exit 3"], env=dict(os.environ), cwd=".", stderr_path=pathlib.Path("kept.log"),
                describe="sh", stdio=False)
wait_exit(process.pid, 60)
process.stop()
print(process.popen.args[3], process.returncode)
"""
