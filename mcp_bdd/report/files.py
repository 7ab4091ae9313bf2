"""Writing report files: atomically, so a reader (or CI upload) never sees half a file; and saying
plainly why one could not be written."""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["not_written", "write_text"]


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` as UTF-8 to `path` via a temporary file in the same folder, creating it.

    A plain open() (not mkstemp) so that the file gets the usual umask permissions.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def not_written(what: str, path: str | os.PathLike[str], exc: OSError, tip: str) -> str:
    """The message for a requested output that could not be written: what, where, why, what to do.

    Why not the OSError's own words: `[Errno 17] File exists: 'out/notadir'` names a folder the
    user never mentioned and reads as if the report were already there."""
    return f"mcp-bdd: the {what} was not written to {path}: {_why(Path(path), exc)}.\nTip: {tip}"


def _why(path: Path, exc: OSError) -> str:
    in_the_way = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)
    if in_the_way is not None:
        return f"{in_the_way} is a file, not a folder"
    if path.is_dir():
        return "that is a folder, not a file"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"no permission to write in {_folder(path)}"
    if exc.errno == errno.ENOSPC:
        return f"the disk of {_folder(path)} is full"
    return exc.strerror or str(exc)


def _folder(path: Path) -> str:
    return str(path.parent) if str(path.parent) not in ("", ".") else "the current folder"
