"""MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): what a host needs to render a tool's app safely.

The metadata is read as the host of `mcp_bdd.ui_apps` reads it (`app_uri`, `visibility`,
`AppResource`, `Csp`, `is_app_mime`): a feature's app steps and the gate never disagree on what a
binding, a MIME type or a CSP says.

Nothing here changes a server's state: resources are only read, and a tool is called only when it is
annotated read-only (or the user allowed writes), as every other check calls tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mcp_bdd.check._context import CheckContext, json_object
from mcp_bdd.check._finding import Call, Problem, call_of
from mcp_bdd.check._registry import Severity, check
from mcp_bdd.session import Outcome
from mcp_bdd.ui_apps._meta import APP_MIME_TYPE, AppResource, Csp, app_uri, is_app_mime, visibility

# The registry's own groups are listed in its module; a group a check module brings is added where
# the module registers its checks, so `--only apps` and `--list` name it like the others.

_SCHEME = "ui://"
_VISIBILITY_VALUES = ("model", "app")
#: a CSP source that allows every origin, or every origin of a scheme: `*`, `https:`, `https://*`,
#: `*://*`, `https://*.com` (a wildcard over a whole top-level domain)
_EVERYWHERE = re.compile(
    r"^(?:\*|[a-z][a-z0-9+.-]*:|(?:\*|[a-z][a-z0-9+.-]*)://\*(?:\.[^.:/]+)?(?::\*|:\d+)?/?)$", re.IGNORECASE
)


@dataclass(frozen=True)
class _Read:
    """One bound `ui://` resource as `resources/read` answered (resource None: it could not be read)."""

    resource: AppResource | None
    outcome: Outcome
    problem: str = ""


def _bindings(ctx: CheckContext) -> dict[str, list[str]]:
    """Each URI a tool binds its app to -> the tools bound to it, in listing order."""
    bound: dict[str, list[str]] = {}
    for tool in ctx.tools:
        uri = app_uri(tool)
        if uri is not None:
            bound.setdefault(uri, []).append(str(tool.get("name")))
    return bound


def _listed(ctx: CheckContext, uri: str) -> dict[str, object] | None:
    return next((r for r in ctx.resources if r.get("uri") == uri), None)


def _read(ctx: CheckContext, uri: str) -> _Read | None:
    """The bound resource, read once per run and shared by the checks (None: refused with 401/403)."""
    cache: dict[str, _Read | None] = ctx.shared.setdefault("apps.read", {})
    if uri in cache:
        return cache[uri]
    outcome = ctx.read_resource(uri)
    found: _Read | None = None
    if outcome is not None:
        contents = [c for c in (outcome.raw or {}).get("contents") or [] if isinstance(c, dict)]
        # the content of that URI, else the first: the rule the app steps use (a server may answer with one item)
        item = next((c for c in contents if c.get("uri") == uri), contents[0] if contents else None)
        if not outcome.ok or outcome.raw is None:
            found = _Read(None, outcome, f"resources/read failed: {outcome.describe()}")
        elif item is None:
            found = _Read(None, outcome, "resources/read returned no contents")
        else:
            found = _Read(AppResource.read(uri, item, _listed(ctx, uri)), outcome)
    cache[uri] = found
    return found


def _app_resources(ctx: CheckContext) -> Iterator[tuple[str, AppResource, Call | None]]:
    """Every `ui://` resource a host may render, once: the bound ones as read (up to `max_items`), then
    the listed ones no tool binds, as their listing describes them (not read: the listing says enough)."""
    bound = [uri for uri in _bindings(ctx) if uri.startswith(_SCHEME)][: ctx.options.max_items]
    for uri in bound:
        read = _read(ctx, uri)
        if read is not None and read.resource is not None:
            yield uri, read.resource, call_of(read.outcome)
    for listed in ctx.resources:
        uri = str(listed.get("uri"))
        if uri.startswith(_SCHEME) and uri not in bound:
            yield uri, AppResource.read(uri, {"mimeType": listed.get("mimeType"), "text": "-"}, listed), None


@check(
    "apps.binding",
    severity="high",
    group="apps",
    rationale="A host renders a tool's app from the ui:// resource its _meta.ui.resourceUri names, and nothing else.",
)
def binding(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool's `_meta.ui.resourceUri` (or the deprecated flat `_meta["ui/resourceUri"]`) names a
    `ui://` resource that resources/read serves (the resource is read once, never written)."""
    for uri, tools in _bindings(ctx).items():
        if not uri.startswith(_SCHEME):
            for name in tools:
                yield Problem(
                    title=f"the tool binds its app to {uri!r}, which is not a ui:// resource",
                    target=f"tool {name}",
                    tip="serve the app as a ui:// resource and name it in _meta.ui.resourceUri: hosts render no "
                    "web page or other scheme (SEP-1865).",
                )
            continue
        read = _read(ctx, uri)
        if read is None or read.resource is not None:
            continue  # refused (401/403): the context noted it; or served: the other checks judge it
        for name in tools:
            yield Problem(
                title=f"the tool binds its app to {uri}, which the server does not serve",
                target=f"tool {name}",
                details=read.problem,
                call=call_of(read.outcome),
                tip="register the resource the binding names (apps.add_html_resource, registerAppResource), or "
                "fix the URI: a host opening this tool's app finds nothing to render.",
            )


