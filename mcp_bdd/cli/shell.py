"""`mcp-bdd call` and `mcp-bdd list`: try a server from the shell, as a scenario would reach it.

    mcp-bdd call shop add a=2 b=3            # a server of the project's configuration (fakes included)
    mcp-bdd call shop create_order product_id=PROD-123 quantity=2 --json | jq .structuredContent
    mcp-bdd list shop tools
    mcp-bdd call add a=2 b=3                 # the default server (`server = "shop"`, or the only one)
    mcp-bdd call get_current_time timezone=UTC -- mcp-server-time
    mcp-bdd list https://mcp.example.com/mcp prompts --header "Authorization: Bearer $TOKEN"

What the MCP Inspector's CLI is used for during development, but through the same Runtime as
the behave hooks (`mcp_bdd.probe.open_session`): `app` factories, `${fake...}` placeholders
and transports behave exactly as in a scenario, and the target is resolved like `probe`'s (a
server name, a URL, or `-- COMMAND ARGS`).

`key=value` arguments are coerced by the tool's inputSchema exactly as a feature's argument
table is (`quantity=2` sends the integer 2 when the schema says integer); `key:=<json>` sends a
JSON value as written. Output is for people (the text content, then structured content), or
with `--json` the result as the server sent it, for jq. Whatever the server sends is shown
with control characters escaped: a tool cannot drive the terminal.

Exit codes, as `probe`'s: 0 the call succeeded / the listing came back, 1 the call failed
(`isError` or a JSON-RPC error) or was refused (HTTP 401/403: REFUSED, the credentials and what
to do about them), 2 usage, 3 the server could not be started or reached (or did not answer in
time).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from mcp_bdd._text import printable, terminal_json
from mcp_bdd.errors import McpBddError, RequestRefused, UsageError, kind_of
from mcp_bdd.failures import EXIT_FAILED, EXIT_OK, Unanswered

if TYPE_CHECKING:
    from mcp_bdd.config import Config
    from mcp_bdd.session import Outcome, Session

__all__ = ["KINDS", "ShellOptions", "call", "listing", "parse_arguments", "split_server"]

#: What `mcp-bdd list` lists -> the Session listing kind.
KINDS = {"tools": "tools", "resources": "resources", "templates": "templates", "prompts": "prompts"}
_SHOWN_TEXT = 1_000_000  # characters of a result printed for people (--json prints everything)


@dataclass
class ShellOptions:
    """Where to connect: a configured `server` name, or a `target` (a URL, or a command's argv)."""

    server: str | None = None
    target: list[str] = field(default_factory=list)
    transport: str | None = None
    protocol: str | None = None
    timeout: float | None = None
    headers: list[str] = field(default_factory=list)
    as_json: bool = False


# ---------------------------------------------------------------------------------------------
# arguments


def _object(value: object) -> dict[str, object]:
    """`value` when the server sent a JSON object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def _array(value: object) -> list[object]:
    """`value` when the server sent a JSON array there, else an empty one."""
    return value if isinstance(value, list) else []


def parse_arguments(pairs: Sequence[str], tool: dict[str, object] | None) -> dict[str, object]:
    """`key=value` (coerced by the tool's inputSchema, like a feature's table) and `key:=<json>` (as written)."""
    from mcp_bdd._text import did_you_mean
    from mcp_bdd.session import coerce_value

    schema = _object((tool or {}).get("inputSchema"))
    props = _object(schema.get("properties"))
    name = (tool or {}).get("name", "?")
    args: dict[str, object] = {}
    for pair in pairs:
        key, raw_json, value = _split_pair(pair)
        if props and key not in props and not raw_json:
            raise UsageError(
                f'the tool "{name}" has no argument "{key}". {did_you_mean(key, props, "argument")}. '
                f"To send it anyway, write it as {key}:=<json>."
            )
        if raw_json:
            try:
                args[key] = json.loads(value)
            except ValueError as exc:
                raise UsageError(f'{key}:= takes a JSON value; "{value}" is not JSON ({exc}).') from None
        elif key in props:
            try:
                args[key] = coerce_value(value, props[key], field_name=key)
            except UsageError:
                raise UsageError(
                    f'{pair}: the argument "{key}" of "{name}" expects {_type_of(props[key])}. '
                    f"Write a value of that type (JSON for arrays and objects), or {key}:=<json> to send a value "
                    "as written."
                ) from None
        else:
            args[key] = value
    missing = [str(r) for r in _array(schema.get("required")) if r not in args]
    if missing:
        shown = " ".join(f"{m}=<{_type_of(props.get(m))}>" for m in missing)
        # the names quoted: `requires api_key: add ...` reads as a secret assignment and is masked
        names = ", ".join(f'"{m}"' for m in missing)
        raise UsageError(f'the tool "{name}" requires {names}: add {shown}.')
    return args


def _split_pair(pair: str) -> tuple[str, bool, str]:
    match = re.match(r"^([^=:]+)(:?=)(.*)$", pair, re.S)
    if match is None:
        # (Messages say "name=value": the secret masker reads "key=..." as a secret being printed.)
        raise UsageError(f'"{pair}" is not name=value (or name:=<json>), e.g. quantity=2 or tags:=\'["a", "b"]\'.')
    return match.group(1).strip(), match.group(2) == ":=", match.group(3)


def _type_of(prop: object) -> str:
    schema = _object(prop)
    kind = schema.get("type")
    if kind is None:
        kind = [p.get("type") for p in _array(schema.get("anyOf")) if isinstance(p, dict) and p.get("type")] or None
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind) or "value"
    return str(kind or "value")


# ---------------------------------------------------------------------------------------------
# connecting: probe's target resolution and session, reused


def split_server(verb: str, words: Sequence[str]) -> tuple[str, list[str]]:
    """The configured server the words start with, and the rest. Without one, the default server
    (`server = "shop"`, or the only server) is meant: `mcp-bdd call add a=1`, `mcp-bdd list tools`."""
    from mcp_bdd._text import did_you_mean
    from mcp_bdd.config import load_config

    config = load_config()
    first, rest = words[0], list(words[1:])
    if first in config.servers:
        return first, rest
    default = config.default_server()
    if default is not None and not _meant_as_server(verb, first, rest, config.servers):
        return default, list(words)
    where = config.where_servers_go()
    if not config.servers:
        raise UsageError(f"No servers are configured {where}")
    if verb == "list" and first in KINDS:
        known = ", ".join(config.servers)
        raise UsageError(f"Say which server: mcp-bdd list SERVER {first} (servers: {known}). {where}")
    raise UsageError(f'Unknown server "{first}". {did_you_mean(first, config.servers, "server")}. {where}')


def _meant_as_server(verb: str, first: str, rest: Sequence[str], servers: Iterable[str]) -> bool:
    """A first word that is not a configured server is still one, mistyped: `list shp tools` (two
    words), or `call shp add` (close to "shop") — a did-you-mean helps more than "no tool shp"."""
    import difflib

    if verb == "list":
        return bool(rest)
    return bool(difflib.get_close_matches(first, list(servers), n=1, cutoff=0.75))


def _resolve(options: ShellOptions) -> tuple[Config, str, str | None]:
    """(config, server name, transport) for a configured name, a URL or `-- COMMAND ARGS` — read as
    `check` and `contract` read their target (one resolution for every command that connects)."""
    from mcp_bdd.config import normalize_transport
    from mcp_bdd.probe import resolve_target

    if not options.target and not options.server:
        raise UsageError("say which server: a configured server name, a URL, or -- COMMAND ARGS.")
    transport = normalize_transport(options.transport, "--transport") if options.transport else None
    config, name, natural, _ = resolve_target(
        options.target,
        options.server,
        timeout=options.timeout,
        protocol=options.protocol,
        headers=options.headers,
        verb="call",
    )
    return config, name, transport or natural


# ---------------------------------------------------------------------------------------------
# output


def _print_json(value: object, out: TextIO) -> None:
    print(terminal_json(value), file=out)


def _same_json(text: str, value: object) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _content_lines(raw: dict[str, object]) -> list[str]:
    lines: list[str] = []
    for block in _array(raw.get("content")):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            lines.append(text if len(text) <= _SHOWN_TEXT else text[:_SHOWN_TEXT] + f"… ({len(text)} characters)")
        elif kind in ("image", "audio"):
            lines.append(f"[{kind} {block.get('mimeType')}, {len(str(block.get('data', '')))} base64 characters]")
        elif kind == "resource_link":
            lines.append(f"[link to {block.get('uri')}{' — ' + str(block['name']) if block.get('name') else ''}]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            lines.append(f"[embedded resource {resource.get('uri')}]")
            if "text" in resource:
                lines.append(str(resource["text"]))
        else:
            lines.append(f"[{kind} content]")
    return lines


# ---------------------------------------------------------------------------------------------
# the commands


def call(options: ShellOptions, tool: str, pairs: Sequence[str], out: TextIO | None = None) -> int:
    """`mcp-bdd call`: call one tool and show its result (before the server is stopped: a stop
    waits for the server to exit, which the user need not wait for to read the answer)."""
    out = out or sys.stdout
    config, name, transport = _resolve(options)
    from mcp_bdd._text import did_you_mean
    from mcp_bdd.probe import open_session

    try:
        with open_session(config, name, transport) as session:
            found = session.tool_named(tool)
            if found is None:
                names = [str(t.get("name")) for t in session.tool_list()]
                raise UsageError(f'the server "{name}" has no tool "{tool}". {did_you_mean(tool, names, "tool")}.')
            args = parse_arguments(pairs, found)
            return _shown(_show_outcome(options, name, session.call_tool(tool, args), out), out)
    except (McpBddError, AssertionError) as exc:
        return _not_answered(options, name, exc, out)


def _shown(code: int, out: TextIO) -> int:
    """What was printed, flushed now: the server's stop comes after."""
    out.flush()
    return code


def _show_outcome(options: ShellOptions, name: str, outcome: Outcome, out: TextIO) -> int:
    """Print a tool call's outcome (text, then structured content; or the JSON) and say its exit code."""
    if outcome.refusal is not None:
        return _say(options, name, Unanswered.answering("refused"), outcome.describe(), out, outcome.refusal.tip)
    if outcome.timed_out:
        return _say(options, name, Unanswered.answering("timeout"), outcome.describe(), out)
    if outcome.raw is None and outcome.error is None:
        return _say(options, name, Unanswered.answering(None), outcome.describe(), out)
    failed = outcome.error is not None or outcome.is_error_result
    if options.as_json:
        if outcome.error is not None:
            _print_json({"error": outcome.error.model_dump(mode="json", exclude_none=True)}, out)
        else:
            _print_json(outcome.raw, out)
        return EXIT_FAILED if failed else EXIT_OK
    if outcome.error is not None:
        print(printable(f"ERROR: {outcome.describe()}"), file=out)
        return EXIT_FAILED
    raw = outcome.raw or {}
    if outcome.is_error_result:
        print("ERROR (the tool returned isError: true):", file=out)
    structured = raw.get("structuredContent")
    lines = _content_lines(raw)
    if structured is not None and _same_json("\n".join(lines), structured):
        lines = []  # the text is the structured content serialized: show it once
    for line in lines:
        print(printable(line), file=out)
    if structured is not None:
        if lines:
            print("structuredContent:", file=out)
        print(printable(json.dumps(structured, indent=2, ensure_ascii=False, default=str)), file=out)
    return EXIT_FAILED if failed else EXIT_OK


def listing(options: ShellOptions, kind: str, out: TextIO | None = None) -> int:
    """`mcp-bdd list`: the server's tools, resources, resource templates or prompts (every page),
    printed before the server is stopped."""
    out = out or sys.stdout
    if kind not in KINDS:
        from mcp_bdd._text import did_you_mean

        raise UsageError(f'cannot list "{kind}". {did_you_mean(kind, KINDS, "kind")}.')
    config, name, transport = _resolve(options)
    from mcp_bdd.probe import open_session

    try:
        with open_session(config, name, transport) as session:
            return _shown(_show_items(options, kind, _list_offered(session, kind), out), out)
    except (McpBddError, AssertionError) as exc:
        return _not_answered(options, name, exc, out)


def _show_items(options: ShellOptions, kind: str, items: list[dict[str, object]], out: TextIO) -> int:
    if options.as_json:
        _print_json(items, out)
        return EXIT_OK
    if not items:
        print(f"(no {kind})", file=out)
    for item in items:
        print(printable(_describe(kind, item)), file=out)
    return EXIT_OK


#: The capability a server declares to offer a listing (resource templates come with `resources`).
_CAPABILITY = {"tools": "tools", "resources": "resources", "templates": "resources", "prompts": "prompts"}


def _list_offered(session: Session, kind: str) -> list[dict[str, object]]:
    """Every item of a listing; none when the server does not offer it. A server that declares no
    `prompts` capability, or answers prompts/list with -32601 (method not found), has no prompts:
    it answered, so that is not UNREACHABLE (exit 3)."""
    from mcp_bdd.errors import ServerErrorResponse

    caps = session.client.server_capabilities if session.client is not None else None
    if caps is not None and getattr(caps, _CAPABILITY[kind], None) is None:
        return []
    try:
        items: list[dict[str, object]] = session.list_all(KINDS[kind])
    except ServerErrorResponse:
        if _method_not_found(session, kind):
            return []
        raise
    return items


def _method_not_found(session: Session, kind: str) -> bool:
    import mcp_types as types

    request = {
        "tools": types.ListToolsRequest,
        "resources": types.ListResourcesRequest,
        "templates": types.ListResourceTemplatesRequest,
        "prompts": types.ListPromptsRequest,
    }[kind]
    outcome = session.request(request(params=None))
    return outcome.error is not None and outcome.error.code == types.METHOD_NOT_FOUND


def _describe(kind: str, item: dict[str, object]) -> str:
    if kind == "tools":
        schema = _object(item.get("inputSchema"))
        props = _object(schema.get("properties"))
        required = set(_array(schema.get("required")))
        args = " ".join(f"{k}=<{_type_of(v)}>" if k in required else f"[{k}=<{_type_of(v)}>]" for k, v in props.items())
        return _with_description(f"{item.get('name')} {args}".rstrip(), item)
    if kind == "prompts":
        args = " ".join(
            f"{a.get('name')}" if a.get("required") else f"[{a.get('name')}]"
            for a in _array(item.get("arguments"))
            if isinstance(a, dict)
        )
        return _with_description(f"{item.get('name')} {args}".rstrip(), item)
    uri = item.get("uri") if kind == "resources" else item.get("uriTemplate")
    mime = f" ({item['mimeType']})" if item.get("mimeType") else ""
    name = f" — {item['name']}" if item.get("name") and item.get("name") != uri else ""
    return _with_description(f"{uri}{mime}{name}", item)


def _with_description(head: str, item: dict[str, object]) -> str:
    description = str(item.get("description") or "").strip()
    first = description.splitlines()[0] if description else ""
    return f"{head}\n    {first}" if first else head


def _not_answered(options: ShellOptions, name: str, exc: BaseException, out: TextIO) -> int:
    """What a command says when its request got no answer (`failures.Unanswered`: REFUSED, exit 1, for
    HTTP 401/403; else UNREACHABLE, exit 3). A usage error is raised on."""
    if isinstance(exc, UsageError):
        raise exc
    if isinstance(exc, RequestRefused):
        return _say(options, name, Unanswered.answering("refused"), f"{exc.title}: {exc.actual}", out, exc.tip)
    return _say(options, name, Unanswered.connecting(kind_of(exc)), str(exc), out)


def _say(options: ShellOptions, name: str, said: Unanswered, message: str, out: TextIO, tip: str | None = None) -> int:
    shown = " ".join(options.target) or f"server {name}"
    if options.as_json:
        _print_json({"status": said.status, "target": shown, "error": message} | ({"tip": tip} if tip else {}), out)
    else:
        print(printable(f"{said.word}: {shown}\n  {message.strip()}" + (f"\n  Tip: {tip}" if tip else "")),
              file=sys.stderr)  # fmt: skip
    return said.exit_code
