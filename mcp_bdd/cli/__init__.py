"""The `mcp-bdd` command: every way to drive mcp-bdd from a shell.

    _main      the parser, the exit codes (in its docstring) and the dispatch to each subcommand
    matrix     `mcp-bdd run`: the transport x protocol matrix, parallel workers, merged reports
    scaffold   `mcp-bdd init` and `mcp-bdd scaffold`: a project wired, features written from a surface
    detect     what `init` reads from a project, statically (its server, its layout, its install)
    shell      `mcp-bdd call` and `mcp-bdd list`: one request, as a scenario would make it

`probe`, `check` and the contract lock live outside: steps and the gate use them too.
"""

from __future__ import annotations

from mcp_bdd.cli._main import main

__all__ = ["main"]
