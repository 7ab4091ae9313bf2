"""Per-scenario fake dependencies of the server under test: HTTP services, databases, a workspace, user fakes.

A fake is created on its first reference — a step, a `${fake.<name>.<attr>}` placeholder (in
server configuration or a step), or a parameter of an app factory (`Fakes.inject`) — and lives
until the scenario ends (`Fakes.close`, called by the `after_scenario` hook).

Kinds: "http" (`FakeHttpService`), "database" (`FakeDatabase`, SQLite), "workspace" (`FakeWorkspace`),
"postgres" (`FakePostgres`, a real PostgreSQL database per scenario; `pip install mcp-bdd[postgres]`),
"oauth" (`FakeAuthServer`, an OAuth authorization server issuing signed JWT access tokens),
or the name of a user fake registered with `@fake("name")`. Built-in kinds register through the
same registry as users' fakes (`_register`), so there is one way to create, inject and tear down
a fake of any kind:

    @fake("queue")
    def queue(ctx: FakeContext) -> Iterator[MemoryQueue]:
        q = MemoryQueue(ctx.tmpdir)   # setup
        yield q                       # the object placeholders read: ${fake.queue.url} -> str(q.url)
        q.close()                     # cleanup, when the scenario ends

The kind of a fake nobody has declared is inferred from the placeholder that first names it:
`workspace` -> workspace, a registered user fake -> that fake, `.url` -> HTTP service,
`.path` -> database. `[tool.mcp-bdd.fakes]` declares the others (`shop = "database"`), with
options when the kind takes some (`shopdb = { kind = "postgres", schema = "db/schema.sql" }`).

Some fakes share one expensive resource across the run (one PostgreSQL server, many databases):
`FakeContext.shared(key, start)` starts it once, and `close_shared()` (called when the run ends)
stops it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import inspect
import os
import re
import threading
import typing
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Never, NoReturn, Protocol, TypeVar

from anyio.from_thread import BlockingPortal

from mcp_bdd._text import did_you_mean
from mcp_bdd.errors import FakeReplaced, McpBddError, ServerStartError, UsageError, raised
from mcp_bdd.fakes._database import FakeDatabase, TableStore
from mcp_bdd.fakes._deadline import Stalled, within
from mcp_bdd.fakes._http import METHODS, FakeHttpService, ReceivedRequest, Stub
from mcp_bdd.fakes._oauth import FakeAuthServer, IssuedToken
from mcp_bdd.fakes._postgres import FakePostgres, PostgresCluster
from mcp_bdd.fakes._process import FakeProcess, SlowStop, start, stop_all
from mcp_bdd.fakes._workspace import FakeWorkspace
from mcp_bdd.transcript import Transcript

__all__ = [
    "BUILTIN_KINDS",
    "METHODS",
    "FakeAuthServer",
    "FakeContext",
    "FakeDatabase",
    "FakeHttpService",
    "FakeKind",
    "FakePostgres",
    "FakeProcess",
    "FakeWorkspace",
    "Fakes",
    "IssuedToken",
    "ReceivedRequest",
    "Stub",
    "TableStore",
    "close_shared",
    "fake",
    "registered_fakes",
]

F = TypeVar("F", bound=Callable[..., object])

# No dots: `${fake.<name>.<attr>}` splits on them.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


# ------------------------------------------------------------------------------------------------
# User fakes: decorator + registry
# ------------------------------------------------------------------------------------------------


class _Closable(Protocol):
    def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)
_SHARED: dict[str, _Closable] = {}
_SHARED_LOCK = threading.Lock()
#: processes started while a run-wide resource starts (`FakeContext.shared`): they live as long as it
_RUN_PROCESSES: list[FakeProcess] = []
_STARTING_SHARED = threading.local()


@dataclass(frozen=True)
class FakeContext:
    """What a fake's factory gets: its name, a directory of its own, the run's portal, the transcript, options."""

    name: str
    tmpdir: Path  # created for this fake inside the scenario's temp dir; removed with it
    portal: BlockingPortal  # the run's event loop, e.g. portal.wrap_async_context_manager(...)
    transcript: Transcript
    #: the fake's table in [tool.mcp-bdd.fakes] less `kind` (e.g. {"schema": "db/schema.sql"})
    options: Mapping[str, Any] = field(default_factory=dict)
    #: the directory relative paths in `options` are read from (the configuration file's folder)
    root: Path = field(default_factory=Path.cwd)
    #: the run's temp dir (outlives the scenario): where run-wide resources keep their files
    run_dir: Path | None = None
    #: what `start_process` started, stopped when the fake ends (after its own cleanup)
    _processes: list[FakeProcess] = field(default_factory=list, repr=False, compare=False)

    def start_process(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> FakeProcess:
        """Start a process the fake needs (a service binary, a stub in another language), owned by
        mcp-bdd as a server is: stopped right after the fake's cleanup, whatever that did (SIGTERM
        to its process group, SIGKILL 2 s later, then whatever it started), and with the run even
        on `kill -9` of behave. `argv` is the command (no shell); `env` is added to the inherited
        environment; `cwd`, as a server's, is read from the configuration's folder (the default).
        Its stdout and stderr go to a log in `tmpdir`. Call it from behave's thread (the fake's
        setup, or a step). See `FakeProcess.wait_for_port`."""
        run_wide = getattr(_STARTING_SHARED, "active", False)  # for `shared`: stopped when the run ends
        return start(
            self.name,
            argv,
            directory=self.tmpdir,
            root=self.root,
            transcript=self.transcript,
            processes=_RUN_PROCESSES if run_wide else self._processes,
            env=env,
            cwd=cwd,
        )

    def record(self, method: str, payload: object = None) -> None:
        """Show traffic of this fake in the scenario's transcript (and so in the report)."""
        self.transcript.record("fake", self.name, method, payload)

    def shared(self, key: str, start: Callable[[Path], _C]) -> _C:
        """A resource shared by every scenario of the run (one database server, many databases).

        Started by `start(directory)` on first use, in a directory of the run's temp dir; stopped
        by `close_shared()` when the run ends (and at interpreter exit, as a last resort), and with
        it the processes `start` started with `start_process`.
        """
        with _SHARED_LOCK:
            found = _SHARED.get(key)
            if found is None:
                directory = (self.run_dir or self.tmpdir.parent) / f"shared-{key}"
                directory.mkdir(parents=True, exist_ok=True)
                before = len(_RUN_PROCESSES)
                _STARTING_SHARED.active = True
                try:
                    found = start(directory)
                except BaseException:
                    with contextlib.suppress(SlowStop):  # a resource that failed keeps no process
                        stop_all(_RUN_PROCESSES[before:], self.transcript)
                    del _RUN_PROCESSES[before:]
                    raise
                finally:
                    _STARTING_SHARED.active = False
                _SHARED[key] = found
        typed: _C = found  # type: ignore[assignment]
        return typed


