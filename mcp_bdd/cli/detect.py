"""What kind of project `mcp-bdd init` is looking at — read statically, nothing is imported or run.

- Which MCP server it holds, and how it must be started:
  - a Python server on the 2.x SDK (`MCPServer`, low-level `Server`, a `create_server()` factory)
    or a fastmcp 4 object: an in-memory `app` (every transport works);
  - a Python server on the 1.x SDK (`from mcp.server.fastmcp import FastMCP`, the code of most
    tutorials) or on fastmcp < 4: it cannot share mcp-bdd's process (mcp-bdd needs mcp 2.x), so
    it is a `command` run by the project's own interpreter (.venv, uv, poetry);
  - a Node/TypeScript server (`@modelcontextprotocol/sdk` in package.json): `node <entry>`;
  - a Go module: `go run .`.
- Which folders behave will use for steps and hooks (`behave_layout`), following behave's own
  rule: from the first features path upwards, the first folder with `steps/` or
  `environment.py` — honouring `[tool.behave] paths`, `steps_dir` and `environment_file`.
- Where behave reads formatter aliases from (`formatter_config`).
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = [
    "Candidate",
    "Layout",
    "NodeProject",
    "ProjectPython",
    "behave_layout",
    "detect_server",
    "formatter_config",
    "go_module",
    "node_project",
    "project_python",
]

_SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", ".tox", ".nox", "node_modules", "__pycache__",
    "site-packages", "build", "dist", "features", "steps", "tests", "test", "reports", "docs",
}  # fmt: skip
_MAX_FILES = 2000
_MAX_DEPTH = 4


# ---------------------------------------------------------------------------------------------
# Python servers


@dataclass(frozen=True)
class Candidate:
    module: str
    attr: str
    path: str  # relative to the project root
    kind: str  # "factory" | "object"
    call: str = ""  # MCPServer | FastMCP | Server, for objects
    sdk: str = "v2"  # "v2" (in-process app) | "v1" (mcp<2) | "fastmcp" (the standalone package) | "fastmcp-old"
    has_main: bool = False  # `if __name__ == "__main__":` — `python file.py` starts it
    label: str = ""  # the name the server gives itself: FastMCP("weather") -> "weather"

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.attr}"

    @property
    def in_process(self) -> bool:
        """Whether it can run inside mcp-bdd's process (as an `app`) rather than as a command."""
        return self.sdk in ("v2", "fastmcp")


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


