"""behave hooks. A project wires them in with one line in its top-level `environment.py`:

    from mcp_bdd.environment import *  # noqa: F401,F403

Users who need hooks of their own wrap these and call through, e.g.
`def before_scenario(context, scenario): mcp_bdd.environment.before_scenario(context, scenario); ...`
(or let `mcp_bdd.chain` do it). The hooks themselves live in `mcp_bdd.hooks`.
"""

import mcp_bdd.hooks as _hooks
from mcp_bdd.hooks import *  # noqa: F403

__all__ = _hooks.__all__
