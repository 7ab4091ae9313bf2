"""`context.mcp`: everything one scenario knows, in one object (not attributes sprinkled on context).

Created by the `before_scenario` hook, closed by `after_scenario`. Steps reach it as `context.mcp`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mcp_bdd.secrets import generation, remember_named
from mcp_bdd.transcript import Transcript

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

    from mcp_bdd.config import Config
    from mcp_bdd.fakes import Fakes
    from mcp_bdd.session import Outcome, Persona, Session

__all__ = ["LastResult", "ScenarioState"]


@dataclass
class LastResult:
    """ "The result": the last tool result, resource read or prompt result of the scenario."""

    kind: str  # "tool" | "resource" | "prompt"
    server: str
    raw: dict[str, object]
    #: structuredContent, else text parsed as JSON, else text; JSON a tool returned as text (structuredContent
    #: `{"result": "<json text>"}`, see steps._base.json_held) is that JSON
    value: object
    text: str  # concatenated text content
    name: str = ""  # tool / prompt name or resource uri
    held_json: bool = False  # `value` is JSON the tool returned as text, read out of structuredContent's "result"


class Run(Protocol):
    """What a scenario asks of the run that began it (`Runtime`; a Protocol: the runtime imports this module)."""

    def ensure_session(
        self,
        state: ScenarioState,
        name: str,
        *,
        transport: str | None = None,
        env_overrides: dict[str, str] | None = None,
    ) -> Session: ...

    def at_scenario_end(self, state: ScenarioState, close: Callable[[], list[str]]) -> None: ...

    def at_run_end(self, close: Callable[[], list[str]]) -> None: ...


@dataclass
class ScenarioState:
    config: Config
    portal: BlockingPortal  # of the run
    runtime: Run  # the run's `Runtime`
    transcript: Transcript
    fakes: Fakes
    tmpdir: Path  # made by the first writer (a fake), removed when the scenario ends
    persona: Persona
    variables: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    current_server: str | None = None
    last: LastResult | None = None
    last_call: Outcome | None = None
    last_calls: list[Outcome] = field(default_factory=list)
    calls_by_server: dict[str, Outcome] = field(default_factory=dict)  # the last call on each server
    last_request: Outcome | None = None  # any request kind, for "rejected with error code"
    connect_error: str | None = None
    #: headers the client sends to HTTP servers (the access token of the auth steps), set before the server step
    client_headers: dict[str, str] = field(default_factory=dict)
    log_level: str | None = None
    completions: list[str] | None = None
    #: set when this scenario lent fakes to a long-lived server: their files must outlive it
    keeps_files: bool = False
    location: str = ""  # "features/x.feature:12" of the running step, for messages
    steps_begun: bool = False  # what was recorded before the first step is the hooks' doing
    steps_ended: bool = False  # the after hooks began: what is attached now comes after the steps
    step_text: str = ""
    #: the server names this scenario's steps give (the hooks read them: `environment`); None: not known
    servers_named: Callable[[], frozenset[str]] | None = None
    #: secrets.generation() when the scenario began: more remembered since -> mask its evidence again
    secrets_at_start: int = field(default_factory=generation)

    def set_variable(self, name: str, value: str) -> None:
        """`${name}` from now on. A secret-looking name (`access_token`) makes its value a secret
        at once: the server that issued it may echo it before the variable is ever used."""
        self.variables[name] = value
        remember_named(name, value)

    def interpolate(self, text: str, extra: dict[str, str] | None = None) -> str:
        """Replace `${...}` in a quoted parameter, table cell or doc string (see mcp_bdd.variables)."""
        from mcp_bdd.variables import interpolate

        return interpolate(text, self.variables, fake=self.fakes.resolve, extra=extra, where=self.location)
