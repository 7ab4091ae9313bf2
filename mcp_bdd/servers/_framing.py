"""Newline-delimited JSON-RPC over a byte stream: linear, bounded, and honest about bad output.

Why our own framing: the SDK's `stdio_client` (and our 0.1 transport) re-joined the whole
pending buffer on every chunk, so a 30 MB result cost ~12 s and 324 MB; it also drops lines it
cannot parse with nothing but a log line, so a server that pretty-prints its JSON-RPC (the
classic framing bug) just "times out". Here:

- `LineSplitter` keeps the pieces of an unfinished line in a list and joins them once, when its
  newline arrives: every byte is copied a bounded number of times. A line longer than
  `max_line` bytes is a protocol violation, reported once in its place (as soon as it is past
  the bound, whether it came in pieces or in one read), and skipped to its end.
- `Pretty` re-assembles a pretty-printed message by counting its brackets line by line, and
  parses it once, when it closes: linear too (parsing after every line was quadratic).
- `StdoutEvidence` counts what was not a JSON-RPC message (plain text, pretty-printed JSON,
  invalid UTF-8, JSON that is not JSON-RPC) and quotes the first one: the failure message of a
  handshake or a request then says what the server wrote instead of "timed out".
- A *response* that cannot be parsed (nested too deep, spread over several lines, not fitting
  the JSON-RPC schema) fails its pending request at once: `decode_line` turns it into a JSON-RPC
  error for the same id, marked with `PROTOCOL_MARK`, which the session reports as a protocol
  violation instead of waiting for its timeout.
- A response no waiting request can take — an id that matches none (`"id": 999999`), or no id
  at all (`{"id": null, "error": {"code": -32700, ...}}`, the standard answer of a server that
  could not parse what it read) — used to be dropped by the SDK, its request waiting for its
  timeout and saying "timed out". `Waiting` knows which requests are in flight (the writer
  passes through here too), so such a stray is recorded as a bad line (quoted, counted, in the
  transcript) and fails every request waiting for an answer, with the same marked error. All
  of them, not the oldest: nothing in a stray says which request it was meant for, and a guess
  that misses leaves the real one waiting its whole timeout (the very fault) while blaming
  another. The usual bugs (a server that never echoes ids, one that cannot parse what we send)
  send one stray per request, which fails each at once either way. A failed or cancelled
  request's real answer, should it still come, is a late answer, dropped as before. A second
  answer to a request already answered is dropped too, but it is a protocol violation (one
  response per request), so it is evidence: quoted, counted, in the transcript and in any
  failure's `describe`; it fails nothing, since its request already has its answer. Listen
  streams (`subscriptions/listen`) wait for events, not for an answer: a stray leaves them open.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, NoReturn, TypeGuard

import mcp_types as types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

from mcp_bdd._text import size_text

__all__ = [
    "ID_VALUE",
    "PROTOCOL_MARK",
    "LineSplitter",
    "LineTooLong",
    "StdoutEvidence",
    "Waiting",
    "decode_line",
    "request_key",
    "too_long",
    "unsendable",
]

#: `error.data["mcp_bdd"]` of a JSON-RPC error we made up for a response that could not be used
PROTOCOL_MARK = "protocol-violation"
_QUOTE = 300  # characters of a bad line quoted in messages
_PRETTY_LIMIT = 1 << 20  # bytes of consecutive bad lines kept to re-assemble pretty-printed JSON
#: a JSON-RPC id as written on the wire (a number, or a string of at most 200 characters), one group;
#: found in raw bytes wherever a message cannot be parsed whole (here, and in the HTTP transport)
ID_VALUE = rb'(-?\d+|"(?:[^"\\]|\\.){0,200}")'
_ID = re.compile(rb'"id"\s*:\s*' + ID_VALUE)
_REMEMBERED = 4096  # request ids kept in flight, and settled ones kept to tell a late answer from a stray
_STREAMS = frozenset({"subscriptions/listen"})  # requests that wait for events, not for an answer
_STRAY = "a response no request waits for"
_REPEATED = "a second answer to one request"
#: what a second answer usually means (said here, and by sessions over HTTP: `repeated_answer`)
_REPEATED_MEANING = (
    "the server answered one request twice (JSON-RPC allows one response per request; mcp-bdd kept "
    "the first): two code paths both reply, e.g. an error handler that answers after the result was sent."
)
#: what an answer after a failed POST means (`answer_after_failed_post`)
_AFTER_FAILED_POST_MEANING = (
    "the server handled the request, but the answer to its POST broke or was an error on the way "
    "(a proxy in between, a worker that died)."
)
#: what an answer after a 202 means (`answer_after_202`)
_AFTER_202_MEANING = (
    "the server answers requests the HTTP+SSE transport's way, on its standalone stream; over Streamable "
    "HTTP the answer belongs in the POST's response, where the request waited for it."
)
_NO_ID_ERROR = "a JSON-RPC error without an id"
_TOO_DEEP = "a response nested too deep to parse"
_STRICTER = "JSON the SDK's parser rejects"
_UNFIT = "a response that does not fit the JSON-RPC schema"
_BATCH = "a JSON-RPC batch (an array)"
_BOM = "a byte order mark (U+FEFF) before the JSON"
_LONG_NUMBER = "a number too long for JSON readers"
NON_JSON_NUMBER = "NaN or Infinity, which JSON does not have"
#: how a server comes to write them, and what to send instead (over stdio and over HTTP alike)
NON_JSON_NUMBER_FIX = "Python's json.dumps writes them unless allow_nan=False: send null, or the value as a string"
_UNREADABLE = (types.PARSE_ERROR, types.INVALID_REQUEST)  # a server's errors for a message it could not read


class LineTooLong(ValueError):
    """A line grew past the configured bound: handed out by `LineSplitter.feed` in the line's
    place (not raised), with the line's head and the bound it passed."""

    def __init__(self, head: bytes, limit: int) -> None:
        super().__init__(head, limit)
        self.head, self.limit = head, limit


