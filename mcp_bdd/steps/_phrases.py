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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from mcp_bdd.steps._base import PARSE_TYPES

__all__ = [
    "MARKDOWN_INTRO",
    "catalog",
    "closest_phrases",
    "human",
    "quote_hint",
    "split_doc",
    "to_regex",
    "undefined_hint",
]

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
    """Escape regex syntax only (re.escape also escapes `-`, `#`, `~` ..., which JavaScript's `u` mode rejects),
    and `/`, so the regex can be written as a JavaScript /literal/ (the editor files)."""
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


# ---------------------------------------------------------------------------------------------
# the catalog: `mcp-bdd steps` and docs/steps.md

#: Built-in step modules in reading order (a feature starts a server, calls, checks ...).
_ORDER = ("servers", "tools", "results", "resources", "prompts", "notifications", "client", "fakes")

MARKDOWN_INTRO = """\
# The step vocabulary

Generated by `mcp-bdd steps --markdown > docs/steps.md` from the step definitions' docstrings (the
same text feeds the report's glossary); a test keeps this file equal to that output.

How to read a phrase:

- `"<text>"` is a quoted value. To put a double quote inside it, write `\\"`:
  `Then the result text is "say \\"hi\\""`. Other backslashes stay as written, so a regular
  expression such as `"^Result: \\d+$"` means what it says.
- `<n>` is a whole number; `<seconds>` a number of seconds (`2`, `0.5`); `<json literal>` a JSON value
  written without quotes (`8`, `true`, `null`, `[1, 2]`); `<METHOD>` an HTTP method.
- `item(s)`, `second(s)`, `time(s)` ...: the singular and the plural both work (`has 1 item`,
  `within 1 second`); `a(n)` reads `a` or `an`, `receive(d)` reads `receive` or `received`.
- `on "<server>"` names the server a step talks to; without it the step targets the current
  server (the last one a server step named, else the configured default).
- Every quoted value, table cell and doc string is interpolated first: `${name}` (a variable
  remembered earlier), `${env.NAME}`, `${uuid}`, and `${fake.<name>.<attr>}` — e.g.
  `"${fake.payments.url}/charges"` (HTTP service), `${fake.shop.path}` (database file),
  `${fake.workspace.path}`. `$${` writes a literal `${`.
"""


def _module_title(module: str) -> str:
    import importlib

    try:
        doc = importlib.import_module(module).__doc__ or ""
    except ImportError:
        doc = ""
    first = doc.strip().splitlines()[0].rstrip(".") if doc.strip() else ""
    return f"{first} (`{module}`)" if first else f"`{module}`"


def _module_key(module: str) -> tuple[int, str]:
    prefix = "mcp_bdd.steps."
    if module.startswith(prefix) and module[len(prefix) :] in _ORDER:
        return _ORDER.index(module[len(prefix) :]), module
    return len(_ORDER), module


class StepDefinition(Protocol):
    """A step definition in behave's registry, as the catalog reads it."""

    func: Callable[..., object]
    pattern: str


def catalog(registry_steps: Mapping[str, Sequence[StepDefinition]], *, markdown: bool) -> str:
    """Every registered step (behave's registry), grouped by module, as text or as docs/steps.md."""
    import inspect

    groups: dict[str, list[tuple[int, str, str, str]]] = {}
    for step_type in ("given", "when", "then", "step"):
        for matcher in registry_steps.get(step_type, []):
            func = inspect.unwrap(matcher.func)  # a decorated step (e.g. skip_replaced) lists at its own line
            module = str(getattr(func, "__module__", "?"))
            line = int(getattr(getattr(func, "__code__", None), "co_firstlineno", 0))
            doc = inspect.getdoc(func) or ""
            keyword = "Given/When/Then" if step_type == "step" else step_type.capitalize()
            groups.setdefault(module, []).append((line, keyword, human(str(matcher.pattern)), doc))
    out: list[str] = [MARKDOWN_INTRO] if markdown else []
    for module in sorted(groups, key=_module_key):
        entries = sorted(groups[module])
        if markdown:
            out.append(f"## {_module_title(module)}\n")
            for _, keyword, phrase, doc in entries:
                summary, example = split_doc(doc)
                out.append(f"- **{keyword}** `{phrase}`\n")
                if summary:
                    out.extend(f"  {line}".rstrip() for line in summary.splitlines())
                    out.append("")
                if example:
                    out.append("  ```gherkin")
                    out.extend(f"  {line}".rstrip() for line in example.splitlines())
                    out.append("  ```\n")
        else:
            out.append(module)
            for _, keyword, phrase, doc in entries:
                out.append(f"  {keyword} {phrase}")
                out.extend(f"      {line}".rstrip() for line in doc.splitlines())
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def split_doc(doc: str) -> tuple[str, str]:
    """(summary, Gherkin example) of a step docstring: "Example:" starts the example, inline or below."""
    import textwrap

    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("Example:"):
            first = line.strip()[len("Example:") :].strip()
            rest = textwrap.dedent("\n".join(lines[i + 1 :])).strip("\n")
            return "\n".join(lines[:i]).strip(), "\n".join(x for x in (first, rest) if x)
    return doc.strip(), ""
