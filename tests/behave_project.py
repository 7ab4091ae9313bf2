"""Write a throwaway behave project (config + features, wired as config.md says) and run it.

Meta-tests assert on what a user would see: the pass/fail counts behave prints, the failure
text, and that no server process outlives the run.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent
#: pytest-timeout's limit per test (pyproject.toml). A subprocess a test waits for must time out
#: well before it: pytest-timeout shows a stack dump, and what the subprocess printed is lost.
PYTEST_TIMEOUT = float(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["timeout"])
_ROOM = 20.0  # seconds left to the test for its assertions and teardown


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def failures(self, context: int = 40) -> str:
        """What behave printed about each failed or errored step (plain/pretty output), for assertion
        messages: the tail of a long run rarely holds the failure itself."""
        lines = self.output.splitlines()
        marks = [
            i
            for i, line in enumerate(lines)
            if re.search(r"\.\.\. (failed|error|hook_error)\b|HOOK-ERROR|Traceback|ASSERT FAILED", line)
        ]
        parts: list[str] = []
        for i in marks[:10]:
            parts.append("\n".join(lines[max(0, i - 3) : i + context]))
        return "\n----\n".join(parts) + "\n----\n" + "\n".join(lines[-15:])

    def counts(self, what: str = "scenarios") -> dict[str, int]:
        """{"passed": n, "failed": n, "error": n, "skipped": n} from behave's summary line."""
        line = re.search(
            rf"^(\d+) {what.rstrip('s')}s? passed, (\d+) failed(?:, (\d+) error)?, (\d+) skipped",
            self.stdout,
            re.M,
        )
        assert line, f"no {what} summary in output:\n{self.output[-3000:]}"
        passed, failed, error, skipped = line.groups()
        return {
            "passed": int(passed),
            "failed": int(failed),
            "error": int(error or 0),
            "skipped": int(skipped),
        }


def _children() -> set[int]:
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


class Census:
    """The processes a test started (directly, or via behave and its servers): all carry the
    test's marker in their environment, which every process they start inherits."""

    def __init__(self) -> None:
        self.before = _children()
        self.marker = f"mcp-bdd-test-{os.getpid()}"
        os.environ["MCP_BDD_TEST_MARKER"] = self.marker

    def left(self, besides: Callable[[str], bool] = lambda command: False) -> list[str]:
        """Those still running (zombies are gone), as "pid: command line"; `besides` spares some."""
        leftovers = []
        for proc in psutil.process_iter(["pid", "cmdline", "environ"]):  # unreadable values: None
            env = proc.info.get("environ") or {}
            ours = env.get("MCP_BDD_TEST_MARKER") == self.marker and proc.pid not in self.before
            command = " ".join(proc.info.get("cmdline") or [])
            if ours and proc.pid != os.getpid() and alive(proc.pid) and not besides(command):
                leftovers.append(f"{proc.pid}: {command}")
        return leftovers


def alive(pid: int) -> bool:
    """Whether the process runs: a zombie (killed, not yet reaped by its parent) is gone."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def is_lifeline(command: str) -> bool:
    """Whether a command line is a run's lifeline (servers/_lifeline.py), which a test process
    that spawns servers itself keeps until it ends."""
    return command.endswith(os.sep + "_lifeline.py")


def make_project(root: Path, config: str, features: dict[str, str]) -> Path:
    (root / "steps").mkdir(parents=True, exist_ok=True)
    (root / "features").mkdir(exist_ok=True)
    (root / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (root / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (root / "mcp-bdd.toml").write_text(textwrap.dedent(config))
    for name, body in features.items():
        path = root / "features" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body))
    return root


def behave_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.pop("CI", None)
    return env


def run_behave(root: Path, *args: str, timeout: float = 120) -> Run:
    proc = run_captured([sys.executable, "-m", "behave", "--no-color", "features/", *args], cwd=root, timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def run_captured(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    test_limit: float = PYTEST_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run`, its output captured as text; a run past `timeout` (kept inside the
    test's own limit: `test_limit` for a test marked with a longer one) fails the test with
    what it printed so far, not a bare TimeoutExpired or pytest-timeout's stack dump."""
    limit = min(timeout, test_limit - _ROOM)
    try:
        return subprocess.run(
            list(argv), cwd=cwd, env=env or behave_env(), capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired as exc:
        printed = _text(exc.stdout) + _text(exc.stderr)
        command = " ".join(str(a) for a in argv[:8])
        pytest.fail(
            f"{command} did not finish within {limit:g} s (in {cwd}). What it printed (last 6,000 characters):\n"
            + printed[-6000:],
            pytrace=False,
        )


def _text(output: str | bytes | None) -> str:
    """TimeoutExpired keeps what was read as bytes, whatever `text` said."""
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    return output or ""


def start_behave(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """behave running in the background (for tests that interrupt or kill it mid-run); what it
    prints goes to a file that `printed(root)` reads, for the assertion messages.

    It starts with SIGINT at its default, as from a terminal: a test suite launched as a
    background job of a script inherits SIGINT *ignored* (POSIX, for asynchronous commands
    without job control), the ignore survives exec, and a Ctrl-C test would then see a run that
    rightly ignored the signal and finished."""
    with open(root / "behave-output.log", "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "behave", "--no-color", *args, "features/"],
            cwd=root,
            env={**behave_env(), **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=default_sigint,
        )


def default_sigint() -> None:
    """SIGINT at its default in a child, as from a terminal (see `start_behave`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def printed(root: Path, last: int = 4000) -> str:
    """What a `start_behave` run printed so far (its last `last` characters)."""
    path = root / "behave-output.log"
    text = path.read_text(errors="replace") if path.exists() else "(nothing)"
    return "behave printed:\n" + text[-last:]


def python_cmd(module: str) -> str:
    """A TOML array literal running `python -m module` with this interpreter."""
    return f'["{sys.executable}", "-m", "{module}"]'


SHOP = f"""
[servers.shop]
app = "demo.shop:create_server"
cwd = "{REPO}"
"""
