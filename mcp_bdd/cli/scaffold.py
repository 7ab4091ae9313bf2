"""`mcp-bdd init` (wire a project up) and `mcp-bdd scaffold` (starter features from a live server).

Both write files and neither overwrites one without `--force`: every file is planned first,
and if any existing file would change, nothing at all is written and the conflicts are listed.

`init` asks nothing. Without `--command`, `--url` or `--app` it looks at the project (see
mcp_bdd.cli.detect): a Python server on the 2.x SDK or fastmcp 4 becomes an in-memory `app`; one on
the 1.x SDK, a Node or a Go server becomes a `command` run by the project's own toolchain;
finding none, it writes a tiny example server so that `behave` is green straight away. It wires
into whichever folder behave will load steps and hooks from (features/steps + features/
environment.py, or steps/ + environment.py), merges into an existing environment.py instead of
replacing its hooks, and says what it kept when it runs again.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypedDict

from mcp_bdd._text import for_terminal
from mcp_bdd.cli.detect import (
    COPIES,
    Candidate,
    Install,
    Layout,
    behave_layout,
    detect_server,
    formatter_config,
    go_module,
    mcp_bdd_install,
    node_project,
    project_python,
    project_requirements,
    python_command,
)
from mcp_bdd.errors import UsageError
from mcp_bdd.failures import EXIT_OK
from mcp_bdd.secrets import mask_data

if TYPE_CHECKING:
    from mcp_bdd.session import Session

__all__ = ["Candidate", "FilePlan", "detect_server", "feature_files", "init", "placeholder", "scaffold"]

ENVIRONMENT_PY = "from mcp_bdd.environment import *  # noqa: F401,F403\n"
STEPS_PY = "from mcp_bdd.steps import *  # noqa: F401,F403\n"
EXAMPLE_MODULE = "example_server"

EXAMPLE_SERVER = '''\
"""An example MCP server written by `mcp-bdd init`: replace it with yours.

features/example.feature checks it; `[tool.mcp-bdd]` (or mcp-bdd.toml) says how to start it.
"""

from mcp.server.mcpserver import MCPServer


def create_server() -> MCPServer:
    """A factory: mcp-bdd builds a fresh server for every scenario (and for every transport)."""
    server = MCPServer("example", version="0.1.0")

    @server.tool()
    def greet(name: str) -> str:
        """Greet someone by name."""
        return f"Hello, {name}!"

    return server
'''

#: Appended to an environment.py that has hooks of its own (see mcp_bdd.chain).
CHAIN_HOOKS_PY = """
# mcp-bdd (added by `mcp-bdd init`): mcp-bdd's hooks run around the ones above.
# Keep these lines at the end of the file.
from mcp_bdd.chain import chain_hooks  # noqa: E402

chain_hooks(globals())
"""


# ---------------------------------------------------------------------------------------------
# planning and writing files


@dataclass
class FilePlan:
    """What will be written where; `mode` "write" replaces the file, "append" adds to it.

    `merge` (a function of the current text) adds to a file without ever replacing what is there:
    it is never a conflict, and "kept" when it would change nothing.
    """

    path: Path
    text: str
    mode: str = "write"
    replace_section: bool = False  # pyproject.toml: drop an existing [tool.mcp-bdd] first (--force)
    merge: Callable[[str], str] | None = None
    kept_why: str = ""  # shown when the file is left as it is

    def new_content(self, current: str | None) -> str:
        if self.merge is not None:
            return self.merge(current or "")
        if self.mode != "append" or not current:
            return self.text
        if self.replace_section:
            current = strip_section(current)
        sep = "" if current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
        return current + sep + self.text

    def state(self) -> str:
        """ "new", "same" (already like this), or "conflict" (exists and would change)."""
        if not self.path.exists():
            return "new"
        try:
            current = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return "conflict"
        if current == self.new_content(current):
            return "same"
        if self.merge is not None or (self.mode == "append" and not self.replace_section):
            return "new"  # adding what is not there yet changes nothing that exists
        return "conflict"


def _write_plans(plans: Sequence[FilePlan], root: Path, force: bool, out: TextIO) -> None:
    conflicts = [p for p in plans if p.state() == "conflict"]
    if conflicts and not force:
        listing = "\n".join(f"  {_show(p.path, root)}" for p in conflicts)
        raise UsageError(
            f"These files already exist and would be changed:\n{listing}\n"
            "Nothing was written. Re-run with --force to overwrite them."
        )
    for plan in plans:
        state = plan.state()
        shown = _show(plan.path, root)
        if state == "same":
            print(f"  kept       {shown}" + (f"  ({plan.kept_why})" if plan.kept_why else ""), file=out)
            continue
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        current = plan.path.read_text(encoding="utf-8") if plan.path.exists() else None
        plan.path.write_text(plan.new_content(current), encoding="utf-8")
        if plan.merge is not None and current is not None:
            verb = "merged"
        elif plan.mode == "append" and current is not None:
            verb = "updated" if plan.replace_section else "appended"
        else:
            verb = "overwrote" if state == "conflict" else "created"
        print(f"  {verb:<10} {shown}", file=out)


def _show(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


_SECTION_HEADER = re.compile(r'^\s*\[\[?\s*tool\s*\.\s*(?:"mcp-bdd"|mcp-bdd)\s*[.\]]')
_ANY_HEADER = re.compile(r"^\s*\[")


def strip_section(text: str) -> str:
    """pyproject.toml without its [tool.mcp-bdd] tables (and their sub-tables)."""
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        if _ANY_HEADER.match(line):
            inside = bool(_SECTION_HEADER.match(line))
        if not inside:
            out.append(line)
    return "".join(out).rstrip("\n") + "\n"


def _has_section(pyproject: Path) -> bool:
    import tomllib

    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{pyproject} cannot be read as TOML ({exc}); fix it or remove it first.") from None
    return isinstance(data.get("tool", {}).get("mcp-bdd"), dict)


def _toml(value: object) -> str:
    """A TOML value (strings as basic strings: JSON escapes are valid TOML)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---------------------------------------------------------------------------------------------
