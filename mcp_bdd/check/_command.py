"""`mcp-bdd check [SERVER | URL | -- COMMAND ARGS]`: the gate, from the command line.

The server is opened exactly as `mcp-bdd probe` opens it (`probe.open_session`, and probe's
way of turning a URL or a command into a configuration), the selected checks run, and the
report goes to the console (grouped by severity), `--json` and `--sarif FILE`.

Exit: 0 no finding at or above `--fail-on`, 1 findings, 2 usage, 3 unreachable.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypedDict

from mcp_bdd._text import for_terminal, terminal_json
from mcp_bdd.errors import McpBddError, RequestRefused, ServerStartError, UsageError, kind_of
from mcp_bdd.failures import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Unanswered

if TYPE_CHECKING:
    from mcp_bdd.check._context import CheckOptions
    from mcp_bdd.check._finding import Finding
    from mcp_bdd.check._registry import CheckSpec
    from mcp_bdd.check._runner import CheckReport
    from mcp_bdd.check._severity import Severity
    from mcp_bdd.config import Config
    from mcp_bdd.contract import Surface
    from mcp_bdd.session import Session

__all__ = ["CheckCommand", "add_gate_arguments", "gate_arguments", "run_check_command"]


@dataclass
class CheckCommand:
    target: list[str] = field(default_factory=list)
    server: str | None = None
    transport: str | None = None
    protocol: str | None = None
    timeout: float | None = None
    headers: list[str] = field(default_factory=list)
    only: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)
    allow_writes: str | list[str] | None = None  # None: read-only tools only; "*": all; "a,b" or ["a", "b,c"]: these
    no_call: list[str] = field(default_factory=list)  # tools never to call
    fail_on: str = "medium"
    as_json: bool = False
    sarif: Path | None = None
    seed: int = 0
    min_description: int = 20
    call_timeout: float = 5.0
    contract: Path | None = None
    checks: list[str] = field(default_factory=list)  # a project's own checks: modules or files (`--checks`)
    progress_cap: float = 30.0  # a generated call that reports progress is waited for this long in all
    max_result_bytes: int = 1_000_000
    max_tool_tokens: int = 1_000
    max_catalog_tokens: int = 20_000
    junit: Path | None = None  # JUnit XML for test dashboards
    markdown: Path | None = None  # Markdown (GitHub step summary): appended when it is $GITHUB_STEP_SUMMARY


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `check` beyond the first round's, for the command's parser (mcp_bdd/cli adds
    them with this one call, and passes `gate_arguments(args)` on to CheckCommand)."""
    parser.add_argument(
        "--progress-cap",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a generated call that keeps reporting progress is waited for this long in all (default 30)",
    )
    parser.add_argument(
        "--max-result-bytes",
        type=int,
        default=1_000_000,
        metavar="N",
        help="a result larger than this, as JSON, is a finding (default 1000000)",
    )
    parser.add_argument(
        "--max-tool-tokens",
        type=int,
        default=1_000,
        metavar="N",
        help="one tool definition estimated above this many tokens is a finding (default 1000)",
    )
    parser.add_argument(
        "--max-catalog-tokens",
        type=int,
        default=20_000,
        metavar="N",
        help="all tool definitions together above this many tokens: a finding (default 20000)",
    )
    parser.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML (test dashboards)")
    parser.add_argument("--markdown", type=Path, metavar="FILE",
                        help='also write Markdown; appended when FILE is "$GITHUB_STEP_SUMMARY"')  # fmt: skip


class GateArguments(TypedDict):
    """The CheckCommand fields of the options `add_gate_arguments` adds."""

    progress_cap: float
    max_result_bytes: int
    max_tool_tokens: int
    max_catalog_tokens: int
    junit: Path | None
    markdown: Path | None


def gate_arguments(args: argparse.Namespace) -> GateArguments:
    """The CheckCommand fields of the options `add_gate_arguments` added."""
    return GateArguments(
        progress_cap=args.progress_cap,
        max_result_bytes=args.max_result_bytes,
        max_tool_tokens=args.max_tool_tokens,
        max_catalog_tokens=args.max_catalog_tokens,
        junit=args.junit,
        markdown=args.markdown,
    )


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextlib.contextmanager
def _sdk_logs_held() -> Iterator[_Collect]:
    """Keep the SDK's log lines off the console while checking: an in-memory server shares our stderr,
    and the checks' bad calls make it log a traceback each (MCP_BDD_DEBUG=1 lets them through)."""
    collect = _Collect()
    logger = logging.getLogger("mcp")
    if os.environ.get("MCP_BDD_DEBUG"):
        yield collect
        return
    propagate = logger.propagate
    logger.addHandler(collect)
    logger.propagate = False
    try:
        yield collect
    finally:
        logger.removeHandler(collect)
        logger.propagate = propagate


