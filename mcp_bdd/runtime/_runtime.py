"""Run-wide machinery: the run's event loop (`RunPortal`), long-lived sessions (feature / run scope), cleanup.

Scenario-scoped sessions belong to the scenario (`context.mcp.sessions`) and die with it;
feature- and run-scoped ones are kept here, keyed by server, transport and protocol, and closed
by `after_feature` / `after_all`. The fakes a long-lived server's configuration points at live as
long as the server: the scenario that starts it lends them to the runtime, and every later
scenario borrows them (with fresh stubs and records) before its first step runs.

Importing this module, and making a Runtime, import neither the MCP SDK nor the fakes: a
one-shot command starts its server (`prestart`) before the session's code is imported.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_bdd._loop import contain_exits
from mcp_bdd.config import Config, UrlServer, normalize_transport
from mcp_bdd.errors import TransportNotServed, UsageError
from mcp_bdd.runtime._portal import RunPortal
from mcp_bdd.servers import discard_prestarted, lifeline, prestart, start_server

if TYPE_CHECKING:
    from mcp_bdd.config import ServerConfig
    from mcp_bdd.fakes import Fakes
    from mcp_bdd.runtime._state import ScenarioState
    from mcp_bdd.servers import RunningServer
    from mcp_bdd.session import Session

__all__ = ["Runtime"]


def _others_named(state: ScenarioState, name: str) -> frozenset[str]:
    """The servers other than `name` that the scenario's steps name (none known outside behave)."""
    named = getattr(state, "servers_named", None)
    return (named() if named is not None else frozenset()) - {name}


def _closed(closers: list[Callable[[], list[str]]]) -> list[str]:
    """Run each closer; what one raises is a problem like the ones it returns (teardown goes on)."""
    problems: list[str] = []
    for close in closers:
        try:
            problems += close()
        except Exception as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
    return problems


@dataclass
class _LongLived:
    session: Session
    # lent fake entries, torn down with the session (`Fakes.lend`'s, a type private to fakes)
    fakes: list[Any] = field(default_factory=list)


