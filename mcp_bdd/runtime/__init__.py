"""The run: its event loop, its scenarios' state, and the sessions and fakes it opens and ends.

    Runtime        one run (a behave run or a one-shot command): begin_scenario / end_scenario,
                   ensure_session (started by scope), close (everything, the event loop last)
    RunPortal      the run's event loop in a thread, stopped the one way that cannot hang
    ScenarioState  `context.mcp`: everything one scenario knows
    LastResult     "the result" of a scenario's last tool call, resource read or prompt

The behave hooks (`mcp_bdd.hooks`) and the one-shot commands (`mcp_bdd.probe.open_session`) are
the two ways a run comes to life; both go through `Runtime`, so a scenario and `mcp-bdd call`
reach a server identically.
"""

from mcp_bdd.runtime._portal import RunPortal
from mcp_bdd.runtime._runtime import Runtime
from mcp_bdd.runtime._state import LastResult, ScenarioState

__all__ = ["LastResult", "RunPortal", "Runtime", "ScenarioState"]
