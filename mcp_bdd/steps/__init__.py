"""The step vocabulary of mcp-bdd (see the README and `mcp-bdd steps`).

A project loads it with one line in `steps/mcp_steps.py`:

    from mcp_bdd.steps import *  # noqa: F401,F403

Importing a module registers its steps with behave; one module per MCP feature.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os

from mcp_bdd.errors import UsageError


def _sdk_not_hidden() -> None:
    """A project file named `mcp.py`, or a folder `mcp/` of its own (a steps module, a server
    beside environment.py), hides the MCP SDK: behave puts those folders on sys.path, and the
    first `import mcp` below finds it. Python then says only "No module named 'mcp.shared';
    'mcp' is not a package", naming no file."""
    try:
        installed = [f.locate() for f in importlib.metadata.files("mcp") or () if f.as_posix() == "mcp/__init__.py"]
    except importlib.metadata.PackageNotFoundError:
        return  # not installed: the import below says so itself
    spec = importlib.util.find_spec("mcp")
    if not installed or spec is None or spec.origin is None:
        return  # an editable install of the SDK lists no files: nothing to compare with
    if any(os.path.samefile(spec.origin, path) for path in installed if os.path.exists(path)):
        return  # the SDK's package
    raise UsageError(
        f"{spec.origin} hides the MCP SDK: Python imports it as `mcp`, so mcp-bdd cannot "
        "import the SDK's package of that name.\n  Tip: rename it (e.g. mcp_steps.py; a server: "
        'mcp_server.py, with app = "mcp_server:..." in the configuration).'
    )


_sdk_not_hidden()

from mcp_bdd.steps import (  # noqa: E402, F401 - imported for their step registrations
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
