"""`[tool.mcp-bdd]` configuration: where it is read from, its models, and its validation.

Read from `pyproject.toml` (`[tool.mcp-bdd]`) or `mcp-bdd.toml` (same keys at top level),
found in the working directory or its nearest parent. Validated before any scenario runs:
unknown keys, unknown server names and bad values are `ConfigError`s that name the key, the
file, and the closest valid choice. behave userdata (`-D key=value`) overrides top-level keys.
"""

from __future__ import annotations

import difflib
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mcp_bdd.errors import ConfigError
from mcp_bdd.secrets import not_secret

__all__ = [
    "PROTOCOLS",
    "SCOPES",
    "TRANSPORTS",
    "AppServer",
    "CommandServer",
    "Config",
    "Endpoint",
    "FakeSpec",
    "ServerConfig",
    "UrlServer",
    "load_config",
    "normalize_protocol",
    "normalize_transport",
]

Transport = Literal["in-memory", "stdio", "streamable-http", "sse"]
Protocol = Literal["auto", "legacy", "2026-07-28"]
Scope = Literal["scenario", "feature", "run"]
TRANSPORTS: tuple[str, ...] = ("in-memory", "stdio", "streamable-http", "sse")
PROTOCOLS: tuple[str, ...] = ("auto", "legacy", "2026-07-28")
SCOPES: tuple[str, ...] = ("scenario", "feature", "run")

_TRANSPORT_ALIASES = {
    "in-memory": "in-memory",
    "inmemory": "in-memory",
    "memory": "in-memory",
    "stdio": "stdio",
    "streamable-http": "streamable-http",
    "streamable http": "streamable-http",
    "streamablehttp": "streamable-http",
    "http": "streamable-http",
    "sse": "sse",
}
_PROTOCOL_ALIASES = {"auto": "auto", "legacy": "legacy", "2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


def normalize_transport(value: str, where: str = "transport") -> str:
    """Accept the spellings people use (`streamable HTTP`, `SSE`, `http`) for the four transports."""
    key = value.strip().lower().replace("_", "-")
    if key in _TRANSPORT_ALIASES:
        return _TRANSPORT_ALIASES[key]
    raise ConfigError(
        f'{where}: unknown transport "{value}". Valid transports: {", ".join(TRANSPORTS)}.' + _closest(key, TRANSPORTS)
    )


def normalize_protocol(value: str, where: str = "protocol") -> str:
    key = value.strip().lower()
    if key in _PROTOCOL_ALIASES:
        return _PROTOCOL_ALIASES[key]
    raise ConfigError(
        f'{where}: unknown protocol "{value}". Valid protocols: {", ".join(PROTOCOLS)} '
        "(legacy = the 2025-11-25 initialize handshake)." + _closest(key, PROTOCOLS)
    )


def _closest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f' Did you mean "{close[0]}"?' if close else ""


def _argv(value: str | list[str]) -> list[str]:
    return shlex.split(value) if isinstance(value, str) else list(value)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Overrides(_Model):
    """Top-level keys that any server may also set for itself."""

    transport: str | None = None
    protocol: str | None = None
    scope: Scope | None = None
    timeout: Annotated[float, Field(gt=0)] | None = None
    startup_timeout: Annotated[float, Field(gt=0)] | None = None
    prestart: Annotated[int, Field(ge=0, le=8)] | None = None
    max_message_bytes: Annotated[int, Field(ge=1024)] | None = None

    @field_validator("transport")
    @classmethod
    def _transport(cls, v: str | None) -> str | None:
        return None if v is None else normalize_transport(v)

    @field_validator("protocol")
    @classmethod
    def _protocol(cls, v: str | None) -> str | None:
        return None if v is None else normalize_protocol(v)


class Endpoint(_Model):
    """How to start a server so that it speaks HTTP (streamable-http) or SSE on `url`, and the
    `headers` the client then sends it (a bearer token: secrets, as a url server's are)."""

    command: list[str]
    url: str
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, v: object) -> object:
        return _argv(v) if isinstance(v, str | list) else v