def close_shared() -> list[str]:
    """Stop every run-wide resource of the fakes (in reverse start order); never raises."""
    problems: list[str] = []
    with _SHARED_LOCK:
        items = list(_SHARED.items())
        _SHARED.clear()
    for key, resource in reversed(items):
        try:
            resource.close()
        except Exception as exc:  # the others must still stop
            problems.append(f"shared fake resource {key!r}: {type(exc).__name__}: {exc}")
    try:
        stop_all(_RUN_PROCESSES, None)  # after the resources: a close may still talk to its process
    except SlowStop as exc:
        problems.append(f"shared fake resources: {exc}")
    return problems


atexit.register(close_shared)


@dataclass(frozen=True)
class FakeKind:
    """One kind of fake in the registry: how to make one, and what it offers to placeholders."""

    name: str
    factory: Callable[[FakeContext], object]  # the fake's object, or a generator that yields it
    label: str  # "HTTP service", "database": how messages name a fake of this kind
    #: documented `${fake.<name>.<attr>}` attributes; () = any public attribute of the object
    attrs: tuple[str, ...] = ()
    #: the class of its objects, for app-factory parameters annotated with it (built-ins)
    cls: type[object] | None = None
    #: a step family it can stand in for: a "postgres" fake serves the "database" steps
    family: str | None = None
    #: option keys its [tool.mcp-bdd.fakes] table may set
    options: tuple[str, ...] = ()
    builtin: bool = False


