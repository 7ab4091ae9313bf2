"""`mcp-bdd init` (wire a project up) and `mcp-bdd scaffold` (starter features from a live server).

Both write files and neither overwrites one without `--force`: every file is planned first,
and if any existing file would change, nothing at all is written and the conflicts are listed.

`init` asks nothing. Without `--command`, `--url` or `--app` it looks for a Python MCP server in
the project (a top-level `create_server()` factory, or `x = MCPServer(...)` / `x = FastMCP(...)`
in a module that uses MCP) and, finding none, writes a tiny example server so that `behave`
is green straight away.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_bdd.errors import EXIT_OK, UsageError

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

_SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", ".tox", ".nox", "node_modules", "__pycache__",
    "site-packages", "build", "dist", "features", "steps", "tests", "test", "reports", "docs",
}  # fmt: skip
_MAX_FILES = 2000
_MAX_DEPTH = 4


# ---------------------------------------------------------------------------------------------
# planning and writing files


@dataclass
class FilePlan:
    """What will be written where; `mode` "write" replaces the file, "append" adds to it."""

    path: Path
    text: str
    mode: str = "write"
    replace_section: bool = False  # pyproject.toml: drop an existing [tool.mcp-bdd] first (--force)

    def new_content(self, current: str | None) -> str:
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
        if self.mode == "append" and not self.replace_section:
            return "new"  # appending a section that is not there yet changes nothing that exists
        return "conflict"


def _write_plans(plans: Sequence[FilePlan], root: Path, force: bool, out: Any) -> None:
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
            print(f"  unchanged  {shown}", file=out)
            continue
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        current = plan.path.read_text(encoding="utf-8") if plan.path.exists() else None
        plan.path.write_text(plan.new_content(current), encoding="utf-8")
        if plan.mode == "append" and current is not None:
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


def _toml(value: Any) -> str:
    """A TOML value (strings as basic strings: JSON escapes are valid TOML)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---------------------------------------------------------------------------------------------
# detection of a Python server object


@dataclass(frozen=True)
class Candidate:
    module: str
    attr: str
    path: str  # relative to the project root
    kind: str  # "factory" | "object" | "fastmcp" (the standalone fastmcp package: run as a command)
    call: str = ""  # MCPServer | FastMCP, for objects

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.attr}"


def _python_files(root: Path) -> Iterator[Path]:
    count = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(
            d for d in dirs
            if d not in _SKIP_DIRS and not d.startswith(".") and not (here / d / "pyvenv.cfg").exists()
            and depth < _MAX_DEPTH
        )  # fmt: skip
        for name in sorted(files):
            if not name.endswith(".py") or name.startswith("test_") or name.endswith("_test.py"):
                continue
            if name in ("environment.py", "setup.py", "conftest.py", "noxfile.py"):
                continue
            count += 1
            if count > _MAX_FILES:
                return
            yield here / name


