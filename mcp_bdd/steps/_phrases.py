"""The step vocabulary as people and editors read it: placeholders, regexes, hints for undefined steps.

A step definition's pattern (`the result at "{path:Q}" has {n:Int} {unit:Items}`) is written for
behave's parse matcher. People should never see parse-type names, so every place that shows a
phrase — `mcp-bdd steps`, docs/steps.md, the hint under an undefined step — shows it with
placeholders (`the result at "<path>" has <n> item(s)`), and the editor files get the same
phrase as a regular expression. All three derive from the one table of parse types in
mcp_bdd.steps._base, so they cannot drift apart.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from mcp_bdd.steps._base import PARSE_TYPES

__all__ = ["closest_phrases", "human", "quote_hint", "to_regex", "undefined_hint"]

_FIELD = re.compile(r"\{(?P<name>\w*)(?::(?P<type>[^}]*))?\}")

#: What a few parse types read as in a phrase (others show as `<field name>`).
_SHOWN_AS = {
    "Requests": "request(s)",
    "Rows": "row(s)",
    "SecondWord": "second(s)",
    "Times": "time(s)",
    "Items": "item(s)",
    "Messages": "message(s)",
    "Notifications": "notification(s)",
    "A": "a(n)",
    "Receive": "receive(d)",
}
#: Field names written for code, shown as the word the vocabulary (shared/spec/steps.md) uses.
_FIELD_WORDS = {
    "needle": "text",
    "expected": "text",
    "reply": "text",
    "jpath": "path",
    "pattern": "regex",
    "literal": "json literal",
    "count": "n",
    "status": "code",
    "method": "METHOD",
    "var": "variable",
}
#: The regex of parse's own format types used in patterns (`{status:d}`), and of an untyped field.
_BUILTIN_REGEX = {"d": r"-?\d+", "": r".+?"}


def human(pattern: str) -> str:
    """The pattern with `<placeholders>` instead of parse fields: `has {n:Int} {unit:Items}` -> `has <n> item(s)`."""

    def shown(match: re.Match[str]) -> str:
        kind = match.group("type") or ""
        if kind in _SHOWN_AS:
            return _SHOWN_AS[kind]
        name = match.group("name") or "value"
        return f"<{_FIELD_WORDS.get(name, name)}>"

    return _FIELD.sub(shown, pattern)


def to_regex(pattern: str, types: dict[str, str] | None = None) -> str:
    """The pattern as an anchored regular expression (Python and JavaScript syntax alike), one group per field.

    Editors that complete steps from regexes (the Cucumber extension for VS Code) get the very
    regexes behave matches with, so what completes is what runs. `types` overrides the regex of
    some parse types.
    """
    out: list[str] = ["^"]
    last = 0
    for match in _FIELD.finditer(pattern):
        out.append(_escape(pattern[last : match.start()]))
        kind = match.group("type") or ""
        if types and kind in types:
            regex = types[kind]
        else:
            regex = PARSE_TYPES[kind][0] if kind in PARSE_TYPES else _BUILTIN_REGEX.get(kind, r".+?")
        out.append(f"({regex})")
        last = match.end()
    out.append(_escape(pattern[last:]))
    out.append("$")
    return "".join(out)


def _escape(literal: str) -> str:
    """Escape regex syntax only (re.escape also escapes `-`, `#`, `~` ..., which JavaScript's `u` mode rejects)."""
    return re.sub(r"([\\^$.|?*+()\[\]{}/])", r"\\\1", literal)


def closest_phrases(text: str, patterns: Iterable[str], n: int = 3) -> list[str]:
    """The phrases (with placeholders) closest to a step text, best first."""
    by_human = {human(p): p for p in patterns}
    return difflib.get_close_matches(text, list(by_human), n=n, cutoff=0.4)


def quote_hint(text: str, patterns: Iterable[str]) -> str | None:
    """The step rewritten with `\\"` when it is undefined only because a quoted value holds a double quote."""
    # Phrases with more quoted values first: their own quotes may explain the step without any escape.
    for pattern in sorted(patterns, key=lambda p: -p.count(":Q}")):
        if ":Q}" not in pattern:
            continue
        # The same phrase, but a quoted value may hold anything: does the step read as this phrase then?
        match = re.match(to_regex(pattern, {"Q": ".*"}), text)  # greedy: a value runs to its last quote
        if match is None:
            continue
        fields = [m.group("type") for m in _FIELD.finditer(pattern)]
        values = match.groups()
        if not any(kind == "Q" and '"' in value for kind, value in zip(fields, values, strict=True)):
            continue
        fixed = text
        for i in reversed(range(len(values))):  # from the end, so earlier spans stay valid
            if fields[i] == "Q" and '"' in values[i]:
                start, end = match.span(i + 1)
                fixed = fixed[:start] + re.sub(r'(?<!\\)"', r'\\"', values[i]) + fixed[end:]
        return (
            '  A quoted value holds a double quote, which ends the value early. Write it as \\":\n'
            f"    {fixed}\n"
            f"  (the phrase: {human(pattern)})"
        )
    return None


def undefined_hint(text: str, patterns: Iterable[str]) -> str:
    """What to tell a person whose step is undefined: the `\\"` fix, else the closest phrases."""
    patterns = list(patterns)
    hint = quote_hint(text, patterns)
    if hint:
        return hint
    close = closest_phrases(text, patterns)
    if not close:
        return ""
    return "  Closest phrases of the step vocabulary:\n" + "\n".join(f"    {p}" for p in close)
