"""Client side of `mcp_bdd.zygote`: one pre-imported process per (app, cwd, environment).

The zygote forks one fresh server per start (see `mcp_bdd/zygote.py` for why). Its children are
`ForkedProcess`es: not our children (the zygote reaps them), but owned and stopped by us like any
other server process — same teardown path, same lifeline.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TypedDict

from mcp_bdd._process_tree import wait_exit
from mcp_bdd._text import tail
from mcp_bdd.errors import ServerStartError
from mcp_bdd.servers._process import ChildProcess, ServerProcess, on_reap, spawn

__all__ = ["ForkedProcess", "Zygote", "zygote_for"]


class _Answer(TypedDict, total=False):
    """What the pre-imported process answers a request with (`mcp_bdd.zygote`'s `reply`)."""

    pid: int  # a spawn's server
    returncode: int | None  # a status: None while the server runs
    error: str  # why it could not do what was asked


class ForkedProcess(ServerProcess):
    """A server forked by the zygote; its exit status is the zygote's to collect and tell.

    It gets the same SIGTERM grace as any server: our launcher's uvicorn stops in milliseconds
    (`apps._run_uvicorn`), so the app's lifespan shutdown runs instead of being cut by SIGKILL."""

    def __init__(self, zygote: Zygote, pid: int, describe: str, mark: str | None = None) -> None:
        self.zygote = zygote
        super().__init__(pid, describe, mark)

    @property
    def returncode(self) -> int | None:
        if not wait_exit(self.pid, 0):
            return None  # running: no need to ask the zygote
        return self.zygote.status(self.pid)


class Zygote:
    """Client side of `mcp_bdd.zygote`: one pre-imported process per (app, cwd, environment)."""

    def __init__(self, spec: str, cwd: str, env: dict[str, str], logdir: Path) -> None:
        ours, theirs = socket.socketpair()
        self.spec = spec
        self.stderr_path = logdir / f"zygote-{time.monotonic_ns()}.stderr.log"
        self._lock = threading.Lock()
        self._buffer = b""
        self.sock = ours
        argv = [sys.executable, "-m", "mcp_bdd.serve", spec, "--zygote", str(theirs.fileno())]
        try:
            self.process: ChildProcess = spawn(
                argv,
                env=env,
                cwd=cwd,
                stderr_path=self.stderr_path,
                describe=f"pre-imported process for {spec}",
                stdio=False,
                pass_fds=(theirs.fileno(),),
                keep=False,  # a subreaper that kills what its servers orphan itself
            )
        except OSError as exc:
            ours.close()
            raise ServerStartError(
                f"Could not start the pre-imported server process for {spec} (cwd {cwd}): {exc.strerror or exc}.\n"
                "  Tip: check `cwd` in the server's configuration, or set pool = false."
            ) from exc
        finally:
            theirs.close()

    def _ask(self, request: dict[str, object], fds: list[int] | None = None, timeout: float = 30.0) -> _Answer:
        """One request/answer over the control socket (length-prefixed JSON; fds ride along)."""
        with self._lock:
            data = json.dumps(request).encode()
            frame = len(data).to_bytes(4, "big") + data
            try:
                self.sock.settimeout(timeout)
                if fds:
                    socket.send_fds(self.sock, [frame], fds)
                else:
                    self.sock.sendall(frame)
                while b"\n" not in self._buffer:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        raise ConnectionResetError("the pre-imported process closed its control socket")
                    self._buffer += chunk
            except TimeoutError:
                self.close()
                raise ServerStartError(
                    f"The pre-imported server process for {self.spec} did not answer within {timeout:g} s "
                    "(importing the app takes too long, or it hangs at import).\n"
                    + _indent(tail(self.stderr_path))
                    + "\n  Tip: raise `startup_timeout`, or set pool = false to start the server cold."
                ) from None
            except OSError as exc:
                wait_exit(self.process.pid, 2.0)  # its socket closes a moment before its exit status exists
                code = self.process.returncode
                ended = f"exited with status {code}" if code is not None else f"failed ({type(exc).__name__})"
                raise ServerStartError(
                    f"The pre-imported server process for {self.spec} {ended} before it could start a server: "
                    "the app probably cannot be imported. Last lines of its stderr:\n"
                    + _indent(tail(self.stderr_path))
                    + "\n  Tip: run `python -m mcp_bdd.serve "
                    + self.spec
                    + "` by hand in the server's cwd to see the error."
                ) from None
            line, _, self._buffer = self._buffer.partition(b"\n")
            answer: _Answer = json.loads(line)
            if "error" in answer:
                raise ServerStartError(f"The pre-imported server process for {self.spec}: {answer['error']}")
            return answer

    def fork(
        self, env: dict[str, str], transport: str, port: int, stderr_path: Path, timeout: float = 30.0
    ) -> tuple[int, int, int]:
        """A forked server: (pid, fd to write its stdin, fd to read its stdout); -1 fds for HTTP."""
        err = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            if transport == "stdio":
                child_in, our_in = os.pipe()
                our_out, child_out = os.pipe()
                try:
                    answer = self._ask(
                        {"op": "spawn", "env": env, "transport": transport, "port": port},
                        [child_in, child_out, err],
                        timeout,
                    )
                except BaseException:
                    os.close(our_in)
                    os.close(our_out)
                    raise
                finally:
                    os.close(child_in)
                    os.close(child_out)
                return int(answer["pid"]), our_in, our_out
            null = os.open(os.devnull, os.O_RDWR)
            try:
                answer = self._ask(
                    {"op": "spawn", "env": env, "transport": transport, "port": port}, [null, err, err], timeout
                )
            finally:
                os.close(null)
            return int(answer["pid"]), -1, -1
        finally:
            os.close(err)

    def status(self, pid: int) -> int | None:
        if self.process.returncode is not None:
            return -1
        try:
            code = self._ask({"op": "status", "pid": pid}).get("returncode")
        except (OSError, ServerStartError):
            return -1
        return None if code is None else int(code)

    def close(self) -> None:
        """EOF on the control socket: the zygote kills its children and exits; then the usual stop."""
        with contextlib.suppress(OSError):
            self.sock.close()
        wait_exit(self.process.pid, 3.0)
        self.process.stop()


_POOL: dict[tuple[str, str, str], Zygote] = {}
_POOL_LOCK = threading.Lock()


def zygote_for(spec: str, cwd: str, env: dict[str, str], logdir: Path) -> Zygote:
    key = (spec, cwd, json.dumps(env, sort_keys=True))
    with _POOL_LOCK:
        zygote = _POOL.get(key)
        if zygote is None or zygote.process.returncode is not None:
            zygote = _POOL[key] = Zygote(spec, cwd, env, logdir)
        return zygote


def _close_pool() -> None:
    with _POOL_LOCK:
        zygotes = list(_POOL.values())
        _POOL.clear()
    for zygote in zygotes:
        zygote.close()


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines()) or "    (empty)"


on_reap(_close_pool)