def _imported_modules(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def _first_string(node: ast.expr | None) -> str:
    """The first positional argument of a call, when it is a string literal (the server's name)."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) else ""
    return ""


def _has_main_guard(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            sides = [node.test.left, *node.test.comparators]
            if any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides):
                return True
    return False


_MCP_PIN = re.compile(
    r"""(?:^|["'\s,\[])mcp(?:\[[^\]]*\])?\s*(?=[<>=!~])[^"'\n;#]*?"""
    r"""(?:<\s*2(?:\.0)*(?![.\d])|==\s*1\.|~=\s*1\.|<=\s*1\.)""",
    re.M,
)


def _pins_mcp_v1(root: Path) -> bool:
    """The project's own dependency files pin the 1.x SDK (`mcp<2`, `mcp==1.*`, `mcp~=1.x`)."""
    for name in ("pyproject.toml", "requirements.txt", "requirements.in", "setup.cfg"):
        try:
            text = (root / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _MCP_PIN.search(text):
            return True
    return False


def _fastmcp_generation() -> str:
    """fastmcp 4 wraps the 2.x SDK and runs in-process; older fastmcp sits on mcp 1.x."""
    try:
        major = int(metadata.version("fastmcp").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return "fastmcp-old"  # not installed beside mcp-bdd: it cannot be imported here either
    return "fastmcp" if major >= 4 else "fastmcp-old"


def detect_server(root: Path) -> tuple[Candidate | None, list[Candidate]]:
    """The best candidate (a `create_server` factory first, then a server object) and all found."""
    found: list[tuple[int, int, Candidate]] = []
    pinned_v1 = _pins_mcp_v1(root)
    for file in _python_files(root):
        parsed = _server_module(root, file)
        if parsed is None:
            continue
        tree, imported, rel = parsed
        found += _candidates_in(tree, rel, _sdk_of(imported, pinned_v1))
    found.sort(key=lambda item: (item[0], item[1], item[2].path, item[2].attr))
    candidates = [c for _, _, c in found]
    return (candidates[0] if candidates else None), candidates


def _server_module(root: Path, file: Path) -> tuple[ast.Module, set[str], Path] | None:
    """(its syntax tree, the modules it imports, its path under `root`) for a Python file that may
    define an MCP server (it imports mcp or fastmcp), else None."""
    try:
        if file.stat().st_size > 1_000_000:
            return None
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "Server" not in source and "FastMCP" not in source and "create_server" not in source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    rel = file.relative_to(root)
    imported = _imported_modules(tree)
    if _module_name(rel) is None or not {name.split(".")[0] for name in imported} & {"mcp", "fastmcp"}:
        return None
    return tree, set(imported), rel


def _sdk_of(imported: set[str], pinned_v1: bool) -> str:
    """Which SDK a server module is written for: fastmcp's generation, the 1.x SDK, or 2.x."""
    tops = {name.split(".")[0] for name in imported}
    if "fastmcp" in tops and "mcp" not in tops:
        return _fastmcp_generation()
    if pinned_v1 or any(name == "mcp.server.fastmcp" or name.startswith("mcp.server.fastmcp.") for name in imported):
        return "v1"
    return "v2"


def _candidates_in(tree: ast.Module, rel: Path, sdk: str) -> list[tuple[int, int, Candidate]]:
    """(rank, depth, candidate) for each `create_server` factory and server object at a module's top level."""
    module = _module_name(rel)
    assert module is not None
    depth, main = len(rel.parts), _has_main_guard(tree)
    found: list[tuple[int, int, Candidate]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "create_server":
            found.append((0, depth, Candidate(module, node.name, rel.as_posix(), "factory", sdk=sdk, has_main=main)))
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        call = _call_name(value) if value is not None else ""
        if call in ("MCPServer", "FastMCP", "Server"):
            label = _first_string(value)
            for target in targets:
                if isinstance(target, ast.Name):
                    candidate = Candidate(module, target.id, rel.as_posix(), "object", call, sdk, main, label)
                    found.append((1, depth, candidate))
    return found


@dataclass(frozen=True)
class ProjectPython:
    argv: list[str]  # the interpreter, as a command prefix: [".venv/bin/python"] or ["uv", "run", "python"]
    why: str
    found: bool  # False: no project environment was found, `python3` from PATH is a guess


def project_python(root: Path) -> ProjectPython:
    """The interpreter the project's own server runs with (its venv), as a relative command."""
    for folder in (".venv", "venv", "env"):
        if (root / folder / "bin" / "python").exists() and (root / folder / "pyvenv.cfg").exists():
            return ProjectPython([f"{folder}/bin/python"], f"the project's own {folder}", True)
    if (root / "uv.lock").exists():
        return ProjectPython(["uv", "run", "--frozen", "python"], "uv.lock: the project's uv environment", True)
    if (root / "poetry.lock").exists():
        return ProjectPython(["poetry", "run", "python"], "poetry.lock: the project's poetry environment", True)
    return ProjectPython(["python3"], "no project environment found (.venv, venv, uv.lock, poetry.lock)", False)


def python_command(root: Path, candidate: Candidate) -> list[str]:
    """How to start a Python server that must run in its own interpreter, over stdio."""
    python = project_python(root).argv
    if candidate.has_main:
        return [*python, candidate.path]
    # FastMCP (SDK 1.x and the fastmcp package alike) runs over stdio by default
    call = f"{candidate.attr}()" if candidate.kind == "factory" else candidate.attr
    return [*python, "-c", f"from {candidate.module} import {candidate.attr}; {call}.run()"]


# ---------------------------------------------------------------------------------------------
# Node and Go servers


@dataclass(frozen=True)
class NodeProject:
    name: str
    command: list[str]
    entry: str
    built: bool  # the entry file exists (a TypeScript project may need `npm run build` first)
    has_build: bool  # package.json has a "build" script
    has_lock: bool  # package-lock.json: `npm ci` works


_MCP_NPM = ("@modelcontextprotocol/sdk", "fastmcp", "mcp-framework")


def node_project(root: Path) -> NodeProject | None:
    """A Node/TypeScript MCP server: package.json depends on an MCP SDK and says how to start."""
    try:
        package = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(package, dict):
        return None
    deps: dict[str, object] = {}
    for key in ("dependencies", "devDependencies"):
        if isinstance(package.get(key), dict):
            deps.update(package[key])
    if not any(name in deps for name in _MCP_NPM):
        return None
    scripts: dict[str, object] = package["scripts"] if isinstance(package.get("scripts"), dict) else {}
    entry = _node_entry(root, package, scripts)
    if entry is None:
        return None
    raw_name = str(package.get("name") or root.name)
    return NodeProject(
        name=raw_name.split("/")[-1],
        command=["node", entry],
        entry=entry,
        built=(root / entry).exists(),
        has_build="build" in scripts,
        has_lock=(root / "package-lock.json").exists(),
    )


def _node_entry(root: Path, package: dict[str, object], scripts: dict[str, object]) -> str | None:
    bin_field = package.get("bin")
    if isinstance(bin_field, str):
        return _rel(bin_field)
    if isinstance(bin_field, dict) and bin_field:
        return _rel(str(next(iter(bin_field.values()))))
    start = scripts.get("start")
    if isinstance(start, str):
        try:
            argv = shlex.split(start)
        except ValueError:
            argv = []
        if len(argv) >= 2 and argv[0] == "node":
            return _rel(next(a for a in argv[1:] if not a.startswith("-")))
    main = package.get("main")
    if isinstance(main, str):
        return _rel(main)
    for guess in ("index.js", "server.js", "build/index.js", "dist/index.js", "src/index.js"):
        if (root / guess).exists():
            return guess
    return None


def _rel(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def go_module(root: Path) -> str | None:
    """The module name of a Go project (go.mod), whose main package `go run .` starts."""
    try:
        text = (root / "go.mod").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "modelcontextprotocol" not in text and "mcp-go" not in text:
        return None
    match = re.search(r"^module\s+(\S+)", text, re.M)
    return match.group(1) if match else None


# ---------------------------------------------------------------------------------------------
# behave's layout and configuration files

#: behave reads these in this order; a later file's values replace an earlier one's — including
#: its formatter aliases, which an .ini/.cfg file resets even when it has no behave section.
_BEHAVE_FILES = ("pyproject.toml", "tox.ini", "setup.cfg", ".behaverc", "behave.ini")


def _behave_settings(root: Path) -> dict[str, object]:
    """The behave settings of the project's config files that decide its layout."""
    settings: dict[str, object] = {}
    for name in _BEHAVE_FILES:
        path = root / name
        if not path.is_file():
            continue
        if name == "pyproject.toml":
            try:
                section = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("behave", {})
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if isinstance(section, dict):
                settings.update({k: section[k] for k in ("paths", "steps_dir", "environment_file") if k in section})
            continue
        parser = configparser.ConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section("behave"):
            for key in ("paths", "steps_dir", "environment_file"):
                if parser.has_option("behave", key):
                    value = parser.get("behave", key)
                    settings[key] = value.split() if key == "paths" else value.strip()
    return settings


@dataclass(frozen=True)
class Layout:
    features: Path  # where the feature files are (the first behave path)
    base: Path  # where behave loads steps/ and environment.py from
    steps_dir: str
    environment_file: str
    why: str

    @property
    def steps(self) -> Path:
        return self.base / self.steps_dir

    @property
    def environment(self) -> Path:
        return self.base / self.environment_file


def behave_layout(root: Path) -> Layout:
    """Where behave will look for steps and hooks in this project (its own search, statically)."""
    settings = _behave_settings(root)
    paths = settings.get("paths") or ["features"]
    first = paths[0] if isinstance(paths, list) and paths else "features"
    features = (root / str(first)).resolve()
    if features.suffix == ".feature":
        features = features.parent
    steps_dir = str(settings.get("steps_dir") or "steps")
    environment_file = str(settings.get("environment_file") or "environment.py")
    configured = "paths" in settings
    root = root.resolve()
    folder = features
    while True:
        if (folder / steps_dir).is_dir() or (folder / environment_file).is_file():
            found = "steps/" if (folder / steps_dir).is_dir() else environment_file
            where = "the project root" if folder == root else _show(folder, root) + "/"
            return Layout(features, folder, steps_dir, environment_file, f"behave uses {where} (found {found} there)")
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    why = "a new project: steps/ and environment.py beside features/"
    if configured:
        why = f"[tool.behave] paths = {first!r}: " + why
    return Layout(features, root, steps_dir, environment_file, why)


def _show(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def formatter_config(root: Path) -> Path:
    """The file behave takes formatter aliases from: the last one it reads, else a new behave.ini.

    pyproject.toml only counts when no .ini/.cfg file is there to reset its aliases.
    """
    existing = [root / name for name in _BEHAVE_FILES if (root / name).is_file()]
    if existing:
        return existing[-1]
    return root / "behave.ini"


# ---------------------------------------------------------------------------------------------
# what CI must install: the project's own requirements, and mcp-bdd as it is installed here

_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalized (PEP 503): "FastMCP[cli]>=4" -> "fastmcp"."""
    match = _REQUIREMENT_NAME.match(requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def _pyproject_dependencies(root: Path) -> list[str]:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    deps = data.get("project", {}).get("dependencies", [])
    return [str(d) for d in deps] if isinstance(deps, list) else []


def _requirements_file(root: Path) -> list[str]:
    try:
        lines = (root / "requirements.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [line for line in lines if line.strip() and not line.lstrip().startswith(("#", "-"))]


def project_requirements(root: Path, candidate: Candidate | None) -> list[str]:
    """pip arguments for what the project's server needs, read statically.

    requirements.txt when there is one; the project itself (`-e .`) only when its server lives in
    a src/ layout, which must be installed to import; else `[project] dependencies` as they are —
    `pip install .` of a flat folder fails (no setup.py, or setuptools finding `features` and
    `steps` as packages), and nothing else needs it: the server runs from the project root.
    Then the SDK the code is written for, when no requirement names it (the code imports it,
    the environment it was written in had it, and the runner's has not).
    """
    args: list[str] = []
    declared = _requirements_file(root) + _pyproject_dependencies(root)
    if (root / "requirements.txt").is_file():
        args += ["-r", "requirements.txt"]
    if candidate is not None and candidate.path.startswith("src/"):
        args += ["-e", "."]
    elif not (root / "requirements.txt").is_file():
        args += _pyproject_dependencies(root)
    needed = _sdk_requirement(candidate)
    if needed and _name(needed) not in {_name(d) for d in declared}:
        args.append(needed)
    return args


def _sdk_requirement(candidate: Candidate | None) -> str:
    if candidate is None:
        return ""
    if candidate.sdk == "fastmcp":  # the version init found beside mcp-bdd, where it ran in-process
        return f"fastmcp=={metadata.version('fastmcp')}"
    return {"v1": "mcp<2", "fastmcp-old": "fastmcp<4"}.get(candidate.sdk, "")


@dataclass(frozen=True)
class Install:
    """How to install mcp-bdd the way it is installed here, for a CI runner."""

    args: list[str]  # pip arguments
    how: str  # where this install came from: "an editable install of the clone at /src/mcp-bdd"
    advice: str = ""  # why a hosted runner may not have it ("" when it has whatever the checkout has)


#: How to point a workflow at a copy of mcp-bdd that a hosted runner can install.
COPIES = (
    "a clone checked out in an earlier step:  pip install -e path/to/mcp-bdd",
    "a wheel committed to this repository:    pip install ./wheels/mcp_bdd-<version>-py3-none-any.whl",
    'a VCS URL:   pip install "mcp-bdd @ git+https://github.com/<owner>/mcp-bdd@<commit>"',
)
_ON_THIS_MACHINE = "{} is on this machine only: on a hosted runner, point this at your copy instead"


def mcp_bdd_install(root: Path) -> Install:
    """mcp-bdd is not on PyPI yet: `pip install mcp-bdd` fails. pip records where an install came
    from in the distribution's direct_url.json (PEP 610): a folder (editable or not), a file or
    URL (a wheel), or a VCS URL at a commit."""
    found = list(metadata.distributions(name="mcp-bdd"))
    if not found:
        return Install(["mcp-bdd"], "not as a package", "Point this at your copy")
    # a clone's own mcp_bdd.egg-info (a build's by-product) may come first on sys.path: it says nothing
    recorded = [d for d in found if d.read_text("direct_url.json")]
    return install_of((recorded or found)[0], root)


def install_of(dist: metadata.Distribution, root: Path) -> Install:
    """`dist`'s install as pip arguments (see mcp_bdd_install)."""
    try:
        data = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return Install([f"mcp-bdd=={dist.version}"], f"mcp-bdd {dist.version} from a package index",
                       "If the runner's index has no mcp-bdd, point this at your copy instead")  # fmt: skip
    url: str = data["url"]
    vcs_info = data.get("vcs_info")
    if isinstance(vcs_info, dict):
        return _vcs_install(url, data, vcs_info)
    local = _file_path(url)
    if local is None:  # an archive from a URL
        return Install([f"mcp-bdd @ {url}"], f"from {url}")
    shown, inside = _project_path(local, root)
    advice = "" if inside else _ON_THIS_MACHINE.format(local)
    if isinstance(data.get("archive_info"), dict):
        return Install([shown], f"from the file {local}", advice)
    if (data.get("dir_info") or {}).get("editable"):
        return Install(["-e", shown], f"an editable install of the clone at {local}", advice)
    return Install([shown], f"from the folder {local}", advice)


def _vcs_install(url: str, data: dict[str, object], info: dict[str, object]) -> Install:
    """`info`: `data`'s vcs_info."""
    revision = str(info.get("commit_id") or info.get("requested_revision") or "")
    spec = f"mcp-bdd @ {info.get('vcs', 'git')}+{url}" + (f"@{revision}" if revision else "")
    if data.get("subdirectory"):
        spec += f"#subdirectory={data['subdirectory']}"
    asked = f" (asked for {info['requested_revision']})" if info.get("requested_revision") else ""
    advice = _ON_THIS_MACHINE.format(url) if url.startswith("file:") else ""
    return Install([spec], f"from {url} at {revision[:12]}{asked}", advice)


def _file_path(url: str) -> Path | None:
    from urllib.parse import unquote, urlparse
    from urllib.request import url2pathname

    parsed = urlparse(url)
    return Path(url2pathname(unquote(parsed.path))) if parsed.scheme == "file" else None


def _project_path(path: Path, root: Path) -> tuple[str, bool]:
    """`path` for a pip command run in the project root: relative (`./wheels/x.whl`) when inside it,
    so that it works in any checkout; and whether it is."""
    try:
        return "./" + path.resolve().relative_to(root.resolve()).as_posix(), True
    except ValueError:
        return str(path), False