class AppServer(_Overrides):
    """A Python server object (`module:attr`, an MCPServer/Server or a factory): every transport works."""

    kind: Literal["app"] = "app"
    app: str
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None

    @field_validator("app")
    @classmethod
    def _spec(cls, v: str) -> str:
        module, sep, attr = v.partition(":")
        if not sep or not module or not attr:
            raise ValueError(f'"{v}" is not "module:attribute" (e.g. "demo.shop:create_server")')
        not_secret(v.rpartition("/")[2])  # `keystore:create` names a function, in every message about it
        return v

    def transports(self) -> tuple[str, ...]:
        return TRANSPORTS


class CommandServer(_Overrides):
    """Any server started as a command: stdio, plus HTTP/SSE when `http`/`sse` say how."""

    kind: Literal["command"] = "command"
    command: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    http: Endpoint | None = None
    sse: Endpoint | None = None

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, v: object) -> object:
        return _argv(v) if isinstance(v, str | list) else v

    def transports(self) -> tuple[str, ...]:
        return ("stdio",) + (("streamable-http",) if self.http else ()) + (("sse",) if self.sse else ())


class UrlServer(_Overrides):
    """A server that is already running: connected to, never started."""

    kind: Literal["url"] = "url"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    def transports(self) -> tuple[str, ...]:
        """A URL implies HTTP: only SSE when configured so or when the path ends in /sse; else
        streamable HTTP first, and SSE when the run asks for it (some servers serve both)."""
        if self.transport == "sse" or self.url.rstrip("/").endswith("/sse"):
            return ("sse",)
        return ("streamable-http", "sse")


ServerConfig = AppServer | CommandServer | UrlServer


class FakeSpec(_Model):
    """A fake declared with options: `shopdb = { kind = "postgres", schema = "db/schema.sql" }`.

    The options are checked by the kind of fake when the fake is first made (each kind knows its
    own); `root` is the configuration file's folder, which relative paths in them are read from.
    """

    kind: str
    options: dict[str, object] = Field(default_factory=dict)
    root: str = "."
    #: the profile that replaced this fake with a real dependency (kind "real")
    profile: str | None = None


