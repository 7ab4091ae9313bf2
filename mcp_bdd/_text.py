"""Text for people: what a server, a user or an exception said, made printable (control and
bidirectional characters escaped, secrets masked), cut to a size a terminal or a report can
show, and the pieces failure messages are made of (the plain sentence, the call that produced a
value, "did you mean")."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
import sysconfig
import traceback
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, TextIO, cast

from mcp_bdd.secrets import mask, mask_data

__all__ = [
    "BIDI_CONTROLS",
    "CONTROLS",
    "WARNING_PREFIX",
    "Produced",
    "control_escape",
    "cut_middle",
    "did_you_mean",
    "for_terminal",
    "pretty",
    "printable",
    "produced_by",
    "raised_at",
    "sentence",
    "size_text",
    "some_of",
    "split_lines",
    "tail",
    "terminal_json",
    "unwrap",
    "users_place",
]

#: How a run's warnings begin on stderr (`mcp-bdd run` finds its workers' warnings by it)
WARNING_PREFIX = "mcp-bdd: warning: "

#: C0 and C1 control characters but tab and newline: ESC starts the sequences that clear a
#: terminal, move its cursor, recolor or retitle it; CR overwrites the line it ends. And the
#: bidirectional overrides and isolates, which make a line read differently than it is written
#: (a tool name that shows as "safe_read" in the console while it is something else).
#: the bidirectional controls (marks, embeddings, overrides, isolates), as a regex class body:
#: applied, a server's U+202E reverses the text around it. One list for the terminal (`printable`)
#: and the report (render.py, and report.js, which a test holds to this one)
BIDI_CONTROLS = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: every character a server's text may not apply, only show (`printable`; the report's page too):
#: C0 and C1 controls but tab and line feed, the bidirectional ones, the Unicode line separators
CONTROLS = rf"\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029"
_CONTROL = re.compile(f"[{CONTROLS}]")


def printable(text: str) -> str:
    """Server text for a person: secrets masked (mcp_bdd.secrets), control characters shown as
    `\\xNN` (`\\u202e`), never run.

    A server's words reach the console in failure messages, `probe`, `check` and `mcp-bdd call`
    output; a hostile one could otherwise clear the screen and print a green "1 feature passed"
    over a failure, and one that echoes its API token would print it.
    """
    return _CONTROL.sub(_escaped, mask(text))


def terminal_json(value: object, *, indent: int | None = 2) -> str:
    """JSON for a terminal (`--json` output): secrets masked, and what `printable` escapes written
    as JSON escapes. Why: json.dumps(ensure_ascii=False) leaves DEL, C1 controls, bidi overrides
    and line separators raw, so a server's text could still drive the terminal or reorder the
    line. A JSON reader gets the very same data (those characters only occur inside strings)."""
    text = json.dumps(mask_data(value), indent=indent, ensure_ascii=False, default=str)
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: the most of a log file `tail` reads: a server (or a worker) may have written gigabytes
TAIL_BYTES = 16384
#: characters of one stderr line quoted in a failure (a long line keeps its start and its end)
TAIL_LINE = 300


def tail(path: Path, lines: int = 20, start: int = 0) -> str:
    """The last `lines` lines of a log file after its first `start` bytes, secrets masked, reading
    at most its last `TAIL_BYTES` (400 MB of stderr before a crash once cost 488 MB to quote); ""
    if unreadable."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(start, size - TAIL_BYTES))
            data = fh.read(TAIL_BYTES)
    except OSError:
        return ""
    kept = split_lines(data.decode("utf-8", "replace").rstrip("\r\n"))[-lines:]
    return mask("\n".join(cut_middle(line, TAIL_LINE) for line in kept))


def split_lines(text: str) -> list[str]:
    """`text`'s lines, split at \\n and \\r\\n only. str.splitlines also splits at \\x0b, \\x0c,
    \\x1c-\\x1e, \\x85, U+2028 and U+2029, with which a server's text would add lines of its own
    to a failure message (`printable` shows them as escapes instead)."""
    return re.split(r"\r?\n", text)


def _escaped(match: re.Match[str]) -> str:
    return control_escape(match.group())


def control_escape(char: str) -> str:
    """How one of `CONTROLS` is shown: `\\x1b`, `\\u202e`."""
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


class _Printable:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(printable(text))

    def flush(self) -> None:
        self.out.flush()


def for_terminal(out: TextIO) -> TextIO:
    """`out` for human-readable output that quotes a server (a name, a description, an error):
    everything written goes through `printable`. JSON output goes through `terminal_json`."""
    return cast(TextIO, _Printable(out))


def unwrap(exc: BaseException) -> BaseException:
    """The first real exception inside ExceptionGroups (anyio task groups wrap what a task raised)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def raised_at(exc: BaseException) -> str:
    """Where a user's code raised `exc`: ` (shop.py:41, in lifespan)`, or "" when unknown."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    place = users_place(frames)
    return f" ({place})" if place else ""


