"""What a tool's and a `ui://` resource's metadata say about an MCP App, read as a host reads it.

Pure: no browser, no SDK. Everything here comes from a server, so nothing is trusted: a field of the
wrong type reads as absent, and a CSP source that could break out of its directive is dropped.

The wire (SEP-1865, `io.modelcontextprotocol/ui`, 2026-01-26):
- a tool names its app in `_meta.ui.resourceUri` (the flat `_meta["ui/resourceUri"]` is the
  deprecated form, still read), and who may call it in `_meta.ui.visibility` (default: both
  `"model"` and `"app"`);
- the resource is served as `text/html;profile=mcp-app`; its content's `_meta.ui` (else its
  `resources/list` entry's) declares `csp` (connect / resource / frame / base-uri domains) and
  `permissions`, which the host turns into a Content-Security-Policy header and an iframe `allow`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "APP_MIME_TYPE",
    "APP_PROTOCOL_VERSIONS",
    "EXTENSION_ID",
    "LEGACY_URI_KEY",
    "AppResource",
    "Csp",
    "app_uri",
    "is_app_mime",
    "visibility",
]

EXTENSION_ID = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
#: the flat key SEP-1865 deprecated for `_meta.ui.resourceUri` ("removed before GA"): servers still send it
LEGACY_URI_KEY = "ui/resourceUri"
#: the bridge's protocol versions this host speaks, newest first (`ui/initialize` negotiates one)
APP_PROTOCOL_VERSIONS = ("2026-01-26", "2025-11-21")

#: a CSP source list entry that could break out of its directive or add keywords: `;`, a quote, white space, a comma
_UNSAFE_SOURCE = re.compile(r"[;'\"\s,]")


def _ui(meta: object) -> dict[str, object]:
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return ui if isinstance(ui, dict) else {}


def app_uri(tool: Mapping[str, object]) -> str | None:
    """The URI a tool binds its app to (`_meta.ui.resourceUri`, else the deprecated flat key), or None.

    Any string counts, `ui://` or not: whether it is a `ui://` URI is a finding of its own, which
    the steps report with what the server sent."""
    meta = tool.get("_meta")
    uri = _ui(meta).get("resourceUri")
    if not isinstance(uri, str) and isinstance(meta, dict):
        uri = meta.get(LEGACY_URI_KEY)
    return uri if isinstance(uri, str) and uri else None


def visibility(tool: Mapping[str, object]) -> tuple[str, ...]:
    """Who may see and call a tool: `_meta.ui.visibility`, `("model", "app")` when absent.

    A value that is not a list of strings reads as the default: the host then lets the app call
    the tool, as it lets the model (the server said nothing it could read)."""
    seen = _ui(tool.get("_meta")).get("visibility")
    if isinstance(seen, list) and all(isinstance(v, str) for v in seen):
        return tuple(seen)
    return ("model", "app")


def _sources(value: object, dropped: list[str]) -> list[str]:
    """A declared domain list as CSP sources: strings without anything that escapes a source (the rest
    dropped, and named: the host says what it refused)."""
    if not isinstance(value, list):
        return []
    kept: list[str] = []
    for item in value[:100]:
        if isinstance(item, str) and item and len(item) <= 500 and not _UNSAFE_SOURCE.search(item):
            kept.append(item)
        else:
            dropped.append(repr(item)[:120])
    return kept


@dataclass(frozen=True)
class Csp:
    """The CSP domains a resource declares, as the host applies them (unsafe entries dropped)."""

    connect: tuple[str, ...] = ()
    resource: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    base_uri: tuple[str, ...] = ()
    declared: bool = False  # the resource declared `_meta.ui.csp` at all
    dropped: tuple[str, ...] = ()  # entries that could not be used as CSP sources

    @classmethod
    def read(cls, csp: object) -> Csp:
        if not isinstance(csp, dict):
            return cls()
        dropped: list[str] = []
        return cls(
            connect=tuple(_sources(csp.get("connectDomains"), dropped)),
            resource=tuple(_sources(csp.get("resourceDomains"), dropped)),
            frame=tuple(_sources(csp.get("frameDomains"), dropped)),
            base_uri=tuple(_sources(csp.get("baseUriDomains"), dropped)),
            declared=True,
            dropped=tuple(dropped),
        )

    def header(self) -> str:
        """The Content-Security-Policy the app's document is served with.

        SEP-1865's construction: nothing by default; inline scripts and styles (an app is one
        document), and scripts from its own data: and blob: URLs; the declared resource domains for
        scripts, styles, images, fonts and media; the connect domains for fetch / XHR / WebSocket
        (none when none are declared: the spec's restrictive default); workers from the app's own
        blobs; nested frames only from the frame domains; no plugins; `base-uri` only from the
        declared base domains, else the document's own origin."""
        res = " ".join(self.resource)

        def directive(name: str, *sources: str) -> str:
            return " ".join([name, *[s for s in sources if s]])

        return "; ".join(
            [
                "default-src 'none'",
                # data: and blob: scripts are the app's own code, which 'unsafe-inline' runs anyway; pdf.js
                # (server-pdf's viewer) loads its worker code as a data: module
                directive("script-src", "'self'", "'unsafe-inline'", res, "data:", "blob:"),
                directive("style-src", "'self'", "'unsafe-inline'", res),
                directive("img-src", "'self'", "data:", "blob:", res),
                directive("font-src", "'self'", "data:", res),
                directive("media-src", "'self'", "data:", "blob:", res),
                directive("connect-src", " ".join(self.connect) or "'none'"),
                # workers the app makes from its own code (pdf.js in @modelcontextprotocol/server-pdf's
                # viewer): without it they fall back to script-src, which has no blob:; they reach
                # nothing more than the app does (a blob: worker inherits this policy)
                "worker-src 'self' blob:",
                directive("frame-src", " ".join(self.frame) or "'none'"),
                "object-src 'none'",
                directive("base-uri", " ".join(self.base_uri) or "'self'"),
            ]
        )

    def approved(self) -> dict[str, list[str]]:
        """The domains as the host approved them, for `hostCapabilities.sandbox.csp`."""
        out = {
            "connectDomains": list(self.connect),
            "resourceDomains": list(self.resource),
            "frameDomains": list(self.frame),
            "baseUriDomains": list(self.base_uri),
        }
        return {key: value for key, value in out.items() if value}


#: a declared permission -> the iframe `allow` feature (Permission Policy) it maps to
_PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}