_REGISTRY: dict[str, FakeKind] = {}


def _register(kind: FakeKind) -> None:
    _REGISTRY[kind.name] = kind


def _label(kind: str) -> str:
    found = _REGISTRY.get(kind)
    return found.label if found is not None and found.builtin else f'"{kind}" fake'


def _a(kind: str) -> str:
    """`_label` with its article: "an HTTP service", "a database"."""
    return ("an " if kind in ("http", "oauth") else "a ") + _label(kind)


def _serves(kind: str, wanted: str) -> bool:
    """Can a fake of `kind` be used where a step wants `wanted` (itself, or the family it belongs to)?"""
    found = _REGISTRY.get(kind)
    return kind == wanted or (found is not None and found.family == wanted)


def fake(name: str) -> Callable[[F], F]:
    """Register a user fake: a generator function (setup, `yield obj`, cleanup) or a function returning obj.

    Registering a name again replaces the earlier factory (behave re-executes step modules).
    """
    if not _NAME.fullmatch(name):
        raise UsageError(
            f'"{name}" cannot name a fake: use letters, digits, "_" and "-" (no dots), '
            "as it appears in ${fake.<name>.<attr>}."
        )
    builtins = [k.name for k in _REGISTRY.values() if k.builtin]
    if name in builtins:
        raise UsageError(f'"{name}" is a built-in kind of fake ({", ".join(builtins)}); pick another name.')

    def register(func: F) -> F:
        if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
            raise UsageError(
                f'The fake "{name}" ({func.__qualname__}) is async; fakes are plain functions or generators. '
                "Tip: run async setup through ctx.portal, e.g. "
                "obj = ctx.portal.call(start) or ctx.portal.wrap_async_context_manager(cm)."
            )
        _register(FakeKind(name, func, f'"{name}" fake'))
        return func

    return register


def registered_fakes() -> dict[str, Callable[[FakeContext], object]]:
    """Name -> factory of every user fake registered so far."""
    return {k.name: k.factory for k in _REGISTRY.values() if not k.builtin}


def _builtin_kinds() -> dict[str, FakeKind]:
    return {k.name: k for k in _REGISTRY.values() if k.builtin}


# ------------------------------------------------------------------------------------------------
# Built-in kinds: registered like users' fakes


def _http(ctx: FakeContext) -> Iterator[FakeHttpService]:
    service = FakeHttpService(ctx.name, portal=ctx.portal, transcript=ctx.transcript)
    yield service
    service.close()


def _database(ctx: FakeContext) -> Iterator[FakeDatabase]:
    db = FakeDatabase(ctx.name, path=ctx.tmpdir.parent / f"{ctx.name}.sqlite3", transcript=ctx.transcript)
    yield db
    db.close()


def _workspace(ctx: FakeContext) -> Iterator[FakeWorkspace]:
    workspace = FakeWorkspace(ctx.name, path=ctx.tmpdir, transcript=ctx.transcript)
    yield workspace
    workspace.close()


def _postgres(ctx: FakeContext) -> Iterator[FakePostgres]:
    cluster = ctx.shared("postgres", PostgresCluster.start)
    db = FakePostgres.create(ctx.name, cluster, options=ctx.options, root=ctx.root, transcript=ctx.transcript)
    yield db
    db.close()