class Config(_Model):
    server: str | None = None
    transport: str = "in-memory"
    protocol: str = "auto"
    scope: Scope = "scenario"
    timeout: Annotated[float, Field(gt=0)] = 10.0
    startup_timeout: Annotated[float, Field(gt=0)] = 20.0
    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    #: fork `app` servers from a pre-imported process instead of a cold `python -m mcp_bdd.serve`
    pool: bool = True
    #: start this many `command` stdio servers ahead of the scenarios that will use them (0 = off:
    #: a server with a fixed port or a lock file cannot run several copies at once)
    prestart: Annotated[int, Field(ge=0, le=8)] = 0
    #: the longest JSON-RPC message accepted: a stdio line, an HTTP answer's body, one SSE event; a
    #: longer one fails its request at once (bounded memory)
    max_message_bytes: Annotated[int, Field(ge=1024)] = 128 * 1024 * 1024
    #: name -> kind of fakes referenced by placeholders (http | database | postgres | workspace | a user
    #: fake), or a table with `kind` and the kind's options
    fakes: dict[str, str | FakeSpec] = Field(default_factory=dict)
    #: where the living-doc formatter writes its HTML whatever `-o` behave paired with it
    report: str | None = None
    #: requirement links: tag key -> URL template with "{}" (`check_link_template`; see mcp_bdd.report.links)
    links: dict[str, str] = Field(default_factory=dict)
    #: folder where the living-doc report keeps a compact record of past runs (trends, flaky marks); off when unset
    history: str | None = None
    #: how many runs (per run label) the history keeps
    history_runs: Annotated[int, Field(ge=2, le=1000)] = 20
    #: the selected profile (`-D profile=staging`, `mcp-bdd run --profile staging`), already applied
    profile: str | None = None
    #: name -> overrides of top-level keys, servers and fakes, and `replace` (fakes swapped for real values)
    profiles: dict[str, dict[str, object]] = Field(default_factory=dict)
    source: str = "(defaults)"
    root: str = "."

    @field_validator("transport")
    @classmethod
    def _transport(cls, v: str) -> str:
        return normalize_transport(v)

    @field_validator("protocol")
    @classmethod
    def _protocol(cls, v: str) -> str:
        return normalize_protocol(v)

    @field_validator("links")
    @classmethod
    def _links(cls, v: dict[str, str]) -> dict[str, str]:
        for key, template in v.items():
            problem = check_link_template(key, template)
            if problem:
                raise ValueError(problem)
        return v

    # -- resolved settings ---------------------------------------------------------------------
    def server_named(self, name: str) -> ServerConfig:
        if name not in self.servers:
            from mcp_bdd._text import did_you_mean
            from mcp_bdd.errors import UsageError

            raise UsageError(
                f'Unknown server "{name}". {did_you_mean(name, self.servers, "server")}. {self.where_servers_go()}'
            )
        return self.servers[name]

    def where_servers_go(self) -> str:
        """Where servers are configured, in the form of the file in use: a mcp-bdd.toml has no `tool.` prefix."""
        pyproject = " [tool.mcp-bdd]"
        if self.source.endswith(pyproject):
            return (
                f"Servers are configured under [tool.mcp-bdd.servers.<name>] in {self.source.removesuffix(pyproject)}."
            )
        if self.source.endswith(".toml"):
            return f"Servers are configured under [servers.<name>] in {self.source}."
        return f"{self.source}: `mcp-bdd init` writes the configuration; or give a URL, or -- COMMAND ARGS."

    def default_server(self) -> str | None:
        if self.server:
            return self.server
        if len(self.servers) == 1:
            return next(iter(self.servers))
        return None

    def transport_for(self, name: str) -> str:
        """The server's own transport, else the run's — unless the run's is only the default
        `in-memory` and the server cannot do that (a `command` or `url` server): then its natural one."""
        cfg = self.servers[name]
        if cfg.transport is not None:
            return cfg.transport
        if isinstance(cfg, UrlServer):
            # nothing is started for a URL: the run's transport (stdio, in-memory) cannot apply to it
            return self.transport if self.transport in cfg.transports() else cfg.transports()[0]
        if self.transport in cfg.transports() or "transport" in self.model_fields_set:
            return self.transport
        return cfg.transports()[0]

    def setting(self, name: str, key: str) -> Any:
        """A server's own value for a top-level key, else the top-level value."""
        own = getattr(self.servers[name], key, None)
        return own if own is not None else getattr(self, key)


_TOP_KEYS = tuple(k for k in Config.model_fields if k not in {"source", "root"})
#: top-level keys a `-D key=value` may override for one run
_USERDATA_KEYS = frozenset(
    {
        "transport",
        "protocol",
        "server",
        "scope",
        "timeout",
        "startup_timeout",
        "pool",
        "prestart",
        "max_message_bytes",
    }
)
_SERVER_KEYS = {
    "app": tuple(k for k in AppServer.model_fields if k != "kind"),
    "command": tuple(k for k in CommandServer.model_fields if k != "kind"),
    "url": tuple(k for k in UrlServer.model_fields if k != "kind"),
}
_ALL_SERVER_KEYS = tuple(sorted({k for keys in _SERVER_KEYS.values() for k in keys}))