@check(
    "apps.mime-type",
    severity="high",
    group="apps",
    rationale=f"Hosts render a ui:// resource as an app only when it is served as {APP_MIME_TYPE}.",
)
def mime_type(ctx: CheckContext) -> Iterator[Problem]:
    """Each `ui://` resource a tool binds (as resources/read serves it) and each one listed (as listed) is
    `text/html;profile=mcp-app`, and a bound one holds an HTML document."""
    for uri, resource, call in _app_resources(ctx):
        if not is_app_mime(resource.mime_type):
            yield Problem(
                title=f"the app resource is served as {json.dumps(resource.mime_type)}, not {APP_MIME_TYPE}",
                target=f"resource {uri}",
                details="as resources/read served it" if call is not None else "as resources/list lists it",
                call=call,
                tip=f"serve it with mimeType {APP_MIME_TYPE} (apps.add_html_resource and the ext-apps "
                "registerAppResource do): a host shows no other type as an app.",
            )
        elif call is not None and not resource.html.strip():
            yield Problem(
                title="the app resource holds no HTML document",
                target=f"resource {uri}",
                call=call,
                tip="return the app's HTML as the content's text (or a base64 blob).",
            )


def _visibility_problem(tool: dict[str, object]) -> str | None:
    """What is wrong with a tool's declared visibility as a host reads it (None: nothing)."""
    meta = json_object(tool.get("_meta"))
    ui = json_object(meta.get("ui"))
    if "visibility" not in ui:
        if "ui/visibility" in meta:  # a flat key, after the deprecated `ui/resourceUri`: no host reads it
            return f'_meta["ui/visibility"] = {json.dumps(meta["ui/visibility"])}, a key hosts do not read'
        return None
    raw = ui["visibility"]
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        return f"_meta.ui.visibility = {json.dumps(raw)}, not a list of strings"
    unknown = [v for v in raw if v not in _VISIBILITY_VALUES]
    if unknown:
        names = ", ".join(map(repr, unknown))
        return f'_meta.ui.visibility = {json.dumps(raw)}: {names} is neither "model" nor "app"'
    if not raw:
        return "_meta.ui.visibility = [], which names no one (hosts differ: some read it as the default)"
    return None


