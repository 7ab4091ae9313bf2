"""The run's event loop: one thread behind an anyio blocking portal, started once per run and
stopped the one way that cannot hang the process.

Every run has one, a behave run and a one-shot command (`probe`, `call`, `list`, `check`) alike:
sessions, fakes and users' `ctx.portal` code all live in it. anyio's own way out
(`start_blocking_portal`'s exit) waits, without a deadline, for every task in the loop to end.
Two kinds of task would make that wait forever, so `RunPortal.stop` deals with them first:

- session hops (`session/_hop`) are not the portal's tasks, and a run interrupted mid-request
  (Ctrl-C) leaves some running: `cancel_pending` cancels them, at every await, for a few seconds;
- a loop that in-process code blocks for good (a tool that never returns; a step has already
  failed saying so) can end nothing: it is left behind, and the process exits with 1 once the
  run's reports are written, instead of joining the loop's thread at interpreter exit.

Even then anyio's exit is given `_EXIT_GRACE` seconds, in a thread of its own; past that the loop
is left behind the same way. Not covered: code of the user's that ignores cancellation forever
inside the loop's own thread is what "blocked for good" means here; it is not waited for.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

__all__ = ["RunPortal"]

#: How long anyio's own stop of the loop may take once session hops are cancelled: it cancels the
#: portal's tasks (fakes, users' portal code) and waits for them; roomy for a loaded machine.
_EXIT_GRACE = 20.0
#: Left-behind portals, kept referenced: an unreferenced one's generator cleanup would stop it, forever.
_ABANDONED: list[AbstractContextManager[BlockingPortal]] = []


class RunPortal:
    """The run's event loop in a thread: `portal` to reach it, `stop()` at the run's end (once)."""

    def __init__(self) -> None:
        from anyio.from_thread import start_blocking_portal

        cm = start_blocking_portal()
        self.portal = cm.__enter__()
        self._cm: AbstractContextManager[BlockingPortal] | None = cm

    def stop(self) -> None:
        """Cancel what an interrupted run left running, then stop the loop; never waits unbounded."""
        cm, self._cm = self._cm, None
        if cm is None:
            return
        from mcp_bdd.session import cancel_pending, stalled

        with contextlib.suppress(Exception):
            cancel_pending(self.portal)
        if stalled(self.portal):
            _ABANDONED.append(cm)
            _exit_at_interpreter_shutdown(_BLOCKED)
        elif not _exited_within(self.portal, cm, _EXIT_GRACE):
            _ABANDONED.append(cm)
            _exit_at_interpreter_shutdown(_SLOW_EXIT)


def _exited_within(portal: BlockingPortal, cm: AbstractContextManager[BlockingPortal], grace: float) -> bool:
    """Stop the portal, cancelling its remaining tasks (a fake's server task: nothing is left to
    use it), then anyio's exit (stop the loop, join its thread), in a thread of their own; say
    whether they ended within `grace` seconds."""

    def leave() -> None:
        with contextlib.suppress(Exception):
            portal.call(portal.stop, True)
        with contextlib.suppress(Exception):
            cm.__exit__(None, None, None)

    thread = threading.Thread(target=leave, name="mcp-bdd-portal-stop", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # the interpreter is shutting down (Python 3.12+ starts no thread then)
        leave()
        return True
    thread.join(grace)
    return not thread.is_alive()


_BLOCKED = (
    "the run's event loop is still blocked by an in-process server (see the timeout above); "
    "the run ends without waiting for it."
)
_SLOW_EXIT = (
    f"the run's event loop did not stop within {_EXIT_GRACE:g} s of being asked to (a fake, or code run "
    "through ctx.portal, that ignores cancellation?); the run ends without waiting for it."
)


def _exit_at_interpreter_shutdown(why: str) -> None:
    """The run's event loop will not stop. Stopping it would wait forever, and so would the
    interpreter's exit, which joins the threads that wait on that loop. Once the run's reports are
    written and the interpreter begins to shut down, the process exits with 1 (the run did not
    end cleanly) instead of joining them."""
    print(f"\nmcp-bdd: {why}", file=sys.__stderr__)  # behave captures the hooks' own stderr

    def exit_now() -> None:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                stream.flush()  # type: ignore[union-attr]
        os._exit(1)

    # threading's shutdown hooks run first at exit, before any thread is joined (the one
    # concurrent.futures uses to join its workers); a thread waiting for the main thread is the fallback
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(exit_now)
        except RuntimeError:  # the interpreter is already shutting down: nothing is left to wait for
            exit_now()
    else:

        def exit_after_main() -> None:
            threading.main_thread().join()
            exit_now()

        threading.Thread(target=exit_after_main, daemon=True).start()
