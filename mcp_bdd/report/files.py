"""Writing report files: atomically, so a reader (or CI upload) never sees half a file."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_text"]


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