_HEAD = 4096  # bytes kept of a line that is too long: its id, for the SDKs that write it first


class LineSplitter:
    """Split a byte stream into lines in time linear in its size, each line at most `max_line` bytes."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False  # inside a line that was too long: drop bytes until its newline

    def feed(self, data: bytes) -> list[bytes | LineTooLong]:
        """What `data` completes, in order: each line, or a LineTooLong in place of a line past
        `max_line` bytes — as soon as it is past, whether or not its newline has come."""
        out: list[bytes | LineTooLong] = []
        start, size = 0, len(data)
        while start < size:
            end = data.find(b"\n", start)
            stop = size if end < 0 else end
            if self._skipping:
                pass
            elif self._size + (stop - start) > self.max_line:
                out.append(LineTooLong(self._head(data[start : min(stop, start + _HEAD)]), self.max_line))
                self._parts, self._size, self._skipping = [], 0, True
            elif end >= 0:
                line = data[start:end]
                out.append(b"".join([*self._parts, line]) if self._parts else line)
                self._parts, self._size = [], 0
            else:
                self._parts.append(data[start:])
                self._size += size - start
            if end < 0:
                break
            self._skipping = False  # a newline ends the line being skipped too
            start = end + 1
        return out

    def unfinished(self) -> tuple[bytes, int]:
        """(its head, its size) of the line begun and not yet ended: a message whose newline never
        comes is never read."""
        return (b"", 0) if self._skipping else (self._head(b""), self._size)

    def _head(self, more: bytes) -> bytes:
        head = bytearray()
        for part in (*self._parts, more):
            head += part[: _HEAD - len(head)]
            if len(head) >= _HEAD:
                break
        return bytes(head)


def _outside_strings(line: bytes) -> bytes:
    """What of a JSON line is not inside a string (pretty printers escape newlines in strings, so a
    string never spans lines). Linear and without a regex: a regex over a string value repeats a
    group per character (a 16 MiB value took 1.6 s and 2 GB)."""
    if b'"' not in line:
        return line
    return b"".join(line.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])


class Pretty:
    """The lines of one pretty-printed JSON value, re-assembled in time linear in its size.

    Why not try to parse after every line: that re-parses all that came before, the square of
    the message's size (a 670 KiB response took 42 s, blocking the run's event loop). The
    brackets outside strings are counted line by line instead, and the value is parsed once,
    when its outermost bracket closes. Past `_PRETTY_LIMIT` bytes its lines are only counted;
    its id is then read from its start, where the SDKs write it (before `result` / `error`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.depth = 0
        self.open = False
        self.cut = False  # longer than _PRETTY_LIMIT: not kept whole, so never parsed
        self.length = 0  # its bytes so far, newlines included, cut or not: its size when it closes
        self.head = b""  # its first _HEAD bytes, kept once it is cut

    def add(self, line: bytes) -> tuple[object, object] | None:
        """Take one line. None while the value is open; once its outermost bracket closes,
        (the parsed value or None, the id of a response too long to parse or None)."""
        self.open = True
        self.length += len(line) + 1
        bare = _outside_strings(line)
        self.depth += bare.count(b"{") + bare.count(b"[") - bare.count(b"}") - bare.count(b"]")
        if self.cut:
            pass  # only its brackets count now
        elif self.size + len(line) <= _PRETTY_LIMIT:
            self.parts.append(line)
            self.size += len(line)
        else:
            self.cut, self.head, self.parts = True, b"\n".join(self.parts)[:_HEAD], []
        if self.depth > 0:
            return None
        parts, cut, head = self.parts, self.cut, self.head
        self.reset()
        if cut:
            return None, _response_id(head)
        try:
            return json.loads(b"\n".join(parts)), None
        except (ValueError, RecursionError):
            return None, None


def _response_id(head: bytes) -> object:
    """The id at the start of a response (before its `result` / `error`), else None: an `id`
    further in may be any object's."""
    match = _ID.search(head)
    answer = re.search(rb'"(?:result|error)"\s*:', head)
    if match is None or answer is None or match.start() > answer.start() or b'"method"' in head[: answer.start()]:
        return None
    return json.loads(match.group(1))


@dataclass
class StdoutEvidence:
    """What a server wrote on stdout that was not a JSON-RPC message, for failure messages."""

    bad_lines: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    first: str | None = None
    last: str | None = None  # the latest is often what the failure at hand is about
    _pretty: Pretty = field(default_factory=lambda: Pretty())
    #: the reader's splitter, whose unfinished line a failure quotes (a message without its newline)
    splitter: LineSplitter | None = None

    def note(self, kind: str, line: bytes, size: str | None = None) -> str:
        """Count one bad line; returns a one-line description for the transcript. `size`: what the
        message held when `line` is only a part of it (a line too long, a pretty-printed one's last)."""
        self.bad_lines += 1
        self.kinds[kind] += 1
        described = _quote(kind, line, size)
        if self.first is None:
            self.first = described
        self.last = described
        return described

    def describe(self, since: int = 0) -> str:
        """`The server wrote N lines on stdout that are not JSON-RPC messages ...` (when more than
        `since` of them), then what it wrote without ending the line; or ""."""
        lines = self._lines() if self.bad_lines > since else ""
        unfinished = self._unfinished()
        return f"{lines}\n{unfinished}" if lines and unfinished else lines or unfinished

    def _unfinished(self) -> str:
        """A whole JSON-RPC message that no line end followed (a line still being written, a large
        answer still arriving, says nothing yet)."""
        head, size = self.splitter.unfinished() if self.splitter is not None else (b"", 0)
        if size > len(head) or not _whole_message(head):
            return ""
        return (
            f"The server wrote {size} byte{'s' if size != 1 else ''} on stdout that no line end followed: "
            f"{_quote('an unfinished line', head)}\n"
            "  That usually means: the server does not end its messages with a newline. Over stdio each JSON-RPC "
            'message is one line, ended by \\n: write json.dumps(message) + "\\n" (Node: '
            'process.stdout.write(JSON.stringify(message) + "\\n")) and flush.'
        )

    def _lines(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in self.kinds.most_common())
        if self.kinds[_STRAY] or self.kinds[_NO_ID_ERROR] or self.kinds[_REPEATED]:  # JSON-RPC, but no use
            what = "mcp-bdd could not use"
        else:
            what = "are not JSON-RPC messages" if self.bad_lines != 1 else "is not a JSON-RPC message"
        last = f"; the last: {self.last}" if self.bad_lines > 1 and self.last != self.first else ""
        return (
            f"The server wrote {self.bad_lines} line{'s' if self.bad_lines != 1 else ''} on stdout that "
            f"{what} ({kinds}); the first: {self.first}{last}\n"
            f"  That usually means: {_meaning(self.kinds)}"
        )


def _whole_message(data: bytes) -> bool:
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0"


def _quote(kind: str, line: bytes, size: str | None = None) -> str:
    """`kind: 'the line's start' … (N bytes)`: how evidence quotes what a server sent. `size`:
    the whole message's, when `line` is a part of it."""
    quoted = line[:_QUOTE].decode("utf-8", "replace")
    cut = " …" if len(line) > _QUOTE else ""
    shown = size or (f"{len(line)} bytes" if cut else "")
    return f"{kind}: {quoted!r}{cut}" + (f" ({shown})" if shown else "")


def answer_after_202(method: str, answer: bytes) -> str:
    """The answer a server sent on its GET stream to a request whose POST it had answered with
    202 Accepted (session/_http): not a second answer, though the request already failed."""
    kind = f"an answer on the GET stream to the {method} request it had answered with 202 Accepted"
    return f"{_quote(kind, answer)}\n  That usually means: {_AFTER_202_MEANING}"


def answer_after_failed_post(method: str, answer: bytes) -> str:
    """The answer a legacy SSE server sent on its GET stream to a request whose POST had failed
    (an HTTP error, a broken connection: session/_http), which had failed the request already."""
    kind = f"an answer on the GET stream to the {method} request whose POST had failed (the request failed then)"
    return f"{_quote(kind, answer)}\n  That usually means: {_AFTER_FAILED_POST_MEANING}"


def repeated_answer(answer: bytes) -> str:
    """A second answer to one request, quoted as the stdio evidence quotes it, and what it usually
    means: for sessions whose transport does not read the messages itself (HTTP, SSE)."""
    return f"{_quote(_REPEATED, answer)}\n  That usually means: {_REPEATED_MEANING}"


class Waiting:
    """The requests mcp-bdd sent on one stream and still waits for, by id: what tells the answer
    to a request from a stray (see module doc). The writer calls `sent`, `decode_line` settles.

    Bounded: at most `_REMEMBERED` ids in flight (the oldest beyond that were abandoned without a
    cancel, as `initialize` is) and as many settled ones (answered, cancelled, or failed here),
    kept so that a late or repeated answer to one of them is not taken for a stray."""

    def __init__(self) -> None:
        self._waiting: dict[types.RequestId, str] = {}  # id (as the SDK matches it: "7" is 7) -> method, oldest first
        self._settled: dict[types.RequestId, bool] = {}  # id -> whether it was answered (else cancelled or failed)

    def sent(self, message: types.JSONRPCMessage) -> None:
        """Note a message mcp-bdd wrote: a request waits from now, a cancelled one no more."""
        if isinstance(message, types.JSONRPCRequest):
            key = coerce_request_id(message.id)  # as `request_key`
            self._settled.pop(key, None)
            self._waiting[key] = message.method
            if len(self._waiting) > _REMEMBERED:
                del self._waiting[next(iter(self._waiting))]
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if _valid_id(request_id):
                self._settle(coerce_request_id(request_id))

    def take(self, request_id: object) -> Literal["waiting", "late", "repeated"] | None:
        """Where an answer with this id goes: to a `waiting` request (now settled as answered);
        `late`, to one cancelled or failed here (the SDK drops it); `repeated`, to one already
        answered (a protocol violation); or to no request at all (None: a stray)."""
        if not _valid_id(request_id):
            return None
        key = coerce_request_id(request_id)
        if key in self._waiting:
            self._settle(key, answered=True)
            return "waiting"
        if key in self._settled:
            return "repeated" if self._settled[key] else "late"
        return None

    def count(self) -> int:
        """The requests waiting for an answer (listen streams wait for events)."""
        return sum(1 for method in self._waiting.values() if method not in _STREAMS)

    def fail(self, only: set[types.RequestId] | None = None) -> list[types.RequestId]:
        """The ids of every request waiting for an answer (or of those `only` names), settled: a
        stray fails them (module doc)."""
        if only is None:
            keys = [key for key, method in self._waiting.items() if method not in _STREAMS]
        else:  # named: a listen stream that could not be sent waits for nothing either
            keys = [key for key in self._waiting if key in only]
        for key in keys:
            self._settle(key)
        return keys

    def _settle(self, key: types.RequestId, *, answered: bool = False) -> None:
        self._waiting.pop(key, None)
        self._settled[key] = answered or self._settled.get(key, False)  # a cancel after the answer: answered
        if len(self._settled) > _REMEMBERED:
            del self._settled[next(iter(self._settled))]


def _valid_id(request_id: object) -> TypeGuard[int | str]:
    """A JSON-RPC request id (a number or a string; JSON's true is not 1 here)."""
    return isinstance(request_id, int | str) and not isinstance(request_id, bool)


#: What each kind of bad stdout means and what to do, most telling first: the first kind found is
#: said; none of them, then stdout carries logs.
_MEANINGS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (
            "pretty-printed JSON",
            "a JSON-RPC message spread over several lines",
        ),
        (
            "the server pretty-prints its JSON-RPC messages. Over stdio each message must be one line "
            "(no newlines inside it): serialise with json.dumps(message) / JSON.stringify(message), no indent."
        ),
    ),
    (
        ("invalid UTF-8",),
        "the server writes bytes that are not UTF-8 on stdout; MCP messages over stdio are UTF-8 JSON.",
    ),
    (
        (_TOO_DEEP,),
        (
            "the server answered with JSON nested deeper than JSON parsers accept (the SDK's stops at about "
            "200 levels; a recursive structure serialised without a limit?): flatten the result, or cut the recursion."
        ),
    ),
    (
        (_STRICTER,),
        (
            "the server wrote JSON that Python's json module reads but the SDK's stricter parser does not — "
            "most often a lone UTF-16 surrogate such as \\ud800 (a string cut inside an emoji): fix how the "
            "server encodes that text."
        ),
    ),
    (
        (_UNFIT,),
        (
            "the server answered with a message shaped like a JSON-RPC response whose result or error is not "
            "what MCP defines (see what the SDK said above): fix the shape the server returns."
        ),
    ),
    (
        (_BOM,),
        (
            "the server writes a UTF-8 byte order mark before its JSON (a console or an encoder set to "
            '"UTF-8 with BOM", e.g. utf-8-sig or PowerShell): JSON readers refuse it; write plain UTF-8.'
        ),
    ),
    (
        (_LONG_NUMBER,),
        (
            "the server answered with an integer of thousands of digits: Python refuses to read more than "
            "4300 (sys.get_int_max_str_digits) and JavaScript rounds anything past 2**53; send it as a string."
        ),
    ),
    (
        (NON_JSON_NUMBER,),
        (
            "the server wrote NaN or Infinity as a number: JSON has neither, and most clients refuse the whole "
            f"message. {NON_JSON_NUMBER_FIX}."
        ),
    ),
    (
        (_BATCH,),
        (
            "the server answers with JSON-RPC batches (arrays of messages): MCP removed batching in "
            "2025-06-18; write each message on its own line."
        ),
    ),
    (
        (_NO_ID_ERROR,),
        (
            "the server answered with a JSON-RPC error that names no request: it could not parse or read a "
            "message mcp-bdd sent (its stderr may say why), and did not say which one."
        ),
    ),
    (
        (_STRAY,),
        (
            "the server answers with ids that match no request mcp-bdd sent: a response must carry the id "
            "of the request it answers, unchanged (same value, same type)."
        ),
    ),
    (
        ("line too long",),
        (
            "a message was larger than max_message_bytes; raise it in [tool.mcp-bdd] if that size is expected, "
            "or the server never ends its lines."
        ),
    ),
    ((_REPEATED,), _REPEATED_MEANING),
)
_LOGS_ON_STDOUT = (
    "the server (or a library it uses) prints logs or banners on stdout. Over stdio, stdout belongs to "
    "the protocol: write logs to stderr (print(..., file=sys.stderr), console.error)."
)


