"""LLM-facing quality: what a model reads to choose a tool and fill in its arguments."""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcp_bdd.check._context import CheckContext, json_object
from mcp_bdd.check._finding import Problem
from mcp_bdd.check._registry import Severity, check

#: Descriptions that say nothing (compared lower-cased, stripped of punctuation).
PLACEHOLDERS = frozenset({
    "", "todo", "tbd", "fixme", "description", "tool description", "a tool", "tool", "test", "placeholder",
    "lorem ipsum", "no description", "none", "n/a", "na", "xxx", "foo", "bar", "description here", "...",
})  # fmt: skip
WRITE_WORDS = re.compile(r"^(delete|remove|drop|destroy|purge|erase|wipe|kill|truncate)[_\-.]", re.IGNORECASE)
#: verbs of a change: a tool whose name or description leads with one is no read-only tool
CHANGE_VERBS = (
    "delete|remove|drop|destroy|purge|erase|wipe|kill|truncate|reset|update|set|write|overwrite|send|create|"
    "revoke|insert|modify|rename|upload|publish|submit|grant|disable|enable|cancel|transfer|pay|refund|save|"
    "append|replace|rotate|assign|invite|approve|subscribe|unsubscribe"
)  # not verbs that are as often nouns ("Changes between commits", "Posts of a user", "Order status")
#: a name that leads with a change verb: `reset_password`, `set-flag`, `updateUser` (never `settings`, `getUpdate`)
CHANGE_NAME = re.compile(rf"^(?:{CHANGE_VERBS})(?:[_\-.]|[A-Z]|$)")
#: a description whose first words are a change, as descriptions are written: "Resets ...", "Reset ...",
#: "This tool sends ...", "Used to create ...", "Tool to revoke ..."
CHANGE_DESCRIPTION = re.compile(
    rf"^\s*(?:(?:this\s+)?tool\s+(?:that\s+|to\s+|which\s+)?|used\s+to\s+|lets\s+you\s+|allows\s+you\s+to\s+)?"
    rf"(?:{CHANGE_VERBS})(?:s|es)?\b(?!\s+(?:of|for|status|history|log|are|is|was|were|available)\b)",
    re.IGNORECASE,
)


def changes_something(name: str, description: object) -> str | None:
    """What says that a tool changes something — its name or the lead of its description — or None.
    Only the leading verb counts: "Lists the orders (use create_order to add one)" is a read, and
    "Update history of a package" names a thing, not an act."""
    if CHANGE_NAME.match(name):
        return f"its name ({name!r}) says it changes something"
    lead = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0] if isinstance(description, str) else ""
    if CHANGE_DESCRIPTION.match(lead):
        return f"its description says it changes something: {lead[:120]!r}"
    return None


def _placeholder(text: str, name: str) -> bool:
    plain = re.sub(r"[^a-z0-9 ]+", "", text.lower()).strip()
    return plain in PLACEHOLDERS or plain == re.sub(r"[^a-z0-9 ]+", " ", name.lower()).strip()


def _description_problems(
    ctx: CheckContext, what: str, name: str, text: object, *, arg: bool = False
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
        props = json_object(tool.get("inputSchema")).get("properties") or {}
        if isinstance(props, dict):
            bare = [
                str(a)
                for a, p in props.items()
                if not (isinstance(p, dict) and str(p.get("description") or "").strip())
            ]
            if bare:
                have = "has" if len(bare) == 1 else "have"
                yield Problem(
                    title=f"{len(bare)} of {len(props)} arguments {have} no description: {', '.join(bare)}",
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
    (delete_, remove_, purge_, ...), or whose name or description leads with a change (reset, update,
    set, write, send, create, revoke, ...), is not marked read-only; every tool says whether it is read-only."""
    for tool in ctx.tools:
        name = str(tool.get("name"))
        hints = json_object(tool.get("annotations"))
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
        elif hints.get("readOnlyHint") is True and (said := changes_something(name, tool.get("description"))):
            yield Problem(
                title="the tool is annotated read-only, but " + said.split(":")[0],
                target=f"tool {name}",
                details=f"{said}\nannotations: {hints}",
                tip="clients may run read-only tools without asking: a tool that changes anything must not claim "
                "readOnlyHint: true.",
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
    apart (get_order / get_orders). Each finding is on the later name of a pair (in sorted order)."""
    names = sorted({str(t.get("name")) for t in ctx.tools})
    by_normal: dict[str, list[str]] = {}
    for name in names:
        by_normal.setdefault(_normal(name), []).append(name)
    for group in by_normal.values():
        # the first of a group stands for it: every pair of a group of k would be k² findings
        for b in group[1:]:
            yield Problem(
                title=f'the tool names "{group[0]}" and "{b}" differ only by case or separators',
                target=f"tool {b}",
                tip="give each tool a name that says how it differs.",
            )
    for b, earlier in _one_letter_partners(names, by_normal).items():
        yield Problem(
            title=f'the tool names "{earlier[0]}" and "{b}" are one letter apart'
            if len(earlier) == 1
            else f'the tool name "{b}" is one letter apart from {len(earlier)} others: {_quoted(earlier)}',
            target=f"tool {b}",
            tip="give each tool a name that says how it differs (e.g. get_order / list_orders).",
            severity=Severity.LOW,
        )


def _quoted(names: list[str], shown: int = 5) -> str:
    listed = ", ".join(f'"{n}"' for n in names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _one_letter_partners(names: list[str], by_normal: dict[str, list[str]]) -> dict[str, list[str]]:
    """For each name of six characters or more, the earlier names (sorted order) of six or more whose
    normal forms are one substitution, insertion or deletion apart. By deletion neighbourhoods: a
    name's normal form with one letter left out is looked up, not compared with every other name,
    so the time grows with the number of names times their length, not with its square."""
    long = {n: [r for r in raws if len(r) >= 6] for n, raws in by_normal.items()}
    long = {n: raws for n, raws in long.items() if raws}
    partners: dict[str, list[str]] = {}
    for x, y in _one_edit_normals(list(long)):
        for a in long[x]:
            for b in long[y]:
                first, later = (a, b) if a < b else (b, a)
                partners.setdefault(later, []).append(first)
    return {b: sorted(partners[b]) for b in sorted(partners)}


def _one_edit_normals(normals: list[str]) -> Iterator[tuple[str, str]]:
    """Each pair of distinct `normals` one substitution, insertion or deletion apart, once."""
    present = set(normals)
    # two strings of one length that differ at i alone agree on everything but i: hashed, a
    # 128-letter name's 128 keys cost 128 integers, not 128 strings (pairs are verified below)
    same_but_one: dict[int, list[str]] = {}
    for normal in normals:
        for i in range(len(normal)):
            same_but_one.setdefault(hash(normal[:i] + "\0" + normal[i + 1 :]), []).append(normal)
        for shorter in {normal[:i] + normal[i + 1 :] for i in range(len(normal))}:
            if shorter in present:
                yield shorter, normal  # one letter inserted
    for bucket in same_but_one.values():
        for i, x in enumerate(bucket):
            for y in bucket[i + 1 :]:
                if len(x) == len(y) and sum(a != b for a, b in zip(x, y, strict=True)) == 1:
                    yield x, y
