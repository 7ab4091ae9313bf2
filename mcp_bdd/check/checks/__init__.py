"""The built-in checks, one module per group; importing this package registers them all."""

from __future__ import annotations

import mcp_bdd.check.checks.apps  # noqa: F401  (MCP Apps, which adds its group)
from mcp_bdd.check.checks import auth, honest, poisoning, protocol, quality, schemas  # noqa: F401
from mcp_bdd.check.checks import budget, transport  # noqa: F401  (result size, token budget; the wire)

__all__: list[str] = []
