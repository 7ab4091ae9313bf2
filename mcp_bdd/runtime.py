"""Run-wide machinery: the blocking portal, long-lived sessions (feature / run scope), cleanup.

Scenario-scoped sessions belong to the scenario (`context.mcp.sessions`) and die with it;
feature- and run-scoped ones are kept here, keyed by server, transport and protocol, and closed
by `after_feature` / `after_all`. Fakes referenced by a long-lived server's configuration live as
long as that server does (a Fakes object of the runtime's own).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mcp_bdd.config import Config, normalize_transport
from mcp_bdd.errors import ServerStartError
from mcp_bdd.servers import start_server
from mcp_bdd.session import Persona, Session
from mcp_bdd.transcript import Transcript

__all__ = ["Runtime"]


class Runtime:
    def __init__(self, config: Config, portal: Any) -> None:
        self.config = config
        self.portal = portal
        self.root = Path(tempfile.mkdtemp(prefix="mcp-bdd-"))
        self.logdir = self.root / "logs"
        self.long_lived: dict[tuple[str, str, str, str], tuple[Session, Any]] = {}  # key -> (session, fakes)
        self.scenario_count = 0
        #: servers that failed to start in this run, so the same failure is not re-tried for every scenario
        self.start_failures: dict[tuple[str, str], str] = {}

    def scenario_dir(self) -> Path:
        self.scenario_count += 1
        path = self.root / f"s{self.scenario_count}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def open_session(
        self,
        state: Any,
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
        persona: Persona = state.persona
        if not persona.empty():
            scope = "scenario"  # the client's capabilities are the scenario's own
        key = (name, transport, protocol, scope)
        if scope != "scenario" and key in self.long_lived:
            session, _ = self.long_lived[key]
            if session.connected:
                session.transcript = state.transcript
                return session
        fakes = state.fakes
        transcript = state.transcript
        if scope != "scenario":
            from mcp_bdd.fakes import Fakes

            fakes = Fakes(
                portal=self.portal,
                transcript=transcript,
                tmpdir=self.root / f"{scope}-{name}",
                declared=config.fakes,
            )
            (self.root / f"{scope}-{name}").mkdir(parents=True, exist_ok=True)

        def interp(text: str, extra: dict[str, str]) -> str:
            from mcp_bdd.variables import interpolate

            return interpolate(
                text, state.variables, fake=fakes.resolve, extra=extra, where=f'server "{name}" configuration'
            )

        handle = start_server(
            name,
            cfg,
            config,
            transport,
            interpolate=interp,
            inject=fakes.inject,
            logdir=self.logdir,
            portal=self.portal,
        )
        session = Session(
            name,
            handle,
            portal=self.portal,
            transcript=transcript,
            timeout=float(config.setting(name, "timeout")),
            startup_timeout=float(config.setting(name, "startup_timeout")),
            protocol=protocol,
            persona=persona,
            log_level=state.log_level,
        )
        try:
            session.open()
        except ServerStartError:
            if scope != "scenario":
                fakes.close()
            raise
        if scope != "scenario":
            self.long_lived[key] = (session, fakes)
        return session

    def close_scope(self, scope: str) -> list[str]:
        problems: list[str] = []
        for key in [k for k in self.long_lived if k[3] == scope or scope == "all"]:
            session, fakes = self.long_lived.pop(key)
            problems += session.close()
            problems += fakes.close()
        return problems

    def close(self) -> list[str]:
        problems = self.close_scope("all")
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root, ignore_errors=True)
        return problems

    def transcript(self) -> Transcript:
        return Transcript()
