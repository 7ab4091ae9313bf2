"""The run's event loop goes on, whatever in-process code raises in it.

Why: asyncio lets SystemExit and KeyboardInterrupt out of a task, and out of the loop itself
(a task re-raises them after storing them). An in-process server's tool that called
`sys.exit(2)` (a CLI habit), or a lifespan that exits on a missing setting, thus stopped the
run's portal loop, and the step waiting on it re-raised SystemExit in behave's thread: behave
ended on the spot with status 2, without a summary, a report or a word. Over stdio the same code
ends only the server's process, and the step says so.

Here, every task of the run's loop runs its coroutine inside `_contained`, which turns both into
`ServerExited`, an ordinary exception: the in-process server's task group ends with it, its
session is lost like a process that exited, the step says what exited and where, and the run goes
on. So does any other BaseException a user's code raises (`class Abort(BaseException)`): asyncio
keeps it in the task, the step waiting on it re-raised it in behave's thread, and behave, which
catches only Exception, ended the run without a word. Only in the loop's thread: signals reach
the main thread (Ctrl-C and SIGTERM stop behave there, as before), so in the loop nothing but
users' code raises these.

Not covered: code a step runs through the portal itself (`ctx.portal.call`, a fake's setup):
anyio's portal hands what it raised, SystemExit included, to the calling thread before any task
boundary sees it. That is the step's own code, as a `sys.exit()` in a step would be.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["ServerExited", "as_exited", "contain_exits", "is_exit"]

T = TypeVar("T")


class ServerExited(Exception):
    """In-process code (a server's tool or lifespan, a fake) raised SystemExit or KeyboardInterrupt
    in the run's event loop. `exit` is what it raised; the traceback still leads to where."""

    def __init__(self, exit: BaseException) -> None:
        self.exit = exit
        code = getattr(exit, "code", None)
        called = f"called sys.exit({code!r})" if isinstance(exit, SystemExit) else f"raised {type(exit).__name__}"
        super().__init__(f"its code {called}")

    @property
    def code(self) -> int:
        """The exit status a process would have had (`sys.exit("message")` is 1; Ctrl-C 130; an
        uncaught exception 1)."""
        if isinstance(self.exit, KeyboardInterrupt):
            return 130
        if not isinstance(self.exit, SystemExit):
            return 1
        code = self.exit.code
        return 0 if code is None else code if isinstance(code, int) else 1


def is_exit(exc: BaseException) -> bool:
    """What would end a process that let it out, and what `_contained` made of it (in a request's
    own task, as the SDK calls an in-process server's handler directly from the client's request,
    it is still what the code raised): SystemExit, KeyboardInterrupt, any other BaseException
    that is no Exception, GeneratorExit raised while a task runs. Not the loop's own control
    flow: cancellation, a coroutine being closed (GeneratorExit thrown into it from outside any
    task), and exception groups (whoever unwraps one looks at its members)."""
    if isinstance(exc, ServerExited):
        return True
    if isinstance(exc, GeneratorExit):
        return _in_a_task()
    return not isinstance(exc, Exception | asyncio.CancelledError | BaseExceptionGroup)


def _in_a_task() -> bool:
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no loop runs in this thread
        return False


def as_exited(exc: BaseException) -> ServerExited:
    """An exit (`is_exit`) as a `ServerExited`."""
    return exc if isinstance(exc, ServerExited) else ServerExited(exc).with_traceback(exc.__traceback__)


async def _contained(coro: Awaitable[T]) -> T:
    own = asyncio.current_task()
    try:
        return await coro
    except BaseException as exc:
        if isinstance(exc, ServerExited) or not is_exit(exc):
            raise
        if isinstance(exc, GeneratorExit) and asyncio.current_task() is not own:
            # thrown in by close(): a pending task whose coroutine the garbage collector closed
            # while another task ran. Converting it raised ServerExited out of close(), which
            # Python reports as an unraisable exception on stderr.
            raise
        raise as_exited(exc) from exc  # its traceback, so `errors.raised` names the user's line


def _factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
    # as asyncio's task factory type has it (a coroutine, or a generator on 3.11), with the Task's keywords
    task = asyncio.Task(_contained(coro), loop=loop, **kwargs)
    if inspect.iscoroutine(coro):
        task.add_done_callback(functools.partial(_close_unstarted, coro))
    return task


def _close_unstarted(coro: Coroutine[object, object, object], _task: object) -> None:
    """A task cancelled before its first step never started `coro`: closed here, as asyncio would
    have, or Python warns "coroutine ... was never awaited" (anyio cancels such tasks routinely)."""
    if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
        coro.close()


def contain_exits() -> None:
    """Run in the loop: from now on, every task it starts contains exits (once per loop; a loop
    with a task factory of someone else's is left as it is)."""
    loop = asyncio.get_running_loop()
    if loop.get_task_factory() is None:
        loop.set_task_factory(_factory)
