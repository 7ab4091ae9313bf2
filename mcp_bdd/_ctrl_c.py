"""A Ctrl-C in mcp-bdd's own commands that no library can lose.

Python raises KeyboardInterrupt wherever the main thread is when the signal's handler runs.
Inside a callback from a C extension — pydantic-core calls back into Python as it builds the MCP
SDK's validators, which a one-shot command imports while its server boots — the exception is
printed as "Exception ignored" and dropped: `mcp-bdd list` then waited for its server until its
startup timeout. `_on_ctrl_c` counts each Ctrl-C before it raises; `raise_lost`, which every wait for
the run's event loop calls as it wakes, raises KeyboardInterrupt again for one that was counted
but never seen on its way up.

Installed by the `mcp-bdd` command only (`install`): a behave run handles KeyboardInterrupt
itself and goes on to its cleanup, where a second one would cut that cleanup short.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

__all__ = ["install", "raise_lost"]

_received = 0  # Ctrl-Cs the handler raised KeyboardInterrupt for
_seen = 0  # of those, the ones seen on their way up (or raised again by `raise_lost`)


def install() -> None:
    """Count Ctrl-Cs in this process, unless something other than Python's default handles them."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_ctrl_c)


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    global _received
    _received += 1
    raise KeyboardInterrupt


def raise_lost() -> None:
    """Raise KeyboardInterrupt for a Ctrl-C that was lost: counted, but not on its way up now
    (a cleanup running because of it calls this too, and must not be cut short)."""
    global _seen
    if _seen == _received:
        return
    _seen = _received
    if not isinstance(sys.exc_info()[1], KeyboardInterrupt):
        raise KeyboardInterrupt
