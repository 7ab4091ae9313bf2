"""mcp-bdd: behaviour-driven acceptance tests for MCP servers.

Write Gherkin features, run `behave features/`, read the living documentation.
Public API: the hooks (`mcp_bdd.environment`), the steps (`mcp_bdd.steps`), the report
formatter (`mcp_bdd.report:LivingDocFormatter`), and these extension points.
"""

from __future__ import annotations

from mcp_bdd.errors import (
    ConfigError,
    ExpectationFailed,
    McpBddError,
    RequestTimeout,
    ServerStartError,
    UsageError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ExpectationFailed",
    "McpBddError",
    "RequestTimeout",
    "ServerStartError",
    "UsageError",
    "__version__",
    "fake",
    "matcher",
]


def __getattr__(name: str) -> object:
    # Lazy so that `import mcp_bdd` stays cheap (no mcp, no behave) for pure uses.
    if name == "fake":
        from mcp_bdd.fakes import fake

        return fake
    if name == "matcher":
        from mcp_bdd.matchers import matcher

        return matcher
    raise AttributeError(name)