def _meaning(kinds: Counter[str]) -> str:
    return next((text for names, text in _MEANINGS if any(kinds[name] for name in names)), _LOGS_ON_STDOUT)


def decode_line(
    line: bytes, evidence: StdoutEvidence, waiting: Waiting | None = None
) -> list[SessionMessage | Exception]:
    """One line of stdout: a message, an Exception describing a bad line, or nothing (blank line).

    A response that cannot be used becomes a JSON-RPC error for its own id; one that no waiting
    request can take, an Exception quoting it and an error for each waiting request (module doc).
    """
    if not line.strip():
        return []
    try:
        message = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as refused:
        return _bad_line(line, evidence, waiting, refused)
    evidence._pretty.reset()  # a good message ends any half-assembled pretty-printed one
    answer = message.message
    if waiting is None or not isinstance(answer, types.JSONRPCResponse | types.JSONRPCError):
        return [message]
    taken = waiting.take(answer.id)
    if taken == "repeated":
        return _second_answer(line, evidence)
    if taken and isinstance(answer, types.JSONRPCError) and _has_result(line):
        evidence.note(_UNFIT, line)  # the SDK reads it as an error: JSON-RPC allows one or the other
        return [_protocol_error(answer.id, _unusable_message(_UNFIT, line, "it has both a result and an error"), line)]
    if taken and holds_non_json_number(line):
        evidence.note(NON_JSON_NUMBER, line)
        return [_protocol_error(answer.id, _unusable_message(NON_JSON_NUMBER, line), line)]
    if taken:
        return [message]
    return _stray(line, evidence, waiting, answer.id, answer.error if isinstance(answer, types.JSONRPCError) else None)


