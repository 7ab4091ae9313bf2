"""The step vocabulary of mcp-bdd (see docs/steps in the README).

A project loads it with one line in `steps/mcp_steps.py`:

    from mcp_bdd.steps import *  # noqa: F401,F403
"""

from __future__ import annotations

import contextlib

from mcp_bdd.steps import _common, results, servers, tools

with contextlib.suppress(ImportError):
    from mcp_bdd.steps import fakes
with contextlib.suppress(ImportError):
    from mcp_bdd.steps import resources
with contextlib.suppress(ImportError):
    from mcp_bdd.steps import prompts
with contextlib.suppress(ImportError):
    from mcp_bdd.steps import notifications
with contextlib.suppress(ImportError):
    from mcp_bdd.steps import client

__all__: list[str] = []
