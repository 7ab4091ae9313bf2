"""The project's own living specification (features/) against the demo shop, on every transport.

This is `make demo` without the report, once per transport: the same feature files must pass
unchanged in-memory, over stdio, Streamable HTTP and SSE.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from behave_project import REPO, Run, behave_env

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


@pytest.mark.parametrize("transport", ["in-memory", "stdio", "streamable-http", "sse"])
def test_features_pass_on(transport: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "behave", "--no-color", "-f", "plain", "-D", f"transport={transport}", "features/"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env=behave_env(),
    )
    run = Run(proc.returncode, proc.stdout, proc.stderr)
    counts = run.counts()
    assert counts["failed"] == 0 and counts["error"] == 0, run.failures()
    assert counts["passed"] >= 100