def run_check_command(options: CheckCommand, out: TextIO | None = None) -> int:
    started = time.monotonic()  # the whole run's time is what the summary reports, not the checks' alone
    import mcp_bdd.check.checks  # noqa: F401 - registers the built-in checks
    from mcp_bdd.check._registry import Severity, select
    from mcp_bdd.config import normalize_transport
    from mcp_bdd.probe import resolve_target

    raw = out or sys.stdout
    out = raw if options.as_json else for_terminal(raw)  # the report quotes the server's words
    fail_on = Severity.parse(options.fail_on)
    _load_project_checks(options.checks)
    specs = select(options.only, options.skip, contract=options.contract is not None)
    contract = _contract_to_compare(options)
    config, name, natural, shown = resolve_target(
        options.target,
        options.server,
        timeout=options.timeout,
        protocol=options.protocol,
        headers=options.headers,
        verb="check",
    )
    transport = normalize_transport(options.transport, "--transport") if options.transport else natural
    try:
        report = _checked(config, name, transport, specs, _check_options(options), contract, options)
    except UsageError:
        raise
    except (ServerStartError, McpBddError, AssertionError) as exc:
        return _unanswered(exc, options, config, name, shown, time.monotonic() - started, out, raw)
    report.elapsed_s = time.monotonic() - started  # with the server's start and stop
    return _write_report(report, options, fail_on, out)


def _check_options(options: CheckCommand) -> CheckOptions:
    from mcp_bdd.check._context import CheckOptions

    writes = [options.allow_writes] if isinstance(options.allow_writes, str) else list(options.allow_writes or [])
    named = tuple(t.strip() for value in writes for t in value.split(",") if t.strip() and t.strip() != "*")
    return CheckOptions(
        allow_writes="*" in writes,
        write_tools=named,
        no_call=tuple(options.no_call),
        seed=options.seed,
        min_description=options.min_description,
        call_timeout=options.call_timeout,
        progress_cap=options.progress_cap,
        max_result_bytes=options.max_result_bytes,
        max_tool_tokens=options.max_tool_tokens,
        max_catalog_tokens=options.max_catalog_tokens,
    )


def _contract_to_compare(options: CheckCommand) -> Surface | None:
    """The contract `--contract` names, unless `--skip contract` leaves it out."""
    from mcp_bdd.check._registry import names_contract

    if options.contract is None or any(names_contract(p) for p in options.skip):
        return None
    from mcp_bdd.contract import load_contract

    return load_contract(options.contract)


def _checked(config: Config, name: str, transport: str | None, specs: list[CheckSpec], check_options: CheckOptions,
             contract: Surface | None, options: CheckCommand) -> CheckReport:  # fmt: skip
    """The check report of one run on the server (and the contract's differences, when given)."""
    from mcp_bdd.check._runner import run_checks
    from mcp_bdd.probe import open_session

    with _sdk_logs_held() as held, open_session(config, name, transport) as session:
        report = run_checks(session, specs, check_options)
        if contract is not None:
            report.findings.extend(_contract_findings(session, contract, str(options.contract)))
            report.checks.append("contract.matches")
    if held.count:
        print(
            "mcp-bdd check: the MCP SDK's own log lines were held back (an in-process server logs every call "
            "the checks make it reject); MCP_BDD_DEBUG=1 shows them.",
            file=sys.stderr,
        )
    return report


def _unanswered(exc: Exception, options: CheckCommand, config: Config, name: str, shown: str, elapsed: float,
                out: TextIO, raw: TextIO) -> int:  # fmt: skip
    """The report of a server that could not be started or reached: what it said, and a way on."""
    from mcp_bdd.check._output import dumps
    said, tip = str(exc).strip(), _token_tip(config, name) if options.target else ("", "")
    verdict = Unanswered.connecting(kind_of(exc))
    if options.as_json:
        error = said + tip[0] + (f"\n{tip[1]}" if tip[1] else "")
        print(dumps({"status": verdict.status, "target": shown, "error": error, "elapsed_s": round(elapsed, 3)}),
              file=out)  # fmt: skip
        return verdict.exit_code
    print(f"{verdict.word}: {shown}\n  {said}{tip[0]}", file=out)
    if tip[1]:
        # mcp-bdd's own words, with no server text in them: written as they are, so that the
        # placeholder a user copies (`Authorization: Bearer <token>`) is not masked as a secret
        print(tip[1], file=raw)
    print(f"  time: {elapsed:.2f} s", file=out)
    return verdict.exit_code


