"""Every change mcp-bdd makes to behave, and to the test process, for a run: here, and undone when it ends.

mcp-bdd runs inside the project's own test process, beside its in-process server, so it changes
nothing there to save time (design.md: nothing is patched for speed). What it does change, it
changes for correctness, from `before_all` to the end of the run (`after_all`, or atexit when
behave's runner crashed), and puts back:

- behave's step tracebacks (`behave.model.traceback`): one of mcp-bdd's own errors (UsageError,
  ServerStartError, ...) already says what went wrong, where and what to do, and a traceback
  would bury it; every other traceback may quote a server, and is masked and escaped.
- behave's capture buffers (`behave.capture.StringIO`): an in-process server's print() lands in
  behave's console, JUnit and JSON; each write is masked as it is captured, so the offsets behave
  keeps to cut a step's part out of the scenario's output stay right.
- logging's record factory (`_logs`): the SDK's log lines about a server are escaped, and every
  record's secrets masked, where records are made.
- SIGTERM, when nobody handles it: the same path as Ctrl-C, so the run's servers are reaped.

Two more live only as long as behave's runner, and go with it: each behave `json` formatter's
`embedding` (`_attach`: evidence filed before, during and after a scenario's steps) and the
runner's `after_scenario` hook (wrapped so the after hooks' evidence is told apart).

Written for behave 1.3 (pyproject.toml pins it): another version gets a warning naming both.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_bdd.hooks._model import Context, Scenario

__all__ = ["WRITTEN_FOR", "adapt_behave", "version_warning", "wrap_after_scenario"]

#: the behave release these adaptations were written for (major, minor)
WRITTEN_FOR = (1, 3)


class _StepTracebacks:
    """Stands in for `behave.model`'s `traceback` module: shortens mcp-bdd's own errors to their
    message, and masks secrets and terminal escapes in every other traceback."""

    def __getattr__(self, name: str) -> object:
        return getattr(traceback, name)

    @staticmethod
    def format_exc(limit: int | None = None, chain: bool = True) -> str:
        from mcp_bdd._text import printable
        from mcp_bdd.errors import McpBddError

        exc = sys.exc_info()[1]
        if isinstance(exc, McpBddError) and not os.environ.get("MCP_BDD_TRACEBACK"):
            return f"{type(exc).__name__}: {exc}\n"
        # any error's message may quote a server (an SDK validation error): no secrets, no escapes
        return printable(traceback.format_exc(limit, chain))


class MaskingIO(io.StringIO):
    """A StringIO that masks what is written to it (behave's capture buffer)."""

    def write(self, text: str) -> int:
        from mcp_bdd.secrets import mask

        super().write(mask(text))
        return len(text)  # what the caller wrote, as a stream reports it


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    # Reaping here could deadlock on a lock the interrupted code holds: behave stops, after_all
    # and atexit reap the servers.
    raise KeyboardInterrupt(f"signal {signum}")


def version_warning(version: str) -> str | None:
    """What to say when behave's version is not the one these adaptations were written for."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return None
    if (major, minor) == WRITTEN_FOR:
        return None
    return (
        f"mcp-bdd adapts behave {WRITTEN_FOR[0]}.{WRITTEN_FOR[1]} (step tracebacks, captured output, "
        f"attachments); this is behave {version}. If reports or failures look wrong, install "
        f'"behave>={WRITTEN_FOR[0]}.{WRITTEN_FOR[1]},<{WRITTEN_FOR[0]}.{WRITTEN_FOR[1] + 1}".'
    )


def adapt_behave() -> Callable[[], None]:
    """Make the run's process-wide changes; returns what undoes them (once, however often called)."""
    import behave
    import behave.capture
    import behave.model

    from mcp_bdd._logs import guard_sdk_logs
    from mcp_bdd._text import WARNING_PREFIX

    warning = version_warning(str(getattr(behave, "__version__", "")))
    if warning:
        print(f"{WARNING_PREFIX}{warning}", file=sys.stderr)
    undo: list[Callable[[], None]] = [guard_sdk_logs()]
    undo.append(_replace(behave.model, "traceback", _StepTracebacks()))
    undo.append(_replace(behave.capture, "StringIO", MaskingIO))
    if hasattr(signal, "SIGTERM") and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _as_ctrl_c)
        undo.append(_put_back_sigterm)

    def restore() -> None:
        while undo:
            undo.pop()()

    return restore


def _replace(module: ModuleType, name: str, stand_in: object) -> Callable[[], None]:
    """Set `module.name` to `stand_in`; what puts the original back, unless someone replaced ours since."""
    original = getattr(module, name)
    setattr(module, name, stand_in)

    def put_back() -> None:
        if getattr(module, name) is stand_in:
            setattr(module, name, original)

    return put_back


def _put_back_sigterm() -> None:
    if signal.getsignal(signal.SIGTERM) is _as_ctrl_c:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def wrap_after_scenario(runner: object, begin: Callable[[Context], None]) -> None:
    """Call `begin(context)` when the after_scenario hook starts, ahead of the user's code: the
    before hooks' evidence is taken, and mcp-bdd's formatters told that what is attached from then
    on comes after the steps.

    Usually the first step's start marks where the before hooks' evidence ends. When no step
    began (the first one is undefined, a before hook failed), only the start of after_scenario
    can; and a user's after_scenario runs its own code before it calls ours. behave keeps the
    hooks in `runner.hooks` (environment.py's namespace), so the one found there is wrapped.
    """
    hooks = getattr(runner, "hooks", None)
    if not isinstance(hooks, dict):
        return
    user_hook = hooks.get("after_scenario")
    if user_hook is None or getattr(user_hook, "_mcp_bdd_marks_after", False):
        return

    def after_scenario(context: Context, scenario: Scenario) -> None:
        begin(context)
        user_hook(context, scenario)

    after_scenario._mcp_bdd_marks_after = True  # type: ignore[attr-defined]
    hooks["after_scenario"] = after_scenario