def find_config_file(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `mcp-bdd.toml`, or `pyproject.toml` with a `[tool.mcp-bdd]` table."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        toml = folder / "mcp-bdd.toml"
        if toml.is_file():
            return toml, _read_toml(toml)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject)
            section = data.get("tool", {}).get("mcp-bdd")
            if isinstance(section, dict):
                return pyproject, section
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def load_config(
    start: Path | None = None,
    userdata: Mapping[str, str] | None = None,
    data: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> Config:
    """Find, parse and validate the configuration; `userdata` (-D) overrides top-level keys."""
    root = (start or Path.cwd()).resolve()
    if data is None:
        found = find_config_file(start)
        if found is None:
            raw: dict[str, Any] = {}
            source = source or "(no pyproject.toml [tool.mcp-bdd] or mcp-bdd.toml found)"
        else:
            path, raw = found
            root = path.parent
            source = source or (str(path) + (" [tool.mcp-bdd]" if path.name == "pyproject.toml" else ""))
    else:
        raw = dict(data)
        source = source or "(given)"
    raw = dict(raw)
    overrides = {k: v for k, v in (userdata or {}).items() if k in _USERDATA_KEYS}
    profile = (userdata or {}).get("profile") or raw.get("profile")
    if profile:
        raw = apply_profile(raw, str(profile), source)  # then -D, so -D still wins over the profile
    if not overrides:
        return parse_config(raw, source=source, root=root)
    parse_config(raw, source=source, root=root)  # the file's (and profile's) own mistakes are blamed on them
    for key, value in overrides.items():
        # Then each -D on its own: a bad value is blamed on the -D that gave it, not on the file.
        parse_config({**raw, key: value}, source=f"-D {key}={value} (behave userdata)", root=root)
        raw[key] = value
    return parse_config(raw, source=source, root=root)


def _profile_keys() -> tuple[str, ...]:
    """Every top-level key but the profiles themselves, plus `replace`."""
    return (*(k for k in _TOP_KEYS if k not in {"profile", "profiles"}), "replace")


def _check_profile(name: str, body: object, source: str) -> None:
    where = f"{source} [profiles.{name}]"
    if not isinstance(body, Mapping):
        raise ConfigError(f"{where}: a profile is a table of overrides (servers, fakes, replace, timeout, ...).")
    for key in body:
        if key not in _profile_keys():
            raise ConfigError(
                f'{where}: unknown key "{key}".{_closest(key, _profile_keys())} '
                f"Valid keys here: {', '.join(_profile_keys())}."
            )
    for section in ("servers", "fakes", "replace"):
        value = body.get(section, {})
        if not isinstance(value, Mapping) or not all(isinstance(v, Mapping | str) for v in value.values()):
            raise ConfigError(
                f"{source} [profiles.{name}.{section}]: must be a table of [profiles.{name}.{section}.<name>] tables."
            )
    for fake, values in body.get("replace", {}).items():
        if not isinstance(values, Mapping) or not values or not all(isinstance(v, str) for v in values.values()):
            raise ConfigError(
                f"{source} [profiles.{name}.replace.{fake}]: the real dependency's values for "
                f"${{fake.{fake}.<attr>}}, as text, "
                f'e.g. {fake} = {{ url = "https://sandbox.example.com" }}.'
            )


def apply_profile(raw: Mapping[str, Any], name: str, source: str) -> dict[str, Any]:
    """The configuration with profile `name` laid over it.

    Top-level keys are replaced; `servers.<name>` tables are merged into the server's own
    (`env` and `headers` key by key, so a profile changes one variable); `fakes.<name>` re-declares
    a fake; `replace.<name>` swaps a fake for a real dependency: `${fake.<name>.<attr>}` reads the
    given values, and steps that stub or check that fake are skipped with the reason.
    """
    profiles = raw.get("profiles") or {}
    if not isinstance(profiles, Mapping) or name not in profiles:
        known = list(profiles) if isinstance(profiles, Mapping) else []
        raise ConfigError(
            f'{source}: there is no profile "{name}".{_closest(name, known)} '
            + (f"Profiles: {', '.join(known)}." if known else "No profiles are configured ([profiles.<name>]).")
        )
    body = profiles[name]
    _check_profile(name, body, source)
    out = dict(raw)
    for key, value in body.items():
        if key == "servers":
            servers = dict(out.get("servers") or {})
            for server, overrides in value.items():
                merged = dict(servers.get(server) or {})
                for field, setting in overrides.items():
                    if field in ("env", "headers") and isinstance(setting, Mapping):
                        merged[field] = {**(merged.get(field) or {}), **setting}
                    else:
                        merged[field] = setting
                servers[server] = merged
            out["servers"] = servers
        elif key == "fakes":
            out["fakes"] = {**(out.get("fakes") or {}), **value}
        elif key == "replace":
            out["fakes"] = {
                **(out.get("fakes") or {}),
                **{fake: {"kind": "real", **values} for fake, values in value.items()},
            }
        else:
            out[key] = value
    out["profile"] = name
    return out


def parse_config(raw: Mapping[str, Any], *, source: str, root: Path) -> Config:
    for key in raw:
        if key not in _TOP_KEYS:
            raise ConfigError(
                f'{source}: unknown key "{key}".{_closest(key, _TOP_KEYS)} Valid keys are {", ".join(_TOP_KEYS)}.'
            )
    servers_raw = raw.get("servers", {})
    if not isinstance(servers_raw, Mapping):
        raise ConfigError(f"{source}: `servers` must be a table of [servers.<name>] sections.")
    servers: dict[str, ServerConfig] = {}
    for name, body in servers_raw.items():
        servers[name] = _parse_server(name, body, source)
    top = {k: v for k, v in raw.items() if k != "servers"}
    for name, body in (top.get("profiles") or {}).items():
        _check_profile(name, body, source)
    if "fakes" in top:
        top["fakes"] = _parse_fakes(top["fakes"], source, root, top.get("profile"))
    try:
        config = Config(**top, servers={}, source=source, root=str(root))
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source, "")) from None
    config = config.model_copy(update={"servers": servers})
    if config.server is not None and config.server not in servers:
        raise ConfigError(
            f'{source}: server = "{config.server}" names no configured server.'
            + _closest(config.server, list(servers))
            + (f" Configured servers: {', '.join(servers)}." if servers else " No servers are configured.")
        )
    return config


