"""`mcp-bdd`: init, scaffold, run (the transport x protocol matrix), probe, check, contract, call, list,
steps, report merge.

Exit codes are stable, whatever the subcommand:

    0  all passed / healthy and unchanged
    1  scenarios failed / the probed surface changed / check findings at or above --fail-on /
       the server refused the request with HTTP 401 or 403 (REFUSED: the credentials, not the URL) /
       `call`: the tool answered an error, or the call timed out once connected (TIMEOUT)
    2  usage or configuration error (a bad flag, an unknown transport, a file that would be overwritten)
    3  a server could not be started or reached
    5  nothing ran: no feature file, or no scenario matched the paths and tags
  130  interrupted (Ctrl-C / SIGTERM); `run` still writes the partial report

Errors are one clear message on stderr, never a traceback (MCP_BDD_DEBUG=1 shows it).
Heavy imports (mcp, behave) happen inside the subcommands, so `--help` is instant.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO, TypedDict

from mcp_bdd._ctrl_c import install as count_ctrl_c
from mcp_bdd._text import printable
from mcp_bdd.errors import UsageError
from mcp_bdd.failures import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_UNREACHABLE", "EXIT_USAGE", "main"]

_EXIT_CODES = """\
exit codes:
  0  all passed (probe: healthy and unchanged)
  1  scenarios failed (probe: the surface changed; check: findings at or above --fail-on;
     REFUSED: the server refused the request with HTTP 401 or 403; call: an error, or TIMEOUT)
  2  usage or configuration error
  3  a server could not be started or reached
  5  nothing ran: no feature file, or no scenario matched the paths and tags
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def _connect_options(command: argparse.ArgumentParser, *, server: bool = True, header: bool = True) -> None:
    """The options every command that reaches a server shares (probe, check, contract, call, list)."""
    if server:
        command.add_argument("--server", metavar="NAME", help="a server of the project's configuration")
    command.add_argument("--transport", metavar="T", help="transport (default: as configured; a URL: its own)")
    command.add_argument("--protocol", metavar="P", help="auto (default), legacy or 2026-07-28")
    command.add_argument("--timeout", type=float, metavar="SECONDS", help="connect and request timeout (default 10)")
    if header:
        command.add_argument(
            "--header", action="append", default=[], metavar="'NAME: VALUE'", help="HTTP header for a URL (repeatable)"
        )


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; for another `command` than check, without the options only check
    reads (they come from mcp_bdd.check, an import every other command can do without)."""
    parser = argparse.ArgumentParser(
        prog="mcp-bdd",
        description="Behaviour-driven acceptance tests for MCP servers: one spec, every transport.",
        epilog=_EXIT_CODES + "\nSee `mcp-bdd <command> --help`.",
        formatter_class=_Formatter,
        allow_abbrev=False,
    )
    from mcp_bdd._version import __version__

    parser.add_argument("--version", action="version", version=f"mcp-bdd {__version__}")
    sub = parser.add_subparsers(dest="cmd", metavar="<command>")

    def add(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            description=description,
            epilog=_EXIT_CODES,
            formatter_class=_Formatter,
            allow_abbrev=False,
        )

    init = add(
        "init",
        "wire mcp-bdd into the project in the current folder",
        "Write features/example.feature, the steps shim and environment.py where behave will load them\n"
        "(features/steps/ when that exists, else steps/), the [tool.mcp-bdd] configuration (appended to\n"
        "pyproject.toml, else mcp-bdd.toml), the -f living-doc / junit-mcp aliases and a GitHub Actions\n"
        "workflow. Asks nothing: without a flag it finds the server here — a Python one on the 2.x SDK or\n"
        "fastmcp 4 (in-memory app), one on the 1.x SDK (a command with the project's own venv), a Node or\n"
        "Go server (a command) — else writes example_server.py so that `behave` passes at once. An existing\n"
        "environment.py keeps its hooks (mcp-bdd's are chained to them). Never overwrites without --force.",
    )
    how = init.add_mutually_exclusive_group()
    how.add_argument(
        "--command",
        metavar="CMD",
        help='a stdio server to start, e.g. "mcp-server-time --local-timezone UTC"',
    )
    how.add_argument("--url", metavar="URL", help="a server that is already running (never started)")
    how.add_argument(
        "--app", metavar="MODULE:ATTR", help="a Python server object or factory, e.g. myserver:create_server"
    )
    init.add_argument("--name", metavar="NAME", help="the server's name in the configuration and the features")
    init.add_argument("--force", action="store_true", help="overwrite files that exist")

    scaffold = add(
        "scaffold",
        "write starter features from a live server's tools, resources and prompts",
        "Connect to a configured server and write a .feature file per tool (its required arguments as a\n"
        "table of placeholder values), per resource (read + MIME type) and per prompt (get with its\n"
        "arguments). Scenarios a human must finish are tagged @wip, and left out of a plain `behave` run by\n"
        "behave's `default_tags = not @wip`, written to its config file. Never overwrites without --force.",
    )
    scaffold.add_argument("--server", metavar="NAME", help="the configured server (default: the default server)")
    scaffold.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=Path("features/generated"),
        help="where to write (default: features/generated)",
    )
    scaffold.add_argument("--transport", metavar="T", help="connect over this transport (default: as configured)")
    scaffold.add_argument("--force", action="store_true", help="overwrite files that exist")

    run = add(
        "run",
        "run behave once per transport x protocol leg and merge the reports",
        "Run the features once per matrix leg (transport x protocol) in behave worker processes and\n"
        "merge every leg into one living-documentation report (a column per leg) plus one JUnit file.\n"
        "Other arguments go to behave:\n"
        "  mcp-bdd run --transport in-memory,stdio -- --tags @smoke features/\n"
        "Exit code: the worst over the legs.",
    )
    run.add_argument(
        "--transport",
        action="append",
        metavar="LIST",
        help="comma-separated transports (in-memory, stdio, streamable-http, sse, or all); default: as configured",
    )
    run.add_argument(
        "--protocol",
        action="append",
        metavar="LIST",
        help="comma-separated protocols (auto, legacy, 2026-07-28, or all); default: as configured",
    )
    run.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="split each leg's feature files across N behave processes (at most N run at once)",
    )
    run.add_argument("--shard", metavar="K/N", help="run only shard K of N of the feature files (deterministic)")
    run.add_argument(
        "--report",
        type=Path,
        default=Path("reports/living-doc.html"),
        metavar="PATH",
        help="the merged HTML report (default: reports/living-doc.html)",
    )
    run.add_argument("--junit", type=Path, metavar="PATH", help="the JUnit file (default: junit.xml beside the report)")
    run.add_argument("--title", help="the report's title")
    run.add_argument(
        "--profile",
        metavar="NAME",
        help="apply [profiles.NAME] of the configuration (e.g. real dependencies instead of fakes); = -D profile=NAME",
    )

    probe = add(
        "probe",
        "smoke-check a server: identity, protocol, tool-surface hash, baseline diff",
        "Connect, list tools (and resources / prompts when supported) and print who answered, the\n"
        "protocol and a SHA-256 of the tool surface. With --baseline, compare with a saved surface.\n\n"
        "  mcp-bdd probe https://mcp.example.com/mcp --baseline surface.json\n"
        "  mcp-bdd probe -- mcp-server-time --local-timezone UTC\n"
        "  mcp-bdd probe shop --save-baseline surface.json\n"
        "  mcp-bdd probe                     # the default server, as `check` does",
    )
    probe.add_argument("target", nargs="*", metavar="SERVER | URL | -- COMMAND ARGS", help="what to probe")
    _connect_options(probe)
    probe.add_argument("--baseline", type=Path, metavar="FILE", help="compare with this saved surface")
    probe.add_argument("--save-baseline", type=Path, metavar="FILE", help="save the surface seen now")
    probe.add_argument(
        "--fail-on",
        default="any",
        choices=["breaking", "any"],
        help="with --baseline: exit 1 on any change (default) or on breaking ones only",
    )
    probe.add_argument("--json", action="store_true", help="print the result as JSON")

    check = add(
        "check",
        "the compliance, quality and security gate: needs nothing but the server",
        "Connect and run the built-in checks (docs/check.md): protocol, schemas, LLM-facing quality,\n"
        "tool poisoning, and calls generated from each tool's inputSchema (read-only tools only unless\n"
        "--allow-writes), and a project's own with --checks. Findings are grouped by severity, each with\n"
        "the call that showed it and a tip.\n\n"
        "  mcp-bdd check shop\n"
        "  mcp-bdd check shop --checks features/steps/shop_checks.py\n"
        "  mcp-bdd check https://mcp.example.com/mcp --sarif check.sarif\n"
        "  mcp-bdd check --only poisoning -- npx @modelcontextprotocol/server-memory\n\n"
        "Exit code: 1 when a finding is at or above --fail-on.",
    )
    check.add_argument("target", nargs="*", metavar="SERVER | URL | -- COMMAND ARGS", help="what to check")
    _connect_options(check)
    check.add_argument("--only", action="append", default=[], metavar="ID", help="run only these checks or groups")
    check.add_argument("--skip", action="append", default=[], metavar="ID", help="leave out these checks or groups")
    check.add_argument(
        "--allow-writes",
        action="append",
        nargs="?",
        const="*",
        metavar="TOOLS",
        help="also call tools not annotated read-only: all, or --allow-writes=a,b (repeatable) for these only",
    )
    check.add_argument(
        "--no-call", action="append", default=[], metavar="TOOLS", help="never call these tools (comma-separated)"
    )
    check.add_argument(
        "--fail-on",
        default="medium",
        metavar="SEVERITY",
        help="exit 1 on findings at or above: high, medium (default), low, info",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--sarif", type=Path, metavar="FILE", help="also write SARIF 2.1.0 (code-scanning dashboards)")
    check.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the generated calls (default 0)")
    check.add_argument(
        "--min-description", type=int, default=20, metavar="N", help="shortest acceptable description (default 20)"
    )
    check.add_argument(
        "--call-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="a generated tool call slower than this counts as hung (default 5)",
    )
    check.add_argument("--contract", type=Path, metavar="FILE", help="also compare the surface with this contract")
    check.add_argument(
        "--checks",
        action="append",
        default=[],
        metavar="MODULE|FILE",
        help="also run a project's own @check functions: a module importable from here, or a .py file",
    )
    check.add_argument("--list", action="store_true", help="list the checks and exit")
    if command in (None, "check"):
        from mcp_bdd.check._command import add_gate_arguments  # the checks themselves load lazily

        add_gate_arguments(check)

    contract = add(
        "contract",
        "record or verify the tool-surface contract (the file probe --baseline reads)",
        "  mcp-bdd contract update contracts/shop.json shop\n"
        "  mcp-bdd contract verify contracts/shop.json --fail-on breaking -- mcp-server-time\n\n"
        "Differences are classified: breaking, routing (descriptions), annotations, additive.\n"
        "Exit code (verify): 1 when a difference is at or above --fail-on (breaking | any).",
    )
    contract.add_argument("action", choices=["update", "verify"], help="update: record; verify: compare")
    contract.add_argument("file", type=Path, metavar="FILE", help="the contract file (JSON, kept in git)")
    contract.add_argument("target", nargs="*", metavar="SERVER | URL | -- COMMAND ARGS", help="the server")
    _connect_options(contract, header=False)
    contract.add_argument(
        "--fail-on", default="any", choices=["breaking", "any"], help="verify: what fails (default any)"
    )
    contract.add_argument("--json", action="store_true", help="print the result as JSON")

    call = add(
        "call",
        "call one tool of a server and print its result",
        "Call a tool of a configured server (its fakes included; the default one when SERVER is left\n"
        "out), a URL, or a command after `--`.\n"
        "key=value arguments are coerced by the tool's inputSchema like a feature's table; key:=<json>\n"
        "sends a JSON value as written.\n\n"
        "  mcp-bdd call shop add a=2 b=3\n"
        "  mcp-bdd call shop create_order product_id=PROD-123 quantity=2 --json | jq .structuredContent\n"
        "  mcp-bdd call https://mcp.example.com/mcp search query=shoes --header 'Authorization: Bearer ...'\n"
        "  mcp-bdd call get_current_time timezone=UTC -- mcp-server-time\n\n"
        "Exit code 1 when the tool call fails (isError or a JSON-RPC error) or is refused (HTTP 401/403).",
    )
    call.add_argument("words", nargs="*", metavar="[SERVER] TOOL [key=value ...]", help="what to call, with what")
    _connect_options(call, server=False)
    call.add_argument("--json", action="store_true", help="print what the server sent, as JSON (for jq)")

    listing = add(
        "list",
        "list a server's tools, resources, resource templates or prompts",
        "List what a configured server (its fakes included; the default one when SERVER is left out),\n"
        "a URL or a command after `--` offers. What the server does not offer is listed as none.\n\n"
        "  mcp-bdd list shop tools\n"
        "  mcp-bdd list shop resources --json | jq '.[].uri'\n"
        "  mcp-bdd list prompts -- mcp-server-time",
    )
    listing.add_argument(
        "words", nargs="*", metavar="[SERVER] tools|resources|templates|prompts", help="which server, and what to list"
    )
    _connect_options(listing, server=False)
    listing.add_argument("--json", action="store_true", help="print what the server sent, as JSON (for jq)")

    steps = add(
        "steps",
        "print the step vocabulary with its documentation",
        "Print every step phrase of mcp_bdd.steps (and with --project, of ./steps/*.py), grouped by module.",
    )
    steps.add_argument("--markdown", action="store_true", help="print Markdown (for docs)")
    steps.add_argument(
        "--editor",
        choices=["vscode"],
        help="write a step-pattern file and the settings an editor extension reads, for step completion",
    )
    steps.add_argument("--project", action="store_true", help="also load the project's steps/*.py")

    report = add("report", "work with living-documentation reports", "Report tools: `mcp-bdd report merge --help`.")
    report_sub = report.add_subparsers(dest="report_command", metavar="<command>")
    report_sub.add_parser(
        "merge", help="merge run files (living-doc.json) into one report, a column per run", add_help=False
    )
    return parser


def _report_merge(argv: Sequence[str]) -> int:
    from mcp_bdd.report.merge import main as merge_main

    code = merge_main(list(argv))
    return EXIT_OK if code == 0 else EXIT_USAGE


def _shell(args: argparse.Namespace, extra: list[str]) -> int:
    """`call` / `list`: the words before `--` say what to do; after `--` comes the server's command."""
    from mcp_bdd.cli.shell import ShellOptions, call, listing, split_server

    unknown = [w for w in extra if w.startswith("-")]
    if unknown:
        raise UsageError(f"mcp-bdd {args.cmd}: unrecognized arguments: {' '.join(unknown)}")
    words = [*args.words, *extra]
    target: list[str] = []
    server = None
    if args.server_command is not None:
        target = args.server_command
        if not target:
            raise UsageError(f"mcp-bdd {args.cmd}: give the server's command after `--`, e.g. -- mcp-server-time")
    elif words and words[0].startswith(("http://", "https://")):
        target, words = [words[0]], words[1:]
    elif words:
        server, words = split_server(args.cmd, words)
    options = ShellOptions(
        server=server,
        target=target,
        transport=args.transport,
        protocol=args.protocol,
        timeout=args.timeout,
        headers=list(args.header),
        as_json=args.json,
    )
    if args.cmd == "call":
        if not words:
            raise UsageError("mcp-bdd call: say which tool: mcp-bdd call [SERVER] TOOL [name=value ...]")
        return call(options, words[0], words[1:])
    if len(words) != 1:
        raise UsageError("mcp-bdd list: say what to list: mcp-bdd list [SERVER] tools|resources|templates|prompts")
    return listing(options, words[0])


