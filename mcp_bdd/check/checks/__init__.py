"""The built-in checks, one module per group; importing this package registers them all."""

from __future__ import annotations

from mcp_bdd.check.checks import auth, honest, poisoning, protocol, quality, schemas  # noqa: F401

__all__: list[str] = []
