"""The page's own stylesheet and script, lighter: what the browser parses, without our comments and layout.

Both are inlined into every report (about 47 kB as written, with their comments). These are not
general minifiers: each does only what is safe for the files it is given, and gives a file back
unchanged where it meets something it was not written for.

- CSS: comments go, whitespace collapses, and the spaces next to `{ } ; >`, before `,` and after
  `:` go; strings are copied as they are. The stylesheet the browser builds is the same (a Chromium test
  compares every rule).
- JS: only whole lines go — blank ones, `//` comment lines and block comments that fill their
  lines — and each line's indentation. A line keeps its end, so automatic semicolons stay where
  they were. A file with a template literal or a string continued over a line is left as written.
"""

from __future__ import annotations

import re

__all__ = ["minify_css", "minify_js"]

#: a string, a comment, a run of whitespace, or anything else up to one of those
_CSS_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?\*/|\s+|[^"\'/\s]+|/', re.DOTALL)
#: a value holding var() is kept as written until the browser substitutes it: its spaces after
#: commas are part of what it serializes, so they stay (cheaper than telling those values apart)
_CSS_TIGHT_BEFORE = frozenset("{};,>")
_CSS_TIGHT_AFTER = frozenset("{};>:")


def minify_css(css: str) -> str:
    out: list[str] = []
    pending_space = False
    for token in _CSS_TOKEN.findall(css):
        if token.startswith("/*"):
            pending_space = True  # a comment separates what is on its two sides, as a space does
            continue
        if token.isspace():
            pending_space = True
            continue
        if token[0] not in "\"'":
            token = token.replace(";}", "}")  # a block's last declaration needs no semicolon
            if token[0] == "}" and out and out[-1].endswith(";"):  # never a string: those end with a quote
                out[-1] = out[-1][:-1]
        if pending_space and out and out[-1]:
            last = out[-1][-1]
            if last not in _CSS_TIGHT_AFTER and token[0] not in _CSS_TIGHT_BEFORE:
                out.append(" ")
        pending_space = False
        out.append(token)
    return "".join(out).strip()


def minify_js(js: str) -> str:
    if "`" in js or re.search(r"\\\n", js):
        return js  # a template literal or a continued string: its lines are text, not layout
    out: list[str] = []
    in_comment = False
    for line in js.splitlines():
        stripped = line.strip()
        if in_comment:
            end = stripped.find("*/")
            if end < 0:
                continue
            if stripped[end + 2 :]:
                return js  # code after a comment on its closing line: not a case this was written for
            in_comment = False
            continue
        if not stripped or stripped.startswith("//"):
            continue
        if stripped.startswith("/*"):
            end = stripped.find("*/", 2)
            if end < 0:
                in_comment = True
                continue
            if not stripped[end + 2 :]:
                continue
        out.append(stripped)
    return js if in_comment else "\n".join(out)