_register(FakeKind("http", _http, "HTTP service", FakeHttpService.ATTRS, FakeHttpService, builtin=True))
_register(FakeKind("database", _database, "database", FakeDatabase.ATTRS, FakeDatabase, builtin=True))
_register(FakeKind("workspace", _workspace, "workspace", FakeWorkspace.ATTRS, FakeWorkspace, builtin=True))
_register(
    FakeKind(
        "postgres",
        _postgres,
        "PostgreSQL database",
        FakePostgres.ATTRS,
        FakePostgres,
        family="database",
        options=FakePostgres.OPTIONS,
        builtin=True,
    )
)


def _oauth(ctx: FakeContext) -> Iterator[FakeAuthServer]:
    server = FakeAuthServer(ctx.name, transcript=ctx.transcript, options=ctx.options)
    yield server
    server.close()


_register(
    FakeKind(
        "oauth",
        _oauth,
        "OAuth authorization server",
        FakeAuthServer.ATTRS,
        FakeAuthServer,
        options=FakeAuthServer.OPTIONS,
        builtin=True,
    )
)


def _real(ctx: FakeContext) -> NoReturn:
    raise FakeReplaced(f'The fake "{ctx.name}" is replaced by a real dependency; it cannot be created.')


# A profile's `replace.<name>` declares the fake as "real": placeholders read the given values.
_register(FakeKind("real", _real, "real dependency", builtin=True))

#: kind -> the class of built-in fakes
BUILTIN_KINDS: dict[str, type[object]] = {k.name: k.cls for k in _REGISTRY.values() if k.cls is not None}


# ------------------------------------------------------------------------------------------------
# One scenario's fakes
# ------------------------------------------------------------------------------------------------


@dataclass
class _Entry:
    name: str
    kind: str
    obj: object
    teardown: Callable[[], None] | None = None
    attrs: tuple[str, ...] = field(default=())


class _Declared(Protocol):
    """A fake's table in [tool.mcp-bdd.fakes] (`config.FakeSpec`): its kind and options."""

    @property
    def kind(self) -> str: ...
    @property
    def options(self) -> Mapping[str, object]: ...
    @property
    def root(self) -> str: ...
    @property
    def profile(self) -> str | None: ...


