"""`${var}` interpolation for quoted parameters, table cells, doc strings and server config.

Pure: knows nothing of behave or MCP. Built-ins: `${env.NAME}`, `${uuid}` (fresh per use),
`${fake.<name>.<attr>}` (resolved through a callback, which creates the fake on first use),
`${port}` (server config only). `$${` writes a literal `${`. An unknown name is a UsageError
that lists the names that are available — scenarios fail loudly instead of sending "${typo}".
The value of a secret-named environment variable (`${env.API_KEY}`) or scenario variable
(`${access_token}`) is a secret wherever it goes — a server's argv, its URL, a tool's argument —
so it is remembered for masking on use (and a scenario variable when it is saved too).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Mapping

from mcp_bdd._text import did_you_mean
from mcp_bdd.errors import UsageError
from mcp_bdd.secrets import remember_named

__all__ = ["Resolver", "interpolate", "names_in"]

# `$${` is an escape; otherwise `${name}` where name is dotted word characters (env names may hold '-').
_PATTERN = re.compile(r"\$\$\{|\$\{([^}]*)\}")

#: resolves one name that the plain variables do not hold, or returns None if it does not know it
Resolver = Callable[[str], str | None]


def names_in(text: str) -> list[str]:
    """The `${...}` names a text refers to (escapes excluded)."""
    return [m.group(1) for m in _PATTERN.finditer(text) if m.group(0) != "$${"]


def interpolate(
    text: str,
    variables: Mapping[str, str],
    *,
    fake: Callable[[str, str], str] | None = None,
    extra: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    where: str = "",
) -> str:
    """Replace every `${...}` in `text`; raise UsageError for names nobody knows."""
    if "$" not in text:
        return text
    env = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name = match.group(1).strip()
        # Built-ins of the context (${port}, ${i}) win over a scenario variable of the same name.
        if extra is not None and name in extra:
            return extra[name]
        if name in variables:
            remember_named(name, variables[name])  # set by a step, or by a user's own code
            return variables[name]
        if name == "uuid":
            return str(uuid.uuid4())
        if name.startswith("env."):
            key = name[4:]
            if key in env:
                remember_named(key, env[key])
                return env[key]
            raise UsageError(
                f'{_at(where)}the environment variable "{key}" (from ${{{name}}}) is not set. '
                "Set it before running behave, or use a scenario variable instead."
            )
        if name.startswith("fake."):
            parts = name.split(".")
            if len(parts) != 3 or not all(parts):
                raise UsageError(
                    f"{_at(where)}${{{name}}} should read ${{fake.<name>.<attribute>}}, "
                    "e.g. ${fake.payments.url} or ${fake.shop.path}."
                )
            if fake is None:
                raise UsageError(f"{_at(where)}${{{name}}}: fakes are not available here.")
            return fake(parts[1], parts[2])
        available = [*variables, *(extra or {}), "uuid", "env.<NAME>", "fake.<name>.<attr>"]
        raise UsageError(
            f'{_at(where)}unknown variable "${{{name}}}". {did_you_mean(name, available, "variable")}. '
            'Remember a value first ("When I remember the result at "$.id" as "order"") or write $${ '
            "for a literal ${."
        )

    return _PATTERN.sub(replace, text)


def _at(where: str) -> str:
    return f"{where}: " if where else ""