def _parse_fakes(raw: object, source: str, root: Path, profile: str | None = None) -> dict[str, str | FakeSpec]:
    """`name = "kind"` or `name = { kind = "...", <option> = ... }` for every declared fake."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f'{source}: `fakes` must be a table of name = "kind" (e.g. shop = "database").')
    fakes: dict[str, str | FakeSpec] = {}
    for name, value in raw.items():
        if isinstance(value, str):
            fakes[name] = value
        elif isinstance(value, Mapping):
            kind = value.get("kind")
            if not isinstance(kind, str):
                raise ConfigError(
                    f'{source} [fakes.{name}]: a fake declared as a table needs `kind` (e.g. kind = "postgres").'
                )
            options = {k: v for k, v in value.items() if k != "kind"}
            fakes[name] = FakeSpec(
                kind=kind, options=options, root=str(root), profile=profile if kind == "real" else None
            )
        else:
            raise ConfigError(
                f'{source} [fakes]: {name} = {value!r} is neither a kind ("postgres") nor a table '
                '({ kind = "postgres", schema = "db/schema.sql" }).'
            )
    return fakes


def _parse_server(name: str, body: object, source: str) -> ServerConfig:
    where = f"{source} [servers.{name}]"
    if not isinstance(body, Mapping):
        raise ConfigError(f"{where}: must be a table with one of `app`, `command` or `url`.")
    kind = _server_kind(body, where)
    if kind == "command":
        for section in ("http", "sse"):
            if isinstance(body.get(section), Mapping):
                _check_endpoint(body[section], f"{where}.{section}", section)
    valid = _SERVER_KEYS[kind]
    for key in body:
        if key not in valid:
            other = [k for k, keys in _SERVER_KEYS.items() if key in keys]
            extra = f" (`{key}` only applies to `{other[0]}` servers)" if other else ""
            raise ConfigError(
                f'{where}: unknown key "{key}"{extra}.{_closest(key, list(valid))} Valid keys here: {", ".join(valid)}.'
            )
    return _server_model(kind, body, where)


def _server_kind(body: Mapping[str, object], where: str) -> str:
    """Which of `app`, `command` or `url` the table gives: exactly one, or a ConfigError that says why."""
    kinds = [k for k in ("app", "command", "url") if k in body]
    if len(kinds) == 1:
        return kinds[0]
    if kinds:
        raise ConfigError(f"{where}: `{'` and `'.join(kinds)}` cannot be combined; keep exactly one.")
    for key in body:
        if key not in _ALL_SERVER_KEYS:
            raise ConfigError(
                f'{where}: unknown key "{key}".{_closest(key, list(_ALL_SERVER_KEYS))} A server needs '
                f"exactly one of `app`, `command` or `url`. Valid keys are {', '.join(_ALL_SERVER_KEYS)}."
            )
    raise ConfigError(
        f"{where}: say how to reach the server with exactly one of `app` (a Python server object, "
        '"module:attr"), `command` (argv of a stdio server) or `url` (an already running server).'
    )


def _check_endpoint(endpoint: Mapping[str, object], where: str, section: str) -> None:
    """A `command` server's `http` or `sse` table: known keys, and both `command` and `url`."""
    allowed = tuple(Endpoint.model_fields)
    for key in endpoint:
        if key not in allowed:
            raise ConfigError(
                f'{where}: unknown key "{key}".{_closest(key, list(allowed))} Valid keys here: {", ".join(allowed)}.'
            )
    missing = [k for k in ("command", "url") if k not in endpoint]
    if missing:
        raise ConfigError(
            f"{where}: needs {' and '.join(f'`{m}`' for m in missing)} to say how to start the "
            f'server for {section} and where it listens (e.g. url = "http://127.0.0.1:${{port}}/mcp").'
        )