@check(
    "apps.visibility",
    severity="medium",
    group="apps",
    rationale="A tool meant for its app alone must say so as hosts read it, or every host offers it to the model.",
)
def tool_visibility(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool's `_meta.ui.visibility`, when given, is a list of `"model"` and `"app"`. Listing an
    app-only tool (`["app"]`) is correct: SEP-1865 has the host keep it from the model. A value a host
    cannot read — a string, an unknown or misspelt entry, an empty list, the flat `_meta["ui/visibility"]`
    — reads as the default `["model", "app"]`, or as no one: the tool meant for the app is offered to
    the model (or to nobody)."""
    for tool in ctx.tools:
        problem = _visibility_problem(tool)
        if problem is None:
            continue
        seen = visibility(tool)
        offered = "model" in seen
        yield Problem(
            title="the tool's visibility cannot be read: hosts offer it to the model"
            if offered
            else "the tool's visibility cannot be read: hosts offer it to neither the model nor its app",
            target=f"tool {tool.get('name')}",
            details=f"{problem}; a host reads it as {json.dumps(list(seen))}",
            tip='write _meta.ui.visibility as a list of "model" and "app": ["app"] keeps the tool from the model '
            '(@apps.tool(visibility=["app"]), registerAppTool\'s _meta.ui.visibility).',
        )


def _ui_tools(ctx: CheckContext) -> list[dict[str, object]]:
    """The tools with an app that the model may call: a client without the extension shows their result."""
    return [t for t in ctx.tools if app_uri(t) is not None and "model" in visibility(t)]


def _fallback_missing(raw: dict[str, object]) -> bool:
    """Whether a successful result has nothing a client without the extension can show: no content
    block but blank text (an image or a resource link is something to show)."""
    content = raw.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return not any(b.get("type") != "text" or str(b.get("text") or "").strip() for b in blocks)


def _calls_for_fallback(ctx: CheckContext, tool: dict[str, object]) -> list[Outcome]:
    """The successful calls of a tool any check made, or one minimal call of a read-only tool."""
    from mcp_bdd.check.checks.honest import minimal_call

    name = str(tool.get("name"))
    done = [c.outcome for c in ctx.calls if c.tool == name and c.outcome.raw is not None]
    if done or name in ctx.hung:
        return [o for o in done if not (o.raw or {}).get("isError")]
    if json_object(tool.get("annotations")).get("readOnlyHint") is not True or not ctx.may_call(tool):
        ctx.note_once(
            f"tool {name}: its text fallback was not judged: it is not annotated readOnlyHint: true, so it "
            "was not called (a call might change the server's state)"
        )
        return []
    arguments = minimal_call(ctx, tool)
    if arguments is None:  # no call satisfies its schema: honest.valid-calls says so
        return []
    outcome = ctx.call(name, arguments, "minimal valid call (text fallback)", generated=True)
    if outcome is None or outcome.raw is None or outcome.raw.get("isError"):
        return []
    return [outcome]


@check(
    "apps.text-fallback",
    severity="medium",
    group="apps",
    rationale="A client without MCP Apps shows a UI tool's content alone: with none, its user and model get nothing.",
    calls_tools=True,
)
def text_fallback(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool with an app that the model may call returns content a client without the extension can
    show (a non-blank text, an image, a resource link), not only `structuredContent` for its app. The
    check's client does not advertise the extension, so it sees what such a client sees. Judged on the
    calls other checks made, or on one minimal call of a tool annotated read-only; a tool that is not is
    never called (the notes say its fallback was not judged)."""
    for tool in _ui_tools(ctx):
        for outcome in _calls_for_fallback(ctx, tool)[:1]:
            if _fallback_missing(outcome.raw or {}):
                yield Problem(
                    title="the tool returns no text for a client without MCP Apps",
                    target=f"tool {tool.get('name')}",
                    details="content: " + json.dumps((outcome.raw or {}).get("content"))[:300],
                    call=call_of(outcome),
                    tip="return a text that says what the app would show (mcp.server.apps: branch on "
                    "client_supports_apps(ctx)): clients without the extension show only the content.",
                )


def _open_sources(csp: Csp) -> list[str]:
    """The sources of a declared CSP that open the app to everything: wildcards and bare schemes, and
    entries that are no domain at all (`'unsafe-eval'`, a `;` that starts a directive of its own)."""
    named = {"connectDomains": csp.connect, "resourceDomains": csp.resource, "frameDomains": csp.frame,
             "baseUriDomains": csp.base_uri}  # fmt: skip
    found = [f"{key}: {source!r}" for key, sources in named.items() for source in sources if _EVERYWHERE.match(source)]
    return found + [f"not a domain: {entry}" for entry in csp.dropped]


@check(
    "apps.csp",
    severity="medium",
    group="apps",
    rationale="An app's CSP keeps it from sending the user's data anywhere: one that allows everything keeps nothing.",
)
def csp(ctx: CheckContext) -> Iterator[Problem]:
    """No `ui://` resource declares, in `_meta.ui.csp` (its content's, else its listing's), a domain that
    allows every origin — `*`, a bare scheme (`https:`), `https://*`, a whole top-level domain — nor an
    entry that is no domain (`'unsafe-eval'`, `'unsafe-inline'`, anything with `;` or a space), which a
    host copying the lists into its CSP turns into a keyword or a directive of the server's choosing."""
    for uri, resource, call in _app_resources(ctx):
        opened = _open_sources(resource.csp)
        if opened:
            yield Problem(
                title="the app's CSP allows everything: " + "; ".join(opened[:5]),
                target=f"resource {uri}",
                details=f"{len(opened)} source(s) that open the app" if len(opened) > 5 else "",
                call=call,
                tip="declare the exact origins the app needs (`https://api.example.com`): a host builds the "
                "app's Content-Security-Policy from these lists, and a wildcard lets it reach any site.",
                severity=Severity.HIGH if any(s.startswith("not a domain") for s in opened) else None,
            )
