"""Render runs into one self-contained HTML page (jinja2, autoescape on).

Security model: every string from the model is untrusted (servers choose tool descriptions,
payloads, even scenario names come from files). The template autoescapes everything; the only
`Markup` this module makes is (a) our own CSS/JS, (b) JSON for `<script type=application/json>`
with `<`, `>`, `&`, U+2028/U+2029 escaped so nothing can close the script element or open a
comment, and (c) data: URLs checked here again to be base64 raster images (the run JSON fed to
`merge` may come from anywhere). The page loads nothing: a strict CSP forbids it anyway.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import os
import re
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import jinja2
from markupsafe import Markup

from mcp_bdd._text import BIDI_CONTROLS, CONTROLS, control_escape
from mcp_bdd.failures import KINDS
from mcp_bdd.matchers import format_path
from mcp_bdd.report.actions import actions
from mcp_bdd.report.evidence import SAFE_IMAGE_MIMES
from mcp_bdd.report.files import write_text
from mcp_bdd.report.history import Entry
from mcp_bdd.report.minify import minify_css, minify_js
from mcp_bdd.report.model import OUTCOMES, Exchange, Image, Outcome, Run, outcome
from mcp_bdd.report.views import ReportView, build_report, pass_rate
from mcp_bdd.transcript import ARROWS

__all__ = [
    "CSP",
    "EvidenceTable",
    "exchange_data",
    "json_for_html",
    "render_html",
    "render_view",
    "unpack",
    "write_html",
]

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
_TEMPLATES = Path(__file__).parent / "templates"
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")
#: The bidirectional controls (embeddings, overrides, isolates, marks): applied, a server's
#: U+202E reverses the report's own sentence around it. The page shows each as its escape
#: (`\u202e`, as `mcp_bdd._text.printable` does in the terminal); report.js does the same. So
#: too the other controls `printable` escapes: raw, a NUL or an ESC a server sent was written
#: into the page's text as it came (invisible, or U+FFFD), where the console shows `\x00`.
_CONTROL = re.compile(f"[{CONTROLS}]")
_BIDI_ONLY = re.compile(f"[{BIDI_CONTROLS}]")
#: What `_shown_html` steps over: the elements whose text is not markup, then every other tag (the
#: page's `<` and `>` are all tags: autoescape writes the data's as `&lt;` / `&gt;`), or a control.
_CONTROL_CONTEXT = re.compile(
    r"(?P<raw><(?P<el>script|style|title|textarea)\b[^>]*>.*?</(?P=el)\s*>)|(?P<tag><[^>]*>)|(?P<control>"
    + _CONTROL.pattern
    + ")",
    re.DOTALL | re.IGNORECASE,
)
_BIDI_TITLE = "A bidirectional control character, shown rather than applied"
_CONTROL_TITLE = "A control character, shown rather than applied"
_PACKED = re.compile(r'<script type="application/octet-stream" id="mcp-bdd-data"[^>]*>([A-Za-z0-9+/=]*)</script>')

STATUS_LABELS = {
    "passed": "Passed",
    "failed": "Failed",
    "error": "Error",
    "undefined": "Undefined step",
    "pending": "Pending",
    "hook_error": "Hook error",
    "skipped": "Skipped",
    "untested": "Untested",
}
OUTCOME_LABELS = {
    "passed": "Passed",
    "failed": "Failed",
    "errored": "Errored",
    "pending": "Pending",
    "skipped": "Skipped",
    "untested": "Untested",
}
OUTCOME_COLOURS = {
    "passed": "#1a7f37",
    "failed": "#cf222e",
    "errored": "#8250df",
    "pending": "#bf8700",
    "skipped": "#8c959f",
    "untested": "#d0d7de",
}
_ARROWS = ARROWS


def json_for_html(value: object) -> Markup:
    """JSON safe to place inside <script type="application/json">: no `</script>`, no `<!--`."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return Markup(_JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group()], text))


def duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return ""
    if seconds < 0.001:
        return f"{seconds * 1000:.2f} ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


def size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1_000_000:.1f} MB"


def percent(rate: float | None) -> str:
    if rate is None:
        return "\u2013"  # en dash: no rate
    value = rate * 100
    return f"{value:.0f}%" if value in (0, 100) or value >= 99.5 or value <= 0.5 else f"{value:.1f}%"


def when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(epoch)) if epoch else ""


def _pretty(value: object, indent: int, width: int) -> str:
    flat = json.dumps(value, ensure_ascii=False, default=str)
    if indent + len(flat) <= width or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        lines = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, indent + 2, width)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(lines) + "\n" + " " * indent + "}"
    lines = [pad + _pretty(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(lines) + "\n" + " " * indent + "]"


def pretty(value: object, width: int = 88) -> str:
    """JSON for people: small objects on one line, big ones broken up (and fewer bytes than indent=2)."""
    if isinstance(value, str):
        return value
    try:
        return _pretty(value, 0, width)
    except (TypeError, ValueError):
        return repr(value)


def text(value: object) -> Markup:
    """Escape for element *content* only (`&`, `<`, `>`), keeping quotes readable and small.

    Quotes only matter inside attribute values, so this is safe between tags (<pre>, <div>) and
    must never be used inside an attribute or a <script>/<style> element. It exists because JSON
    is full of quotes, and `&#34;` for each of them made large reports a fifth bigger.
    """
    raw = str(value)
    return Markup(raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


_DIFF_LINES = 400


def json_lines(value: object, marks: Sequence[str] = ()) -> list[tuple[str, bool]]:
    """`value` as indented JSON lines, each flagged when it lies at or under one of the `marks`
    JSONPaths (the differences of a comparison), for the expected-vs-actual diff view."""
    marked: frozenset[str] = frozenset(marks)
    out: list[tuple[str, bool]] = []

    def walk(v: object, parts: tuple[str | int, ...], depth: int, prefix: str, suffix: str, hit: bool) -> None:
        if len(out) > _DIFF_LINES:
            return
        hit = hit or format_path(parts) in marked
        pad = "  " * depth
        if isinstance(v, dict | list) and v:
            opening, closing = ("{", "}") if isinstance(v, dict) else ("[", "]")
            out.append((f"{pad}{prefix}{opening}", hit))
            items = list(v.items()) if isinstance(v, dict) else list(enumerate(v))
            for n, (key, item) in enumerate(items):
                label = json.dumps(str(key), ensure_ascii=False) + ": " if isinstance(v, dict) else ""
                part: str | int = str(key) if isinstance(v, dict) else int(key)
                walk(item, (*parts, part), depth + 1, label, "," if n < len(items) - 1 else "", hit)
            out.append((f"{pad}{closing}{suffix}", hit))
        else:
            out.append((f"{pad}{prefix}{json.dumps(v, ensure_ascii=False, default=str)}{suffix}", hit))

    walk(value, (), 0, "", "", False)
    if len(out) > _DIFF_LINES:
        out[_DIFF_LINES:] = [("… (cut for the report)", False)]
    return out


def shown(value: object) -> str:
    """A value from a failure as a person reads it: text as text (JSON held in text pretty-printed)."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                return pretty(json.loads(stripped))
            except ValueError:
                pass
        return value
    return pretty(value)


class EvidenceTable:
    """The MCP messages of the page, stored once each and packed for the page script.

    Filled while the template renders (each evidence block asks for its row number), and
    embedded at the end of the page, which jinja renders last. Every distinct payload, preview
    and image is kept once in `values` (a suite's scenarios send the same `tools/list` again and
    again) and messages refer to it by number; `pack()` then gzips the lot into base64, which the
    page inflates with the browser's DecompressionStream.
    """

    def __init__(self) -> None:
        self.rows: list[list[dict[str, object]]] = []
        self.values: list[str] = []  # each distinct value, already JSON
        self._numbers: dict[str, int] = {}
        self._seen: dict[int, tuple[object, int]] = {}  # id(value) -> (value, number): skips re-serializing

    def value(self, value: object) -> int:
        """The number of `value` in `values`, adding it the first time it is seen."""
        seen = self._seen.get(id(value))
        if seen is not None and seen[0] is value:
            return seen[1]
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        number = self._numbers.get(text)
        if number is None:
            number = self._numbers[text] = len(self.values)
            self.values.append(text)
        self._seen[id(value)] = (value, number)
        return number

    def add(self, exchanges: Sequence[Exchange]) -> int:
        self.rows.append([exchange_data(x, self) for x in exchanges])
        return len(self.rows) - 1

    def pack(self, index: object) -> Markup:
        """The page's data (search index + messages), gzipped and base64-encoded.

        Base64 holds only `A-Za-z0-9+/=`, so nothing in it can close the script element, and
        `mtime=0` keeps the same run's page byte-identical.
        """
        rows = json.dumps(self.rows, ensure_ascii=False, separators=(",", ":"), default=str)
        index_text = json.dumps(index, ensure_ascii=False, separators=(",", ":"), default=str)
        data = '{"index":' + index_text + ',"values":[' + ",".join(self.values) + '],"rows":' + rows + "}"
        packed = gzip.compress(data.encode("utf-8"), compresslevel=9, mtime=0)
        return Markup(base64.b64encode(packed).decode("ascii"))


def exchange_data(x: Exchange, table: EvidenceTable) -> dict[str, object]:
    """One message for the page script (short keys: there may be tens of thousands).

    `b` (payload), `p` (preview of a cut message) and the image data are numbers into the
    table's `values`.
    """
    data: dict[str, object] = {"k": x.kind, "m": x.method, "s": x.server, "q": x.seq}
    if x.target is not None:
        data["t"] = x.target
    if x.duration_ms is not None:
        data["d"] = round(x.duration_ms, 2)
    if x.related is not None:
        data["r"] = x.related
    if x.is_error:
        data["e"] = 1
    if x.preview is not None:
        data["p"], data["n"] = table.value(x.preview), x.size
    elif not (x.payload is None and x.kind == "info"):
        data["b"] = table.value(x.payload)
    images = [[i.mime, table.value(i.data), i.size] for i in x.images if data_url(i)]
    if images:
        data["i"] = images
    return data


def unpack(html: str) -> dict[str, object]:
    """The data a page embeds (for tests and tools): {"index": ..., "values": ..., "rows": ...}."""
    match = re.search(
        r'<script type="application/octet-stream" id="mcp-bdd-data"[^>]*>([A-Za-z0-9+/=]*)</script>', html
    )
    if match is None:
        raise ValueError("no mcp-bdd data in this page")
    data: dict[str, object] = json.loads(gzip.decompress(base64.b64decode(match[1])))
    return data


def exchange_summary(exchanges: Sequence[Exchange]) -> tuple[str, bool]:
    """ "3 messages · 1.5 ms" and whether one of them is an error (the closed evidence block's label)."""
    n = len(exchanges)
    ms = sum(x.duration_ms for x in exchanges if x.duration_ms)
    text = f"{n} message{'s' if n != 1 else ''}" + (f" · {ms:.1f} ms" if ms else "")
    return text, any(x.is_error for x in exchanges)


def _escaped_controls(text: str) -> str:
    """`text` with each control written as its escape (`\\u202e`, `\\x1b`)."""
    return _CONTROL.sub(lambda m: control_escape(m.group()), text)


def _shown_control(match: re.Match[str]) -> str:
    control = match["control"]
    if control is None:  # a tag's attributes, or <title>/<script>/<style> text: no markup there
        found = match.group()
        return _escaped_controls(found) if _CONTROL.search(found) else found
    title = _BIDI_TITLE if _BIDI_ONLY.match(control) else _CONTROL_TITLE
    return f'<span class="bidi" title="{title}">{_escaped_controls(control)}</span>'


def _shown_html(html: str) -> str:
    """The rendered page with every control character (`_text.CONTROLS`) shown, not applied.

    Between tags each becomes a marked `<span class="bidi">\\u202e</span>`; inside a tag (an
    attribute: tooltips, alt text) or the <title>, the bare escape. The packed data is base64 and
    living-doc.json is written apart: both keep what the server sent.
    """
    return _CONTROL_CONTEXT.sub(_shown_control, html) if _CONTROL.search(html) else html


def data_url(image: Image) -> str:
    """A data: URL, or "" when the image is not a base64 raster (then no <img> is written)."""
    if image.mime not in SAFE_IMAGE_MIMES or not _BASE64.fullmatch(image.data):
        return ""
    return f"data:{image.mime};base64,{image.data}"


def donut(counts: dict[Outcome, int]) -> list[dict[str, str | float]]:
    """Segments of the pass-rate donut (a circle of circumference 100, drawn with dash arrays)."""
    total = sum(counts.values())
    segments, offset = [], 0.0
    for name in OUTCOMES:
        if total and counts[name]:
            share = counts[name] * 100 / total
            segments.append({"outcome": name, "share": share, "offset": 25 - offset, "colour": OUTCOME_COLOURS[name]})
            offset += share
    return segments


def bar(counts: dict[Outcome, int], width: float = 100.0) -> list[dict[str, str | float]]:
    total = sum(counts.values())
    out, x = [], 0.0
    for name in OUTCOMES:
        if total and counts[name]:
            w = counts[name] * width / total
            out.append({"outcome": name, "x": x, "w": w, "n": counts[name], "colour": OUTCOME_COLOURS[name]})
            x += w
    return out


def _read(name: str, minify: Callable[[str], str]) -> Markup:
    # Our own static CSS/JS, never data: safe to inline as markup.
    return Markup(minify((_TEMPLATES / name).read_text(encoding="utf-8")))


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        autoescape=True,  # on for every template, whatever its file name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        duration=duration,
        size=size,
        percent=percent,
        when=when,
        pretty=pretty,
        shown=shown,
        json_lines=json_lines,
        text=text,
        data_url=data_url,
        json_for_html=json_for_html,
        status_label=lambda s: STATUS_LABELS.get(s, str(s)),
        outcome=outcome,
        outcome_label=lambda o: OUTCOME_LABELS.get(o, str(o)),
        tagline=lambda tags: " ".join(f"@{t}" for t in tags),
    )
    env.globals.update(
        CSP=CSP,
        OUTCOMES=OUTCOMES,
        OUTCOME_LABELS=OUTCOME_LABELS,
        OUTCOME_COLOURS=OUTCOME_COLOURS,
        ARROWS=_ARROWS,
        KINDS=KINDS,
        donut=donut,
        bar=bar,
        exchange_summary=exchange_summary,
        actions=actions,
        EXTRA_LABELS={"command": "started with", "env": "environment", "headers": "HTTP headers", "url": "URL"},
        pass_rate=pass_rate,
        zip=zip,
        css=_read("report.css", minify_css),
        js=_read("report.js", minify_js),
    )
    return env


def render_view(view: ReportView) -> str:
    template = _environment().get_template("report.html.j2")
    return _shown_html(template.render(report=view, generated=time.time(), evidence_table=EvidenceTable()))


def render_html(runs: Sequence[Run], title: str | None = None, history: Sequence[Entry] = ()) -> str:
    """One self-contained HTML page for one run, or several runs merged (a column per run).

    `history`: earlier runs (oldest first, see `history.read_history`) for trends and flaky marks.
    """
    return render_view(build_report(runs, title, history))


def write_html(
    path: str | os.PathLike[str], runs: Sequence[Run], title: str | None = None, history: Sequence[Entry] = ()
) -> Path:
    return write_text(path, render_html(runs, title, history))