class Fakes:
    """The fakes of one scenario, created on first reference and closed together at its end."""

    def __init__(
        self,
        *,
        portal: BlockingPortal,
        transcript: Transcript,
        tmpdir: Path,
        declared: Mapping[str, str | _Declared] | None = None,
        run_dir: Path | None = None,
        limit: float | None = None,
    ) -> None:
        self._portal = portal
        self._limit = limit  # seconds for a user fake's setup, and again for its cleanup (`_deadline`)
        self._transcript = transcript
        self._tmpdir = tmpdir
        self._run_dir = run_dir or tmpdir.parent
        self._declared: dict[str, str] = {}
        self._specs: dict[str, _Declared] = {}
        for name, value in (declared or {}).items():
            if isinstance(value, str):
                self._declared[name] = value
            else:
                self._declared[name] = value.kind
                self._specs[name] = value
        self._entries: dict[str, _Entry] = {}  # insertion order = creation order
        self._closed = False

    # -- lookup / creation -----------------------------------------------------------------------
    @property
    def active(self) -> dict[str, object]:
        """Name -> object of every fake created so far, in creation order."""
        return {name: entry.obj for name, entry in self._entries.items()}

    def kind_of(self, name: str) -> str | None:
        entry = self._entries.get(name)
        return entry.kind if entry else None

    def get(self, name: str, kind: str | None = None) -> Any:
        """The fake called `name`, created on first reference; `kind` must agree with an existing fake.

        `kind` may name a family ("database"): a declared "postgres" fake serves the database steps.
        """
        self._refuse_replaced(name)
        entry = self._entries.get(name)
        if entry is not None:
            if kind is not None and not _serves(entry.kind, kind):
                raise UsageError(
                    f'The fake "{name}" is {_a(entry.kind)} in this scenario, not {_a(kind)}. '
                    "Tip: give each fake its own name."
                )
            return entry.obj
        declared = self._declared.get(name)
        if kind is not None and declared is not None and not _serves(declared, kind):
            raise UsageError(
                f'The fake "{name}" is declared as {_a(declared)} in [tool.mcp-bdd.fakes], '
                f"but this step uses it as {_a(kind)}."
            )
        kind = declared or kind or self._kind_from_name(name)
        if kind is None:
            raise UsageError(
                f'Cannot tell what kind of fake "{name}" is. Declare it in [tool.mcp-bdd.fakes] '
                f'(e.g. {name} = "http"), or register it with @fake("{name}"). {self._kinds_offer()}'
            )
        return self._create(name, kind).obj

    def http(self, name: str) -> FakeHttpService:
        obj: FakeHttpService = self.get(name, "http")
        return obj

    def database(self, name: str) -> TableStore:
        """A fake database of any kind (SQLite, PostgreSQL): what the table steps work on."""
        obj: TableStore = self.get(name, "database")
        return obj

    def workspace(self, name: str = "workspace") -> FakeWorkspace:
        obj: FakeWorkspace = self.get(name, "workspace")
        return obj

    def replaced(self, name: str) -> Mapping[str, object] | None:
        """The real dependency's values when the run's profile replaced this fake, else None."""
        spec = self._specs.get(name)
        return spec.options if spec is not None and spec.kind == "real" else None

    def _refuse_replaced(self, name: str) -> None:
        spec = self._specs.get(name)
        if spec is None or spec.kind != "real":
            return
        by = f'the profile "{spec.profile}"' if spec.profile else "[tool.mcp-bdd.fakes]"
        raise FakeReplaced(
            f'{by} replaces the fake "{name}" with a real dependency '
            f"({', '.join(f'{k}={v}' for k, v in spec.options.items())}): a step cannot stub or check it."
        )

    def existing(self, name: str, kind: str) -> Any:
        """A fake that must already be in use (for verification steps): UsageError if it never was."""
        self._refuse_replaced(name)
        entry = self._entries.get(name)
        if entry is None:
            in_use = ", ".join(f'"{n}" ({_label(e.kind)})' for n, e in self._entries.items()) or "none"
            raise UsageError(
                f'The fake {_label(kind)} "{name}" was never set up in this scenario; '
                f"fakes in use: {in_use}. "
                f"Tip: a fake starts with a step that stubs or seeds it, or with ${{fake.{name}.<attr>}} in "
                "the server's configuration; check the spelling of the name."
            )
        return self.get(name, kind)

    def _kind_from_name(self, name: str) -> str | None:
        if name == "workspace":
            return "workspace"
        found = _REGISTRY.get(name)
        if found is not None and not found.builtin:
            return name
        return None

    def _kinds_offer(self) -> str:
        parts = [f"{k.label} offers {', '.join(k.attrs)}" for k in _builtin_kinds().values() if k.attrs]
        users = ", ".join(sorted(registered_fakes()))
        text = "A " + "; a ".join(parts) + "."
        return text + (f" User fakes: {users}." if users else " No user fakes are registered.")

    def _create(self, name: str, kind: str) -> _Entry:
        if self._closed:
            raise McpBddError(f'The fake "{name}" is needed after the scenario\'s fakes were closed.')
        if not _NAME.fullmatch(name):
            raise UsageError(f'"{name}" cannot name a fake: use letters, digits, "_" and "-".')
        found = _REGISTRY.get(kind)
        if found is None:
            raise UsageError(f'Unknown kind of fake "{kind}" for "{name}". ' + did_you_mean(kind, _REGISTRY, "kind"))
        spec = self._specs.get(name)
        options: Mapping[str, object] = spec.options if spec is not None else {}
        unknown = [key for key in options if key not in found.options]
        if unknown:
            offered = ", ".join(found.options) or "none"
            raise UsageError(
                f'[tool.mcp-bdd.fakes.{name}]: unknown option "{unknown[0]}" for {_a(kind)} '
                f"(its options: {offered}). " + did_you_mean(unknown[0], found.options, "option")
            )
        directory = self._tmpdir / "fakes" / name
        directory.mkdir(parents=True, exist_ok=True)
        ctx = FakeContext(
            name=name,
            tmpdir=directory,
            portal=self._portal,
            transcript=self._transcript,
            options=dict(options),
            root=Path(spec.root) if spec is not None else Path.cwd(),
            run_dir=self._run_dir,
        )
        entry = _make(found, ctx, None if found.builtin else self._limit)
        self._entries[name] = entry
        self._transcript.record("info", name, f"fake {_label(kind)} started", {"kind": kind})
        return entry

    # -- sharing with feature/run-scoped servers -------------------------------------------------
    def lend(self, names: Iterable[str]) -> list[_Entry]:
        """Hand these fakes over to a longer-lived owner: this scenario will no longer tear them down.

        A feature- or run-scoped server outlives the scenario that started it, and so must the fakes
        its configuration points at (the server keeps calling that URL, that database file).
        """
        lent = []
        for name in names:
            entry = self._entries.get(name)
            if entry is not None:
                lent.append(entry)
                self._entries[name] = replace(entry, teardown=None)
        return lent

    def forget(self, names: Iterable[str]) -> None:
        """Drop these names (borrowed fakes whose owner is gone): the next reference creates new ones."""
        for name in names:
            self._entries.pop(name, None)

    def borrow(self, entries: Iterable[_Entry], *, fresh: bool) -> None:
        """Use a longer-lived owner's fakes under their names (never torn down by this scenario).

        `fresh`: a new scenario starts with no stubs and no recorded requests, as if the fake were new.
        """
        for entry in entries:
            obj = entry.obj
            if hasattr(obj, "_transcript"):
                obj._transcript = self._transcript  # their traffic belongs to the scenario that sees it
            if fresh and hasattr(obj, "reset"):
                obj.reset()
            self._entries[entry.name] = replace(entry, teardown=None)

    # -- placeholders and dependency injection ---------------------------------------------------
    def resolve(self, name: str, attr: str) -> str:
        """The text of `${fake.<name>.<attr>}`; creates the fake on first reference.

        A fake the profile replaced reads the real dependency's values (`${env.NAME}` allowed there).
        """
        real = self.replaced(name)
        if real is not None:
            if attr not in real:
                raise UsageError(
                    f'${{fake.{name}.{attr}}}: the profile replaces the fake "{name}" but gives no "{attr}". '
                    + did_you_mean(attr, real, "value")
                )
            from mcp_bdd.variables import interpolate

            return interpolate(str(real[attr]), {}, where=f"the profile's replacement for the fake {name}")
        entry = self._entries.get(name)
        if entry is None:
            kind = self._declared.get(name) or self._kind_from_name(name)
            if kind is None:
                if attr == "url":
                    kind = "http"
                elif attr == "path":
                    kind = "database"
                else:
                    raise UsageError(
                        f'${{fake.{name}.{attr}}}: cannot tell what kind of fake "{name}" is from ".{attr}". '
                        f"{self._kinds_offer()} Tip: declare it in [tool.mcp-bdd.fakes] "
                        f'(e.g. {name} = "http") or register it with @fake("{name}").'
                    )
            self.get(name, kind)
            entry = self._entries[name]
        return _attribute(entry, attr)

    def inject(self, factory: Callable[..., object]) -> dict[str, object]:
        """Keyword arguments for an app factory whose parameters name fakes.

        A parameter is a fake when its annotation is a built-in fake class (the name then names
        the fake), or its name is a fake in use, declared, "workspace", or a registered user fake.
        Other parameters must have defaults.
        """
        kwargs: dict[str, object] = {}
        unfilled: list[str] = []
        for param in _parameters(factory):
            known = (
                param.name in self._entries
                or param.name in self._declared
                or self._kind_from_name(param.name) is not None
            )
            if param.by_keyword and (param.kind is not None or known):
                kwargs[param.name] = self.get(param.name, param.kind)
            elif param.required:
                unfilled.append(param.name)
        if unfilled:
            name = getattr(factory, "__qualname__", repr(factory))
            raise UsageError(
                f'{name}() needs the argument "{unfilled[0]}", which is not a fake. Parameters of an app '
                "factory name fakes (payments: FakeHttpService) or have defaults. "
                + did_you_mean(unfilled[0], [*self._entries, *self._declared, *registered_fakes()], "fake")
            )
        return kwargs

    # -- teardown --------------------------------------------------------------------------------
    def close(self) -> list[str]:
        """Tear every fake down in reverse creation order; never raises; returns the problems as text.

        Reverse order because a later fake may depend on an earlier one (a user fake that wraps
        an HTTP fake's URL must stop before the HTTP fake does).
        """
        self._closed = True
        entries = list(self._entries.values())
        self._entries.clear()
        return teardown(entries)


