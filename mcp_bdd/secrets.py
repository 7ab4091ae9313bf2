"""One secret policy: which names are secret, which values are, and the one function that masks them.

Why one module: 0.1 had two lists of secret-looking names (config's and the report's) that had
already diverged, and neither knew the *values*: a server started with `API_TOKEN=abc123` that
echoed `abc123` in a tool result or on stderr put it in the console, the HTML, the JSON and the
JUnit. Now:

- a name is secret when it contains TOKEN, SECRET, KEY, PASSWORD, PASSWD, COOKIE, CREDENTIAL or
  AUTH (so AUTHORIZATION too, but not AUTHOR: an `author` is prose) — `is_secret_name`;
- every value mcp-bdd passes to a server under such a name (its `env`, every `headers` value,
  the credentials among the secret-named variables of the environment it inherits — CI's
  `GITHUB_TOKEN` —, and tokens the fakes issue) is registered with `remember()` when the
  server starts, and so is every value held under such a name during a run (`remember_named`):
  a `${env.API_KEY}` on use, a token a server issued that a scenario remembers as `access_token`,
  and the value of a secret option on the command line of every process mcp-bdd starts
  (`--password pw`, `--api-key=abc`: `remember_argv`);
- a value that is plainly no secret is never masked by value, whatever its name: a boolean or
  null word (`AUTH_ENABLED=false` would otherwise turn every `false` in the evidence into
  `****`). A number is masked: a PIN is all digits, and a TTL cannot be told from one;
- `mask()` (text) and `mask_data()` (JSON-like data) replace registered values anywhere, and
  `mask()` also `NAME=value` / `NAME: value` pairs with a secret NAME (`NAME='value'` inside its
  quotes) and the password of a URL's userinfo (`postgres://user:****@db`), by `****`. They are applied where
  evidence is recorded or printed: transcripts, stderr tails, failure messages (console, HTML,
  JSON, JUnit), the configuration display.
Pure: no behave, no mcp.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "dumps_masked",
    "generation",
    "is_secret_name",
    "mask",
    "mask_data",
    "mask_mapping",
    "not_secret",
    "remember",
    "remember_argv",
    "remember_environment",
    "remember_mapping",
    "remember_named",
]

MASK = "****"
#: shorter values are not masked by value (masking "1" or "yes" everywhere would garble evidence)
MIN_VALUE_LENGTH = 5
#: a line of a secret of many lines is masked on its own from this length (a PEM body line is 64)
MIN_LINE_LENGTH = 12

#: the words that make a name secret, in each shape a name takes below: a variable's or a key's
#: (`_NAME`), a `NAME=value` in free text (`_TEXT_NAME`, `_ASSIGN`); a command-line option's is
#: narrower (`_OPTION`)
_WORDS = "TOKEN|SECRET|KEY|PASSWORD|PASSWD|COOKIE|CREDENTIAL"
# AUTH, but not AUTHOR unless AUTHORIZATION: `GH_AUTH` is a credential, `author` is a person's name
_NAME = re.compile(rf"{_WORDS}|AUTH(?!OR(?!IZ))", re.IGNORECASE)
_SCOPES = frozenset({"env", "headers", "environment", "environ"})
# a key of one of _SCOPES as json.dumps writes it (a string value is never followed by `": `), in
# any case. Spelled out as [eE][nN]...: re.IGNORECASE took 26 µs on a 1.4 KB step transcript, this 7,
# and json.dumps writes ASCII only, where the two match the same keys (the ones `.lower()` finds).
_SCOPE_KEY = re.compile(
    '"(?:' + "|".join("".join(f"[{c}{c.upper()}]" for c in scope) for scope in sorted(_SCOPES)) + ')": '
)
# NAME=value / NAME: value in free text (stderr, error messages) where NAME looks secret. Narrower
# than _NAME: "Author: Jane" in a log line is not a credential. The value stops at a closing `)`,
# `]` or `}` too: "(API_TOKEN=abc)" keeps its bracket (a credential with one inside is rare, and
# one whose value was remembered is masked whole by value first). A `<placeholder>` is not a value
# (`mcp-bdd list` shows an argument as `api_key=<string>`). mcp-bdd's own sentences quote the
# names they put before a colon (`tool "create_api_key": removed`), so this never reads them.
# A quoted value after `=` is masked inside its quotes (`DB_PASSWORD='****'`, `Settings(api_key=
# '****')`): shells, .env files and Python reprs quote theirs. Not after `:`, where a quote is
# Python's own (`KeyError: 'API_KEY'`, a traceback's best clue) or a list (`Available keys: "a"`).
# A quoted *name* (`{"token": "abc"}`, a JSON or repr key) is not read either: that is a tool's
# data in a failure's Actual, and mask_data's concern. A quoted value ends at its closing quote or
# its line's end: linear time.
_TEXT_NAME = re.compile(rf"{_WORDS}|AUTHORIZATION", re.IGNORECASE)
_ASSIGN = re.compile(
    rf"(?P<name>\b[\w.-]*(?:{_WORDS}|AUTHORIZATION)[\w.-]*)"
    r"(?:(?P<eq>\s*=\s*)(?P<quote>['\"])(?:\\.|(?!(?P=quote))[^\\\n])+(?P=quote)"
    r"|(?P<sep>\s*[=:]\s*)(?!<[\w .-]*>(?:[\s.,;'\")\]}]|$))(?P<value>(?:Bearer\s+|Basic\s+)?[^\s,;'\")\]}]+))",
    re.IGNORECASE,
)
# `NAME:value` with no space is no assignment where NAME is a file and the value a line number
# (`api_keys.feature:7`, the place a UsageError names; `token_store.py:42` in a traceback's
# summary; but `secrets.json:hunter2` is masked), or the text is known (`not_secret`: an
# `app = "keystore:create"` spec): a feature about API keys kept its line numbers
_LINE = re.compile(r"\d+(?::\d+)*[:.]?")  # `12`, `12:5` (a column), `12:` ending its clause
_FILE = re.compile(
    r"\.(?:py|pyi|pyx|js|mjs|cjs|jsx|ts|tsx|go|rs|java|kt|rb|php|cs|c|cc|cpp|h|hpp|swift|scala|lua|sh|feature"
    r"|toml|ini|cfg|json|ya?ml)$",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"^(?:Bearer|Basic|Token)\s+", re.IGNORECASE)
# values that are plainly no secret: masking each `false` of the evidence would garble it
_PLAIN = re.compile(r"true|false|yes|no|on|off|none|null|nil|enabled?|disabled?", re.IGNORECASE)
# the password of a URL's userinfo: postgres://user:PASSWORD@host/db (a DSN in an error message)
_USERINFO = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^\s/:@]*:)(?P<password>[^\s/@]+)(?=@)", re.IGNORECASE)

_values: set[str] = set()
#: the values remembered whole (`_values` also holds their forms and lines: a value first seen as
#: one line of a key must still get its own forms), for `remember`'s early return
_whole: set[str] = set()
_WHOLE_KEEP = 4096
#: texts never read as `NAME:value` (`not_secret`): the configuration's app specs
_known: set[str] = set()
_KNOWN_KEEP = 4096
_pattern: re.Pattern[str] | None = None
#: every remembered form as json.dumps writes it inside a string: what `dumps_masked` looks for
_dumped_pattern: re.Pattern[str] | None = None
_generation = 0  # how many times new values were remembered
_lock = threading.Lock()


def generation() -> int:
    """Grows whenever a new value is remembered. Evidence masked while it was lower may hold a value
    only known since: a token a server issued shows in its response, *then* a step remembers it
    as `access_token`. Reports compare it before and after a scenario and mask that one again."""
    return _generation


def is_secret_name(name: str) -> bool:
    return bool(_NAME.search(name))


def remember(value: str) -> None:
    """Mask this value wherever it shows from now on (and its token, for `Bearer <token>`), in
    every form evidence takes: as is, escaped inside JSON or a Python repr, and each line of a
    value of many lines (a PEM key a server prints in part)."""
    global _pattern, _dumped_pattern, _generation
    if value in _whole:
        return  # every start asks again for the environment's (`remember_environment`)
    candidates: set[str] = set()
    for plain in {value, _SCHEME.sub("", value)}:
        # the value's length, not its forms': `a\b` escaped is long
        if len(plain) >= MIN_VALUE_LENGTH and not _PLAIN.fullmatch(plain.strip()):
            candidates |= _forms(plain)
    with _lock:
        new = {v for v in candidates if len(v) >= MIN_VALUE_LENGTH} - _values
        if new:
            _values.update(new)
            _generation += 1
            # longest first, so a value that contains another is masked whole
            _pattern = re.compile("|".join(re.escape(v) for v in sorted(_values, key=len, reverse=True)))
            _dumped_pattern = re.compile("|".join(re.escape(json.dumps(v)[1:-1]) for v in _values))
        if len(_whole) < _WHOLE_KEEP:
            _whole.add(value)  # after the patterns that mask it: a reader that returns early is covered


def _forms(value: str) -> set[str]:
    """The ways a value is written where it is masked. Why: masking runs on text already encoded
    (a failure's `Actual:` is a repr, a transcript and the report are JSON), where a newline, a
    quote, a backslash or a non-ASCII letter of the value is escaped and the plain value never
    matches: a multi-line key leaked whole past its first line."""
    once = _escaped(value)
    # and escaped twice: a failure's sentence writes as JSON an actual that quotes the text as a
    # repr (`but it was "text: 'a\\\\b'"`), where a backslash or a quote of the value is doubled again
    forms = {value} | once | {twice for form in once for twice in _escaped(form)}
    forms |= _url_encoded(value)
    lines = [line.strip() for line in value.splitlines()]
    if len(lines) > 1:
        forms |= {line for line in lines if len(line) >= MIN_LINE_LENGTH}
    return forms


def _url_encoded(value: str) -> set[str]:
    """`value` as a URL writes it: a token in a query string (`?api_key=a%2Fb%2Bc`), a form body
    (`quote_plus`: a space as `+`), an OAuth redirect. Base64 tokens hold `/`, `+` and `=`, which
    a URL encodes, and the plain value then never matched: the token leaked from every logged URL.
    Both hex cases: `quote` writes `%2F`, some servers log `%2f`. Only forms that differ."""
    encoded = {quote(value, safe=""), quote(value, safe="/"), quote_plus(value)}
    encoded |= {_LOWER_HEX.sub(lambda m: m[0].lower(), form) for form in encoded}
    return encoded - {value}


_LOWER_HEX = re.compile(r"%[0-9A-F]{2}")


def _escaped(value: str) -> set[str]:
    """`value` as JSON (ASCII or not) and a Python repr write it inside a string."""
    return {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], repr(value)[1:-1]}


def remember_named(name: str, value: str) -> None:
    """Remember `value` when `name` is secret (a variable, an environment entry): its value is a
    secret wherever it goes next — a server's argv, a tool's argument, a server's echo of it."""
    if value and is_secret_name(name):
        remember(value)


#: an inherited environment's names -> whether each is secret: a server starts every scenario
_ENV_NAMES: dict[str, bool] = {}
_ENV_KEEP = 4096
# An inherited value is remembered when it looks like a credential: 12 characters or more, a
# letter and a digit, no space, not a URL. The environment also holds settings under secret-
# looking names that nobody declared for the server, whose values are words or addresses the
# evidence is full of: PIP_KEYRING_PROVIDER=subprocess hid `subprocess` in every traceback,
# PGPASSWORD=postgres every `postgres://`, SECRET_KEY=development every "development",
# KEYCLOAK_URL every `http://localhost:8080` (a URL's password is masked in text anyway:
# `_USERINFO`). A path (SSH_AUTH_SOCK) is remembered: it seldom shows, and an AWS secret may
# start with "/". A weak password inherited that way is still masked after its name
# (`PGPASSWORD=****`).
_CREDENTIAL = re.compile(r"(?!\S*://)(?=\S*\d)(?=\S*[A-Za-z])\S{12,}")


def remember_environment(environ: Mapping[str, str]) -> None:
    """Remember the credentials among the secret-named variables of an environment a server
    inherits (`os.environ`: a spawned server gets it whole, an in-process one reads it): CI's
    `GITHUB_TOKEN` reaches the server as surely as its own `env`. A few µs for a few dozen
    variables, so it is asked at every start: a hook may set one mid-run."""
    for name in environ:
        secret = _ENV_NAMES.get(name)
        if secret is None:
            secret = is_secret_name(name)
            if len(_ENV_NAMES) < _ENV_KEEP:
                _ENV_NAMES[name] = secret
        if secret:
            value = environ.get(name, "")
            if _CREDENTIAL.fullmatch(value):
                remember(value)


# A command-line option takes a secret when the last word of its name is one that always names
# a credential (`--password`, `--auth-token`, `--client-secret`, `--db-passwd`, `--passphrase`,
# `--cookie`, `--authorization`), a KEY that says whose (`--api-key`, `--access-key`,
# `--secret-key`, `--master-key`), or it is one of the whole names Redis and its kin use
# (`--requirepass`, `--masterauth`, `--pass`, `--pw`). Narrower than `_NAME`, because an option's
# value is masked everywhere once remembered: a bare KEY or AUTH takes a setting as often as a
# secret (`--sort-key price`, `--tls-key certs/server.key`, `--auth basic`, `--keyspace`),
# `--token-ttl` a number, and `--bypass stdio` or `--no-auth serve` a word the evidence is full
# of.
_OPTION = re.compile(
    r"(?:^|[-_.])(?:token|secret|password|passwd|passphrase|credentials?|cookies?|authorization"
    r"|(?:api|access|secret|master)[-_]?key)$|^(?:requirepass|masterauth|pass|pw)$",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"(?:no|skip|disable|without)[-_]", re.IGNORECASE)


def remember_argv(argv: Sequence[str], cwd: str = ".") -> None:
    """Remember the values a command line gives under a secret option (`_OPTION`): `--password
    pw`, `--api-key=abc`, Go's `-token abc`. Why: a server or a fake's program started with
    `--requirepass hunter22` showed it in every message that quotes its command line, and
    wherever it echoed it; only the `NAME=value` form was masked in text. Not read: a one-letter
    option (`-p pw`: its meaning is the program's own), a negated one (`--no-password`), and a
    value that names a file in `cwd` (`--secret-key keys/dev.pem`: a path, which shows in
    tracebacks and logs)."""
    for at, arg in enumerate(argv):
        name, eq, value = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or len(name) < 2 or _NEGATED.match(name) or not _OPTION.search(name):
            continue
        if not eq:
            if at + 1 >= len(argv) or argv[at + 1].startswith("-"):
                continue  # a flag, or followed by another option
            value = argv[at + 1]
        if value and not _names_a_file(cwd, value):
            remember(value)


def _names_a_file(cwd: str, value: str) -> bool:
    try:
        return os.path.exists(os.path.join(cwd, os.path.expanduser(value)))
    except (ValueError, OSError):  # a NUL, a name too long
        return False


def remember_mapping(values: Mapping[str, str], *, all_values: bool = False) -> None:
    """Remember the values of secret-named entries (every entry with `all_values`, e.g. headers)."""
    for name, value in values.items():
        if all_values and value:
            remember(value)
        else:
            remember_named(name, value)


def mask(text: str) -> str:
    """Free text (stderr, messages): remembered values and `SECRET_NAME=value` pairs become `****`."""
    text = _mask_values(text)
    if "://" in text:
        text = _USERINFO.sub(lambda m: f"{m['head']}{MASK}", text)
    return _ASSIGN.sub(_masked_assignment, text) if _TEXT_NAME.search(text) else text


def not_secret(text: str) -> None:
    """`text` is never read as a `NAME:value` secret: the configuration's `app = "keystore:create"`
    is a module and a function, and its error messages name it (a remembered value in it is still
    masked: that is masked by value first)."""
    if len(_known) < _KNOWN_KEEP:
        _known.add(text)


def _masked_assignment(match: re.Match[str]) -> str:
    """`NAME=****`, or `NAME='****'` with a quoted value's quotes kept; a file's place, or a text
    known not to be a secret, as it is."""
    if match["sep"] == ":" and (
        (_FILE.search(match["name"]) and _LINE.fullmatch(match["value"])) or match[0].rstrip(".") in _known
    ):
        return match[0]
    if match["quote"]:
        return f"{match['name']}{match['eq']}{match['quote']}{MASK}{match['quote']}"
    return f"{match['name']}{match['sep']}{MASK}"


def _mask_values(text: str) -> str:
    pattern = _pattern
    return pattern.sub(MASK, text) if pattern is not None and pattern.search(text) else text


def mask_mapping(values: Mapping[str, str], *, all_values: bool = False) -> dict[str, str]:
    """For display: secret-named values (every value with `all_values`) become `****`."""
    return {k: MASK if v and (all_values or is_secret_name(k)) else mask(v) for k, v in values.items()}


def mask_data(value: object, *, secret_scope: bool = False, any_key: bool = False) -> Any:
    """`value` with secrets masked; the same object when there was nothing to mask (no copy).

    String values — and keys: a map keyed by API key, a schema property named after a token — are
    masked by remembered value everywhere (a result's prose is not searched for `NAME: value`
    pairs: that would garble evidence). Inside `env`/`headers` mappings
    (`secret_scope`) — and with `any_key`, in every mapping — a string under a secret-looking
    key is masked whole; a dict under such a key (a JSON schema property called `api_key`) stays.
    The result has `value`'s shape (a mapping comes back a dict, a tuple a list): callers keep the
    type they had.
    """
    if isinstance(value, str):
        return _mask_values(value)
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        changed = not isinstance(value, dict)
        for key, item in value.items():
            name = str(key)
            if isinstance(item, str) and item and (secret_scope or any_key) and is_secret_name(name):
                new: object = MASK
            else:
                new = mask_data(item, secret_scope=name.lower() in _SCOPES, any_key=any_key)
            shown = _mask_values(name)
            changed = changed or new is not item or shown is not key
            out[shown] = new
        return out if changed else value
    if isinstance(value, list | tuple):
        items = [mask_data(item, secret_scope=secret_scope, any_key=any_key) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def dumps_masked(value: object) -> str:
    """`json.dumps(mask_data(value), default=str)`, without walking `value` when its JSON text
    shows nothing to mask. Why: evidence is dumped after every step, and walking a listing's
    schemas node by node cost more than the in-memory call that fetched them.

    Sound because json.dumps escapes a string one character at a time: a string (or key) that
    holds a remembered form holds it escaped in the text (`_dumped_pattern`, which also finds a
    form that was itself escaped JSON inside a result's text). Anything json.dumps cannot write
    as is (an object for `default`, a tuple key) takes the walk, as does a text with a key
    `mask_data` masks under (`env`, `headers`). One difference is left: a number, boolean or
    None *key* is written as JSON writes it (`true`), where the walk wrote Python's (`True`);
    evidence comes from JSON, whose keys are strings.
    """
    try:
        text = json.dumps(value, default=_not_plain)
    except (_NotPlain, TypeError, ValueError):
        pass
    else:
        pattern = _dumped_pattern
        if (pattern is None or pattern.search(text) is None) and _SCOPE_KEY.search(text) is None:
            return text
    return json.dumps(mask_data(value), default=str)


class _NotPlain(Exception):
    """`dumps_masked` met something that is not plain JSON data."""


def _not_plain(value: object) -> NoReturn:
    raise _NotPlain
