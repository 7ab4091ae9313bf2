"""The public step vocabulary (tests/data/contract.feature): every phrase is defined, exactly once,
but the ones still listed as pending (tests/data/contract-pending.txt), which are defined by none.

Two checks, both in subprocesses so behave's global step registry never leaks between tests:
- `behave --dry-run` on a temp project wired like a user's: no undefined step;
- every step of the contract matches exactly one step definition (none shadows another).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from contract_phrases import implemented_contract

ROOT = Path(__file__).resolve().parents[1]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "features").mkdir()
    (tmp_path / "steps").mkdir()
    (tmp_path / "features" / "contract.feature").write_text(implemented_contract(), encoding="utf-8")
    (tmp_path / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (tmp_path / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (tmp_path / "mcp-bdd.toml").write_text('[servers.shop]\napp = "demo.shop:create_server"\n')
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def test_dry_run_has_no_undefined_steps(tmp_path: Path) -> None:
    project = _project(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-color", "features"],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    summary = [
        line
        for line in output.splitlines()
        if line.startswith(("0 steps passed", "steps passed")) or " steps passed" in line
    ]
    assert summary, output[-4000:]
    assert "undefined" not in summary[-1] or " 0 undefined" in summary[-1], output[-4000:]
    assert "untested" in summary[-1], summary[-1]  # the dry run saw the steps


AMBIGUITY_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from behave.parser import parse_file
    from behave.step_registry import registry
    import mcp_bdd.steps  # noqa: F401  (registers the vocabulary)

    feature = parse_file(sys.argv[1])
    report = []
    for scenario in feature.scenarios:
        for step in scenario.steps:
            candidates = list(registry.steps[step.step_type]) + list(registry.steps["step"])
            matches = [str(d.pattern) for d in candidates if d.match(step.name)]
            if len(matches) != 1:
                report.append({"step": f"{step.keyword} {step.name}", "line": step.line, "matches": matches})
    print(json.dumps(report))
    """
)


def test_every_phrase_matches_exactly_one_definition(tmp_path: Path) -> None:
    contract = tmp_path / "contract.feature"
    contract.write_text(implemented_contract(), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", AMBIGUITY_SCRIPT, str(contract)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    problems = json.loads(proc.stdout.strip().splitlines()[-1])
    assert problems == [], json.dumps(problems, indent=2)