def holds_non_json_number(line: bytes) -> bool:
    """Whether a response holds a bare NaN, Infinity or -Infinity. Python's json and the SDK read them
    (float('nan')), but they are no JSON (RFC 8259): a JavaScript client's JSON.parse throws on the
    answer, and a float NaN equals nothing, so a step comparing it can only fail, and confusingly.
    Python's `json.dumps` writes them by default, which is how a server comes to send them. The
    substring test keeps the parse for the rare line that names them, in a string or not."""
    if b"NaN" not in line and b"Infinity" not in line:
        return False
    try:
        json.loads(line, parse_constant=_refuse_constant)
    except _NonJsonNumber:
        return True
    except (ValueError, RecursionError):
        return False  # the SDK read it: Python's json is not the judge of anything else here
    return False


class _NonJsonNumber(ValueError):
    """`json.loads` met NaN, Infinity or -Infinity."""


def _refuse_constant(name: str) -> NoReturn:
    raise _NonJsonNumber(name)


def _has_result(line: bytes) -> bool:
    """Whether an error response (small: read twice at no cost) also carries a result."""
    if b'"result"' not in line:
        return False
    data = json.loads(line)
    return isinstance(data, dict) and "result" in data


def _bad_line(
    line: bytes, evidence: StdoutEvidence, waiting: Waiting | None, refused: ValueError
) -> list[SessionMessage | Exception]:
    """A line the SDK refused (`refused` says why): what it is, said in words."""
    if evidence._pretty.open:  # a line of a pretty-printed message, even one that is JSON alone (`"b"`, `1`)
        return [_maybe_pretty(line, evidence, waiting)]
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return [ValueError(evidence.note("invalid UTF-8", line))]
    try:
        data = json.loads(text)
    except RecursionError:
        return _unusable(line, evidence, _TOO_DEEP, _id_in(line), waiting)
    except json.JSONDecodeError:
        if text.startswith("\ufeff"):
            return _after_a_bom(line, text, evidence, waiting)
        return [_maybe_pretty(line, evidence, waiting)]
    except ValueError as exc:  # JSON all the same: an integer past sys.get_int_max_str_digits()
        return _unusable(line, evidence, _LONG_NUMBER, _id_in(line), waiting, f"Python said: {exc}")
    if _response_shaped(data):
        return _refused_response(line, evidence, waiting, data, *_why_refused(refused, data))
    if isinstance(data, list) and any(_response_shaped(item) for item in data):
        return _batch(line, evidence, waiting, data)
    return [ValueError(evidence.note("JSON that is not a JSON-RPC message", line))]


