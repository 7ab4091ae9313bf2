"""The server classes: one per way a server comes to life, behind one small base.

    RunningServer                 name, transport, display; target(); stop(); describe_death()
    ├── InMemoryServer            a Python server object in the test process (no OS process)
    ├── StdioServer               a process speaking JSON-RPC on its stdin/stdout (PipeTransport)
    ├── HttpServer                a process serving streamable HTTP or SSE on a free loopback port
    └── RemoteServer              an already-running URL: connected to, never started

A process-backed server holds one `ServerProcess` — cold-spawned (`ChildProcess`) or forked by
the zygote (`ForkedProcess`) — which is the one owner of that OS process and the one way it is
stopped. The session never touches processes: it asks its server to `stop()`.

The stdio transport (`_pipes`, `_framing`: the MCP SDK) is imported when a `StdioServer` is
made, after its process was started: a one-shot command (`mcp-bdd call`) imports the SDK while
its server boots, not before it spawns it (`Runtime.prestart`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_bdd._process_tree import wait_exit
from mcp_bdd._text import split_lines, tail
from mcp_bdd.secrets import mask
from mcp_bdd.servers._process import ServerProcess

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    from mcp_bdd.servers._framing import StdoutEvidence
    from mcp_bdd.servers._pipes import PipeTransport

__all__ = ["HttpServer", "InMemoryServer", "RemoteServer", "RunningServer", "StdioServer"]


class RunningServer:
    """One started (or reachable) server, ready for a client to connect."""

    url: str | None = None
    headers: dict[str, str]
    process: ServerProcess | None = None
    stderr_path: Path | None = None
    evidence: StdoutEvidence | None = None
    #: bytes of its stderr that failures do not quote: what it wrote while answering a discovery
    #: probe it did not understand, on a connect that then fell back to the handshake and worked
    stderr_quoted_from: int = 0
    #: what the run says once about this server (the probe's noise, and how to spare it), or None
    probe_notice: str | None = None

    def __init__(self, name: str, transport: str, display: str) -> None:
        self.name = name
        self.transport = transport
        self.display = display
        self.headers = {}

    def target(self) -> Any:
        """What `mcp.Client` is given: a server object or a transport (None: connect to `url`, over
        the HTTP transport the session builds). Each kind of server names its own."""
        return None

    @property
    def pid(self) -> int | None:
        """The server's own pid (not its keeper's)."""
        return None if self.process is None else self.process.server_pid

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    @property
    def started(self) -> bool:
        """Whether mcp-bdd started it (False for a URL: its failures are not ours to explain)."""
        return self.process is not None

    def stop(self) -> None:
        """Stop it and everything it started. Idempotent; raises only a Ctrl-C that cut it short,
        once the process is killed."""
        if self.process is not None:
            self.process.stop()

    def slow_stop(self) -> str | None:
        """After `stop`: what made its stop slow and what to do, or None (it stopped promptly)."""
        note = None if self.process is None else self.process.slow_stop
        if note is None:
            return None
        tip = (
            "make it exit when its stdin closes (the MCP spec's way to end a stdio server), or at least on SIGTERM"
            if self.transport == "stdio"
            else "make it exit on SIGTERM (a wrapper script should `exec` the server, or pass the signal on)"
        )
        return f'the server "{self.name}" {note}. Every start of it waits as long at its end: {tip}.'

    def settle(self, timeout: float = 1.0) -> None:
        """Give a process that just closed its end of the connection the time to exit, so its
        exit code can be quoted (EOF on its stdout comes before its exit status)."""
        if self.process is not None and not self.process.stopped:
            wait_exit(self.process.pid, timeout)

    def stderr_tail(self, lines: int = 20) -> str:
        return "" if self.stderr_path is None else tail(self.stderr_path, lines, self.stderr_quoted_from)

    def stderr_size(self) -> int:
        """How many bytes of stderr it wrote so far (0 when it has no stderr file)."""
        try:
            return 0 if self.stderr_path is None else self.stderr_path.stat().st_size
        except OSError:
            return 0

    def bad_stdout_lines(self) -> int:
        """How many lines it wrote on stdout that were not JSON-RPC messages so far (0 but over stdio)."""
        return 0 if self.evidence is None else self.evidence.bad_lines

    def stdout_evidence(self, since: int = 0) -> str:
        """What it wrote on stdout that was not a JSON-RPC message (counted, the first and last
        quoted, what that usually means), masked; "" when nothing more than `since` lines
        (`bad_stdout_lines` when a request began: a banner before good answers is not about it)."""
        return "" if self.evidence is None else mask(self.evidence.describe(since))

    def describe_death(self) -> str:
        """Command, exit code, what it wrote instead of JSON-RPC, stderr tail: what a failure needs."""
        # a URL is connected to, never started: "Started: ... (already running)" of a server that was down misled
        where = "  URL:       " if self.process is None and self.url is not None else "  Started:   "
        parts = [f"  Server:    {self.name} over {self.transport}", where + self.display]
        parts += self._how_it_ended()
        evidence = self.stdout_evidence()
        if evidence:  # not an empty line for a server that wrote nothing wrong
            parts.extend("  " + line for line in split_lines(evidence))
        text = self.stderr_tail()
        if text:
            parts.append("  Last lines of its stderr:")
            parts.extend("    " + line for line in split_lines(text))
        elif self.stderr_path is not None:
            parts.append("  Its stderr was empty.")
        return "\n".join(parts)

    def _how_it_ended(self) -> list[str]:
        """Its exit code, said truly: a server mcp-bdd gave up on exited because mcp-bdd closed
        its stdin, not on its own; one that has not exited is said to be running."""
        code = self.returncode
        if code is None:
            process = self.process
            if process is None or process.stopped:
                return []
            return [f"  Running:   yes (pid {process.server_pid})"]
        if self._closed_while_running():
            return [f"  Exit code: {code}, once mcp-bdd had closed its stdin (it was still running until then)"]
        return [f"  Exit code: {code}"]

    def _closed_while_running(self) -> bool:
        return False


class InMemoryServer(RunningServer):
    def __init__(self, name: str, obj: MCPServer | Server, display: str) -> None:
        super().__init__(name, "in-memory", display)
        self.obj = obj
        #: its code called sys.exit() (or raised KeyboardInterrupt) in the run's event loop: what a
        #: process would have exited with, and what and where (`_loop`). It then answers nothing
        #: more, as a process that exited would not.
        self.exit_code: int | None = None
        self.exit_cause = ""

    def target(self) -> MCPServer | Server:
        return self.obj

    @property
    def returncode(self) -> int | None:
        return self.exit_code

    def exited(self, code: int, cause: str) -> None:
        self.exit_code, self.exit_cause = code, cause

    def _how_it_ended(self) -> list[str]:
        if self.exit_code is None:
            return []
        return [f"  Exit code: {self.exit_code}: {self.exit_cause}; in-process, mcp-bdd ended the server, not the run"]


class StdioServer(RunningServer):
    def __init__(
        self, name: str, process: ServerProcess, pipes: tuple[int, int], display: str, stderr_path: Path, max_line: int
    ) -> None:
        from mcp_bdd.servers._framing import StdoutEvidence
        from mcp_bdd.servers._pipes import PipeTransport

        super().__init__(name, "stdio", display)
        self.process = process
        self.stderr_path = stderr_path
        self.evidence = StdoutEvidence()
        self.transport_ = PipeTransport(pipes[0], pipes[1], self.evidence, max_line, process)

    def target(self) -> PipeTransport:
        return self.transport_

    def _closed_while_running(self) -> bool:
        return self.transport_.closed_while_running

    def stop(self) -> None:
        assert self.process is not None
        self.process.stop(close_stdin=self.transport_.close_stdin)
        self.transport_.close()


class HttpServer(RunningServer):
    def __init__(self, name: str, transport: str, process: ServerProcess, url: str, display: str, stderr_path: Path):
        super().__init__(name, transport, display)
        self.process = process
        self.url = url
        self.stderr_path = stderr_path


class RemoteServer(RunningServer):
    def __init__(self, name: str, transport: str, url: str, headers: dict[str, str]) -> None:
        super().__init__(name, transport, f"{url} (not started by mcp-bdd)")
        self.url = url
        self.headers = headers
