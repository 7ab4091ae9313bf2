"""The built-in checks, one module per group; importing this package registers them all."""

from __future__ import annotations

import mcp_bdd.check.checks.apps  # noqa: F401  (MCP Apps, which adds its group)
from mcp_bdd.check.checks import (  # noqa: F401
    auth,
    budget,
    honest,
    poisoning,
    protocol,
    quality,
    schemas,
    tasks,
    transport,
)

__all__: list[str] = []