def _dispatch(args: argparse.Namespace, extra: list[str], parser: argparse.ArgumentParser) -> int:
    command = args.cmd
    if command in ("call", "list"):
        return _shell(args, extra)
    if command == "run":
        return _run(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    handler = _COMMANDS.get(command or "")
    if handler is not None:
        return handler(args)
    parser.print_help()
    return EXIT_USAGE


class _Connection(TypedDict):
    target: list[str]
    server: str | None
    transport: str | None
    protocol: str | None
    timeout: float | None
    headers: list[str]


def _connection(args: argparse.Namespace) -> _Connection:
    """What every connecting command takes the same way: its target, server, transport, protocol,
    timeout and headers."""
    return _Connection(
        target=list(args.target),
        server=args.server,
        transport=args.transport,
        protocol=args.protocol,
        timeout=args.timeout,
        headers=list(getattr(args, "header", None) or []),  # `contract` connects as configured, without them
    )


def _listed(values: Sequence[str]) -> list[str]:
    """A repeatable option's values, each of which may hold several, comma-separated."""
    return [item for value in values for item in value.split(",") if item]


def _init(args: argparse.Namespace) -> int:
    from mcp_bdd.cli.scaffold import init

    return init(Path.cwd(), command=args.command, url=args.url, app=args.app, force=args.force, name=args.name)


def _scaffold(args: argparse.Namespace) -> int:
    from mcp_bdd.cli.scaffold import scaffold

    return scaffold(server=args.server, out_dir=args.out, force=args.force, transport=args.transport)


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    from mcp_bdd.cli.matrix import RunOptions, run_matrix

    if args.profile:  # an unknown profile stops here, before any worker starts
        from mcp_bdd.config import load_config

        load_config(userdata={"profile": args.profile})
        extra = ["-D", f"profile={args.profile}", *extra]
    options = RunOptions(
        transports=args.transport or [],
        protocols=args.protocol or [],
        jobs=args.jobs,
        shard=args.shard,
        report=args.report,
        junit=args.junit,
        title=args.title,
        behave_args=extra,
    )
    return run_matrix(options)


def _probe(args: argparse.Namespace) -> int:
    from mcp_bdd.probe import ProbeOptions, probe

    return probe(
        ProbeOptions(
            **_connection(args),
            baseline=args.baseline,
            save_baseline=args.save_baseline,
            as_json=args.json,
            fail_on=args.fail_on,
        )
    )


def _check(args: argparse.Namespace) -> int:
    from mcp_bdd.check._command import CheckCommand, gate_arguments, list_checks, run_check_command

    checks = _listed(args.checks)
    if args.list:
        return list_checks(checks=checks)
    command = CheckCommand(
        **_connection(args),
        only=_listed(args.only),
        skip=_listed(args.skip),
        allow_writes=args.allow_writes,
        no_call=_listed(args.no_call),
        fail_on=args.fail_on,
        as_json=args.json,
        sarif=args.sarif,
        seed=args.seed,
        min_description=args.min_description,
        call_timeout=args.call_timeout,
        contract=args.contract,
        checks=checks,
        **gate_arguments(args),
    )
    return run_check_command(command)


def _contract(args: argparse.Namespace) -> int:
    from mcp_bdd.check._command import run_contract_command

    connection = _connection(args)  # its headers left out: `contract` connects as configured
    return run_contract_command(
        args.action,
        args.file,
        connection["target"],
        server=connection["server"],
        transport=connection["transport"],
        protocol=connection["protocol"],
        timeout=connection["timeout"],
        fail_on=args.fail_on,
        as_json=args.json,
    )


def _steps(args: argparse.Namespace) -> int:
    if args.editor:
        return write_editor_files(args.editor)
    return print_steps(markdown=args.markdown, project=args.project)


def _report(args: argparse.Namespace) -> int:
    print("mcp-bdd report: say what to do: `mcp-bdd report merge a.json b.json -o out.html`", file=sys.stderr)
    return EXIT_USAGE


#: each subcommand (but run, call and list, which take extra arguments) and what carries it out
_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "init": _init,
    "scaffold": _scaffold,
    "probe": _probe,
    "check": _check,
    "contract": _contract,
    "steps": _steps,
    "report": _report,
}


