"""What a user gets: the sdist and wheel built from this checkout, installed into fresh venvs.

The packaging and first-contact tests run `mcp-bdd` from a wheel in a venv of its own — never
the editable checkout — with an environment that cannot see the clone (no PYTHONPATH, the
project's .venv off PATH), in a project folder outside the repository.

Building a wheel and a venv takes ~15-30 s each, so each is made once per test session and
shared by every test (and every xdist worker: the first one to ask builds it under a file
lock, the others wait for it and reuse it).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

__all__ = [
    "REPO",
    "Venv",
    "dist",
    "fastmcp_venv",
    "make_venv",
    "mcp1_venv",
    "shared_dir",
    "user_env",
    "user_venv",
    "wheel_of",
]


def shared_dir(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder made once per test session by `make`, shared by every xdist worker."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' base temps are siblings under one session folder
    target = base / f"shared-{name}"
    with open(base / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also on failure
        if not (target / ".done").exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            make(target)
            (target / ".done").touch()
    return target


def _quiet(output: str) -> str:
    """pip's output minus this machine's index warnings, for failure messages."""
    return "\n".join(line for line in output.splitlines() if "is ignored: it is neither" not in line)


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """Run a command; on failure, fail the test with everything it printed."""
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv)} exited {done.returncode}:\n{_quiet(done.stdout)}\n{_quiet(done.stderr)}")
    return done.stdout


class Venv:
    """A virtual environment made by `make_venv`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bin = path / "bin"
        self.python = self.bin / "python"

    def env(self) -> dict[str, str]:
        return user_env(self.bin)

    def run(self, cwd: Path, *argv: str, check: bool = True, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """`argv[0]` from this venv's bin/ (or on PATH), in `cwd`, as a user's shell would run it."""
        exe = self.bin / argv[0]
        command = [str(exe) if exe.exists() else argv[0], *argv[1:]]
        done = subprocess.run(
            command, cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and done.returncode != 0:
            pytest.fail(f"{' '.join(argv)} in {cwd} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done


def user_env(bin_dir: Path) -> dict[str, str]:
    """The environment of a user's shell with `bin_dir` activated: nothing points at this clone."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "CI")}
    ours = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
    env["PATH"] = os.pathsep.join([str(bin_dir), *path])
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    env.pop("MCP_BDD_DEBUG", None)
    return env


def make_venv(path: Path, *requirements: str) -> Venv:
    """A fresh venv (from the base interpreter, not this one) with `requirements` pip-installed."""
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", str(path)], cwd=path.parent)
    venv = Venv(path)
    if requirements:
        run([str(venv.python), "-m", "pip", "install", "-q", *requirements], cwd=path.parent, env=venv.env())
    return venv


# ---------------------------------------------------------------------------------------------
# session fixtures (import them into a test module to use them)


def _build(target: Path) -> None:
    # `python -m build` makes the sdist, then the wheel *from the sdist*: a file missing from the
    # sdist breaks the wheel build here, before a user finds out.
    run([sys.executable, "-m", "build", "--outdir", str(target), str(REPO)], cwd=REPO)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the sdist and the wheel built from this checkout."""
    return shared_dir(tmp_path_factory, "dist", _build)


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("mcp_bdd-*.whl")
    return wheel


@pytest.fixture(scope="session")
def user_venv(tmp_path_factory: pytest.TempPathFactory, dist: Path) -> Venv:
    """A fresh venv with nothing but the wheel (and what it depends on) installed."""
    path = shared_dir(tmp_path_factory, "user-venv", lambda d: make_venv(d / "venv", str(wheel_of(dist)))) / "venv"
    return Venv(path)


@pytest.fixture(scope="session")
def fastmcp_venv(tmp_path_factory: pytest.TempPathFactory, dist: Path) -> Venv:
    """A fresh venv with the wheel and the PrefectHQ fastmcp 4 (the version the dev extra pins)."""
    from importlib.metadata import version

    requirement = f"fastmcp=={version('fastmcp')}"
    path = shared_dir(
        tmp_path_factory, "fastmcp-venv", lambda d: make_venv(d / "venv", str(wheel_of(dist)), requirement)
    )
    return Venv(path / "venv")


@pytest.fixture(scope="session")
def mcp1_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A server project's own venv, pinned to the 1.x SDK (the one most tutorials are written for)."""
    return Venv(shared_dir(tmp_path_factory, "mcp1-venv", lambda d: make_venv(d / "venv", "mcp>=1.20,<2")) / "venv")