# init


@dataclass
class ServerChoice:
    name: str
    body: dict[str, object]  # the [servers.<name>] keys
    why: str
    example: bool = False  # the generated example server: its feature calls `greet`
    transport: str | None = None  # top-level default transport to write
    python: bool = False  # an app server: in-memory, and every transport through mcp_bdd.serve
    setup: str = ""  # what CI must do for the server: "" | "python-own-venv" | "node" | "go"
    notes: list[str] = field(default_factory=list)  # printed after the files: what the user must check
    comments: dict[str, str] = field(default_factory=dict)  # why a key of `body` is there, in the config
    candidate: Candidate | None = None  # the Python server found, whose requirements CI installs

    @property
    def kind(self) -> str:
        return "app" if "app" in self.body else "url" if "url" in self.body else "command"


_GENERIC_MODULES = {"app", "server", "main", "__main__", "mcp", "mcp_server", "service", "api", "index", "src"}


def _server_name(module: str) -> str:
    """A readable server name from a module path: the last part that is not generic ("app", "server")."""
    parts = module.split(".")
    for part in reversed(parts):
        if part not in _GENERIC_MODULES:
            return sanitize(part)
    return sanitize(parts[-1])


def sanitize(name: str, fallback: str = "server") -> str:
    """A name safe for a TOML bare key, a file name and a Gherkin quoted parameter."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-_").lower()
    return cleaned[:60] or fallback


def _command_name(argv: Sequence[str]) -> str:
    launchers = {
        "python", "python3", "node", "npx", "uvx", "uv", "bun", "deno", "pipx", "run", "-m", "-y", "tool",
        "poetry", "go", "--frozen", "--no-install",
    }  # fmt: skip
    for arg in argv:
        stem = Path(arg).name
        stem = re.sub(r"\.(py|js|mjs|cjs|ts)$", "", stem)
        if (arg.startswith("-") and arg not in ("-m",)) or stem in launchers or re.match(r"python\d", stem):
            continue
        if stem in _GENERIC_MODULES and len(Path(arg).parts) > 1:
            return _server_name(".".join(Path(arg).with_suffix("").parts))
        return sanitize(stem.split("@")[0] if not stem.startswith("@") else stem.split("/")[-1])
    return "server"


def _is_our_example(root: Path) -> bool:
    try:
        return (root / f"{EXAMPLE_MODULE}.py").read_text(encoding="utf-8") == EXAMPLE_SERVER
    except (OSError, UnicodeDecodeError):
        return False


def choose_server(root: Path, command: str | None, url: str | None, app: str | None) -> ServerChoice:
    given = [x for x in (command, url, app) if x]
    if len(given) > 1:
        raise UsageError("Give at most one of --command, --url and --app.")
    if command:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f'--command "{command}" cannot be split like a shell would: {exc}.') from None
        if not argv:
            raise UsageError("--command is empty.")
        return ServerChoice(_command_name(argv), {"command": argv}, f"--command {command}")
    if url:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f'--url "{url}" is not an http(s) URL.')
        return ServerChoice("remote", {"url": url}, f"--url {url}")
    if app:
        module, sep, attr = app.partition(":")
        if not sep or not module or not attr:
            raise UsageError(f'--app "{app}" is not "module:attribute" (e.g. "myserver.main:create_server").')
        return ServerChoice(_server_name(module), {"app": app}, f"--app {app}", transport="in-memory", python=True)
    best, _ = detect_server(root)
    if best is not None and best.path == f"{EXAMPLE_MODULE}.py" and _is_our_example(root):
        best = None  # our own example from an earlier `init`: keep choosing it, so a re-run changes nothing
    if best is not None:
        return _python_choice(root, best)
    node = node_project(root)
    if node is not None:
        notes = []
        if not node.built:
            build = "npm run build" if node.has_build else "build it"
            notes.append(f"{node.entry} does not exist yet: {build} before running behave.")
        return ServerChoice(
            sanitize(node.name),
            {"command": node.command},
            f"found a Node MCP server in package.json (run with node {node.entry})",
            setup="node",
            notes=notes,
        )
    go = go_module(root)
    if go is not None:
        return ServerChoice(
            sanitize(go.rstrip("/").split("/")[-1]),
            {"command": ["go", "run", "."]},
            f"found a Go MCP server (go.mod: {go})",
            setup="go",
        )
    return ServerChoice(
        "example",
        {"app": f"{EXAMPLE_MODULE}:create_server"},
        f"no MCP server found here: wrote {EXAMPLE_MODULE}.py to start from",
        example=True,
        transport="in-memory",
        python=True,
    )


def _python_choice(root: Path, best: Candidate) -> ServerChoice:
    name = _server_name(best.module)
    if name in _GENERIC_MODULES and best.label:
        name = sanitize(best.label, name)  # server.py: mcp = FastMCP("weather") -> "weather"
    what = f"def {best.attr}()" if best.kind == "factory" else f"{best.attr} = {best.call}(...)"
    if best.in_process:
        if best.path.startswith("src/"):
            what += " (src layout: install the project, e.g. `pip install -e .`, so that it imports)"
        framework = " (fastmcp 4)" if best.sdk == "fastmcp" else ""
        return ServerChoice(
            name,
            {"app": best.spec},
            f"found {what}{framework} in {best.path}",
            transport="in-memory",
            python=True,
            candidate=best,
        )
    python = project_python(root)
    era = "the 1.x MCP SDK" if best.sdk == "v1" else "fastmcp < 4 (on the 1.x SDK)"
    why = (
        f"found {what} in {best.path}, written for {era}: it runs as a command with {python.why}, "
        "because mcp-bdd needs the 2.x SDK in its own environment"
    )
    args = shlex.join(mcp_bdd_install(root).args)
    notes = [
        "Keep mcp-bdd out of the server's environment (installing it there upgrades mcp to 2.x): "
        f"install it in its own venv, e.g. `python -m venv ~/.mcp-bdd && ~/.mcp-bdd/bin/pip install {args}`."
    ]
    if not python.found:
        notes.append("No project environment was found, so the command uses python3 from PATH: edit it if needed.")
    return ServerChoice(
        name,
        {"command": python_command(root, best), "protocol": "legacy"},
        why,
        setup="python-own-venv",
        notes=notes,
        comments={"protocol": _LEGACY_WHY},
        candidate=best,
    )


#: Why a server on the 1.x SDK (or fastmcp < 4, which runs on it) is pinned to the handshake era.
_LEGACY_WHY = (
    "the 1.x SDK only speaks the initialize handshake: `auto` would ask server/discover first, "
    "which it logs as a wall of pydantic errors"
)


def config_text(choice: ServerChoice, prefix: str) -> str:
    """The configuration; `prefix` is "tool.mcp-bdd." in pyproject.toml and "" in mcp-bdd.toml."""
    lines = [f"[{prefix.rstrip('.')}]"] if prefix else []
    lines.append("# mcp-bdd: which MCP servers the features talk to (written by `mcp-bdd init`)")
    lines.append(f"server = {_toml(choice.name)}")
    if choice.transport:
        lines.append(f"transport = {_toml(choice.transport)}        # in-memory | stdio | streamable-http | sse")
    lines += ["", f"[{prefix}servers.{choice.name}]"]
    for key, value in choice.body.items():
        comment = choice.comments.get(key)
        lines.append(f"{key} = {_toml(value)}" + (f"   # {comment}" if comment else ""))
    return "\n".join(lines) + "\n"


def _existing_choice(config_file: Path, prefix: bool) -> ServerChoice | None:
    """The server an existing configuration already names (a re-run keeps it as it is)."""
    import tomllib

    try:
        data = tomllib.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    section = data.get("tool", {}).get("mcp-bdd") if prefix else data
    if not isinstance(section, dict) or not isinstance(section.get("servers"), dict) or not section["servers"]:
        return None
    servers: dict[str, object] = section["servers"]
    name = str(section.get("server")) if section.get("server") in servers else str(next(iter(servers)))
    found = servers[name]
    body: dict[str, object] = found if isinstance(found, dict) else {}
    app = body.get("app")
    example = app == f"{EXAMPLE_MODULE}:create_server"
    return ServerChoice(str(name), body, "kept the configuration there", example=example, python=bool(app))


def example_feature(choice: ServerChoice) -> str:
    name = choice.name
    head = (
        "Feature: The MCP server answers\n"
        "  An example written by `mcp-bdd init`. Run it with `behave` or `mcp-bdd run`;\n"
        "  `mcp-bdd scaffold` writes a starter feature for every tool, resource and prompt.\n\n"
    )
    if choice.example:
        return head + (
            "  Scenario: The server offers its tools\n"
            f'    Given the MCP server "{name}" is running\n'
            "    When I list the tools\n"
            '    Then the tool list includes "greet"\n\n'
            "  Scenario: Greeting someone\n"
            f'    Given the MCP server "{name}" is running\n'
            '    When I call the tool "greet" with:\n'
            "      | name |\n"
            "      | Ada  |\n"
            "    Then the tool call succeeds\n"
            '    And the result text is "Hello, Ada!"\n'
        )
    return head + (
        "  Scenario: The server starts and answers\n"
        f'    Given the MCP server "{name}" is running\n'
        "    Then the server still responds\n"
    )


def _server_setup_steps(root: Path, choice: ServerChoice) -> str:
    """The CI steps that give the server what it needs before mcp-bdd starts it."""
    if choice.setup == "node":
        npm = "npm ci" if (root / "package-lock.json").exists() else "npm install"
        return f"""\
      - uses: actions/setup-node@v4
        with:
          node-version: "20"
      - name: Install the server
        run: |
          {npm}
          npm run build --if-present