def main(argv: Sequence[str] | None = None) -> int:
    from mcp_bdd._logs import guard_sdk_logs

    guard_sdk_logs()  # `probe`, `call`, `check`... print the SDK's log lines about a server too
    if argv is None:  # the program itself (the console script, `python -m`): its Ctrl-C is ours
        count_ctrl_c()
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        if args_list[:2] == ["report", "merge"]:
            return _report_merge(args_list[2:])
        parser = _parser(args_list[0] if args_list else None)
        # `call` / `list`: after `--` comes the server's own command line, never parsed as our options.
        split = args_list[:1] in (["call"], ["list"]) and "--" in args_list
        ours = args_list[: args_list.index("--")] if split else args_list
        try:
            args, extra = parser.parse_known_args(ours)
        except SystemExit as exc:  # --help (0) and usage errors (2)
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        if args.cmd == "run" and "--" in args_list:
            extra = _behave_args(args_list)
        args.server_command = args_list[args_list.index("--") + 1 :] if split else None
        try:
            return _dispatch(args, extra, parser)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        print("\nmcp-bdd: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `mcp-bdd steps | head`: the reader left; not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        return _report_error(exc)


def _behave_args(argv: list[str]) -> list[str]:
    """With `--`, everything after it goes to behave verbatim (our options come before it)."""
    index = argv.index("--")
    before = argv[:index]
    known = {"--transport", "--protocol", "--jobs", "-j", "--shard", "--report", "--junit", "--title", "--profile"}
    passthrough: list[str] = []
    i = 1  # skip "run"
    while i < len(before):
        arg = before[i]
        name = arg.split("=", 1)[0]
        if name in known:
            i += 1 if "=" in arg else 2
            continue
        passthrough.append(arg)
        i += 1
    return passthrough + argv[index + 1 :]


def _report_error(exc: BaseException) -> int:
    from mcp_bdd.errors import ConfigError, McpBddError, RequestTimeout, ServerStartError

    if os.environ.get("MCP_BDD_DEBUG"):
        traceback.print_exception(exc)
    if isinstance(exc, ServerStartError | RequestTimeout):
        print(f"mcp-bdd: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE  # for probe/scaffold a timeout means the server cannot be reached
    if isinstance(exc, McpBddError):
        label = "configuration error" if isinstance(exc, ConfigError) else "error"
        print(f"mcp-bdd: {label}: {exc}", file=sys.stderr)
        return exc.exit_code
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"mcp-bdd: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    print(
        printable(f"mcp-bdd: internal error: {type(exc).__name__}: {exc}\n")  # it may quote a server
        + "  Please report it; set MCP_BDD_DEBUG=1 to see the traceback.",
        file=sys.stderr,
    )
    return EXIT_USAGE


# ---------------------------------------------------------------------------------------------
# mcp-bdd steps


def write_editor_files(editor: str, root: Path | None = None, out: TextIO | None = None) -> int:
    """`mcp-bdd steps --editor vscode`: step completion for the vocabulary in the project's editor."""
    from behave import step_registry

    import mcp_bdd.steps  # noqa: F401 - registers the vocabulary
    from mcp_bdd.steps._editor import write_vscode

    stream = out or sys.stdout
    folder = root or Path.cwd()
    written = write_vscode(folder, step_registry.registry.steps)
    count = sum(len(m) for m in step_registry.registry.steps.values())
    print(f"mcp-bdd steps --editor {editor}: wrote {written[0]} ({count} phrases) and {written[1]}.", file=stream)
    print(
        '  Install the VS Code extension "Cucumber (Gherkin) Full Support" (alexkrechik.cucumberautocomplete);\n'
        "  it then completes and checks steps in .feature files. Re-run after upgrading mcp-bdd.",
        file=stream,
    )
    return EXIT_OK


def print_steps(*, markdown: bool, project: bool, out: TextIO | None = None) -> int:
    """The step catalog from behave's registry (placeholders, not parse types), grouped by module."""
    import runpy

    from behave import step_registry

    import mcp_bdd.steps  # noqa: F401 - registers the vocabulary
    from mcp_bdd.steps._phrases import catalog

    stream = out or sys.stdout
    if project:
        steps_dir = Path.cwd() / "steps"
        if not steps_dir.is_dir():
            print(f"mcp-bdd: error: --project: no steps/ folder in {Path.cwd()}", file=sys.stderr)
            return EXIT_USAGE
        for file in sorted(steps_dir.glob("*.py")):
            runpy.run_path(str(file), run_name=f"steps.{file.stem}")
    stream.write(catalog(step_registry.registry.steps, markdown=markdown))
    return EXIT_OK
