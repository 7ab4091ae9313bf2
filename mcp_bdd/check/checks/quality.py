"""LLM-facing quality: what a model reads to choose a tool and fill in its arguments."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from mcp_bdd.check._context import CheckContext
from mcp_bdd.check._finding import Problem
from mcp_bdd.check._registry import Severity, check

#: Descriptions that say nothing (compared lower-cased, stripped of punctuation).
PLACEHOLDERS = frozenset({
    "", "todo", "tbd", "fixme", "description", "tool description", "a tool", "tool", "test", "placeholder",
    "lorem ipsum", "no description", "none", "n/a", "na", "xxx", "foo", "bar", "description here", "...",
})  # fmt: skip
WRITE_WORDS = re.compile(r"^(delete|remove|drop|destroy|purge|erase|wipe|kill|truncate)[_\-.]", re.IGNORECASE)


def _placeholder(text: str, name: str) -> bool:
    plain = re.sub(r"[^a-z0-9 ]+", "", text.lower()).strip()
    return plain in PLACEHOLDERS or plain == re.sub(r"[^a-z0-9 ]+", " ", name.lower()).strip()


def _description_problems(
    ctx: CheckContext, what: str, name: str, text: Any, *, arg: bool = False
) -> Iterator[Problem]:
    target = what
    if not isinstance(text, str) or not text.strip():
        yield Problem(
            title="the argument has no description" if arg else "there is no description",
            target=target,
            tip="say what it does, when to use it, and what it returns: that is all a model knows about it.",
            severity=Severity.LOW if arg else Severity.MEDIUM,
        )
        return
    if _placeholder(text, name):
        yield Problem(
            title=f"the description is a placeholder: {text.strip()!r}",
            target=target,
            tip="replace it with what the tool does and when a model should use it.",
            severity=Severity.MEDIUM,
        )
        return
    minimum = ctx.options.min_description
    if not arg and len(text.strip()) < minimum:
        yield Problem(
            title=f"the description is shorter than {minimum} characters: {text.strip()!r}",
            target=target,
            tip="a model picks tools by their descriptions: say what it does and when to use it.",
            severity=Severity.LOW,
        )


@check(
    "quality.descriptions",
    severity="medium",
    group="quality",
    rationale="A model picks tools and fills arguments from descriptions alone: missing or placeholder ones mislead.",
)
def descriptions(ctx: CheckContext) -> Iterator[Problem]:
    """Every tool and prompt has a description of at least `--min-description` characters (default 20) that
    is not a placeholder (TODO, "description", the name repeated); every tool argument has a description."""
    for tool in ctx.tools:
        name = str(tool.get("name"))
        yield from _description_problems(ctx, f"tool {name}", name, tool.get("description"))
        props = ((tool.get("inputSchema") or {}).get("properties")) or {}
        if isinstance(props, dict):
            bare = [
                str(a)
                for a, p in props.items()
                if not (isinstance(p, dict) and str(p.get("description") or "").strip())
            ]
            if bare:
                yield Problem(
                    title=f"{len(bare)} of {len(props)} arguments have no description: {', '.join(bare)}",
                    target=f"tool {name}",
                    tip="describe each argument (format, units, where the value comes from): the model fills it in "
                    "from that text alone.",
                    severity=Severity.LOW,
                )
            for arg, prop in props.items():
                text = prop.get("description") if isinstance(prop, dict) else None
                if isinstance(text, str) and text.strip():
                    yield from _description_problems(ctx, f"tool {name}, argument {arg}", str(arg), text, arg=True)
    for prompt in ctx.prompts:
        name = str(prompt.get("name"))
        yield from _description_problems(ctx, f"prompt {name}", name, prompt.get("description"))


@check(
    "quality.annotations",
    severity="medium",
    group="quality",
    rationale="Clients ask before destructive calls and auto-approve read-only ones: the hints must not contradict.",
)
def annotation_hints(ctx: CheckContext) -> Iterator[Problem]:
    """A tool is not both `readOnlyHint: true` and `destructiveHint: true`; a tool named like a deletion
    (delete_, remove_, purge_, ...) is not marked read-only; every tool says whether it is read-only."""
    for tool in ctx.tools:
        name = str(tool.get("name"))
        hints = tool.get("annotations") or {}
        if hints.get("readOnlyHint") is True and hints.get("destructiveHint") is True:
            yield Problem(
                title="the tool is annotated both read-only and destructive",
                target=f"tool {name}",
                details=f"annotations: {hints}",
                tip="a read-only tool changes nothing: drop destructiveHint, or readOnlyHint.",
            )
        elif hints.get("readOnlyHint") is True and WRITE_WORDS.match(name):
            yield Problem(
                title="the tool is named like a deletion but annotated read-only",
                target=f"tool {name}",
                details=f"annotations: {hints}",
                tip="clients may run read-only tools without asking: check the hint.",
            )
        elif "readOnlyHint" not in hints:
            yield Problem(
                title="the tool does not say whether it is read-only",
                target=f"tool {name}",
                tip="set annotations.readOnlyHint (and destructiveHint for writes): clients use them to ask "
                "the user before acting.",
                severity=Severity.LOW,
            )


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@check(
    "quality.confusable-names",
    severity="medium",
    group="quality",
    rationale="Tools whose names differ only by case, separators or one letter are confused by models.",
)
def confusable_names(ctx: CheckContext) -> Iterator[Problem]:
    """No two tools have the same name once case and separators (`_ - .`) are ignored, or names one edit
    apart (get_order / get_orders)."""
    names = sorted({str(t.get("name")) for t in ctx.tools})
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if _normal(a) == _normal(b):
                yield Problem(
                    title=f'the tool names "{a}" and "{b}" differ only by case or separators',
                    target=f"tool {b}",
                    tip="give each tool a name that says how it differs.",
                )
            elif min(len(a), len(b)) >= 6 and _one_edit(_normal(a), _normal(b)):
                yield Problem(
                    title=f'the tool names "{a}" and "{b}" are one letter apart',
                    target=f"tool {b}",
                    tip="give each tool a name that says how it differs (e.g. get_order / list_orders).",
                    severity=Severity.LOW,
                )


def _one_edit(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    return len(ops) == 1 and max(op[2] - op[1] for op in ops) <= 1 and max(op[4] - op[3] for op in ops) <= 1
