"""JSON-RPC over a pair of pipe fds: the stdio transport of every server process we start.

Why our own transport and not the SDK's `stdio_client`: the process exists before the transport
does (cold-spawned, pre-started or forked by the zygote), so a start failure can quote its exit
code and stderr, and a server can be started ahead of time. The framing is `_framing`'s: linear,
bounded, and it names what a server wrote instead of JSON-RPC. Closing the transport only closes
our ends of the pipes (EOF on the server's stdin); stopping the process is `ServerProcess.stop`.

Why the transport watches the process too: EOF on stdout comes when the last holder of the pipe
closes it, and a helper the server started (`sh -c`, `npx`, a worker that inherited stdout)
holds it after the server itself has died. A request to a crashed server then waited its whole
`timeout` and was blamed on a slow tool. So the stream also ends once the server process has
failed — exited with a non-zero code or by a signal (a pidfd wakes the loop) — and its pipe
holds nothing more: the request fails at once, and the failure quotes the exit code. An exit
with code 0 does not end it (where there is no keeper, `_keeper.py`, to end what the server left
behind: a wrapper that forked the real server and exited leaves it talking on the same pipes).

Why the transport watches the server's stdin: a server that answers and then closes its stdin
(it will read no more) while it keeps running made a request written just before the close
vanish — the write succeeded into the pipe, the kernel discarded it unread — and wait its whole
`timeout` (on a loaded machine, the project's own test of it hung). An epoll on our end of that
pipe wakes the loop when its read end closes (EPOLLERR, no polling); what the pipe still holds
then (FIONREAD) is exactly the requests the server never read, and they fail at once, as does
every later one. Requests it did read may still be answered, and keep waiting.

Why the writer tells the reader what it sent (`Waiting`): a response whose id matches no
request, or an error without an id (a server that could not parse what it read), was dropped by
the SDK, and its request waited its whole `timeout` to say "timed out". Only the transport sees
both directions: knowing which requests are in flight, the reader fails them at once, quoting
what the server sent (see `_framing`).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import os
import select
import struct
import termios
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import RequestId

from mcp_bdd._sdk import TransportStreams
from mcp_bdd.servers._framing import (
    LineSplitter,
    LineTooLong,
    StdoutEvidence,
    Waiting,
    decode_line,
    request_key,
    too_long,
    unsendable,
)

__all__ = ["ExitWatch", "PipeTransport"]

#: where the session reads what the server sent: its messages, and an Exception for each bad line
_Out = MemoryObjectSendStream[SessionMessage | Exception]


class ExitWatch(Protocol):
    """What the transport needs of the server process it carries (`_process.ServerProcess`)."""

    @property
    def pid(self) -> int: ...

    @property
    def server_pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def note_descendants(self) -> None: ...

    def exited(self) -> bool: ...


_CHUNK = 1 << 20
_WRITTEN = 4096  # requests whose place in the written bytes is kept: the most a pipe could hold unread
_QUEUED_WRITES = 8  # messages that may wait for the server's stdin while one write blocks (`_streams`)
#: how long a server's exit may take to show once one of its pipes closed (a dying process closes its
#: files before its pidfd says it exited): its stdin (`_runs_on` after it), or its stdout (before we
#: close its stdin, `_let_exit_show`); a crash is then told by its exit code, not as a closed pipe
_EXIT_SHOWS = 0.5
#: epoll tells when the server closes its stdin (Linux); elsewhere a failed write alone does
_WATCHES_PIPES = hasattr(select, "epoll")
_F_SETPIPE_SZ = 1031  # Linux: a 1 MiB pipe means 16x fewer wake-ups for a large result


def _failed(pidfd: int) -> bool | None:
    """Whether our exited child failed (a non-zero code, a signal), read without reaping it: its
    pid must stay ours until `ServerProcess.stop` has signalled its group. None if not our child."""
    try:
        info = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (AttributeError, OSError):
        return None
    if info is None:
        return None
    return info.si_code != os.CLD_EXITED or info.si_status != 0


def _unread(write_fd: int, sent: int) -> int:
    """The bytes the pipe still holds (never read by the server); all we sent if it cannot tell."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(write_fd, termios.FIONREAD, b"\0" * 4))[0])
    except OSError:
        return sent


