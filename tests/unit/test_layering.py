"""The layering of ARCHITECTURE.md, checked on the source (every import, module level or not).

An equivalent of import-linter's contracts, in a page: each module imports only the mcp_bdd
modules its row of ARCHITECTURE.md's table allows (the test reads the table); no import circles
inside `mcp_bdd`; pure
modules import neither behave nor the MCP SDK; the report never reaches into steps, sessions or
servers; private SDK internals only through `mcp_bdd._sdk`; the scripts that start in
milliseconds load the stdlib alone.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_bdd"

#: modules that must stay importable without behave and without the MCP SDK
PURE = {
    "mcp_bdd.errors",
    "mcp_bdd.secrets",
    "mcp_bdd.variables",
    "mcp_bdd.matchers",
    "mcp_bdd.transcript",
    "mcp_bdd.config",
    "mcp_bdd._process_tree",
    "mcp_bdd._logs",
    "mcp_bdd.servers._keeper",
    "mcp_bdd.servers._lifeline",
}
#: the keeper and the lifeline run as scripts (`python -I -S`, started in milliseconds), and load
#: `_process_tree` by its path: all three load the stdlib alone, without typing
SCRIPTS = ("mcp_bdd._process_tree", "mcp_bdd.servers._keeper", "mcp_bdd.servers._lifeline")
#: what a script may import as it loads: the stdlib, less `typing` (milliseconds at every start)
STDLIB = frozenset(sys.stdlib_module_names) - {"typing"}
#: the report is a formatter over a typed model: it reads attachments, never the live machinery
REPORT_MAY_NOT = ("mcp_bdd.steps", "mcp_bdd.session", "mcp_bdd.servers", "mcp_bdd.runtime", "mcp", "mcp_types")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every module `name` imports, at any depth of its code (TYPE_CHECKING blocks included)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for target in _imports(name, path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("mcp_bdd"):
                edges.add(target)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_the_checker_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_pure_modules_import_neither_behave_nor_the_sdk() -> None:
    modules = _modules()
    bad = {
        name: sorted(t for t in _imports(name, modules[name]) if t.split(".")[0] in ("behave", "mcp", "mcp_types"))
        for name in PURE
    }
    assert {k: v for k, v in bad.items() if v} == {}


def _loading_imports(body: list[ast.stmt]) -> set[str]:
    """The top-level modules a module's body imports as it loads: not in functions or classes,
    nor under `if TYPE_CHECKING:` (mypy's alone)."""
    found: set[str] = set()
    for node in body:
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.If):
            checking = isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            found |= _loading_imports(node.orelse if checking else node.body + node.orelse)
        elif isinstance(node, ast.Try | ast.With):
            found |= _loading_imports(node.body)
    return found


def test_the_scripts_load_the_stdlib_alone() -> None:
    modules = _modules()
    bad = {
        name: sorted(m for m in _loading_imports(ast.parse(modules[name].read_text()).body) if m not in STDLIB)
        for name in SCRIPTS
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_script_check_would_see_a_package_or_typing() -> None:
    source = "import os\nif TYPE_CHECKING:\n    import psutil\nelse:\n    import typing\ndef f():\n    import mcp\n"
    assert sorted(m for m in _loading_imports(ast.parse(source).body) if m not in STDLIB) == ["typing"]


def test_the_report_never_imports_steps_sessions_servers_or_the_sdk() -> None:
    modules = _modules()
    bad = {
        name: sorted(t for t in _imports(name, path) if any(t == p or t.startswith(p + ".") for p in REPORT_MAY_NOT))
        for name, path in modules.items()
        if name.startswith("mcp_bdd.report")
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_private_sdk_internals_only_through_the_sdk_module() -> None:
    modules = _modules()
    bad = {
        name: sorted(t for t in _imports(name, path) if t.startswith("mcp.") and "._" in t)
        for name, path in modules.items()
        if name != "mcp_bdd._sdk"
    }
    assert {k: v for k, v in bad.items() if v} == {}


ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
_ROW = re.compile(r"^\| (`[^|]+?) \| [^\n]* \| ([^|]*) \|$", re.M)


def _unit(module: str) -> str:
    """A module's row in the table: its top-level module or package under mcp_bdd."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "mcp_bdd"


def _rows() -> list[tuple[list[str], set[str] | None]]:
    """ARCHITECTURE.md's module table in its order: (the units of a row, what they may import; None: any)."""
    rows = []
    for names, may in _ROW.findall(ARCHITECTURE.read_text()):
        allowed = None if may.strip() == "everything" else {n.rstrip("/") for n in re.findall(r"`([^`]+)`", may)}
        rows.append(([n.rstrip("/") for n in re.findall(r"`([^`]+)`", names)], allowed))
    return rows


def _table() -> dict[str, set[str] | None]:
    """ARCHITECTURE.md's module table: each unit -> the units its row lets it import (None: any)."""
    rules: dict[str, set[str] | None] = {}
    for names, may in _ROW.findall(ARCHITECTURE.read_text()):
        allowed = None if may.strip() == "everything" else {n.rstrip("/") for n in re.findall(r"`([^`]+)`", may)}
        for name in re.findall(r"`([^`]+)`", names):
            rules[name.rstrip("/")] = allowed
    return rules


def test_each_module_imports_only_what_its_row_in_architecture_md_allows() -> None:
    """The table's "May import" column is the contract, not a description that drifts."""
    rules = _table()
    actual: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        actual.setdefault(_unit(module), set()).update(_unit(t) for t in targets)
    missing = sorted(unit for unit in actual if unit not in rules)
    assert not missing, f"modules with no row in ARCHITECTURE.md: {missing}"
    extra = {
        unit: sorted(used - allowed - {unit})
        for unit, used in actual.items()
        if (allowed := rules[unit]) is not None and used - allowed - {unit}
    }
    assert extra == {}, f"imports that ARCHITECTURE.md's table does not allow: {extra}"


def test_the_table_check_would_see_a_forbidden_import() -> None:
    rules = _table()
    assert rules["secrets"] == set() and "session" not in (rules["report"] or set())
    assert rules["cli"] is None and rules["servers"] is not None and "_sdk" in rules["servers"]


def test_the_table_is_an_order_each_row_imports_only_rows_above_it() -> None:
    """The layers as floors (what import-linter's `layers` contract says): a row names only rows
    above it, or its own, so no two units ever import each other, even through others."""
    seen: set[str] = set()
    upward: dict[str, list[str]] = {}
    for units, allowed in _rows():
        if allowed is not None and (later := sorted(allowed - seen - set(units))):
            upward[", ".join(units)] = later
        seen.update(units)
    assert upward == {}, f"rows of ARCHITECTURE.md that name rows below them: {upward}"


def test_the_order_check_would_see_a_row_that_names_a_row_below_it() -> None:
    rows = _rows()
    names = [units[0] for units, _ in rows]
    assert names.index("secrets") < names.index("errors") < names.index("session") < names.index("steps")
