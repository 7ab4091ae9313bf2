"""The step vocabulary of mcp-bdd (see the README and `mcp-bdd steps`).

A project loads it with one line in `steps/mcp_steps.py`:

    from mcp_bdd.steps import *  # noqa: F401,F403

Importing a module registers its steps with behave; one module per MCP feature.
"""

from __future__ import annotations

import importlib.util
import os

from mcp_bdd.errors import UsageError


class SdkHidden(UsageError, ModuleNotFoundError):
    """A project file hides the SDK's `mcp` package. Also a ModuleNotFoundError (the SDK's module is
    not found, a stranger is): behave prints that error of a steps module as its message alone,
    where any other exception gets a traceback after the message that already says what to do."""


def _sdk_not_hidden() -> None:
    """A project file named `mcp.py`, or a package `mcp/` of its own (a steps module, a server
    beside environment.py), hides the MCP SDK: behave puts those folders on sys.path, and the
    first `import mcp` below finds it. Python then says only "No module named 'mcp.shared';
    'mcp' is not a package", naming no file. Decided by the shape of what would be imported (a
    module, or a package without the SDK's `client/` and `shared/`), not by where it lies: an
    SDK checkout on PYTHONPATH is the SDK too."""
    try:
        spec = importlib.util.find_spec("mcp")
        if spec is None:
            return  # not installed: the import below says so itself
        folders = list(spec.submodule_search_locations or [])
        if any(os.path.isdir(os.path.join(f, "client")) and os.path.isdir(os.path.join(f, "shared")) for f in folders):
            return  # the SDK's package
        where = spec.origin or (folders[0] if folders else "a module named mcp")
    except (ValueError, TypeError, OSError):
        return  # an `mcp` without a spec (a test's stub): not a file of the project
    raise SdkHidden(
        f"{where} hides the MCP SDK: Python imports it as `mcp`, so mcp-bdd cannot "
        "import the SDK's package of that name.\n  Tip: rename it (e.g. mcp_steps.py; a server: "
        'mcp_server.py, with app = "mcp_server:..." in the configuration).'
    )


_sdk_not_hidden()

from mcp_bdd.steps import (  # noqa: E402, F401 - imported for their step registrations
    _base,
    auth,
    caching,
    check,
    client,
    fakes,
    headers,
    http_sessions,
    input_rounds,
    notifications,
    prompts,
    resources,
    results,
    servers,
    tasks,
    tools,
    ui_apps,
)

__all__: list[str] = []
