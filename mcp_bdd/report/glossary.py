"""The step vocabulary, read from behave's step registry when the run ends.

Step definitions document themselves: a docstring of one sentence, a blank line, and a Gherkin
example. Reading the registry (not importing the steps package) keeps the report independent of
the step library, and also lists a project's own steps.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Mapping, Sequence

from mcp_bdd.report.model import StepDef

__all__ = ["from_registry", "split_doc"]


_LABEL = re.compile(r"^\s*(?:e\.g\.|Examples?:)\s*(?=(?:Given|When|Then|And|But)\b)", re.IGNORECASE)
_LABEL_LINE = re.compile(r"(?:e\.g\.|Examples?:)[ \t]*\n", re.IGNORECASE)
_GHERKIN = re.compile(r"^\s*(Given|When|Then|And|But|\*|Scenario|Example|Feature|Background|Rule)\b")


def split_doc(doc: str) -> tuple[str, str]:
    """(summary, example): the prose up to the first blank line or Gherkin line, and the rest."""
    lines = inspect.cleandoc(doc or "").splitlines()
    for index, line in enumerate(lines):
        if not line.strip() or _GHERKIN.match(line):
            summary, example = lines[:index], lines[index:]
            break
    else:
        summary, example = lines, []
    # "Example: Given ..." labels the example; the label is not part of the Gherkin. Nor is a label
    # on a line of its own, with the example indented under it.
    example = [_LABEL.sub("", line) for line in example]
    text = "\n".join(example).strip("\n")
    label = _LABEL_LINE.match(text)
    if label:
        text = textwrap.dedent(text[label.end() :]).strip("\n")
    return " ".join(" ".join(summary).split()), text


def from_registry(steps: Mapping[str, Sequence[object]], uses: Mapping[str, int]) -> tuple[StepDef, ...]:
    """Every registered step definition, in registration order, with how often the run used it.

    `steps` is `behave.step_registry.registry.steps` ({"given": [matcher, ...], ...}); a
    matcher has `pattern`, `func` and `location`.
    """
    out: list[StepDef] = []
    for step_type, matchers in steps.items():
        for matcher in matchers:
            location = str(getattr(matcher, "location", "") or "")
            func = getattr(matcher, "func", None)
            out.append(
                StepDef(
                    step_type=str(step_type),
                    pattern=str(getattr(matcher, "pattern", "")),
                    location=location,
                    doc=inspect.cleandoc(getattr(func, "__doc__", None) or ""),
                    uses=int(uses.get(location, 0)),
                )
            )
    return tuple(out)