def teardown(entries: Iterable[_Entry]) -> list[str]:
    """Tear fakes down in reverse order; never raises; returns the problems as text.

    Shared by a scenario's `Fakes.close` and the runtime, which owns the fakes lent to
    feature/run-scoped servers.
    """
    problems: list[str] = []
    interrupted: BaseException | None = None
    for entry in reversed(list(entries)):
        if entry.teardown is None:
            continue
        try:
            entry.teardown()
        except SlowStop as exc:  # a process it started ignored SIGTERM: said, not raised
            problems.append(f'fake "{entry.name}" ({_label(entry.kind)}): {exc}')
        except Exception as exc:  # teardown must go on; the problem is reported
            problems.append(f'fake "{entry.name}" ({_label(entry.kind)}): {type(exc).__name__}: {exc}')
        except Stalled as exc:  # a user fake's cleanup past its limit (`_deadline`): reported the same way
            problems.append(f'fake "{entry.name}" ({_label(entry.kind)}): its cleanup {exc}')
        except BaseException as exc:  # Ctrl-C or SIGTERM in one slow cleanup: the others still run
            interrupted = interrupted or exc  # (each may stop a process of its own), then the run stops
            problems.append(f'fake "{entry.name}" ({_label(entry.kind)}): its cleanup was interrupted')
    if interrupted is not None:
        raise interrupted
    return problems