def _refused_response(
    line: bytes, evidence: StdoutEvidence, waiting: Waiting | None, data: dict[str, object], kind: str, why: str = ""
) -> list[SessionMessage | Exception]:
    """A line that is surely a response, which the SDK could not read (`kind`, `why`): it fails the
    request it answers at once; one that answers no request is a stray."""
    request_id = data.get("id")
    taken = None if waiting is None else waiting.take(request_id)
    if waiting is not None and taken is None:
        return _stray(line, evidence, waiting, request_id, data.get("error"))
    if taken == "repeated":
        return _second_answer(line, evidence)
    return _unusable(line, evidence, kind, request_id, None, why)


def _after_a_bom(
    line: bytes, text: str, evidence: StdoutEvidence, waiting: Waiting | None
) -> list[SessionMessage | Exception]:
    """A line that starts with a byte order mark, which JSON forbids (RFC 8259) and JSON-RPC readers
    refuse: a response after it fails its request at once, named, instead of waiting out the timeout
    as a line that is no JSON at all."""
    try:
        data = json.loads(text[1:])
    except (ValueError, RecursionError):
        return [_maybe_pretty(line, evidence, waiting)]
    if _response_shaped(data):
        return _refused_response(line, evidence, waiting, data, _BOM)
    return [ValueError(evidence.note(_BOM, line))]