class PipeTransport(contextlib.AbstractAsyncContextManager[TransportStreams]):
    """Newline-delimited JSON-RPC over `write_fd` (the server's stdin) and `read_fd` (its stdout)."""

    def __init__(
        self,
        write_fd: int,
        read_fd: int,
        evidence: StdoutEvidence,
        max_line: int,
        process: ExitWatch | None = None,
    ) -> None:
        self.write_fd, self.read_fd = write_fd, read_fd
        self.evidence = evidence
        self.waiting = Waiting()  # the requests in flight: what tells an answer from a stray
        self.max_line = max_line
        self.process = process  # the server process: its failure ends the stream, whoever holds stdout
        self._exited = False  # it has failed: what the pipe still holds is all it wrote
        self._stdout_ended = False  # EOF on its stdout: it closed it, most often because it is exiting
        self._waiting: anyio.CancelScope | None = None  # the reader's wait for data, woken by the exit
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        with contextlib.suppress(OSError):
            fcntl.fcntl(read_fd, _F_SETPIPE_SZ, _CHUNK)
        self._cm: contextlib.AbstractAsyncContextManager[TransportStreams] | None = None
        self.closed_while_running = False  # mcp-bdd closed the server's stdin while it still ran
        self._sent = 0  # bytes written to the server's stdin
        self._written: collections.deque[tuple[RequestId, int]] = collections.deque(maxlen=_WRITTEN)  # (id, end)
        self._deaf: str | None = None  # why the server's stdin takes nothing more (it closed it)

    def close_stdin(self) -> None:
        """EOF on the server's stdin; idempotent (the transport's exit and the process stop both call it)."""
        fd, self.write_fd = self.write_fd, -1
        if fd >= 0:
            # what its exit code will mean: it ended on its own, or because we did this
            self.closed_while_running = self._still_running()
            if self.closed_while_running and self.process is not None:
                self.process.note_descendants()  # it may exit on this EOF before its stop begins
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        self.close_stdin()
        fd, self.read_fd = self.read_fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    async def _receive(self) -> bytes:
        while True:
            if self.read_fd < 0:
                raise anyio.EndOfStream
            try:
                data = os.read(self.read_fd, _CHUNK)
            except BlockingIOError:
                if self._exited:
                    raise anyio.EndOfStream from None  # no EOF will come while a helper holds the pipe
                try:
                    with anyio.CancelScope() as self._waiting:
                        await anyio.wait_readable(self.read_fd)
                finally:
                    self._waiting = None
                continue
            except OSError as exc:
                raise anyio.EndOfStream from exc
            if not data:
                self._stdout_ended = True
                raise anyio.EndOfStream
            return data

    async def _watch_exit(self) -> None:
        """Wake the reader when the server process fails (kernels with pidfds; else EOF alone ends it)."""
        assert self.process is not None
        process = self.process
        failed: bool | None = None
        try:
            pidfd = os.pidfd_open(process.pid)
        except ProcessLookupError:
            pidfd = -1  # gone already (the zygote reaps its children): its status says how
        except (AttributeError, OSError):
            return
        if pidfd >= 0:
            try:
                await anyio.wait_readable(pidfd)
                failed = _failed(pidfd)
            finally:
                os.close(pidfd)
        if failed is None:  # not our child: the zygote tells (a socket round trip, off the loop)
            failed = bool(await anyio.to_thread.run_sync(lambda: process.returncode))
        if not failed:
            return  # exit code 0 (a wrapper that left the server running): EOF decides
        self._exited = True
        if self._waiting is not None:
            self._waiting.cancel()

    async def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self.write_fd < 0:
                raise anyio.BrokenResourceError
            try:
                written = os.write(self.write_fd, view)
                self._sent += written
                view = view[written:]
            except BlockingIOError:
                await anyio.wait_writable(self.write_fd)
            except OSError as exc:
                raise anyio.BrokenResourceError from exc

    async def _reader(self, out: _Out, writers: _Out) -> None:
        """`writers`: the writer's handle on the same stream, closed with ours: the stream's end is
        how the session learns that the server went away."""
        splitter = self.evidence.splitter = LineSplitter(self.max_line)
        async with out, writers:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                while True:
                    for line in splitter.feed(await self._receive()):
                        if isinstance(line, LineTooLong):
                            messages = too_long(line, self.evidence, self.waiting)
                        else:
                            messages = decode_line(line, self.evidence, self.waiting)
                        for message in messages:
                            await out.send(message)

    async def _writer(self, source: MemoryObjectReceiveStream[SessionMessage], out: _Out) -> None:
        unwritable: str | None = None  # why the server's stdin takes nothing any more
        async with source, out:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for item in source:
                    self.waiting.sent(item.message)  # before it is written: its answer may come at once
                    if self._deaf is None and unwritable is None:
                        data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                        try:
                            await self._send(data.encode())
                            if (key := request_key(item.message)) is not None:
                                self._written.append((key, self._sent))
                            continue
                        except (anyio.BrokenResourceError, OSError):
                            unwritable = await self._why_unwritable()
                            if unwritable is None:
                                return  # it exited, or we closed its stdin: the reader's end says so
                            if _WATCHES_PIPES:
                                self._deaf = unwritable
                    if self._deaf is not None:  # this request alone: the watch fails those never read
                        key = request_key(item.message)
                        failed = unsendable(self.waiting, self._deaf, set() if key is None else {key})
                    else:  # no watch: every waiting one (which of them the server read, nothing can tell)
                        assert unwritable is not None
                        failed = unsendable(self.waiting, unwritable)
                    for message in failed:
                        await out.send(message)

    async def _why_unwritable(self) -> str | None:
        """Why a write failed while the server still runs (it closed its own stdin), or None:
        we closed it, or the server is gone (its exit code and stderr tell it better)."""
        if self.write_fd < 0 or self.process is None or not self._still_running():
            return None
        return (
            f"the server closed its stdin (pid {self.process.server_pid} is still running): it can no longer receive "
            "requests, and every request of this session fails at once from now on"
        )

    async def _watch_stdin(self, out: _Out) -> None:
        """Wake when the server closes its stdin while it runs (module doc): fail at once the
        requests it never read, and every later one (the writer reads `_deaf`)."""
        fd = self.write_fd
        if fd < 0 or self.process is None or not _WATCHES_PIPES:
            return
        with select.epoll() as poll:
            poll.register(fd, 0)  # EPOLLERR alone: reported once the pipe's read end is closed
            await anyio.wait_readable(poll.fileno())
        if self.write_fd != fd or not await self._runs_on():
            return  # we closed it, or the server exited: its exit code says it better
        why = await self._why_unwritable()
        if why is None or self.write_fd != fd:
            return
        self._deaf = why
        unread = _unread(fd, self._sent)
        never_read = {key for key, end in self._written if end > self._sent - unread}
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            for message in unsendable(self.waiting, why, never_read):
                await out.send(message)

    async def _runs_on(self) -> bool:
        """Whether the server is still running `_EXIT_SHOWS` after one of its pipes closed (woken by its exit)."""
        assert self.process is not None
        try:
            pidfd = os.pidfd_open(self.process.pid)
        except OSError:
            return False
        try:
            with anyio.move_on_after(_EXIT_SHOWS):
                await anyio.wait_readable(pidfd)
                return False
            return True
        finally:
            os.close(pidfd)

    async def _let_exit_show(self) -> None:
        """Before its stdin closes: a server whose stdout ended is most often exiting, and a dying
        process closes its files before its pidfd says it exited (its keeper reaps it first). Closing
        its stdin in that moment blamed the exit on mcp-bdd ("once mcp-bdd had closed its stdin") for
        a server that exited as it started; so its exit gets `_EXIT_SHOWS` to show. A server that
        closed its stdout and lives on (it can no longer answer) is said to be running, as before."""
        if self._stdout_ended and self.write_fd >= 0 and self._still_running():
            with anyio.CancelScope(shield=True):
                await self._runs_on()

    def _still_running(self) -> bool:
        """Whether the server process has not exited (a pidfd poll: nothing is reaped)."""
        return self.process is not None and not self.process.exited()

    @contextlib.asynccontextmanager
    async def _streams(self) -> AsyncIterator[TransportStreams]:
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        # a few messages may wait while a write blocks (a server that stops reading its stdin): the
        # SDK's courtesy cancel for a timed-out request then goes in at once, instead of holding the
        # step up to 5 s more behind a request the server never reads
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](_QUEUED_WRITES)
        async with anyio.create_task_group() as tg:
            writers = read_writer.clone()  # the writer fails requests it could not send
            tg.start_soon(self._reader, read_writer, writers)
            tg.start_soon(self._writer, write_reader, writers)
            if self.process is not None:
                tg.start_soon(self._watch_exit)
                tg.start_soon(self._watch_stdin, writers)
            try:
                yield read_stream, write_stream
            finally:
                try:
                    await self._let_exit_show()
                finally:  # whatever the wait raised, stdin closes and the reader and writer end
                    self.close_stdin()
                    tg.cancel_scope.cancel()
                for stream in (read_stream, write_stream):
                    await stream.aclose()

    async def __aenter__(self) -> TransportStreams:
        self._cm = self._streams()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(kind, exc, tb)
