"""mcp-bdd: behaviour-driven acceptance tests for MCP servers.

Write Gherkin features, run `behave features/`, read the living documentation.
Public API: the hooks (`mcp_bdd.environment`), the steps (`mcp_bdd.steps`), the report
formatter (`mcp_bdd.report:LivingDocFormatter`), and these extension points.
"""

from __future__ import annotations

import os

if os.name != "posix":  # pragma: no cover - checked by tests/test_packaging.py in a subprocess
    # Servers run in their own process groups, the zygote passes file descriptors over Unix
    # sockets and teardown uses POSIX signals: there is no partial Windows mode to fall back to.
    raise ImportError(
        f"mcp-bdd runs on POSIX systems only (Linux, macOS), not on {os.name!r}: it starts servers in "
        "process groups and hands them file descriptors over Unix sockets.\n"
        "Tip: on Windows, install and run it inside WSL 2 (or a Linux container)."
    )

from mcp_bdd._version import __version__
from mcp_bdd.errors import (
    ConfigError,
    ExpectationFailed,
    McpBddError,
    RequestTimeout,
    ServerStartError,
    UsageError,
)

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
