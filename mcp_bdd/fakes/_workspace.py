"""The fake workspace: a directory of its own that steps fill with files and check afterwards."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from mcp_bdd.errors import UsageError
from mcp_bdd.transcript import Transcript

__all__ = ["FakeWorkspace"]


class FakeWorkspace:
    """A temp directory; placeholder attribute `path`. Files are named by paths relative to it."""

    kind = "workspace"
    ATTRS: tuple[str, ...] = ("path",)

    def __init__(self, name: str, *, path: Path, transcript: Transcript) -> None:
        self.name = name
        self.path = path
        self._transcript = transcript
        path.mkdir(parents=True, exist_ok=True)

    def file(self, relative: str) -> Path:
        """The absolute path of a file inside the workspace; UsageError for paths that would leave it."""
        if not relative or not relative.strip():
            raise UsageError("A workspace file needs a relative path, e.g. notes/todo.txt.")
        if PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).drive:
            raise UsageError(
                f'"{relative}" is an absolute path; workspace files are named relative to the '
                'workspace, e.g. "notes/todo.txt" (the workspace itself is ${fake.workspace.path}).'
            )
        parts = PurePosixPath(relative.replace("\\", "/")).parts
        if ".." in parts:
            raise UsageError(f'"{relative}" leaves the workspace ("..") — name a file inside it, e.g. "data/x.txt".')
        target = self.path.joinpath(*parts)
        # A symlink planted inside the workspace must not lead out of it either.
        root = self.path.resolve()
        if not target.resolve().is_relative_to(root):
            raise UsageError(f'"{relative}" resolves outside the workspace ({target.resolve()}).')
        return target

    def write(self, relative: str, text: str) -> Path:
        target = self.file(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        self._transcript.record("fake", self.name, f"write {relative}", {"path": relative, "size": len(text)})
        return target

    def exists(self, relative: str) -> bool:
        return self.file(relative).is_file()

    def read(self, relative: str) -> str:
        return self.file(relative).read_text(encoding="utf-8", errors="replace")

    def files(self) -> list[str]:
        """Every file in the workspace, as sorted relative POSIX paths."""
        return sorted(p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file())

    def close(self) -> None:
        """Nothing to release: the directory goes with the scenario's temp dir."""

    def __repr__(self) -> str:
        return f"<FakeWorkspace {self.name!r} {self.path}>"