def users_place(frames: Sequence[traceback.FrameSummary]) -> str:
    """The innermost of `frames` (outermost first, as a traceback or a stack lists them) that is a
    user's code, as `shop.py:41, in lifespan`; "" when there are none. Python's own and installed
    packages' code is where an error surfaces (`os.environ[...]` raises in os), or where code waits
    (a client library's `recv`), not where it is made."""
    paths = sysconfig.get_paths()
    library = ("<", *(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")))
    own = [f for f in frames if not f.filename.startswith(library)] or frames
    return f"{own[-1].filename.rsplit('/', 1)[-1]}:{own[-1].lineno}, in {own[-1].name}" if own else ""


def pretty(value: object, limit: int = 2000) -> str:
    """Render a JSON-like value for a failure message; long values are cut with the full size noted."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    return cut_middle(text, limit)


def cut_middle(text: str, limit: int) -> str:
    """`text` whole up to `limit` characters; longer, its start and its end with the count of what
    was left out between them: a server's last words (the stderr line before a crash, the closing
    part of an error) say why more often than its first."""
    if len(text) <= limit:
        return text
    head = limit // 2
    return (
        f"{text[:head]}… ({len(text) - limit} of {len(text)} characters left out) …{text[len(text) - (limit - head) :]}"
    )


def size_text(n: int) -> str:
    """A byte count as a limit is written in every message: `16 KiB`, `128 MiB`, else `N bytes`."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def did_you_mean(name: str, choices: Iterable[str], what: str = "name") -> str:
    """`Did you mean "x"? Available <what>s: a, b, c` — the closest choice first."""
    options = sorted(set(choices))
    if not options:
        return f"There are no {what}s at all."
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    listing = ", ".join(f'"{o}"' for o in options[:40])
    if len(options) > 40:
        listing += f", … ({len(options)} in all)"
    hint = f'Did you mean "{close[0]}"? ' if close else ""
    if close and close[0] == name:
        # asked for a name that is there: the caller looked among other choices than it offered
        hint = f'"{name}" is one of them, but not where it was looked for. '
    elif close and unicodedata.normalize("NFC", close[0]) == unicodedata.normalize("NFC", name):
        # "café" typed one way, served the other: the hint would read as the very name given
        hint = (
            f'"{close[0]}" looks the same, but its letters are other Unicode code points: {name!a} here, '
            f"{close[0]!a} on the server (composed and decomposed accents). Copy the server's spelling. "
        )
    return f"{hint}Available {what}s: {listing}"


def some_of(items: Sequence[str], limit: int = 20) -> str:
    """A list for a message, bounded: a server with 20,000 tools made one line of 270,000 characters."""
    shown = ", ".join(repr(item) for item in items[:limit])
    return f"[{shown}, … and {len(items) - limit} more]" if len(items) > limit else f"[{shown}]"


_PLAIN = re.compile(r"[\w@.:/#+-]+")
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")


def _plain(value: object) -> str | None:
    """A short scalar as a person writes it (confirmed, 42, true, "two words"), or None."""
    if isinstance(value, str):
        if len(value) > 60:
            return None
        return value if _PLAIN.fullmatch(value) else json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _leaf(path: str) -> str:
    """The name a person would use for a JSONPath: `$.order.status` -> status, `$.items[2]` -> items[2]."""
    names: list[str] = []
    for match in _SEGMENT.finditer(path):
        name, index, single, double = match.groups()
        if index is not None:
            names.append(f"{names.pop() if names else ''}[{index}]")
        else:
            names.append(name or single or double or "")
    return names[-1] if names and names[-1] else "the value"


def sentence(
    title: str, expected: object = None, actual: object = None, path: str | None = None, *, compared: bool = False
) -> str:
    """One plain sentence for a failure: "Expected status to be confirmed, but it was pending".

    Only when both values are short scalars; otherwise the title, which already says what failed.
    """
    if not compared:
        return title
    wanted, got = _plain(expected), _plain(actual)
    if wanted is None or got is None:
        return title
    if path:
        return f"Expected {_leaf(path)} to be {wanted}, but it was {got}"
    return f"{title.rstrip('.')}: expected {wanted}, but it was {got}"


class _Message(Protocol):
    """What `produced_by` reads of a transcript entry (mcp_bdd.transcript.Exchange)."""

    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def server(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def payload(self) -> object: ...
    @property
    def duration_ms(self) -> float | None: ...
    @property
    def related(self) -> int | None: ...


_ARROW = {"request": "→", "response": "←", "error": "✗"}


class Produced(str):
    """`produced_by`'s text, which also names the request it quotes (`seq`): the report shows that
    request, not whatever came last (a step that failed may list the tools for its hint after)."""

    seq: int | None = None

    def __new__(cls, text: str, seq: int | None = None) -> Produced:
        made = super().__new__(cls, text)
        made.seq = seq
        return made


def produced_by(items: Sequence[_Message], server: str | None = None, limit: int = 1500) -> Produced:
    """The call that produced the value under test, as text: the last request and its answer.

    Request first, then its response (or error), each payload pretty-printed and cut at `limit`
    characters. Earlier traffic is left out on purpose: it is in the report, one click away.
    """
    request = next((i for i in reversed(items) if i.kind == "request" and (server is None or i.server == server)), None)
    if request is None:
        return Produced("")
    answers = [i for i in items if i.related == request.seq and i.kind in ("response", "error")]
    lines: list[str] = []
    for item in (request, *answers[-1:]):
        took = f" ({item.duration_ms:.1f} ms)" if item.duration_ms is not None else ""
        lines.append(f"{_ARROW[item.kind]} [{item.server}] {item.method}{took}")
        lines.extend("  " + line for line in split_lines(pretty(item.payload, limit)))
    if not answers:
        lines.append("(no answer)")
    return Produced("\n".join(lines), request.seq)
