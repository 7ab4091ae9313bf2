"""What the hooks read and write of behave's objects, as Protocols of only those attributes:
behave ships no types, and a misspelt attribute should be a type error, not an AttributeError in
the middle of a run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcp_bdd.runtime import Runtime, ScenarioState

__all__ = ["Context", "Feature", "Registry", "RunConfig", "Scenario", "Step"]


class Step(Protocol):
    keyword: str
    name: str
    location: object  # behave's FileLocation: "features/x.feature:12" as text
    status: object  # behave's Status (its `name` is read)
    exception: BaseException | None  # a failed step's (`_step_failures` masks it)


class Scenario(Protocol):
    name: str
    location: object
    steps: Sequence[Step]  # its own, without the Background's

    @property
    def all_steps(self) -> Iterable[Step]: ...  # an iterator that runs out: taken once

    def skip(self, reason: str) -> None: ...

    def should_run(self, config: RunConfig) -> bool: ...


class Feature(Protocol):
    location: object
    filename: str
    line: int
    description: Sequence[str] | None

    def walk_scenarios(self, with_outlines: bool = False) -> Iterable[Scenario]: ...


class Registry(Protocol):
    """behave's step registry: the step definitions of each keyword ("given", ...)."""

    steps: Mapping[str, Sequence[object]]


class RunConfig(Protocol):
    """behave's Configuration: the `-D name=value` pairs, and what selected the features."""

    userdata: Mapping[str, object]
    paths: Sequence[object] | None


class Context(Protocol):
    """behave's context as the hooks use it: its configuration, and what mcp-bdd keeps on it (the
    run's `Runtime`, the scenario's state, and the run's own bookkeeping)."""

    config: RunConfig
    mcp: ScenarioState | None
    mcp_runtime: Runtime | None
    _mcp_undo_adaptations: Callable[[], None] | None
    _mcp_at_exit: Callable[[], None] | None
    _mcp_empty_scenarios: list[str]
    _mcp_config_failed: bool