def _response_shaped(data: object) -> TypeGuard[dict[str, object]]:
    """A JSON-RPC response, by its shape: a result or an error, or an id without a method."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return False
    return "result" in data or "error" in data or ("id" in data and "method" not in data)


def _batch(
    line: bytes, evidence: StdoutEvidence, waiting: Waiting | None, data: list[object]
) -> list[SessionMessage | Exception]:
    """A JSON-RPC batch (an array of answers): MCP has had none since 2025-06-18, and the SDK reads
    none. The requests it answers fail at once, saying so, instead of waiting out their timeout."""
    described = evidence.note(_BATCH, line)
    ids = [item.get("id") for item in data if _response_shaped(item)]
    taken = [
        request_id
        for request_id in ids
        if _valid_id(request_id) and waiting is not None and waiting.take(request_id) == "waiting"
    ]
    if not taken:
        return [ValueError(described)]
    message = (
        f"mcp-bdd could not use the server's response: {_BATCH} of {len(data)} messages "
        "(MCP sends each JSON-RPC message on its own line, no batches)."
    )
    return [_protocol_error(request_id, message, line) for request_id in taken]


def _why_refused(refused: ValueError, data: dict[str, object]) -> tuple[str, str]:
    """(kind, why: the SDK's words) for a response that Python's json module read but the SDK did not:
    its parser is stricter (depth, lone surrogates), or the message has the wrong shape. The
    SDK tries every kind of message: its words are taken from the kind `data` is (a request's
    "method: Field required" said nothing about an error without a code)."""
    errors = refused.errors() if hasattr(refused, "errors") else []
    first = errors[0] if errors else {"type": "", "msg": str(refused), "loc": ()}
    if first.get("type") == "json_invalid":
        said = str(first.get("msg", ""))[:200]
        return (_TOO_DEEP if "recursion" in said else _STRICTER), f"the SDK said: {said}"
    if "result" not in data and "error" not in data:
        return _UNFIT, "it has neither a result nor an error"
    member = "JSONRPCError" if "error" in data else "JSONRPCResponse"
    first = next((e for e in errors if e.get("loc", ())[:1] == (member,)), first)
    said = str(first.get("msg", ""))[:200]
    where = ".".join(str(part) for part in first.get("loc", ())[1:])  # [0] names the union member tried
    return _UNFIT, f"the SDK said: {where}: {said}" if where else f"the SDK said: {said}"


def _unusable_message(kind: str, line: bytes, why: str = "", size: str | None = None) -> str:
    """The error a request gets for a response of its that mcp-bdd could not use."""
    said = f"; {why}" if why else ""
    return f"mcp-bdd could not use the server's response: {kind} ({size or f'{len(line)} bytes'}{said})."


def _stray(
    line: bytes, evidence: StdoutEvidence, waiting: Waiting, request_id: object, error: object
) -> list[SessionMessage | Exception]:
    """A response no waiting request can take: quoted as evidence (the transcript records it, a
    failure's `describe` quotes it), then an error for every request waiting for an answer, which
    says what the server sent and what that means."""
    if request_id is None and error is not None:
        code, text = _error_parts(error)
        kind = _NO_ID_ERROR
        what = f"the server answered with a JSON-RPC error without an id ({code} {text}): " + (
            "it could not read the request mcp-bdd sent"
            if code in _UNREADABLE
            else "it did not say which request failed — a server must echo the request's id"
        )
    else:
        kind = _STRAY
        shown = (
            "without an id, so no request can take it"
            if request_id is None
            else (f"with id {json.dumps(request_id, default=str)[:80]}, but no request with that id is waiting")
        )
        what = f"the server answered {shown} (waiting: {waiting.count()}) — a server must echo the request's id"
    described = evidence.note(kind, line)
    failed: list[SessionMessage | Exception] = [ValueError(described)]
    failed.extend(_protocol_error(key, f"{what}.", line) for key in waiting.fail())  # quoted in `describe`
    return failed


def _error_parts(error: object) -> tuple[object, str]:
    """(code, message) of a JSON-RPC error object, parsed or not, the message cut short."""
    code: object
    text: object
    if isinstance(error, types.ErrorData):
        code, text = error.code, error.message
    elif isinstance(error, dict):
        code, text = error.get("code"), error.get("message")
    else:
        code, text = None, None
    return code, str(text)[:200] if text is not None else "(no message)"


def _maybe_pretty(line: bytes, evidence: StdoutEvidence, waiting: Waiting | None) -> SessionMessage | Exception:
    """A line of a message spread over several lines: re-assemble it to fail its request at once."""
    pretty = evidence._pretty
    if not pretty.open and line.strip() not in (b"{", b"["):
        return ValueError(evidence.note("not JSON", line))
    length = pretty.length + len(line)  # its size in all once it closes, which resets it
    closed = pretty.add(line)
    kind = "a JSON-RPC message spread over several lines"
    if closed is None:
        return ValueError(evidence.note("pretty-printed JSON", line))
    whole, cut_id = closed
    size = f"{length} bytes in all"
    answer = whole if isinstance(whole, dict) and ("result" in whole or "error" in whole) else None
    if answer is not None or cut_id is not None:  # an answer, or one too long to re-assemble whose id is known
        request_id = answer.get("id") if answer is not None else cut_id
        return _unusable(line, evidence, kind, request_id, waiting, size=size)[0]
    return ValueError(evidence.note(kind if whole is not None else "pretty-printed JSON", line, size))


def _id_in(line: bytes) -> object:
    """The id of a response we cannot parse: near its start (the SDKs write it first) or its end."""
    for window in (line[:256], line[-256:]):
        match = _ID.search(window)
        if match:
            return json.loads(match.group(1))
    return None


def _unusable(
    line: bytes,
    evidence: StdoutEvidence,
    kind: str,
    request_id: object,
    waiting: Waiting | None,
    why: str = "",
    *,
    size: str | None = None,
) -> list[SessionMessage | Exception]:
    """Count the line; fail its request at once when its id is known, else report it as a bad line.
    The request is settled as answered, if badly: another answer, should one follow, is repeated.
    `size`: the message's, when `line` is only a part of it."""
    if waiting is not None and waiting.take(request_id) == "repeated":
        return _second_answer(line, evidence)
    described = evidence.note(kind, line, size)
    if not _valid_id(request_id):
        return [ValueError(described)]
    return [_protocol_error(request_id, _unusable_message(kind, line, why, size), line)]


def _second_answer(line: bytes, evidence: StdoutEvidence) -> list[SessionMessage | Exception]:
    """An answer to a request already answered: evidence only, since its request has its first."""
    return [ValueError(evidence.note(_REPEATED, line))]


def _protocol_error(request_id: types.RequestId | None, message: str, line: bytes) -> SessionMessage:
    """A JSON-RPC error for `request_id` that the session reports as a protocol violation (PROTOCOL_MARK)."""
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(
            code=types.PARSE_ERROR,
            message=message,
            data={"mcp_bdd": PROTOCOL_MARK, "first_bytes": line[:_QUOTE].decode("utf-8", "replace")},
        ),
    )
    return SessionMessage(error)


def unsendable(waiting: Waiting, why: str, only: set[types.RequestId] | None = None) -> list[SessionMessage]:
    """An error for every request waiting for an answer that can no longer come (or for those
    `only` names): the server's stdin is closed (`why` says how), so the request never reached it."""
    message = f"mcp-bdd could not send the request: {why}."
    return [_protocol_error(key, message, b"") for key in waiting.fail(only)]


def request_key(message: types.JSONRPCMessage) -> types.RequestId | None:
    """The id a request is matched by (as `Waiting` keeps it), None for anything else."""
    return coerce_request_id(message.id) if isinstance(message, types.JSONRPCRequest) else None


def too_long(
    line: LineTooLong, evidence: StdoutEvidence, waiting: Waiting | None = None
) -> list[SessionMessage | Exception]:
    """A line past max_line bytes, of which only its head is kept: fail its request if its id shows
    early. The size said is the limit it passed, not the head's."""
    size = f"more than max_message_bytes = {size_text(line.limit)}"
    return _unusable(line.head, evidence, "line too long", _id_in(line.head), waiting, size=size)
