"""A throwaway behave project wired to the benchmark server (shared by the benchmarks)."""

from __future__ import annotations

import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write_project(root: Path, scenarios: list[str], *, files: int = 1, extra_config: str = "") -> None:
    """Wire `root` as config.md says, with `scenarios` spread over `files` feature files."""
    (root / "features").mkdir(parents=True, exist_ok=True)
    (root / "steps").mkdir(exist_ok=True)
    (root / "environment.py").write_text("from mcp_bdd.environment import *  # noqa: F401,F403\n")
    (root / "steps" / "mcp_steps.py").write_text("from mcp_bdd.steps import *  # noqa: F401,F403\n")
    (root / "mcp-bdd.toml").write_text(
        f'{extra_config}[servers.bench]\napp = "bench_server:create_server"\ncwd = "{HERE}"\n'
    )
    per_file = max(1, -(-len(scenarios) // files))
    for f in range(files):
        chunk = scenarios[f * per_file : (f + 1) * per_file]
        if chunk:
            body = textwrap.indent("".join(chunk), "  ")
            (root / "features" / f"bench_{f:02d}.feature").write_text(f"Feature: bench {f}\n{body}")


def add_scenarios(n: int) -> list[str]:
    """n scenarios: start the server, call `add`, check the result."""
    return [
        textwrap.dedent(f"""
          Scenario: add {i}
            Given the MCP server "bench" is running
            When I call the tool "add" with:
              | a   | b |
              | {i} | 1 |
            Then the tool call succeeds
            And the result at "$.result" is {i + 1}
        """)
        for i in range(n)
    ]
