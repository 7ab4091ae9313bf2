"""Run mcp-bdd's behave hooks around a project's own, in the project's environment.py.

behave takes exactly one `before_scenario` (etc.) from one environment.py, so a project that
already has hooks cannot simply `from mcp_bdd.environment import *`: either its hooks or ours
would be lost. `mcp-bdd init` appends two lines to such a file instead:

    from mcp_bdd.chain import chain_hooks
    chain_hooks(globals())

which replaces each hook the file defines by one that runs both: ours first on the way in
(`before_*`: the user's hook already sees `context.mcp`), the user's first on the way out
(`after_*`: it still sees the live sessions, and ours runs even if it raises). Hooks the file
does not define become ours. It must stay at the end of the file, after the user's hooks.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

__all__ = ["chain_hooks"]

_CHAINED = "__mcp_bdd_chained__"


def chain_hooks(namespace: MutableMapping[str, object]) -> None:
    """Make every behave hook in `namespace` (an environment.py's globals()) also run mcp-bdd's."""
    import mcp_bdd.environment as ours

    for name in ours.__all__:
        if not name.startswith(("before_", "after_")):
            continue
        mine: Callable[..., object] = getattr(ours, name)
        theirs = namespace.get(name)
        if theirs is None or theirs is mine or getattr(theirs, _CHAINED, False) or not callable(theirs):
            namespace[name] = theirs or mine
            continue
        namespace[name] = _both(name, mine, theirs)


def _both(name: str, mine: Callable[..., object], theirs: Callable[..., object]) -> Callable[..., None]:
    if name.startswith("before_"):

        def hook(context: object, *args: object) -> None:
            mine(context, *args)
            theirs(context, *args)

    else:

        def hook(context: object, *args: object) -> None:
            try:
                theirs(context, *args)
            finally:
                mine(context, *args)

    hook.__name__ = name
    hook.__doc__ = f"mcp-bdd's {name} and the project's own ({getattr(theirs, '__qualname__', name)})."
    setattr(hook, _CHAINED, True)
    return hook
