"""`mcp-bdd probe`: the post-deploy smoke check — connect, list, fingerprint, compare.

    mcp-bdd probe https://mcp.example.com/mcp --baseline surface.json
    mcp-bdd probe -- mcp-server-time --local-timezone UTC
    mcp-bdd probe --server shop --save-baseline surface.json

It connects (protocol `auto` unless told), lists tools (and resources, resource templates and
prompts when the server declares them), prints who answered and a SHA-256 of the tool surface:
the canonical JSON (sorted keys, no whitespace, tools sorted by name) of each tool's `name`,
`description`, `inputSchema`, `outputSchema` and `annotations`. Absent and null fields are left
out, so the hash is the same over every transport and both protocol eras.

The baseline is the same file as a contract (`mcp-bdd contract`, the contract steps): its
differences are classified breaking / routing / annotations / additive by mcp_bdd.contract.

Exit: 0 healthy and unchanged, 1 the surface differs from the baseline (with `--fail-on breaking`:
a breaking difference), 2 usage, 3 unreachable.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mcp_bdd.config import Config

from mcp_bdd._text import for_terminal, terminal_json
from mcp_bdd.contract import (  # one implementation with the contract step and `mcp-bdd contract`
    BASELINE_SCHEMA,
    TOOL_FIELDS,
    Changes,
    Surface,
    canonical_tool,
    compare,
    load_contract,
    read_surface,
    save_contract,
    tools_hash,
)
from mcp_bdd.errors import McpBddError, UsageError, kind_of
from mcp_bdd.failures import EXIT_FAILED, EXIT_OK, Unanswered

__all__ = [
    "BASELINE_SCHEMA",
    "TOOL_FIELDS",
    "Changes",
    "Surface",
    "canonical_tool",
    "compare",
    "open_session",
    "probe",
    "read_surface",
    "tools_hash",
]


# ---------------------------------------------------------------------------------------------
# connecting to a configured (or ad-hoc) server, outside behave


@contextlib.contextmanager
def open_session(config: Config, name: str, transport: str | None = None) -> Iterator[Any]:
    """A connected `Session` with server `name`, exactly as a scenario would get it (untyped here:
    probe may not import the session layer; its callers may).

    Goes through the same Runtime as the behave hooks, so `${fake...}` placeholders, app
    factories and transports behave identically; everything is torn down on exit.

    A command server is started before the MCP SDK and the session's code are imported
    (`Runtime.prestart`): it boots while they load, instead of after (a Python server takes
    about as long to start as the SDK to import).
    """
    from mcp_bdd.runtime import Runtime
    from mcp_bdd.servers import reap_all

    runtime = Runtime(config)
    state = None
    try:
        runtime.prestart(name, transport)
        state = runtime.begin_scenario()
        yield runtime.ensure_session(state, name, transport=transport)
    except KeyboardInterrupt:
        runtime.interrupted = True  # the user is waiting: sessions close in seconds (as a behave run's)
        raise
    finally:
        try:
            if state is not None:
                runtime.end_scenario(state)
        finally:
            runtime.close()  # the event loop last, as at the end of a behave run
            reap_all()


def adhoc_config(
    target: Sequence[str], *, timeout: float, protocol: str | None, headers: dict[str, str]
) -> tuple[Config, str, str | None]:
    """(config, server name, transport) for `probe URL` / `probe -- COMMAND ...`."""
    from mcp_bdd.config import load_config

    server: dict[str, object]
    transport: str | None = None
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        url = target[0]
        server = {"url": url}
        if headers:
            server["headers"] = headers
        transport = "sse" if url.rstrip("/").endswith("/sse") else "streamable-http"
    else:
        if headers:
            raise UsageError("--header only applies to a URL.")
        server = {"command": list(target)}
    data: dict[str, object] = {"servers": {"probe": server}, "timeout": timeout, "startup_timeout": timeout}
    if protocol:
        data["protocol"] = protocol
    return load_config(data=data, source="(mcp-bdd probe)"), "probe", transport


def configured(
    name: str | None, *, timeout: float | None, protocol: str | None, verb: str = "probe"
) -> tuple[Config, str]:
    """The project's configuration with `--timeout` / `--protocol` applied to the server probed (or checked)."""
    from mcp_bdd.config import load_config, normalize_protocol

    config = load_config()
    chosen = name or config.default_server()
    if chosen is None:
        known = ", ".join(config.servers) or f"none are configured in {config.source}"
        raise UsageError(f"Say what to {verb}: a URL, -- COMMAND ARGS, or --server NAME (servers: {known}).")
    cfg = config.server_named(chosen)
    update: dict[str, object] = {}
    if timeout is not None:
        update.update(timeout=timeout, startup_timeout=timeout)
    if protocol:
        update["protocol"] = normalize_protocol(protocol, "--protocol")
    if update:
        config = config.model_copy(update={"servers": {**config.servers, chosen: cfg.model_copy(update=update)}})
    return config, chosen


# ---------------------------------------------------------------------------------------------
# the command


@dataclass
class ProbeOptions:
    target: list[str]
    server: str | None
    transport: str | None
    protocol: str | None
    timeout: float | None
    headers: list[str]
    baseline: Path | None
    save_baseline: Path | None
    as_json: bool
    fail_on: str = "any"  # any: every change fails; breaking: only breaking changes do


def _headers(values: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f'--header "{value}" is not "Name: value".')
        out[name.strip()] = text.strip()
    return out


