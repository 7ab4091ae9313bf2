"""A user fake: a real git repository with one commit, for mcp-server-git."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mcp_bdd import fake
from mcp_bdd.fakes import FakeContext


@dataclass
class Repo:
    path: Path


@fake("repo")
def repo(ctx: FakeContext) -> Iterator[Repo]:
    path = ctx.tmpdir / "repo"
    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "user.name=mcp-bdd", "-c", "user.email=bdd@example.invalid", "-C", str(path)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (path / "README.md").write_text("# demo repository\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Initial commit"], check=True)
    ctx.record("created", {"path": str(path)})
    yield Repo(path)