def _write_report(report: CheckReport, options: CheckCommand, fail_on: Severity, out: TextIO) -> int:
    """The report to the console or as JSON, and SARIF when asked; a SARIF file that could not be
    written is a usage error (exit 2), said after the report, which is not lost with it."""
    from mcp_bdd.check._output import dumps, print_report, report_json, sarif

    unwritten = None
    if options.sarif is not None:
        from mcp_bdd.report.files import not_written, write_text

        try:
            write_text(options.sarif, dumps(sarif(report)) + "\n")  # masked, like every other output of check
        except OSError as exc:
            tip = "give --sarif a file in a folder you may write to, or move what is in the way."
            unwritten = not_written("SARIF report", options.sarif, exc, tip)
    written, failed = _ci_outputs(report, options, fail_on)
    unwritten = unwritten or failed
    if options.as_json:
        print(dumps(report_json(report, fail_on=fail_on)), file=out)
    else:
        print_report(report, out, fail_on=fail_on)
        if options.sarif is not None and (unwritten is None or "SARIF" not in unwritten):
            print(f"SARIF: {options.sarif}", file=out)
        for line in written:
            print(line, file=out)
    if unwritten is not None:
        print(unwritten, file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FAILED if report.at_or_above(fail_on) else EXIT_OK


def _ci_outputs(report: CheckReport, options: CheckCommand, fail_on: Severity) -> tuple[list[str], str | None]:
    """`--junit FILE` and `--markdown FILE`: what was written (for the console), and why one could
    not be (a usage error, said after the report). Markdown is appended, never written over, when
    the file is $GITHUB_STEP_SUMMARY (other steps' lines share it); it is written there only when
    asked (`--markdown "$GITHUB_STEP_SUMMARY"`): a gate does not decide where its report goes."""
    from mcp_bdd.check._formats import junit_xml, markdown
    from mcp_bdd.report.files import not_written, write_text

    written: list[str] = []
    for path, what, render in ((options.junit, "JUnit", junit_xml), (options.markdown, "Markdown", markdown)):
        if path is None:
            continue
        text = render(report, fail_on=fail_on)
        try:
            if what == "Markdown" and _is_step_summary(path):
                with path.open("a", encoding="utf-8") as file:
                    file.write(text)
            else:
                write_text(path, text)
        except OSError as exc:
            tip = f"give --{what.lower()} a file in a folder you may write to, or move what is in the way."
            return written, not_written(f"{what} report", path, exc, tip)
        written.append(f"{what}: {path}")
    return written, None


def _is_step_summary(path: Path) -> bool:
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return summary is not None and summary != "" and Path(summary).resolve() == path.resolve()


def _contract_findings(session: Session, contract: Surface, where: str) -> list[Finding]:
    """The surface's differences from the contract; one that could not be compared, refused with
    HTTP 401/403 (a token without the scope to list), is a finding too: a gate that compared
    nothing must not pass."""
    from mcp_bdd.check._contract import contract_findings
    from mcp_bdd.check._finding import Finding
    from mcp_bdd.check._registry import Severity
    from mcp_bdd.contract import read_surface

    try:
        return contract_findings(contract, read_surface(session), where)
    except RequestRefused as exc:
        return [
            Finding(
                check="contract.matches",
                group="contract",
                severity=Severity.HIGH,
                title="the contract could not be compared: the server refused to list its surface",
                target=f"contract {where}",
                details=f"{exc.title}: {exc.actual}",
                tip=exc.tip or "",
            )
        ]


def _token_tip(config: Config, name: str) -> tuple[str, str]:
    """For a URL target that could not be connected to: if the server asks for a token, what it
    answered (its words) and how to give one (mcp-bdd's own, with a placeholder: see `_unanswered`).

    Only for `check URL` (its --header values are literal; a configured server's may hold ${env...})."""
    from mcp_bdd.check._discovery import refused_for_token
    from mcp_bdd.config import UrlServer

    cfg = config.servers.get(name)
    if not isinstance(cfg, UrlServer):
        return "", ""
    challenge = refused_for_token(cfg.url, dict(cfg.headers))
    if challenge is None:
        return "", ""
    given = any(k.lower() == "authorization" for k in cfg.headers)
    said = (
        f"\n  The server answers 401 Unauthorized{f' (WWW-Authenticate: {challenge[:300]})' if challenge else ''}: "
        + ("the token given was refused." if given else "it asks for a token.")
    )
    tip = (
        '  Tip: pass a valid one: --header "Authorization: Bearer <token>" (the auth checks then test the '
        "refusals with their own requests); for a configured server, headers = { Authorization = ... }."
    )
    return said, tip


def _load_project_checks(sources: list[str]) -> None:
    if sources:
        from mcp_bdd.check._project import load_checks

        load_checks(sources, Path.cwd())


def list_checks(out: TextIO | None = None, checks: list[str] | None = None) -> int:
    """`mcp-bdd check --list`: every registered check with its group, severity and rationale (a
    project's own, from `--checks`, say where they come from)."""
    import mcp_bdd.check.checks  # noqa: F401 - registers the built-in checks
    from mcp_bdd.check._registry import GROUPS, REGISTRY

    _load_project_checks(checks or [])
    out = out or sys.stdout
    for group, what in GROUPS.items():
        specs = [s for s in REGISTRY.values() if s.group == group]
        if not specs and group != "contract":
            continue
        print(f"{group}: {what}", file=out)
        for spec in specs:
            source = "" if spec.func.__module__.startswith("mcp_bdd.") else f" ({spec.func.__module__})"
            print(f"  {spec.id:<34} {spec.severity.label:<7} {spec.rationale}{source}", file=out)
        if group == "contract":
            print(f"  {'contract.matches':<34} {'varies':<7} with --contract FILE: the surface against the file",
                  file=out)  # fmt: skip
    return EXIT_OK


def run_contract_command(
    action: str,
    path: Path,
    target: list[str],
    *,
    server: str | None,
    transport: str | None,
    protocol: str | None,
    timeout: float | None,
    fail_on: str,
    as_json: bool,
    out: TextIO | None = None,
) -> int:
    """`mcp-bdd contract update|verify FILE [SERVER | URL | -- COMMAND]`."""
    from mcp_bdd.config import normalize_transport
    from mcp_bdd.contract import load_contract, read_surface
    from mcp_bdd.probe import open_session, resolve_target

    out = out or sys.stdout
    if not as_json:
        out = for_terminal(out)
    contract = load_contract(path) if action == "verify" else None
    config, name, natural, shown = resolve_target(
        target, server, timeout=timeout, protocol=protocol, headers=[], verb="read the contract from"
    )
    chosen = normalize_transport(transport, "--transport") if transport else natural
    try:
        with open_session(config, name, chosen) as session:
            surface = read_surface(session)
    except UsageError:
        raise
    except (McpBddError, AssertionError) as exc:
        said = Unanswered.connecting(kind_of(exc))
        print(f"{said.word}: {shown}\n  {str(exc).strip()}", file=out)
        return said.exit_code
    if contract is None:
        return _record_contract(path, surface, out)
    return _verify_contract(contract, surface, path, shown, fail_on=fail_on, as_json=as_json, out=out)


def _record_contract(path: Path, surface: Surface, out: TextIO) -> int:
    """`contract update`: write the surface to the contract file and say what it holds."""
    from mcp_bdd.contract import save_contract

    try:
        save_contract(path, surface)
    except OSError as exc:
        from mcp_bdd.report.files import not_written

        tip = "give a contract file in a folder you may write to, or move what is in the way."
        print(not_written("contract", path, exc, tip), file=sys.stderr)
        return EXIT_USAGE
    listed = len(surface.tools) + sum(times - 1 for times in surface.duplicates.get("tools", {}).values())
    count = f"{len(surface.tools)} tools" + (f" of {listed} listed" if listed != len(surface.tools) else "")
    print(f"recorded: {path} ({count}, sha256 {surface.sha256})", file=out)
    for note in surface.duplicate_notes():  # the contract holds one of each: never without a word
        print(f"  warning: {note}", file=out)
    return EXIT_OK


def _verify_contract(
    contract: Surface, surface: Surface, path: Path, shown: str, *, fail_on: str, as_json: bool, out: TextIO
) -> int:
    """`contract verify`: the surface's changes from the contract, as JSON or one line each; fails
    on any change, or with `--fail-on breaking` on the breaking ones only."""
    from mcp_bdd.contract import compare

    changes = compare(contract, surface)
    failing = changes.of("breaking") if fail_on == "breaking" else changes.items
    if as_json:
        print(terminal_json({
            "status": "differs" if changes.items else "matches",
            "contract": str(path),
            "tools_sha256": surface.sha256,
            "contract_sha256": contract.sha256,
            "changes": [{"category": c.category, "kind": c.kind, "key": c.key, "text": c.text} for c in changes.items],
            "notes": changes.notes,
            "fail_on": fail_on,
        }), file=out)  # fmt: skip
    else:
        verdict = "matches" if not changes.items else f"differs ({changes.worst()})"
        print(f"{verdict}: {shown} against {path}", file=out)
        for change in changes.items:
            print(f"  {change.render()}", file=out)
        for note in changes.notes:
            print(f"  (note) {note}", file=out)
    return EXIT_FAILED if failing else EXIT_OK
