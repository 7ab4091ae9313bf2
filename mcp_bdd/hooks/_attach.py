"""Attachments from mcp-bdd's hooks to behave's formatters, wherever in the scenario they come.

`context.attach` hands an attachment to every formatter that has `embedding`, and stops at the
first one that raises. behave's own `json` formatter (what Cucumber / Xray tooling reads) files
an attachment under the step at its cursor, which is wrong or missing at both ends of a scenario:

- during before_scenario it has no steps yet (behave adds them after the hook), so the evidence
  of a user's `context.execute_steps` setup raised IndexError;
- after the last step's result the cursor points past the end, so what mcp-bdd attaches after a
  passing scenario's steps (a call a user's after_scenario makes, the teardown's traffic) raised
  IndexError and the green scenario became a hook error; after a failed step it points at the
  first skipped step, which never ran.

So mcp-bdd's hooks attach through `attach`: each formatter on its own (one that raises is named
once on stderr and neither fails the hook nor starves the others), and behave's json formatter
gets the before hooks' evidence under the first step (what came before its steps existed, once
they do), and what comes after the steps under the last step that ran. The mime types still
say which phase each attachment belongs to.

A user's own `context.attach` met the same IndexError (a screenshot or a log attached by an
after_scenario hook failed a passing scenario): `place_users_attachments` routes it through the
same placement.
"""

from __future__ import annotations

import base64
import binascii
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from behave.formatter.json import JSONFormatter

if TYPE_CHECKING:
    from mcp_bdd.hooks._model import Context

__all__ = ["Phase", "attach", "deliver_held", "mask_again", "place_users_attachments"]

#: where in its scenario an attachment comes from: the before hooks, a step, the after hooks
Phase = Literal["before", "during", "after"]

#: what behave's json formatter got before its scenario had steps: (that scenario's element, attachments)
_HELD: weakref.WeakKeyDictionary[JSONFormatter, tuple[dict[str, object], list[tuple[str, bytes]]]] = (
    weakref.WeakKeyDictionary()
)
_WARNED: set[tuple[str, str]] = set()
#: behave's own `embedding` of each json formatter whose method `place_users_attachments` replaced
_RAW: weakref.WeakKeyDictionary[JSONFormatter, Callable[[str, bytes], None]] = weakref.WeakKeyDictionary()


def attach(context: Context, mime: str, data: bytes, *, phase: Phase = "during") -> None:
    """`context.attach(mime, data)` for mcp-bdd's evidence of one phase of the scenario."""
    runner = getattr(context, "_runner", None)
    for formatter in getattr(runner, "formatters", None) or ():
        if not hasattr(formatter, "embedding"):
            continue
        try:
            if isinstance(formatter, JSONFormatter):
                _deliver(formatter, [(mime, data)], phase)
            else:
                formatter.embedding(mime, data)
        except Exception as exc:
            _warn_once(formatter, exc)


def place_users_attachments(context: Context, phase_of: Callable[[], Phase | None]) -> None:
    """Route every `context.attach` to behave's json formatters through the placement below.

    `phase_of()` says where the scenario is (None outside one: behave's own method then runs)."""
    for formatter in _json_formatters(context):
        if formatter in _RAW:
            continue
        _RAW[formatter] = formatter.embedding

        def embedding(mime: str, data: bytes, formatter: JSONFormatter = formatter) -> None:
            phase = phase_of()
            if phase is None:
                _RAW[formatter](mime, data)
            else:
                _deliver(formatter, [(mime, data)], phase)

        formatter.embedding = embedding


def deliver_held(context: Context) -> None:
    """The steps exist now (the first step starts): what the before hooks attached goes under the first."""
    for formatter in _json_formatters(context):
        if formatter in _HELD and formatter.current_feature_element is not None:
            try:
                _deliver(formatter, [], "before")
            except Exception as exc:
                _warn_once(formatter, exc)


def mask_again(context: Context, mask: Callable[[str], str]) -> None:
    """Mask the scenario's attachments in behave's json formatters again, with `mask` (a secret the
    scenario remembered after its evidence was attached: a token its server issued). Images and
    other binary attachments stay as they are."""
    for formatter in _json_formatters(context):
        element = formatter.current_feature_element or {}
        for step in element.get("steps") or ():
            for embedding in step.get("embeddings") or ():
                _mask_embedding(embedding, mask)


def _mask_embedding(embedding: dict[str, object], mask: Callable[[str], str]) -> None:
    data = embedding.get("data")
    if not isinstance(data, str | bytes):
        return
    try:
        text = base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return
    masked = mask(text)
    if masked != text:
        embedding["data"] = base64.b64encode(masked.encode("utf-8")).decode("ascii")


def _json_formatters(context: Context) -> list[JSONFormatter]:
    runner = getattr(context, "_runner", None)
    return [f for f in getattr(runner, "formatters", None) or () if isinstance(f, JSONFormatter)]


def _deliver(formatter: JSONFormatter, new: list[tuple[str, bytes]], phase: Phase) -> None:
    element: dict[str, object] = formatter.current_feature_element
    listed = element.get("steps")
    steps = listed if isinstance(listed, list) else []  # behave's json: a list, once the scenario has steps
    element_held, held = _HELD.pop(formatter, (element, []))
    pending = [*(held if element_held is element else []), *new]  # another scenario's: dropped
    if not steps:
        if pending:
            _HELD[formatter] = (element, pending)
        return
    cursor: int = formatter._step_index  # the next step to report
    if phase == "before":
        formatter._step_index = 0
    elif phase == "after":  # the last step that ran (or the first, when none did)
        formatter._step_index = max(0, min(cursor, len(steps)) - 1)
    else:
        formatter._step_index = min(cursor, len(steps) - 1)
    embed = _RAW.get(formatter, formatter.embedding)
    try:
        for item in pending:
            embed(*item)
    finally:
        formatter._step_index = cursor


def _warn_once(formatter: object, exc: Exception) -> None:
    key = (type(formatter).__name__, type(exc).__name__)
    if key not in _WARNED:
        _WARNED.add(key)
        print(
            f"\nmcp-bdd: the {key[0]} formatter could not take mcp-bdd's evidence ({key[1]}: {exc});"
            " that report leaves it out, the others have it.\n",
            file=sys.__stderr__,
        )
