"""The SDK's own log lines, made as safe as mcp-bdd's: secrets masked, terminal escapes shown.

Why: the `mcp` SDK (and httpx under it) logs what it could not use with the server's text in it
— an SSE event's name, a notification that failed validation with pydantic's `input_value=`
quoting the value — and behave prints captured logs with a failure. A hostile server's escape
sequences then reached the terminal raw (clearing it, retitling it), and a token it echoed in
such a value was printed whole. mcp-bdd's own messages go through `_text.printable`; so do
these, at the one place every log record is made: the record factory. Records are told by the
file that logged them, not by logger name: the SDK's client session logs as plain "client", and
a filter on one logger misses its children.

Every other record (an in-process server's own logging runs in behave's process, and behave
prints and keeps what it captured) is masked, not escaped: a server that logs the token it was
given leaked it with a failure, in the console and behave's JUnit. Its own print() is masked
where behave captures it (`_behave`).

An error mcp-bdd raised on purpose inside the SDK's tasks (an SSE endpoint it refuses, a message
past `max_message_bytes`) is logged by the SDK with its traceback, then reported by mcp-bdd as
the step's failure, with a tip. The log keeps one line (the SDK's words and the error's), not the
traceback, which only pointed into mcp-bdd's own checks. So does a server's message that did not
fit the SDK's models ("Failed to validate notification: notifications/progress" and pydantic's
summary): a traceback through the SDK and pydantic said nothing more about the server.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable

from mcp_bdd._text import printable, unwrap
from mcp_bdd.errors import McpBddError
from mcp_bdd.secrets import mask

__all__ = ["guard_sdk_logs"]

#: the packages whose log lines may quote a server
_QUOTING = ("mcp", "mcp_types", "httpx", "httpx2", "httpcore", "httpcore2", "sse_starlette", "pydantic")


def _package_dirs() -> tuple[str, ...]:
    """Where those packages live, found without importing them (`import mcp` costs a second)."""
    dirs = []
    for name in _QUOTING:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.join(os.path.realpath(location), ""))
    return tuple(dirs)


def guard_sdk_logs() -> Callable[[], None]:
    """Install the guard (behave's before_all, the `mcp-bdd` command); returns what takes it out
    again, unless another factory was installed over it since. Installed once: a second call
    returns a no-op."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "mcp_bdd_guard", False):
        return lambda: None

    quoting = _package_dirs()

    def make_record(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if os.path.realpath(record.pathname).startswith(quoting):
            _guard(record)
        else:
            _mask(record)
        return record

    make_record.mcp_bdd_guard = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make_record)

    def take_out() -> None:
        if logging.getLogRecordFactory() is make_record:
            logging.setLogRecordFactory(previous)

    return take_out


def _mask(record: logging.LogRecord) -> None:
    """The record's message and traceback with secrets masked; untouched when they hold none."""
    try:
        text = record.getMessage()
        masked = mask(text)
        if masked != text:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            trace = logging.Formatter().formatException(record.exc_info)
            if (masked := mask(trace)) != trace:
                record.exc_text = masked
        if record.stack_info and (masked := mask(record.stack_info)) != record.stack_info:
            record.stack_info = masked
    except Exception:  # a log record is never worth an error of its own
        return


def _is_validation_error(exc: BaseException) -> bool:
    """pydantic's ValidationError, told by its type without importing pydantic (the SDK has, if it logged one)."""
    return any(cls.__name__ == "ValidationError" and cls.__module__.startswith("pydantic") for cls in type(exc).__mro__)


def _guard(record: logging.LogRecord) -> None:
    """The record's message, and the traceback it carries, made printable now (a handler would
    format them later, raw)."""
    try:
        record.msg, record.args = printable(record.getMessage()), None
        exc_info = record.exc_info
        if exc_info and exc_info[1] is not None:
            cause = unwrap(exc_info[1])
            if isinstance(cause, McpBddError):  # reported in full as the step's failure: one line here
                record.msg, record.exc_info, record.exc_text = f"{record.msg}: {cause}", None, None
            elif _is_validation_error(cause):  # what the server sent did not fit: said, not traced
                said = "; ".join(printable(line) for line in str(cause).splitlines()[:6])
                record.msg, record.exc_info, record.exc_text = f"{record.msg}: {said}", None, None
            else:
                record.exc_text = printable(logging.Formatter().formatException(exc_info).rstrip("\n"))
    except Exception:  # a log record is never worth an error of its own
        return