@dataclass(frozen=True)
class AppResource:
    """A `ui://` resource as `resources/read` returned it: the HTML, its MIME type, its `_meta.ui`."""

    uri: str
    mime_type: str | None
    html: str
    csp: Csp = field(default_factory=Csp)
    permissions: tuple[str, ...] = ()  # Permission Policy features (camera, clipboard-write, ...)
    prefers_border: bool | None = None

    @classmethod
    def read(cls, uri: str, contents: Mapping[str, object], listed: Mapping[str, object] | None) -> AppResource:
        """From one item of a `resources/read` result's `contents` (`listed`: the resource's
        `resources/list` entry, whose `_meta.ui` counts when the content carries none)."""
        ui = _ui(contents.get("_meta")) or _ui((listed or {}).get("_meta"))
        html = contents.get("text")
        if not isinstance(html, str):
            html = _decoded(contents.get("blob"))
        declared = ui.get("permissions")
        permissions = tuple(
            feature for key, feature in _PERMISSIONS.items() if isinstance(declared, dict) and key in declared
        )
        border = ui.get("prefersBorder")
        mime = contents.get("mimeType")
        return cls(
            uri=uri,
            mime_type=mime if isinstance(mime, str) else None,
            html=html,
            csp=Csp.read(ui.get("csp")),
            permissions=permissions,
            prefers_border=border if isinstance(border, bool) else None,
        )


def _decoded(blob: object) -> str:
    """A base64 `blob` as the HTML text it holds ("" when it is none)."""
    import base64
    import binascii

    if not isinstance(blob, str):
        return ""
    try:
        return base64.b64decode(blob, validate=False).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return ""


def is_app_mime(mime: str | None) -> bool:
    """Whether a MIME type is the MCP App one, as media types compare: case-insensitive type and
    parameter names, spaces around `;` allowed (`text/html; profile=mcp-app`)."""
    if not isinstance(mime, str):
        return False
    parts = [p.strip() for p in mime.split(";")]
    if parts[0].lower() != "text/html":
        return False
    params = {}
    for part in parts[1:]:
        name, _, value = part.partition("=")
        params[name.strip().lower()] = value.strip().strip('"')
    return params.get("profile") == "mcp-app"