def _make(kind: FakeKind, ctx: FakeContext, limit: float | None = None) -> _Entry:
    """Run a kind's factory: a generator (setup, `yield obj`, cleanup) or a function returning obj.
    `limit`: the seconds its setup may take, and its cleanup again (a user fake's: `_deadline`)."""
    factory, name = kind.factory, ctx.name
    where = f'The fake "{name}" ({factory.__qualname__})'
    try:
        try:
            with within(limit):
                result = factory(ctx)
                gen = result if inspect.isgenerator(result) else None  # else a plain function's object
                obj = next(gen) if gen is not None else result
        except BaseException:
            _stop_quietly(ctx)  # what the setup started before it failed has no cleanup to stop it
            raise
    except StopIteration:
        raise UsageError(f"{where} returned without yielding its object.") from None
    except McpBddError:
        raise  # says what and where already
    except Stalled as exc:
        raise ServerStartError(
            f"{where} could not be set up: its setup {exc}.\n"
            f"  Tip: a fake's setup gets startup_timeout ({exc.seconds:g} s). Give what it waits for a "
            "deadline of its own, or raise startup_timeout if a setup that long is expected."
        ) from None
    except Exception as exc:
        if kind.builtin:
            raise
        # a user's fake: its own words and line, not a traceback through mcp-bdd's internals
        raise ServerStartError(
            f"{where} could not be set up: it raised {raised(exc)}.\n"
            "  Tip: fix the fake where named (its setup runs before the server that uses it starts)."
        ) from exc
    return _Entry(
        name, kind.name, obj, _with_processes(None if gen is None else _finisher(name, gen, limit), ctx), kind.attrs
    )