def _server_model(kind: str, body: Mapping[str, Any], where: str) -> ServerConfig:
    """The model of the table's kind, validated, with a transport it can serve."""
    models: dict[str, type[AppServer | CommandServer | UrlServer]] = {
        "app": AppServer,
        "command": CommandServer,
        "url": UrlServer,
    }
    model = models[kind]
    try:
        server: ServerConfig = model(**body)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(_explain(exc, where, "")) from None
    if isinstance(server, CommandServer) and not server.command:
        raise ConfigError(f"{where}: `command` is empty.")
    transport = server.transport
    if transport is not None and transport not in server.transports():
        raise ConfigError(
            f'{where}: transport = "{transport}" cannot be served by this server; it can serve: '
            f"{', '.join(server.transports())}."
        )
    return server


def _explain(exc: ValidationError, where: str, prefix: str) -> str:
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            problems.append(f'unknown key "{loc}"')
        else:
            value = err.get("input")
            problems.append(f"{prefix}{loc}: {err['msg']} (got {value!r})")
    return f"{where}: " + "; ".join(problems)


#: a requirement link's key: what a tag starts with (`@JIRA-123`, `@req:ABC-1`)
_LINK_KEY = re.compile(r"^[A-Za-z][\w.]*$")


def check_link_template(key: str, template: str) -> str | None:
    """Why `key = template` is not a usable link template, or None when it is."""
    if not _LINK_KEY.match(key):
        return f'link key "{key}" must start with a letter and hold only letters, digits, "_" and "."'
    if template.count("{}") != 1:
        return f'link template for "{key}" must contain "{{}}" exactly once (where the id goes), got "{template}"'
    if not re.match(r"^https?://[^\s]+$", template):
        return f'link template for "{key}" must be an http:// or https:// URL without spaces, got "{template}"'
    return None