"""
    if choice.setup == "go":
        return """\
      - uses: actions/setup-go@v5
        with:
          go-version: stable
"""
    if choice.setup == "python-own-venv":
        return _run_step("Install the server in its own environment", _own_venv_lines(root, choice))
    return ""


def _own_venv_lines(root: Path, choice: ServerChoice) -> list[str]:
    """The server's own environment, where its command will find it: `.venv/bin/python` needs a
    .venv (git leaves the author's out), `python3` the runner's Python."""
    command = choice.body.get("command")  # a list: the setup is the one detection chose
    argv = [str(a) for a in command] if isinstance(command, list) else []
    if argv[:2] == ["uv", "run"]:
        return ["pip install uv", "uv sync --frozen"]
    if argv[:2] == ["poetry", "run"]:
        return ["pip install poetry", "poetry install"]
    requirements = shlex.join(project_requirements(root, choice.candidate))
    if argv and "/" in argv[0]:
        venv = argv[0].split("/")[0]
        return [f"python -m venv {venv}"] + ([f"{venv}/bin/pip install {requirements}"] if requirements else [])
    return [f"python -m pip install {requirements}"] if requirements else []


def _run_step(name: str, lines: Sequence[str], comment: Sequence[str] = ()) -> str:
    """One workflow step running `lines` (a block scalar: no quoting of what pip is given)."""
    if not lines:
        return ""
    said = "".join(f"      # {line}\n" for line in comment)
    body = "".join(f"          {line}\n" for line in lines)
    return f"{said}      - name: {name}\n        run: |\n{body}"


def _mcp_bdd_step(install: Install, own_venv: bool) -> str:
    """mcp-bdd, installed as where init ran (it is not on PyPI yet): in a venv of its own beside a
    1.x-SDK server (which keeps its mcp<2), else with the runner's Python."""
    args = shlex.join(install.args)
    if own_venv:
        lines = ["python -m venv ../mcp-bdd-env", f"../mcp-bdd-env/bin/pip install {args}"]
    else:
        lines = [f"python -m pip install {args}"]
    comment = [
        "mcp-bdd is not on PyPI yet, so this installs it as it is installed where `mcp-bdd init` ran:",
        f"{install.how}.",
    ]
    if install.advice:
        comment += [f"{install.advice}:", *(f"  {copy}" for copy in COPIES)]
    return _run_step("Install mcp-bdd", lines, comment)


def _app_requirements_step(root: Path, choice: ServerChoice) -> str:
    """An in-process (app) server imports in mcp-bdd's own environment: what it needs goes there."""
    if not choice.python or choice.example:
        return ""
    requirements = project_requirements(root, choice.candidate)
    lines = [f"python -m pip install {shlex.join(requirements)}"] if requirements else []
    return _run_step("Install what the server needs", lines)


def ci_workflow(root: Path, choice: ServerChoice, install: Install) -> str:
    own_venv = choice.setup == "python-own-venv"
    if own_venv:  # the server keeps its 1.x SDK; mcp-bdd (on 2.x) lives in a venv of its own
        run = "../mcp-bdd-env/bin/mcp-bdd run"
    else:
        run = "mcp-bdd run" + (" --transport in-memory,stdio" if choice.kind == "app" else "")
    steps = _server_setup_steps(root, choice) + _mcp_bdd_step(install, own_venv) + _app_requirements_step(root, choice)
    return f"""\
# Written by `mcp-bdd init`: runs the features on every push and pull request and keeps the
# living documentation (reports/living-doc.html) and JUnit results (reports/junit.xml).
name: mcp-bdd
on: [push, pull_request]
jobs:
  acceptance:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
{steps}      - name: Acceptance tests
        run: {run}
      - name: Living documentation
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: living-doc
          path: reports/
"""


# ---------------------------------------------------------------------------------------------
# merging into the project's own files


def merge_environment(current: str) -> str:
    """environment.py wired to mcp-bdd: written when empty, chained when it has hooks of its own."""
    if not current.strip():
        return ENVIRONMENT_PY
    if "mcp_bdd" in current:
        return current  # wired already (ours, or hooks that call mcp-bdd's themselves)
    return current.rstrip("\n") + "\n\n" + CHAIN_HOOKS_PY


_INI_HEADER = re.compile(r"^\s*\[\s*behave\.formatters\s*\]\s*$", re.M)
_TOML_HEADER = re.compile(
    r"""^\s*\[\s*tool\s*\.\s*(?:behave|"behave")\s*\.\s*(?:formatters|"formatters")\s*\]\s*(?:#.*)?$""", re.M
)


def formatter_aliases() -> dict[str, str]:
    """The short `-f` names of mcp-bdd's formatters (the one list: mcp_bdd.report.formatter.ALIASES)."""
    from mcp_bdd.report.formatter import ALIASES

    return ALIASES


def merge_formatters(current: str, toml: bool) -> str:
    """`current` with every alias of `formatter_aliases()` that it lacks (an existing alias is kept)."""
    header = _TOML_HEADER if toml else _INI_HEADER
    table = "[tool.behave.formatters]" if toml else "[behave.formatters]"
    present = _aliases_in(current, toml)
    missing = {k: v for k, v in formatter_aliases().items() if k not in present}
    if not missing:
        return current
    lines = [f'{key} = "{value}"' if toml else f"{key} = {value}" for key, value in missing.items()]
    match = header.search(current)
    if match:  # add the missing keys right under the existing table header
        at = match.end()
        return current[:at] + "\n" + "\n".join(lines) + current[at:]
    sep = "" if not current or current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
    block = f"{table}   # short names for behave -f (written by `mcp-bdd init`)\n" + "\n".join(lines) + "\n"
    return current + sep + block


def _aliases_in(text: str, toml: bool) -> set[str]:
    if toml:
        import tomllib

        try:
            section = tomllib.loads(text).get("tool", {}).get("behave", {}).get("formatters", {})
        except tomllib.TOMLDecodeError:
            return set()
        return set(section) if isinstance(section, dict) else set()
    import configparser

    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return set()
    return set(parser["behave.formatters"]) if parser.has_section("behave.formatters") else set()


def _formatter_plan(root: Path) -> FilePlan:
    target = formatter_config(root)
    toml = target.suffix == ".toml"

    def merge(current: str) -> str:
        merged = merge_formatters(current, toml)
        if toml and merged != current and _aliases_in(merged, toml) < set(formatter_aliases()):
            return current  # a layout we cannot extend safely (e.g. an inline table): leave it alone
        return merged

    return FilePlan(target, "", merge=merge, kept_why="the behave -f aliases: living-doc, junit-mcp, ...")


def _steps_plan(layout: Layout) -> FilePlan:
    wired = sorted(
        p for p in layout.steps.glob("*.py") if "mcp_bdd.steps" in p.read_text(encoding="utf-8", errors="replace")
    ) if layout.steps.is_dir() else []  # fmt: skip
    if wired:
        return FilePlan(wired[0], wired[0].read_text(encoding="utf-8"), kept_why="imports mcp_bdd.steps already")
    return FilePlan(layout.steps / "mcp_steps.py", STEPS_PY)


def _config_plan(root: Path, choice: ServerChoice, keep: bool) -> FilePlan:
    pyproject = root / "pyproject.toml"
    toml_file = root / "mcp-bdd.toml"
    if toml_file.exists() or not pyproject.exists():
        if keep:
            return FilePlan(toml_file, toml_file.read_text(encoding="utf-8"), kept_why=f'server "{choice.name}"')
        return FilePlan(toml_file, config_text(choice, ""))
    if keep:
        return FilePlan(
            pyproject, "", merge=lambda current: current, kept_why=f'[tool.mcp-bdd], server "{choice.name}"'
        )
    return FilePlan(
        pyproject, config_text(choice, "tool.mcp-bdd."), mode="append", replace_section=_has_section(pyproject)
    )


def _existing_config(root: Path) -> ServerChoice | None:
    toml_file = root / "mcp-bdd.toml"
    if toml_file.exists():
        return _existing_choice(toml_file, prefix=False)
    pyproject = root / "pyproject.toml"
    if pyproject.exists() and _has_section(pyproject):
        return _existing_choice(pyproject, prefix=True)
    return None


def _as_is(plan: FilePlan) -> FilePlan:
    try:
        return FilePlan(plan.path, plan.path.read_text(encoding="utf-8"), kept_why=plan.kept_why or "exists")
    except (OSError, UnicodeDecodeError):
        return plan


def _next_steps(choice: ServerChoice, layout: Layout, root: Path) -> list[str]:
    features = _show(layout.features, root)
    behave_cmd = f"behave {features}/"
    if choice.setup == "python-own-venv":
        behave_cmd += "   (with mcp-bdd's own environment active, not the server's)"
    if choice.kind == "app":
        hint = f"Next: {behave_cmd}   (or: mcp-bdd run --transport in-memory,stdio)"
    elif choice.kind == "url":
        hint = f"Next: {behave_cmd}   (the server must be running at {choice.body.get('url')})"
    else:
        hint = f"Next: {behave_cmd}   (or: mcp-bdd run)"
    lines = [hint, f"Report: behave -f pretty -f living-doc -D mcp_bdd.report=reports/living-doc.html {features}/"]
    if not choice.example:
        lines.append("Then: mcp-bdd scaffold   (starter features for every tool, resource and prompt)")
    lines.append("Editor: mcp-bdd steps --editor vscode   (step completion in VS Code, see docs/editors.md)")
    return lines


def init(
    root: Path,
    *,
    command: str | None,
    url: str | None,
    app: str | None,
    force: bool,
    name: str | None = None,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    if name is not None and (sanitize(name) != name or not name):
        raise UsageError(f'--name "{name}": use lower-case letters, digits, "-" and "_" (e.g. "{sanitize(name)}").')
    existing = None if (command or url or app or force) else _existing_config(root)
    keep = existing is not None and (name is None or name == existing.name)
    choice = existing if keep and existing is not None else choose_server(root, command, url, app)
    if name is not None:
        choice.name = name
    layout = behave_layout(root)
    install = mcp_bdd_install(root)
    workflow = root / ".github" / "workflows" / "mcp-bdd.yml"
    workflow_text = ci_workflow(root, choice, install)
    plans = [
        _config_plan(root, choice, keep),
        _formatter_plan(root),
        FilePlan(layout.environment, "", merge=merge_environment, kept_why="wired to mcp-bdd already"),
        _steps_plan(layout),
        FilePlan(layout.features / "example.feature", example_feature(choice)),
        FilePlan(workflow, workflow_text),
    ]
    if choice.example:
        plans.append(FilePlan(root / f"{EXAMPLE_MODULE}.py", EXAMPLE_SERVER))
    if keep:  # a re-run: what exists stays as it is (the user may have edited it); what is missing is added
        plans = [_as_is(p) if p.merge is None and p.path.exists() else p for p in plans]
    print(f'mcp-bdd init: server "{choice.name}" — {choice.why}', file=out)
    print(f"  layout     {layout.why}", file=out)
    _write_plans(plans, root, force, out)
    for note in [*choice.notes, *_workflow_note(workflow, workflow_text, install, root)]:
        print(f"  note: {note}", file=out)
    for line in _next_steps(choice, layout, root):
        print(line, file=out)
    return EXIT_OK


def _workflow_note(workflow: Path, text: str, install: Install, root: Path) -> list[str]:
    """What to know about the workflow written (not one kept as the team edited it): it installs
    mcp-bdd from where it is on this machine, which a hosted runner may not have."""
    try:
        written = workflow.read_text(encoding="utf-8") == text
    except OSError:
        written = False
    if not install.advice or not written:
        return []
    return [
        f"{_show(workflow, root)} installs mcp-bdd as it is installed here (pip install {shlex.join(install.args)}): "
        "read its comment before a hosted runner uses it."
    ]


# ---------------------------------------------------------------------------------------------
# scaffold


def _resolve(schema: dict[str, Any], root_schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: object = root_schema
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            return {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


_FORMATS = {
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "date-time": "2025-01-01T00:00:00Z",
    "date": "2025-01-01",
    "time": "12:00:00",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "hostname": "example.com",
}


def placeholder(schema: dict[str, Any], root_schema: dict[str, Any] | None = None) -> object:
    """A plausible value for a JSON Schema, for a table a human will edit (the schema's values are
    taken as its keywords say: `minItems` a count, `minimum` a number)."""
    root_schema = root_schema or schema
    schema = _resolve(schema, root_schema)
    given = _given_value(schema)
    if given is not _NONE:
        return given
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            return placeholder(options[0], root_schema)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        count = int(schema.get("minItems", 1) or 1)
        return [placeholder(items or {"type": "string"}, root_schema) for _ in range(count)]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: placeholder(v, root_schema) for k, v in props.items() if k in (schema.get("required") or [])}
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = _FORMATS.get(str(schema.get("format", "")), "example")
    min_length = int(schema.get("minLength", 0) or 0)
    return text + "x" * max(0, min_length - len(text))


#: `_given_value`'s "the schema gives none" (None is a value a schema may give)
_NONE = object()


def _given_value(schema: dict[str, Any]) -> object:
    """A value the schema itself offers (default, const, the first enum value or example), or `_NONE`."""
    for key in ("default", "const"):
        if key in schema and schema[key] is not None:
            return schema[key]
    for key in ("enum", "examples"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    return _NONE


def _number(schema: dict[str, Any], kind: str) -> object:
    """The smallest number the schema allows (an integer rounded up), else a plain one."""
    if "minimum" in schema:
        return math.ceil(schema["minimum"]) if kind == "integer" else schema["minimum"]
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"]
        return math.floor(low) + 1 if kind == "integer" else low + 1
    return 1 if kind == "integer" else 1.5


def _cell(value: object) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, int | float):
        text = json.dumps(value)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n")


def _table(headings: Sequence[str], row: Sequence[str], indent: str) -> str:
    cells = [_cell(h) for h in headings]
    values = list(row)
    widths = [max(len(a), len(b)) for a, b in zip(cells, values, strict=True)]
    head = "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    body = "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"
    return f"{indent}{head}\n{indent}{body}\n"


_KEYWORD_LINE = re.compile(
    r"^(Feature|Rule|Background|Scenario|Scenario Outline|Scenario Template|Example|Examples|Scenarios)\s*:",
    re.I,
)


def _description(text: object, limit: int = 12) -> str:
    """Free text as a Gherkin description (lines that would parse as syntax are quoted)."""
    if not text:
        return ""
    lines = [line.strip() for line in str(text).strip().splitlines()][:limit]
    out = []
    for line in lines:
        if line.startswith(("#", "@", "|", '"""', "```")) or _KEYWORD_LINE.match(line):
            line = "> " + line
        out.append(f"  {line}".rstrip())
    return "\n".join(out) + "\n"


def _one_line(text: object, limit: int = 100) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _quotable(text: str) -> bool:
    return '"' not in text and "\n" not in text and "${" not in text


@dataclass
class Generated:
    path: Path
    text: str
    notes: list[str] = field(default_factory=list)


def _file_name(name: str, used: set[str]) -> str:
    base = sanitize(name.replace("://", "-").replace("/", "-"), "item")
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    used.add(candidate)
    return candidate + ".feature"


def _background(server: str) -> str:
    return f'  Background:\n    Given the MCP server "{server}" is running\n\n'


def _object(value: object) -> dict[str, object]:
    """`value` when the server sent a JSON object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def _array(value: object) -> list[object]:
    """`value` when the server sent a JSON array there, else an empty one."""
    return value if isinstance(value, list) else []


def tool_feature(server: str, tool: dict[str, object]) -> str:
    name = str(tool.get("name"))
    schema = _object(tool.get("inputSchema"))
    props = _object(schema.get("properties"))
    required = [r for r in _array(schema.get("required")) if isinstance(r, str)]
    annotations = _object(tool.get("annotations"))
    title = tool.get("title") or annotations.get("title")
    text = f'Feature: The tool "{name}"' + (f" — {_one_line(title, 80)}" if title else "") + "\n"
    text += _description(tool.get("description")) + "\n" + _background(server)
    text += "  Scenario: The tool is offered\n"
    text += f'    Then the tool list includes "{name}"\n'
    if required:
        text += f'    And the tool "{name}" requires the arguments:\n'
        width = max(len("name"), *(len(_cell(r)) for r in required))
        text += f"      | {'name'.ljust(width)} |\n" + "".join(f"      | {_cell(r).ljust(width)} |\n" for r in required)
    for arg in required:
        kind = _resolve(_object(props.get(arg)), schema).get("type")
        if isinstance(kind, str):
            text += f'    And the tool "{name}" argument "{arg}" is of type "{kind}"\n'
    if tool.get("outputSchema"):
        text += f'    And the tool "{name}" has an output schema\n'
    if annotations.get("readOnlyHint"):
        text += f'    And the tool "{name}" is marked read-only\n'
    if annotations.get("destructiveHint") is True:
        text += f'    And the tool "{name}" is marked destructive\n'
    text += "\n  @wip\n"
    text += f"  Scenario: Calling {name}\n"
    text += "    # TODO: replace the placeholder arguments with a real case, then say what must come back.\n"
    if required:
        text += f'    When I call the tool "{name}" with:\n'
        values = [_cell(placeholder(_object(props.get(a)), schema)) for a in required]
        text += _table(required, values, "      ")
    else:
        text += f'    When I call the tool "{name}"\n'
    text += "    Then the tool call succeeds\n"
    if tool.get("outputSchema"):
        text += "    And the result conforms to the tool's output schema\n"
        first = next(iter(_object(_object(tool["outputSchema"]).get("properties"))), None)
        if first and re.fullmatch(r"[A-Za-z_]\w*", first):
            text += f'    # e.g. And the result at "$.{first}" is "..."\n'
    else:
        text += '    # e.g. And the result text contains "..."\n'
    return text


_BINARY_PREFIXES = (
    "image/",
    "audio/",
    "video/",
    "application/octet-stream",
    "application/pdf",
    "application/zip",
)


def resource_feature(server: str, resource: dict[str, object], read: dict[str, object] | None) -> str:
    uri = str(resource.get("uri"))
    label = resource.get("title") or resource.get("name") or uri
    text = f'Feature: The resource "{_one_line(label, 80)}" ({uri})\n'
    text += _description(resource.get("description")) + "\n" + _background(server)
    text += "  Scenario: The resource is listed\n"
    text += "    When I list the resources\n"
    text += f'    Then the resources include "{uri}"\n\n'
    contents = _array((read or {}).get("contents"))
    first = _object(contents[0]) if contents else {}
    mime = first.get("mimeType") or resource.get("mimeType")
    binary = "blob" in first if first else str(mime or "").startswith(_BINARY_PREFIXES)
    if read is None:
        text += "  @wip\n"
    text += "  Scenario: Reading the resource\n"
    if read is None:
        text += "    # TODO: reading it failed while scaffolding; check the URI.\n"
    text += f'    When I read the resource "{uri}"\n'
    if mime:
        text += f'    Then the resource MIME type is "{mime}"\n'
    if binary:
        text += "    And the resource is binary\n" if mime else "    Then the resource is binary\n"
    if not binary:
        text += "\n  @wip\n  Scenario: The resource says what it should\n"
        text += f'    When I read the resource "{uri}"\n'
        text += '    # TODO: a text the resource must contain\n    Then the resource text contains "TODO"\n'
    return text


def template_feature(server: str, templates: Sequence[dict[str, object]]) -> str:
    text = "Feature: Resource templates\n\n" + _background(server)
    text += "  Scenario: The resource templates are listed\n    When I list the resource templates\n"
    for i, template in enumerate(templates):
        keyword = "Then" if i == 0 else "And"
        text += f'    {keyword} the resource templates include "{template.get("uriTemplate")}"\n'
    return text


def prompt_feature(server: str, prompt: dict[str, object]) -> str:
    name = str(prompt.get("name"))
    args = [a for a in _array(prompt.get("arguments")) if isinstance(a, dict) and a.get("name")]
    required = [str(a["name"]) for a in args if a.get("required")]
    text = f'Feature: The prompt "{name}"\n' + _description(prompt.get("description")) + "\n" + _background(server)
    text += "  Scenario: The prompt is listed\n    When I list the prompts\n"
    text += f'    Then the prompts include "{name}"\n\n'
    text += "  @wip\n  Scenario: Getting the prompt\n"
    text += "    # TODO: replace the placeholder arguments, then say what the messages must say.\n"
    if required:
        text += f'    When I get the prompt "{name}" with:\n'
        text += _table(required, ["example"] * len(required), "      ")
    else:
        text += f'    When I get the prompt "{name}"\n'
    text += '    Then prompt message 1 is from the "user" and contains "TODO"\n'
    return text


class ScaffoldSurface(TypedDict, total=False):
    """What scaffold reads from a server: its listings, and each resource read by its URI."""

    tools: list[dict[str, object]]
    resources: list[dict[str, object]]
    templates: list[dict[str, object]]
    prompts: list[dict[str, object]]
    reads: dict[str, dict[str, object]]


def feature_files(server: str, surface: ScaffoldSurface, out_dir: Path) -> tuple[list[Generated], list[str]]:
    """The starter features for a surface ({"tools", "resources", "templates", "reads", "prompts"})."""
    files: list[Generated] = []
    skipped: list[str] = []
    used: dict[str, set[str]] = {"tools": set(), "resources": set(), "prompts": set()}
    for tool in sorted(surface.get("tools") or [], key=lambda t: str(t.get("name"))):
        name = str(tool.get("name"))
        if not _quotable(name):
            skipped.append(f"tool {name!r}: its name cannot be quoted in a step")
            continue
        files.append(Generated(out_dir / "tools" / _file_name(name, used["tools"]), tool_feature(server, tool)))
    reads = surface.get("reads") or {}
    for resource in sorted(surface.get("resources") or [], key=lambda r: str(r.get("uri"))):
        uri = str(resource.get("uri"))
        if not _quotable(uri):
            skipped.append(f"resource {uri!r}: its URI cannot be quoted in a step")
            continue
        stem = str(resource.get("name") or uri)
        files.append(
            Generated(
                out_dir / "resources" / _file_name(stem, used["resources"]),
                resource_feature(server, resource, reads.get(uri)),
            )
        )
    templates = [t for t in surface.get("templates") or [] if _quotable(str(t.get("uriTemplate")))]
    if templates:
        files.append(
            Generated(
                out_dir / "resources" / _file_name("templates", used["resources"]),
                template_feature(server, templates),
            )
        )
    for prompt in sorted(surface.get("prompts") or [], key=lambda p: str(p.get("name"))):
        name = str(prompt.get("name"))
        if not _quotable(name):
            skipped.append(f"prompt {name!r}: its name cannot be quoted in a step")
            continue
        files.append(Generated(out_dir / "prompts" / _file_name(name, used["prompts"]), prompt_feature(server, prompt)))
    return files, skipped


def _read_surface(session: Session) -> ScaffoldSurface:
    import mcp_types as types

    from mcp_bdd.errors import McpBddError

    assert session.client is not None  # an open session
    caps = session.client.server_capabilities
    surface = ScaffoldSurface(tools=[], resources=[], templates=[], prompts=[], reads={})
    if caps is None or caps.tools is not None:
        surface["tools"] = session.list_all("tools")
    if caps is not None and caps.resources is not None:
        surface["resources"] = session.list_all("resources")
        try:
            surface["templates"] = session.list_all("templates")
        except (McpBddError, AssertionError):
            surface["templates"] = []
        for resource in surface["resources"][:100]:
            uri = str(resource.get("uri"))  # listed, so the SDK's client checked it is one
            outcome = session.request(types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri)))
            if outcome.ok and outcome.raw is not None:
                surface["reads"][uri] = outcome.raw
    if caps is not None and caps.prompts is not None:
        surface["prompts"] = session.list_all("prompts")
    # the generated features are meant for git: a secret the server repeats must not land there
    masked: ScaffoldSurface = mask_data(surface)
    return masked


#: behave's tag expression for a run given no --tags (its `default_tags` setting): the scenarios
#: scaffold tags @wip hold placeholder arguments and "TODO" texts, and fail until a human is done.
WIP_EXCLUDED = "not @wip"
_WIP_WHY = "# mcp-bdd scaffold: scenarios tagged @wip need a human first; `behave --tags @wip` runs them"
_INI_BEHAVE = re.compile(r"^\s*\[\s*behave\s*\]\s*$", re.M)
_TOML_BEHAVE = re.compile(r"""^\s*\[\s*tool\s*\.\s*(?:behave|"behave")\s*\]\s*(?:#.*)?$""", re.M)


def default_tags_in(text: str, toml: bool) -> object:
    """behave's `default_tags` in a config file's text (None when it sets none)."""
    if toml:
        import tomllib

        try:
            section = tomllib.loads(text).get("tool", {}).get("behave", {})
        except tomllib.TOMLDecodeError:
            return None
        return section.get("default_tags") if isinstance(section, dict) else None
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser.get("behave", "default_tags", fallback=None)


def merge_default_tags(current: str, toml: bool) -> str:
    """`current` with `default_tags = not @wip`, so that a plain `behave` skips what scaffold left
    for a human; a `default_tags` the project sets already is kept as it is."""
    if default_tags_in(current, toml) is not None:
        return current
    line = f'default_tags = ["{WIP_EXCLUDED}"]' if toml else f"default_tags = {WIP_EXCLUDED}"
    match = (_TOML_BEHAVE if toml else _INI_BEHAVE).search(current)
    if match:  # right under the existing table header
        at = match.end()
        return current[:at] + f"\n{_WIP_WHY}\n{line}" + current[at:]
    sep = "" if not current or current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
    table = "[tool.behave]" if toml else "[behave]"
    return current + sep + f"{table}\n{_WIP_WHY}\n{line}\n"


def _wip_plan(root: Path) -> tuple[FilePlan, bool]:
    """The behave config file with `default_tags = not @wip`, and whether plain runs skip @wip then."""
    target = formatter_config(root)  # the file behave reads last: its settings win
    toml = target.suffix == ".toml"

    def merge(current: str) -> str:
        merged = merge_default_tags(current, toml)
        if merged != current and default_tags_in(merged, toml) in (None, ""):
            return current  # a layout we cannot extend safely: leave it alone
        return merged

    current = target.read_text(encoding="utf-8") if target.is_file() else ""
    tags = default_tags_in(merge(current), toml)
    shown = " ".join(map(str, tags)) if isinstance(tags, list) else str(tags)
    excluded = tags is not None and "not @wip" in shown
    why = f"default_tags = {shown}" + ("" if excluded else ": add `and not @wip` to leave out what needs a human")
    return FilePlan(target, "", merge=merge, kept_why=why), excluded


def scaffold(
    *, server: str | None, out_dir: Path, force: bool, transport: str | None, out: TextIO | None = None
) -> int:
    from mcp_bdd.config import load_config, normalize_transport
    from mcp_bdd.probe import open_session

    out = for_terminal(out or sys.stdout)  # it names the server as the server names itself
    root = Path.cwd()
    config = load_config()
    name = server or config.default_server()
    if name is None:
        known = ", ".join(config.servers) or f"none are configured in {config.source}"
        raise UsageError(f"Say which server to scaffold from: --server NAME (servers: {known}).")
    config.server_named(name)  # an unknown name fails here, with "did you mean"
    if not _quotable(name):
        raise UsageError(f'The server name "{name}" cannot be quoted in a step.')
    chosen = normalize_transport(transport, "--transport") if transport else None
    with open_session(config, name, chosen) as session:
        surface = _read_surface(session)
        info = session.client.server_info
        who = f"{info.name} {info.version or ''}".strip() if info else name  # masked by `out`
    out_path = out_dir if out_dir.is_absolute() else root / out_dir
    files, skipped = feature_files(name, surface, out_path)
    print(
        f"mcp-bdd scaffold: {who} — {len(surface['tools'])} tools, {len(surface['resources'])} resources, "
        f"{len(surface['templates'])} resource templates, {len(surface['prompts'])} prompts",
        file=out,
    )
    wip, excluded = _wip_plan(root)
    _write_plans([*(FilePlan(f.path, f.text) for f in files), wip], root, force, out)
    for note in skipped:
        print(f"  skipped    {note}", file=out)
    shown = _show(out_path, root)
    print("Scenarios tagged @wip need a human: fill in the arguments and expectations.", file=out)
    if excluded:
        print(
            f"Plain runs leave them out (default_tags in {_show(wip.path, root)}): behave {shown}\n"
            f"Run them with: behave --tags @wip {shown}",
            file=out,
        )
    else:
        print(f'Run the rest now: behave --tags "not @wip" {shown}', file=out)
    return EXIT_OK
