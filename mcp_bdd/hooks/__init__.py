"""Everything behave-facing: the hooks a project wires in, and what they need from behave.

    _hooks          before_all ... after_all: a Runtime per run, a ScenarioState per scenario,
                    evidence attached where the scenario is, teardown reported
    _preflight      what is wrong with the features before anything runs
    _step_failures  a failed step's exception masked for the reports; phrases near an undefined step
    _attach         evidence to behave's formatters, before, during or after a scenario's steps
    _behave         every change made to behave for a run, for correctness, undone at its end

Projects import the hooks from `mcp_bdd.environment` (the path the docs give), which re-exports these.
"""

from mcp_bdd.hooks import _hooks
from mcp_bdd.hooks._hooks import *  # noqa: F403

__all__ = _hooks.__all__
