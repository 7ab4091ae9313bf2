"""A project's own checks for the command: `mcp-bdd check --checks MODULE|FILE`.

Why: the check steps run a project's `@check` functions because behave imports the module that
registers them, but the command imports no project code, so `mcp-bdd check shop` in CI ran the
built-in checks only, and a gate a project had written for itself passed without it. `--checks`
names what to import: a module (`shop_checks`, found from the project root as an `app` module
is) or a Python file (`features/steps/shop_checks.py`, a steps module that registers checks
included). What it registers joins the registry beside the built-in checks, through the same
`@check`, so `--only`, `--skip`, `--list`, JSON and SARIF see it alike.

A source that cannot be imported, raises while it is, or registers no check is a usage error
(exit 2) naming it: a gate that silently left a project's checks out would pass on nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from mcp_bdd.check._registry import REGISTRY
from mcp_bdd.errors import UsageError, raised

__all__ = ["load_checks"]

#: files imported by `load_checks`, once each (executed again, their checks would be registered twice)
_FILES: dict[Path, ModuleType] = {}

_TIP = (
    "  Tip: --checks takes a module importable from the project root (shop_checks) or a Python file "
    "(features/steps/shop_checks.py) whose functions are registered with @check from mcp_bdd.check "
    "(docs/check.md)."
)


def load_checks(sources: Sequence[str], root: Path) -> list[str]:
    """Import each source (a module or a `.py` file, `root` on sys.path); the ids of the checks they
    registered, in order. Raises UsageError for a source that fails or registers nothing."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    added: list[str] = []
    for source in dict.fromkeys(sources):  # the same one twice is imported once
        before = set(REGISTRY)
        try:
            fresh = _import(source, root)
        except UsageError as exc:  # the source's, or @check's own complaint: a duplicate id, an unknown group
            raise UsageError(f"--checks {source}: {exc}") from None
        new = [id for id in REGISTRY if id not in before]
        if not new and fresh:  # one imported before registered its checks then
            raise UsageError(f"--checks {source}: importing it registered no check.\n{_TIP}")
        added += new
    return added


def _import(source: str, root: Path) -> bool:
    """Import `source`; whether it ran now (False: it had been imported before)."""
    if source.endswith(".py") or "/" in source or "\\" in source:
        return _import_file(source, root)
    if source in sys.modules:
        return False
    try:
        importlib.import_module(source)
        return True
    except ModuleNotFoundError as exc:
        if exc.name is not None and (source == exc.name or source.startswith(exc.name + ".")):
            raise UsageError(f'there is no module "{source}" under {root}.\n{_TIP}') from None
        raise _failed(exc) from None
    except UsageError:
        raise
    except Exception as exc:
        raise _failed(exc) from None


def _import_file(source: str, root: Path) -> bool:
    path = (root / source).resolve()
    if path in _FILES:
        return False
    if not path.is_file():
        raise UsageError(f"there is no file {path}.\n{_TIP}")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # its own helpers beside it, as behave finds a steps module's
    name = path.stem if path.stem not in sys.modules else f"{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path} cannot be imported as Python.\n{_TIP}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # what a dataclass or a pickle in it looks itself up by
    try:
        spec.loader.exec_module(module)
    except UsageError:
        raise
    except Exception as exc:
        del sys.modules[name]
        raise _failed(exc) from None
    _FILES[path] = module
    return True


def _failed(exc: BaseException) -> UsageError:
    return UsageError(f"importing it raised {raised(exc)}.\n  Tip: fix the module's top-level code where named.")