def _module_name(rel: Path) -> str | None:
    parts = list(rel.with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return ""


def detect_server(root: Path) -> tuple[Candidate | None, list[Candidate]]:
    """The best candidate (a `create_server` factory first, then a server object) and all found."""
    found: list[tuple[int, int, Candidate]] = []
    for file in _python_files(root):
        try:
            if file.stat().st_size > 1_000_000:
                continue
            source = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "MCPServer" not in source and "FastMCP" not in source and "create_server" not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        rel = file.relative_to(root)
        module = _module_name(rel)
        if module is None:
            continue
        imports = {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
            alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        if not imports & {"mcp", "fastmcp"}:
            continue
        standalone = "fastmcp" in imports and "mcp" not in imports
        depth = len(rel.parts)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "create_server" and not standalone:
                found.append((0, depth, Candidate(module, node.name, rel.as_posix(), "factory")))
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            if value is not None and _call_name(value) in ("MCPServer", "FastMCP"):
                for target in targets:
                    if isinstance(target, ast.Name):
                        kind = "fastmcp" if standalone else "object"
                        call = _call_name(value)
                        found.append((1, depth, Candidate(module, target.id, rel.as_posix(), kind, call)))
    found.sort(key=lambda item: (item[0], item[1], item[2].path, item[2].attr))
    candidates = [c for _, _, c in found]
    return (candidates[0] if candidates else None), candidates


# ---------------------------------------------------------------------------------------------
# init


@dataclass
class ServerChoice:
    name: str
    body: dict[str, Any]  # the [servers.<name>] keys
    why: str
    example: bool = False  # the generated example server: its feature calls `greet`
    transport: str | None = None  # top-level default transport to write
    python: bool = False  # an app server: the CI snippet runs it in-memory and over stdio


_GENERIC_MODULES = {"app", "server", "main", "__main__", "mcp", "mcp_server", "service", "api"}


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
        "python",
        "python3",
        "node",
        "npx",
        "uvx",
        "uv",
        "bun",
        "deno",
        "pipx",
        "run",
        "-m",
        "-y",
        "tool",
    }
    for arg in argv:
        stem = Path(arg).name
        stem = re.sub(r"\.(py|js|mjs|ts)$", "", stem)
        if (arg.startswith("-") and arg not in ("-m",)) or stem in launchers or re.match(r"python\d", stem):
            continue
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
    if best is None:
        return ServerChoice(
            "example",
            {"app": f"{EXAMPLE_MODULE}:create_server"},
            f"no Python MCP server found here: wrote {EXAMPLE_MODULE}.py to start from",
            example=True,
            transport="in-memory",
            python=True,
        )
    if best.kind == "fastmcp":
        return ServerChoice(
            _server_name(best.module),
            {"command": ["fastmcp", "run", f"{best.path}:{best.attr}"]},
            f"found {best.attr} = FastMCP(...) in {best.path} (the fastmcp package: run over stdio with `fastmcp run`)",
        )
    what = f"def {best.attr}()" if best.kind == "factory" else f"{best.attr} = {best.call}(...)"
    if best.path.startswith("src/"):
        what += " (src layout: install the project, e.g. `pip install -e .`, so that it imports)"
    return ServerChoice(
        _server_name(best.module),
        {"app": best.spec},
        f"found {what} in {best.path}",
        transport="in-memory",
        python=True,
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
        lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def formatter_aliases(pyproject: Path) -> str:
    """`[tool.behave.formatters]` with mcp-bdd's `-f` aliases, unless the project has that table
    (TOML forbids a second one; its own aliases are kept). behave reads it from pyproject.toml only."""
    import tomllib

    from mcp_bdd.report.formatter import ALIASES

    try:
        behave = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("behave", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return ""  # _has_section reports an unreadable file
    if "formatters" in behave:
        return ""
    aliases = "".join(f"{alias} = {_toml(target)}\n" for alias, target in ALIASES.items())
    return "[tool.behave.formatters]   # behave -f living-doc ... (mcp-bdd's report formatters)\n" + aliases + "\n"


def example_feature(choice: ServerChoice) -> str:
    name = choice.name
    head = (
        "Feature: The MCP server answers\n"
        "  An example written by `mcp-bdd init`. Run it with `behave features/` or `mcp-bdd run`;\n"
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


def ci_workflow(choice: ServerChoice, has_pyproject: bool) -> str:
    install = "pip install mcp-bdd" + ("\n          pip install -e ." if has_pyproject else "")
    matrix = " --transport in-memory,stdio" if choice.python else ""
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
      - name: Install
        run: |
          python -m pip install --upgrade pip
          {install}
      - name: Acceptance tests
        run: mcp-bdd run{matrix}
      - name: Living documentation
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: living-doc
          path: reports/
"""


def init(root: Path, *, command: str | None, url: str | None, app: str | None, force: bool, out: Any = None) -> int:
    out = out or sys.stdout
    choice = choose_server(root, command, url, app)
    plans: list[FilePlan] = []
    pyproject = root / "pyproject.toml"
    toml_file = root / "mcp-bdd.toml"
    if toml_file.exists() or not pyproject.exists():
        plans.append(FilePlan(toml_file, config_text(choice, "")))
    else:
        plans.append(
            FilePlan(
                pyproject,
                formatter_aliases(pyproject) + config_text(choice, "tool.mcp-bdd."),
                mode="append",
                replace_section=_has_section(pyproject),
            )
        )
    plans += [
        FilePlan(root / "environment.py", ENVIRONMENT_PY),
        FilePlan(root / "steps" / "mcp_steps.py", STEPS_PY),
        FilePlan(root / "features" / "example.feature", example_feature(choice)),
        FilePlan(root / ".github" / "workflows" / "mcp-bdd.yml", ci_workflow(choice, pyproject.exists())),
    ]
    if choice.example:
        plans.append(FilePlan(root / f"{EXAMPLE_MODULE}.py", EXAMPLE_SERVER))
    print(f'mcp-bdd init: server "{choice.name}" — {choice.why}', file=out)
    _write_plans(plans, root, force, out)
    if (root / "features" / "environment.py").exists():
        print("  warning: features/environment.py exists; behave would use it instead of ./environment.py. "
              "Move its hooks into ./environment.py.", file=out)  # fmt: skip
    print("Next: behave features/   (or: mcp-bdd run --transport in-memory,stdio)", file=out)
    if not choice.example:
        print("Then: mcp-bdd scaffold   (starter features for every tool, resource and prompt)", file=out)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# scaffold


def _resolve(schema: dict[str, Any], root_schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root_schema
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


def placeholder(schema: dict[str, Any], root_schema: dict[str, Any] | None = None) -> Any:
    """A plausible value for a JSON Schema, for a table a human will edit."""
    root_schema = root_schema or schema
    schema = _resolve(schema, root_schema)
    for key in ("default", "const"):
        if key in schema and schema[key] is not None:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            return placeholder(options[0], root_schema)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer":
        if "minimum" in schema:
            return math.ceil(schema["minimum"])
        if "exclusiveMinimum" in schema:
            return math.floor(schema["exclusiveMinimum"]) + 1
        return 1
    if kind == "number":
        if "minimum" in schema:
            return schema["minimum"]
        if "exclusiveMinimum" in schema:
            return schema["exclusiveMinimum"] + 1
        return 1.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        count = int(schema.get("minItems", 1) or 1)
        return [placeholder(items or {"type": "string"}, root_schema) for _ in range(count)]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: placeholder(v, root_schema) for k, v in props.items() if k in (schema.get("required") or [])}
    text = _FORMATS.get(str(schema.get("format", "")), "example")
    min_length = int(schema.get("minLength", 0) or 0)
    return text + "x" * max(0, min_length - len(text))


def _cell(value: Any) -> str:
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


def _description(text: str | None, limit: int = 12) -> str:
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


def _one_line(text: Any, limit: int = 100) -> str:
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


def tool_feature(server: str, tool: dict[str, Any]) -> str:
    name = str(tool.get("name"))
    schema = tool.get("inputSchema") or {}
    props: dict[str, Any] = schema.get("properties") or {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    annotations = tool.get("annotations") or {}
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
        kind = _resolve(props.get(arg) or {}, schema).get("type")
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
        values = [_cell(placeholder(props.get(a) or {}, schema)) for a in required]
        text += _table(required, values, "      ")
    else:
        text += f'    When I call the tool "{name}"\n'
    text += "    Then the tool call succeeds\n"
    if tool.get("outputSchema"):
        text += "    And the result conforms to the tool's output schema\n"
        first = next(iter((tool["outputSchema"].get("properties") or {}).keys()), None)
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


def resource_feature(server: str, resource: dict[str, Any], read: dict[str, Any] | None) -> str:
    uri = str(resource.get("uri"))
    label = resource.get("title") or resource.get("name") or uri
    text = f'Feature: The resource "{_one_line(label, 80)}" ({uri})\n'
    text += _description(resource.get("description")) + "\n" + _background(server)
    text += "  Scenario: The resource is listed\n"
    text += "    When I list the resources\n"
    text += f'    Then the resources include "{uri}"\n\n'
    contents = (read or {}).get("contents") or []
    first = contents[0] if contents and isinstance(contents[0], dict) else {}
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


def template_feature(server: str, templates: Sequence[dict[str, Any]]) -> str:
    text = "Feature: Resource templates\n\n" + _background(server)
    text += "  Scenario: The resource templates are listed\n    When I list the resource templates\n"
    for i, template in enumerate(templates):
        keyword = "Then" if i == 0 else "And"
        text += f'    {keyword} the resource templates include "{template.get("uriTemplate")}"\n'
    return text


def prompt_feature(server: str, prompt: dict[str, Any]) -> str:
    name = str(prompt.get("name"))
    args = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and a.get("name")]
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


def feature_files(server: str, surface: dict[str, Any], out_dir: Path) -> tuple[list[Generated], list[str]]:
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
    reads: dict[str, Any] = surface.get("reads") or {}
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


def _read_surface(session: Any) -> dict[str, Any]:
    import mcp_types as types

    from mcp_bdd.errors import McpBddError

    caps = session.client.server_capabilities
    surface: dict[str, Any] = {"tools": [], "resources": [], "templates": [], "prompts": [], "reads": {}}
    if caps is None or caps.tools is not None:
        surface["tools"] = session.list_all("tools")
    if caps is not None and caps.resources is not None:
        surface["resources"] = session.list_all("resources")
        try:
            surface["templates"] = session.list_all("templates")
        except (McpBddError, AssertionError):
            surface["templates"] = []
        for resource in surface["resources"][:100]:
            uri = resource.get("uri")
            outcome = session.request(types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri)))
            if outcome.ok:
                surface["reads"][uri] = outcome.raw
    if caps is not None and caps.prompts is not None:
        surface["prompts"] = session.list_all("prompts")
    return surface


def scaffold(*, server: str | None, out_dir: Path, force: bool, transport: str | None, out: Any = None) -> int:
    from mcp_bdd.config import load_config, normalize_transport
    from mcp_bdd.probe import open_session

    out = out or sys.stdout
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
        who = f"{info.name} {info.version or ''}".strip() if info else name
    out_path = out_dir if out_dir.is_absolute() else root / out_dir
    files, skipped = feature_files(name, surface, out_path)
    print(
        f"mcp-bdd scaffold: {who} — {len(surface['tools'])} tools, {len(surface['resources'])} resources, "
        f"{len(surface['templates'])} resource templates, {len(surface['prompts'])} prompts",
        file=out,
    )
    _write_plans([FilePlan(f.path, f.text) for f in files], root, force, out)
    for note in skipped:
        print(f"  skipped    {note}", file=out)
    print(
        f"Scenarios tagged @wip need a human: fill in the arguments and expectations.\n"
        f'Run the rest now: behave --tags "not @wip" {_show(out_path, root)}',
        file=out,
    )
    return EXIT_OK