class Runtime:
    """One run (a behave run, or a one-shot command): its event loop, directory and long-lived
    sessions. `close()` ends all of it, the loop last."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = Path(tempfile.mkdtemp(prefix="mcp-bdd-"))
        try:
            lifeline().sweep(self.root)  # removed even if the run is killed (kill -9) before close()
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)  # no watcher, so no one else would remove it
            raise
        self._loop = RunPortal()
        self.portal = self._loop.portal
        try:
            self.portal.call(contain_exits)  # an in-process server's sys.exit() ends the server, not the run
        except BaseException:
            self._loop.stop()
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.logdir = self.root / "logs"
        self.long_lived: dict[tuple[str, str, str, str], _LongLived] = {}
        self.scenario_count = 0
        #: the user stopped the run (Ctrl-C, SIGTERM): sessions close in seconds, not after the usual
        #: wait for a server's own teardown, so that the run ends and writes its report at once
        self.interrupted = False
        #: servers that cannot serve a transport, so the same failure is not re-tried for every scenario
        self.start_failures: dict[tuple[str, str], TransportNotServed] = {}
        #: warnings for the user, once per run each (a server that stops slowly), taken by the hooks
        self._notices: list[str] = []
        self._said: set[tuple[str, str]] = set()  # (kind, server) of the notices said already
        #: what a step started that ends with its scenario (an MCP App's page: `at_scenario_end`) or with the
        #: run (the MCP Apps browser: `at_run_end`); each returns its problems, as sessions' closes do
        self._scenario_closers: dict[int, list[Callable[[], list[str]]]] = {}
        self._run_closers: list[Callable[[], list[str]]] = []

    def scenario_dir(self) -> Path:
        """The next scenario's directory: named, not made (whoever writes there creates it, e.g. a fake:
        most scenarios never write a file, and a mkdir + rmtree per scenario is measurable)."""
        self.scenario_count += 1
        return self.root / f"s{self.scenario_count}"

    def prestart(self, name: str, transport: str | None = None) -> None:
        """Start server `name`'s process now, where a start does not depend on the scenario (a
        command over stdio), for the scenario's session to take: a one-shot command (`probe`,
        `call`, `list`) calls it before anything imports the MCP SDK, so that the server boots
        while the rest is imported (`servers.prestart`). What is not taken is ended by `close`."""
        from mcp_bdd.variables import interpolate

        def interp(text: str, extra: dict[str, str]) -> str:  # no scenario: no variables, no fakes
            return interpolate(text, {}, extra=extra, where=f'server "{name}" configuration')

        transport = normalize_transport(transport) if transport else self.config.transport_for(name)
        cfg = self.config.server_named(name)
        prestart(name, cfg, self.config, transport, interpolate=interp, logdir=self.logdir)

    def begin_scenario(self) -> ScenarioState:
        """A new scenario's state (`context.mcp`): its directory, transcript, fakes and persona.

        The one way a scenario starts, for the behave hooks and for `probe` / `scaffold` alike.
        """
        from mcp_bdd.fakes import Fakes
        from mcp_bdd.runtime._state import ScenarioState
        from mcp_bdd.session import Persona
        from mcp_bdd.transcript import Transcript

        tmpdir = self.scenario_dir()
        transcript = Transcript()
        state = ScenarioState(
            config=self.config,
            portal=self.portal,
            runtime=self,
            transcript=transcript,
            fakes=Fakes(
                portal=self.portal,
                transcript=transcript,
                tmpdir=tmpdir,
                declared=self.config.fakes,
                limit=self.config.startup_timeout,
            ),
            tmpdir=tmpdir,
            persona=Persona(),
        )
        self.lend_fakes_to(state.fakes)
        return state

    def end_scenario(self, state: ScenarioState) -> list[str]:
        """Teardown in order: sessions (each stops its server), then fakes (a server may still talk to
        one while closing), then the scenario's directory. Never raises; returns the problems."""
        problems: list[str] = []
        try:
            problems += _closed(self._scenario_closers.pop(id(state), []))  # an app's page, before its session
            for session in list(state.sessions.values()):
                if not self.is_long_lived(session):
                    problems += self._close(session)
        finally:  # a Ctrl-C that cut a stop short still lets the fakes stop (a process each may have started)
            state.sessions.clear()
            problems += state.fakes.close()
            if not state.keeps_files and state.tmpdir.exists():  # else removed with the run's directory
                shutil.rmtree(state.tmpdir, ignore_errors=True)
        return problems

    def _close(self, session: Session) -> list[str]:
        """Close a session; a server that stopped slowly is said once a run (each stop costs as much)."""
        problems = session.close(hurry=self.interrupted)
        self._say_once("slow stop", session.name, session.server.slow_stop())
        return problems

    def _say_once(self, kind: str, server: str, notice: str | None) -> None:
        """A warning of one kind about a server, said once a run (each scenario may meet the same cause)."""
        if notice is not None and (kind, server) not in self._said:
            self._said.add((kind, server))
            self._notices.append(notice)

    def at_scenario_end(self, state: ScenarioState, close: Callable[[], list[str]]) -> None:
        """Close something a step started for this scenario first when it ends (an MCP App's page)."""
        self._scenario_closers.setdefault(id(state), []).append(close)

    def at_run_end(self, close: Callable[[], list[str]]) -> None:
        """Close something started once for the run when it ends (the MCP Apps browser)."""
        self._run_closers.append(close)

    def take_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    def lend_fakes_to(self, fakes: Fakes) -> None:
        """A new scenario sees the fakes of the long-lived servers that are still running."""
        for item in self.long_lived.values():
            fakes.borrow(item.fakes, fresh=True)

    def is_long_lived(self, session: Session) -> bool:
        return any(item.session is session for item in self.long_lived.values())

    def ensure_session(
        self,
        state: ScenarioState,
        name: str,
        *,
        transport: str | None = None,
        env_overrides: dict[str, str] | None = None,
    ) -> Session:
        """The scenario's session with `name`, opened unless it has one (one session per server)."""
        if name in state.sessions:
            session: Session = state.sessions[name]
            wanted = normalize_transport(transport) if transport else None
            if wanted is not None and session.server.transport != wanted:
                raise UsageError(
                    f'{state.location}: the server "{name}" already runs over {session.server.transport} in this '
                    "scenario; one scenario keeps one session per server."
                )
            return session
        key = (name, transport or "")
        failed = self.start_failures.get(key)
        if failed is not None:
            raise type(failed)(f"{failed}\n  (This failure happened earlier in the run; not retried.)")
        try:
            opened = self.open_session(state, name, transport=transport, env_overrides=env_overrides)
        except TransportNotServed as exc:
            self.start_failures[key] = exc  # the configuration cannot change mid-run: do not try again
            raise
        state.sessions[name] = opened
        return opened

    def open_session(
        self,
        state: ScenarioState,
        name: str,
        *,
        transport: str | None = None,
        env_overrides: dict[str, str] | None = None,
    ) -> Session:
        """Start server `name` and connect to it, honouring its scope."""
        config = self.config
        cfg = config.server_named(name)
        transport = normalize_transport(transport) if transport else config.transport_for(name)
        protocol = str(config.setting(name, "protocol"))
        scope = str(config.setting(name, "scope"))
        if env_overrides:
            cfg = cfg.model_copy(update={"env": {**getattr(cfg, "env", {}), **env_overrides}})
            scope = "scenario"  # a scenario-specific environment cannot be shared
        client_headers: dict[str, str] = dict(getattr(state, "client_headers", None) or {})
        _token_reaches(state, name, cfg, transport, client_headers)
        if not state.persona.empty() or client_headers:
            scope = "scenario"  # the client's capabilities (and credentials) are the scenario's own
        key = (name, transport, protocol, scope)
        if scope != "scenario" and (kept := self._kept_session(state, key)) is not None:
            return kept
        used: list[str] = []  # the fakes the server's configuration or factory names: lent if it outlives the scenario
        server = start_server(
            name, cfg, config, transport, interpolate=_interpolator(state, name, used), inject=_injector(state, used),
            logdir=self.logdir,
        )  # fmt: skip
        server.headers.update(client_headers)  # sent by the session's HTTP client (streamable HTTP, SSE)
        session = self._connect(state, name, server, protocol)
        if scope != "scenario":
            self.long_lived[key] = _LongLived(session, state.fakes.lend(used))
            state.keeps_files = True  # the lent fakes' files live in this scenario's directory
        return session

    def _kept_session(self, state: ScenarioState, key: tuple[str, str, str, str]) -> Session | None:
        """A feature- or run-scoped session still alive for `key`, handed to this scenario; one that
        died (crash, lost connection) is replaced rather than failing every later scenario, its
        fakes with it (this scenario gets new ones under the same names)."""
        item = self.long_lived.get(key)
        if item is None:
            return None
        if item.session.alive:
            item.session.adopt_scenario(state.transcript, state.log_level)
            return item.session
        from mcp_bdd.fakes import teardown

        self.long_lived.pop(key)
        item.session.close()
        state.fakes.forget(entry.name for entry in item.fakes)
        teardown(item.fakes)
        return None

    def _connect(self, state: ScenarioState, name: str, server: RunningServer, protocol: str) -> Session:
        """A session with a started server, opened (it closes the server itself when it fails)."""
        from mcp_bdd.session import Session

        config = self.config
        session = Session(
            name,
            server,
            portal=self.portal,
            transcript=state.transcript,
            timeout=float(config.setting(name, "timeout")),
            startup_timeout=float(config.setting(name, "startup_timeout")),
            protocol=protocol,
            persona=state.persona,
            log_level=state.log_level,
            max_message_bytes=int(config.setting(name, "max_message_bytes")),
        )
        session.open()
        self._say_once("probe", session.name, server.probe_notice)
        return session

    def close_scope(self, scope: str) -> list[str]:
        from mcp_bdd.fakes import teardown

        problems: list[str] = []
        for key in [k for k in self.long_lived if k[3] == scope or scope == "all"]:
            item = self.long_lived.pop(key)
            problems += self._close(item.session)
            problems += teardown(item.fakes)
        return problems

    def close(self) -> list[str]:
        """End the run: what steps started for it, long-lived sessions, pre-started servers, shared
        fakes, the run's directory, then the event loop (even when one of those is interrupted).
        Never raises for a cleanup that failed, the loop's stop included: returns the problems."""
        from mcp_bdd.fakes import close_shared

        problems: list[str] = []
        try:
            problems += _closed(self._run_closers)
            self._run_closers = []
            problems += self.close_scope("all")
            discard_prestarted()
            problems += close_shared()  # run-wide fake resources (the PostgreSQL server), before their files go
            with contextlib.suppress(OSError):
                shutil.rmtree(self.root, ignore_errors=True)
        finally:
            problems += _closed([self._stop_loop])
        return problems

    def _stop_loop(self) -> list[str]:
        self._loop.stop()
        return []