def _with_processes(finish: Callable[[], None] | None, ctx: FakeContext) -> Callable[[], None]:
    """The fake's own cleanup, then the processes it started (`start_process`: in its setup, or
    later by its object) stopped, whatever the cleanup did."""

    def teardown() -> None:
        try:
            if finish is not None:
                finish()
        except BaseException:
            _stop_quietly(ctx)  # the cleanup's own failure is the news; a slow stop would hide it
            raise
        if ctx._processes:
            stop_all(ctx._processes, ctx.transcript)

    return teardown


def _stop_quietly(ctx: FakeContext) -> None:
    if ctx._processes:
        with contextlib.suppress(SlowStop):
            stop_all(ctx._processes, ctx.transcript)


def _finisher(name: str, gen: Generator[object, Never, object], limit: float | None) -> Callable[[], None]:
    def finish() -> None:
        try:
            with within(limit):
                next(gen)
        except StopIteration:
            return
        gen.close()
        raise UsageError(f'The fake "{name}" yielded more than once; a fake yields its object exactly once.')

    return finish


def _attribute(entry: _Entry, attr: str) -> str:
    if entry.attrs:  # built-in: only the documented attributes
        if attr not in entry.attrs:
            raise UsageError(
                f'${{fake.{entry.name}.{attr}}}: the {_label(entry.kind)} "{entry.name}" has no attribute '
                f'"{attr}". ' + did_you_mean(attr, entry.attrs, "attribute")
            )
        return str(getattr(entry.obj, attr))
    obj = entry.obj
    if isinstance(obj, Mapping) and attr in obj:
        return str(obj[attr])
    if not attr.startswith("_") and hasattr(obj, attr):
        return str(getattr(obj, attr))
    if isinstance(obj, Mapping):
        offered = [str(k) for k in obj]
    else:
        offered = [a for a in dir(obj) if not a.startswith("_") and not callable(getattr(obj, a, None))]
    raise UsageError(
        f'${{fake.{entry.name}.{attr}}}: the {_label(entry.kind)} "{entry.name}" ({type(obj).__name__}) '
        f'has no attribute "{attr}". ' + did_you_mean(attr, offered, "attribute")
    )


@dataclass(frozen=True)
class _Parameter:
    """One parameter of an app factory, as `Fakes.inject` reads it."""

    name: str
    kind: str | None  # the built-in fake kind its annotation names
    by_keyword: bool  # not positional-only
    required: bool  # no default


def _parameters(factory: Callable[..., object]) -> tuple[_Parameter, ...]:
    """A factory's parameters (not *args, **kwargs), read once per factory: `inspect.signature`
    and `get_type_hints` cost ~30 µs, and the same factory starts every scenario's server."""
    try:
        return _parameters_once(factory)
    except TypeError:  # a callable object that cannot be hashed: read every time
        return _read_parameters(factory)


def _read_parameters(factory: Callable[..., object]) -> tuple[_Parameter, ...]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return ()
    try:
        hints = typing.get_type_hints(factory)
    except Exception:  # unresolvable string annotations: fall back to their text
        hints = {}
    return tuple(
        _Parameter(
            param.name,
            _kind_of_annotation(hints.get(param.name, param.annotation)),
            param.kind is not param.POSITIONAL_ONLY,
            param.default is param.empty,
        )
        for param in signature.parameters.values()
        if param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    )


_parameters_once = functools.lru_cache(maxsize=64)(_read_parameters)


def _kind_of_annotation(annotation: object) -> str | None:
    """ "http" for FakeHttpService (also `FakeHttpService | None` and the string "FakeHttpService")."""
    if annotation is inspect.Parameter.empty:
        return None
    classes = {k.name: k.cls for k in _builtin_kinds().values() if k.cls is not None}
    if isinstance(annotation, str):
        text = annotation.replace(" ", "")
        for kind, cls in classes.items():
            if cls.__name__ in text.split("|") or text.endswith("." + cls.__name__):
                return kind
        return None
    for kind, cls in classes.items():
        if annotation is cls:
            return kind
    for arg in typing.get_args(annotation):  # Optional[FakeDatabase], FakeDatabase | None
        found = _kind_of_annotation(arg)
        if found is not None:
            return found
    return None