def resolve_target(
    target: Sequence[str],
    server: str | None,
    *,
    timeout: float | None,
    protocol: str | None,
    headers: list[str],
    verb: str = "probe",
) -> tuple[Config, str, str | None, str]:
    """(config, server name, transport, shown) for `probe`, `check`, `contract`, `call` and `list`:
    a configured server by name (`mcp-bdd probe shop`), a URL, or a command — one reading of a
    target for every command."""
    target = list(target)
    if target and server:
        raise UsageError("Give either SERVER, a URL or -- COMMAND, or --server NAME, not both.")
    if len(target) == 1 and not target[0].startswith(("http://", "https://")):
        try:
            from mcp_bdd.config import load_config

            known = load_config().servers
        except McpBddError:
            known = {}
        if target[0] in known:
            server, target = target[0], []
    if target:
        config, name, natural = adhoc_config(
            target, timeout=timeout or 10.0, protocol=protocol, headers=_headers(headers)
        )
        return config, name, natural, " ".join(target)
    config, name = configured(server, timeout=timeout, protocol=protocol, verb=verb)
    return config, name, None, f"server {name}"


def probe(options: ProbeOptions, out: TextIO | None = None) -> int:
    """`mcp-bdd probe`: connect once, read the surface, compare it with a baseline; the exit code."""
    from mcp_bdd.config import normalize_transport

    out = out or sys.stdout
    if not options.as_json:
        out = for_terminal(out)  # a server's name, version and errors are quoted
    if options.fail_on not in ("breaking", "any"):
        raise UsageError(f'--fail-on "{options.fail_on}": use breaking or any.')
    baseline = load_contract(options.baseline, "baseline") if options.baseline is not None else None
    transport = normalize_transport(options.transport, "--transport") if options.transport else None
    config, name, natural, shown = resolve_target(
        options.target, options.server, timeout=options.timeout, protocol=options.protocol, headers=options.headers
    )
    started = time.monotonic()
    try:
        with open_session(config, name, transport or natural) as session:
            surface = read_surface(session)
    except (McpBddError, AssertionError) as exc:
        if isinstance(exc, UsageError):
            raise
        return _unreachable(options, shown, str(exc), time.monotonic() - started, out, exc)
    elapsed = time.monotonic() - started
    changes = compare(baseline, surface) if baseline is not None else Changes()
    if options.save_baseline is not None:
        save_contract(options.save_baseline, surface)
    if options.as_json:
        _print_probe_json(options, shown, surface, changes, elapsed, out)
    else:
        _print_probe(options, surface, changes, elapsed, out)
    failing = changes.of("breaking") if options.fail_on == "breaking" else changes.lines
    return EXIT_FAILED if failing else EXIT_OK


def _print_probe_json(
    options: ProbeOptions, shown: str, surface: Surface, changes: Changes, elapsed: float, out: TextIO
) -> None:
    print(terminal_json({
        "status": "changed" if changes.changed else "healthy", "target": shown, "transport": surface.transport,
        "name": surface.name, "version": surface.version, "protocol": surface.protocol,
        "tools_sha256": surface.sha256, "tools": sorted(surface.tools), "resources": sorted(surface.resources),
        "resource_templates": sorted(surface.templates), "prompts": sorted(surface.prompts),
        "baseline": str(options.baseline) if options.baseline else None,
        "changes": changes.lines, "notes": changes.notes, "elapsed_s": round(elapsed, 3),
        "classified": [{"category": c.category, "kind": c.kind, "key": c.key, "text": c.text}
                       for c in changes.items],
        "worst": changes.worst(), "fail_on": options.fail_on,
    }), file=out)  # fmt: skip


def _print_probe(options: ProbeOptions, surface: Surface, changes: Changes, elapsed: float, out: TextIO) -> None:
    head = "CHANGED" if changes.changed else "healthy"
    print(f"{head}: {surface.name or '(no name)'} {surface.version or ''}".rstrip(), file=out)
    print(f"  target:    {surface.target}", file=out)
    print(f"  protocol:  {surface.protocol} over {surface.transport}", file=out)
    counts = f"{len(surface.tools)} tools"
    if surface.resources or surface.templates:
        counts += f", {len(surface.resources)} resources, {len(surface.templates)} resource templates"
    if surface.prompts:
        counts += f", {len(surface.prompts)} prompts"
    print(f"  surface:   {counts}", file=out)
    print(f"  tools sha256: {surface.sha256}", file=out)
    if options.baseline is not None:
        verdict = "changed" if changes.changed else "unchanged"
        print(f"  baseline:  {verdict} against {options.baseline}", file=out)
        for change in changes.items:  # classified as by the contract step: one implementation
            print(f"    {change.render()}", file=out)
        for note in changes.notes:
            print(f"    (note) {note}", file=out)
    if options.save_baseline is not None:
        print(f"  saved baseline: {options.save_baseline}", file=out)
    print(f"  time:      {elapsed:.2f} s", file=out)


def _unreachable(
    options: ProbeOptions, shown: str, message: str, elapsed: float, out: TextIO, exc: BaseException | None = None
) -> int:
    said = Unanswered.connecting(kind_of(exc))
    if options.as_json:
        print(
            terminal_json({"status": said.status, "target": shown, "error": message, "elapsed_s": round(elapsed, 3)}),
            file=out,
        )
    else:
        print(f"{said.word}: {shown}\n  {message.strip()}\n  time: {elapsed:.2f} s", file=out)
    return said.exit_code