def _token_reaches(
    state: ScenarioState, name: str, cfg: ServerConfig, transport: str, client_headers: dict[str, str]
) -> None:
    """A scenario whose client holds an access token must have a server that can receive it: over
    stdio or in-memory no HTTP header carries it, and the token would be dropped without a word,
    the scenario passing on what it never tested."""
    if (
        client_headers
        and transport in ("stdio", "in-memory")
        and not isinstance(cfg, UrlServer)
        and not _others_named(state, name)  # no other server of the scenario would carry it
    ):
        raise UsageError(
            f"{state.location}: the client holds an access token (Given the client is authorized ...), but the "
            f'server "{name}", the only one this scenario names, runs over {transport}, where no HTTP header '
            "carries it.\n  Tip: "
            f'authorization is tested over HTTP: give the server transport = "streamable-http" (or "sse").'
        )


def _interpolator(state: ScenarioState, name: str, used: list[str]) -> Callable[[str, dict[str, str]], str]:
    """`${...}` in server `name`'s configuration, noting in `used` each fake it names."""
    from mcp_bdd.variables import interpolate

    def fake(fake_name: str, attr: str) -> str:
        used.append(fake_name)
        return str(state.fakes.resolve(fake_name, attr))

    def interp(text: str, extra: dict[str, str]) -> str:
        return interpolate(text, state.variables, fake=fake, extra=extra, where=f'server "{name}" configuration')

    return interp


def _injector(state: ScenarioState, used: list[str]) -> Callable[[Callable[..., object]], dict[str, object]]:
    """The fakes an app factory's parameters ask for (named after them), noted in `used`."""

    def inject(factory: Callable[..., object]) -> dict[str, object]:
        kwargs: dict[str, object] = state.fakes.inject(factory)
        used.extend(kwargs)
        return kwargs

    return inject
