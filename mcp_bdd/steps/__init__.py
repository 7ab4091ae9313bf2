"""The step vocabulary of mcp-bdd (see the README and `mcp-bdd steps`).

A project loads it with one line in `steps/mcp_steps.py`:

    from mcp_bdd.steps import *  # noqa: F401,F403

Importing a module registers its steps with behave; one module per MCP feature.
"""

from __future__ import annotations

from mcp_bdd.steps import (  # noqa: F401 - imported for their step registrations
    _base,
    auth,
    check,
    client,
    fakes,
    notifications,
    prompts,
    resources,
    results,
    servers,
    tools,
)

__all__: list[str] = []
