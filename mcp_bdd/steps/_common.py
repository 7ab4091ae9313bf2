"""Kept for step modules written against its old name: everything lives in mcp_bdd.steps._base."""

from __future__ import annotations

from mcp_bdd.steps._base import *  # noqa: F403
from mcp_bdd.steps._base import __all__ as __all__
