"""A failed or undefined step as the reports show it: the exception's text masked and made
printable (behave's JUnit and JSON outputs take its str() as is), and the vocabulary phrases
closest to an undefined step."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from mcp_bdd._text import printable
from mcp_bdd.errors import McpBddError

if TYPE_CHECKING:
    from mcp_bdd.hooks._model import Registry, Step

__all__ = ["closest_phrases", "mask_exception", "stand_in"]


def mask_exception(step: Step) -> None:
    """A failed step's exception as its reporters show it (behave's JUnit `message`, its JSON), with
    secrets masked and control characters escaped: behave takes its str() as is, while mcp-bdd's
    own errors mask themselves and the traceback is masked (`_behave`). A user step's
    KeyError quoting a token went into junit.xml whole. The stand-in keeps the type's name."""
    exc = getattr(step, "exception", None)
    if exc is None or isinstance(exc, McpBddError):
        return
    said = str(exc)
    shown = printable(said)
    if shown != said:
        step.exception = stand_in(exc, shown)


def stand_in(exc: BaseException, shown: str) -> BaseException:
    """An exception of a subclass of `exc`'s type (its name, and what `isinstance` tells: the
    failure's category) whose str() is `shown`; built without its __init__, whose arguments vary."""
    try:
        cls: type[BaseException] = type(type(exc).__name__, (type(exc),), {"__str__": lambda self: shown})
        stand_in = cls.__new__(cls)  # its own __new__ (OSError's refuses BaseException's)
    except TypeError:  # a type that cannot be subclassed
        stand_in = Exception(shown)
    stand_in.args = (shown,)
    return stand_in.with_traceback(exc.__traceback__)


def closest_phrases(text: str, context: object = None) -> str:
    """The vocabulary phrases closest to an undefined step (or the `\\"` fix), so a typo is a one-second fix.
    Nothing when the project did not load the vocabulary: importing any of it would register all of it
    with behave, in the middle of the run, beside the project's own steps (and clash with a same one)."""
    if "mcp_bdd.steps" not in sys.modules:
        return ""
    from mcp_bdd.steps._phrases import undefined_hint

    registry = _step_registry(context)
    patterns = [str(getattr(d, "pattern", d)) for defs in registry.steps.values() for d in defs]
    return undefined_hint(text, patterns)


def _step_registry(context: object) -> Registry:
    """The registry behave matches this run's steps in (its runner's; the global one before behave 1.2.7)."""
    from behave.step_registry import registry as global_registry

    runner = getattr(context, "_runner", None)
    found: Registry = getattr(runner, "step_registry", None) or global_registry
    return found
