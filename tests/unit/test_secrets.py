"""The one secret policy (mcp_bdd.secrets): names, remembered values, text and data."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest

from mcp_bdd import secrets
from mcp_bdd.secrets import MASK, mask, mask_data, mask_mapping, remember, remember_mapping


@pytest.fixture(autouse=True)
def _fresh_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_values", set())
    monkeypatch.setattr(secrets, "_pattern", None)
    monkeypatch.setattr(secrets, "_dumped_pattern", None)
    monkeypatch.setattr(secrets, "_ENV_NAMES", {})
    monkeypatch.setattr(secrets, "_known", set())
    monkeypatch.setattr(secrets, "_whole", set())


def test_secret_names_are_masked_in_env_headers_and_server_info_but_schemas_stay() -> None:
    value = {
        "env": {"API_TOKEN": "t0k", "HOME": "/root", "db_password": "pw", "GH_AUTH": "x", "X_COOKIE": "c"},
        "headers": {"Authorization": "Bearer abc", "Accept": "json"},
        "arguments": {"api_key": "visible-in-transcripts"},
        "inputSchema": {"properties": {"api_key": {"type": "string"}}},
    }
    masked = mask_data(value)
    assert masked["env"] == {"API_TOKEN": MASK, "HOME": "/root", "db_password": MASK, "GH_AUTH": MASK, "X_COOKIE": MASK}
    assert masked["headers"] == {"Authorization": MASK, "Accept": "json"}
    assert masked["arguments"]["api_key"] == "visible-in-transcripts"
    assert masked["inputSchema"] == value["inputSchema"]
    assert mask_data(value, any_key=True)["arguments"]["api_key"] == MASK


def test_free_text_pairs_are_masked_but_prose_is_not() -> None:
    text = "start API_TOKEN=abc123 and Authorization: Bearer xyz; SECRET_KEY: k, user=bob, Author: Jane"
    masked = mask(text)
    assert "abc123" not in masked and "xyz" not in masked and " k," not in masked
    assert "user=bob" in masked and f"API_TOKEN={MASK}" in masked and "Author: Jane" in masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("server started (API_TOKEN=abc123)", f"server started (API_TOKEN={MASK})"),
        ("env [SECRET_KEY=k-42] loaded", f"env [SECRET_KEY={MASK}] loaded"),
        ("config {db_password: hunter2}.", f"config {{db_password: {MASK}}}."),
        ("(Authorization: Bearer xyz)", f"(Authorization: {MASK})"),
    ],
)
def test_a_masked_value_stops_at_a_closing_bracket(text: str, masked: str) -> None:
    """A credential in a start message is often closed by `)`, `]` or `}`: the bracket stays."""
    assert mask(text) == masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("DB_PASSWORD='hunter22'", f"DB_PASSWORD='{MASK}'"),
        ('loaded API_KEY="sk-abc123" and TOKEN=x9', f'loaded API_KEY="{MASK}" and TOKEN={MASK}'),
        ("Settings(api_key='sk-li\\'ve', debug=True)", f"Settings(api_key='{MASK}', debug=True)"),
        ('password = "a b c" next', f'password = "{MASK}" next'),  # a quoted value may hold spaces
        ("TOKEN=\"\" and SECRET=''", "TOKEN=\"\" and SECRET=''"),  # nothing to hide
        # after a colon a quote is Python's or a list's: a traceback's best clue stays
        ("KeyError: 'API_KEY'", "KeyError: 'API_KEY'"),
        ('Available keys: "name", "tags"', 'Available keys: "name", "tags"'),
    ],
)
def test_a_quoted_value_under_a_secret_name_is_masked_inside_its_quotes(text: str, masked: str) -> None:
    """Shells, .env files and Python reprs quote values after `=`: mcp-bdd never knew these, their names
    give them away."""
    assert mask(text) == masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("set_api_key api_key=<string> [token=<string>]", "set_api_key api_key=<string> [token=<string>]"),
        ('requires "api_key": add api_key=<string>.', 'requires "api_key": add api_key=<string>.'),
        ("API_KEY=<your key> then API_KEY=abc123", f"API_KEY=<your key> then API_KEY={MASK}"),
        ("API_KEY=<abc>def", f"API_KEY={MASK}"),  # not a placeholder: the value goes on past `>`
        ('[breaking] tool "create_api_key": removed', '[breaking] tool "create_api_key": removed'),
        ("[breaking] tool create_api_key: removed", f"[breaking] tool create_api_key: {MASK}"),  # why we quote
        ("""{'api_key': 'abc12345'} {"token": "abc12345"}""", """{'api_key': 'abc12345'} {"token": "abc12345"}"""),
    ],
)
def test_a_placeholder_or_a_quoted_name_is_not_a_secret_assignment(text: str, masked: str) -> None:
    """mcp-bdd's own sentences name arguments and tools that look secret: `api_key=<string>` shows a
    type, and a name quoted before a colon is a name, not `NAME: value`."""
    assert mask(text) == masked


def test_remembered_values_are_masked_anywhere_and_data_without_secrets_is_not_copied() -> None:
    remember_mapping({"API_TOKEN": "s3cr3t-value", "TZ": "Europe/Paris"})
    remember_mapping({"X-Custom": "Bearer tok-12345"}, all_values=True)
    result = {"content": [{"type": "text", "text": "your token is s3cr3t-value, tok-12345"}], "tz": "Europe/Paris"}
    masked = mask_data(result)
    assert masked["content"][0]["text"] == f"your token is {MASK}, {MASK}"
    assert masked["tz"] == "Europe/Paris"  # not a secret name: its value is not remembered
    assert result["content"][0]["text"].startswith("your token is s3cr3t")  # the original is untouched
    clean = {"content": [{"type": "text", "text": "nothing here"}]}
    assert mask_data(clean) is clean
    assert mask("stderr: got s3cr3t-value") == f"stderr: got {MASK}"


def test_short_values_are_not_masked_by_value_and_display_masks_by_name() -> None:
    remember("abc")
    assert mask("abc abc") == "abc abc"
    assert mask_mapping({"API_TOKEN": "abc", "TZ": "UTC"}) == {"API_TOKEN": MASK, "TZ": "UTC"}
    assert mask_mapping({"Accept": "json"}, all_values=True) == {"Accept": MASK}


def test_a_boolean_or_a_number_under_a_secret_name_is_no_secret_by_value() -> None:
    """`AUTH_ENABLED=false` made every `false` of the evidence `****`. A number stays a secret: a PIN is one."""
    remember_mapping(
        {"AUTH_ENABLED": "false", "DB_PIN_PASSWORD": "86400", "KEY_ROTATION": "Disabled", "API_KEY": "k3y-12345"}
    )
    remember_mapping({"X-Auth-Required": " TRUE ", "X-Debug": "Null"}, all_values=True)
    text = "auth false, pin 86400, rotation Disabled, required TRUE, debug null, key k3y-12345"
    assert mask(text) == f"auth false, pin {MASK}, rotation Disabled, required TRUE, debug null, key {MASK}"
    assert mask("KEY_ROTATION=disabled") == f"KEY_ROTATION={MASK}"  # still masked by the name before it
    assert mask_mapping({"AUTH_ENABLED": "false"}) == {"AUTH_ENABLED": MASK}  # and in the config display


def test_the_credentials_a_server_inherits_are_remembered_and_the_settings_beside_them_are_not() -> None:
    """CI's GITHUB_TOKEN reaches a spawned server in its environment, and an in-process one reads it;
    PIP_KEYRING_PROVIDER=subprocess or PGPASSWORD=postgres would hide every `subprocess` and `postgres`."""
    environ = {
        "GITHUB_TOKEN": "ghp_inherited12345",
        "HOME": "/root/home",
        "AWS_SECRET_ACCESS_KEY": "aws/s3cr3t+k3y",
        "PIP_KEYRING_PROVIDER": "subprocess",
        "PGPASSWORD": "postgres",
        "SECRET_KEY": "development",
        "SSH_AUTH_SOCK": "/tmp/ssh-XXXXabc123/agent.42",
        "GPG_KEY_NOTE": "a key we use for 2 things",
        "KEYCLOAK_URL": "http://localhost:8080",
        "AWS_SECRET_KEY_2": "/abc+Def0123456789xyz",
    }
    secrets.remember_environment(environ)
    text = "token ghp_inherited12345, key aws/s3cr3t+k3y, key /abc+Def0123456789xyz, home /root/home"
    assert mask(text) == f"token {MASK}, key {MASK}, key {MASK}, home /root/home"
    settings = "subprocess.run postgres://app@db development http://localhost:8080/mcp a key we use for 2 things"
    assert mask(settings) == settings
    before = secrets.generation()
    secrets.remember_environment(environ)  # nothing new: nothing recompiled
    assert secrets.generation() == before
    secrets.remember_environment({**environ, "GITHUB_TOKEN": "ghp_rotated-67890"})  # a hook set a new one
    assert mask("ghp_rotated-67890 and ghp_inherited12345") == f"{MASK} and {MASK}"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("features/api_keys.feature:13: unknown kind", "features/api_keys.feature:13: unknown kind"),
        ("(token_store.py:42, in create)", "(token_store.py:42, in create)"),
        ("at api_keys.ts:12:5.", "at api_keys.ts:12:5."),
        ('app = "keystore_app:create" raised', 'app = "keystore_app:create" raised'),  # known: see below
        ('app = "keystore_app:other" raised', f'app = "keystore_app:{MASK}" raised'),  # not the spec
        ("API_KEY:abc123 and token:xyz987", f"API_KEY:{MASK} and token:{MASK}"),
        ("credentials.json: s3cr3t-value", f"credentials.json: {MASK}"),  # a space: an assignment
        ("secrets.json:hunter2 and deploy_key.c:s3cr3t", f"secrets.json:{MASK} and deploy_key.c:{MASK}"),
        ("it raised in keystore_app:create.", "it raised in keystore_app:create."),
    ],
)
def test_a_files_place_or_an_app_spec_is_no_secret_assignment(text: str, masked: str) -> None:
    """A feature about API keys (`api_keys.feature:13`) lost its line numbers in mcp-bdd's own
    messages, and a server module `keystore_app:create` its function name."""
    secrets.not_secret("keystore_app:create")
    assert mask(text) == masked


def test_a_value_known_first_as_a_line_of_another_still_gets_its_own_forms() -> None:
    """`remember` returns at once for a value it has seen whole, not for one it holds as a part."""
    remember("-----BEGIN-----\nl\u00efne_of_the_k\u00e9y_0123\n-----END-----")
    remember("l\u00efne_of_the_k\u00e9y_0123")
    assert MASK in mask(json.dumps({"v": "l\u00efne_of_the_k\u00e9y_0123"}))
    remember("first line\nBearer tok_abcdef123456")
    remember("Bearer tok_abcdef123456")
    assert mask("got tok_abcdef123456") == f"got {MASK}"


def test_the_password_of_a_urls_userinfo_is_masked_in_text() -> None:
    """A DSN quoted by an error message: postgres://user:PASSWORD@host."""
    assert mask("database at postgres://shop:hunter2pass@db:5432/x is unreachable") == (
        f"database at postgres://shop:{MASK}@db:5432/x is unreachable"
    )
    assert mask("redis://:pw-12345@cache:6379/0") == f"redis://:{MASK}@cache:6379/0"
    for plain in ("https://host:8080/mcp?x=1", "see https://user@host/", "mailto:a@b.c"):
        assert mask(plain) == plain


def test_a_value_is_masked_however_evidence_escapes_it_and_each_line_of_a_long_one() -> None:
    """Masking runs on encoded text: a failure's repr, a transcript's JSON. A multi-line key, a
    quote, a backslash or a non-ASCII letter is escaped there, where the plain value never matched."""
    import json

    key = '-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\nq"uo\\te-\u00e9-tail\n-----END KEY-----'
    remember(key)
    for shown in (key, repr(key), json.dumps(key), json.dumps(key, ensure_ascii=False)):
        assert "MIIEv" not in mask(f"token={shown}") and "uo" not in mask(shown), mask(shown)
    assert mask("a log line quoting MIIEvQIBADANBgkqhkiG9w0B alone") == f"a log line quoting {MASK} alone"
    # escaped twice: a failure's sentence writes as JSON an actual that quotes the text as a repr
    quoted = "sk\\live'7Hq2Wd9\"Xr4Lp8Zt"
    remember(quoted)
    for shown in (
        json.dumps(repr(quoted)),
        json.dumps(json.dumps(quoted)),
        repr(json.dumps(quoted)),
        repr(repr(quoted)),
    ):
        assert "7Hq2Wd9" not in mask(shown) and "Xr4Lp8Zt" not in mask(shown), mask(shown)
    remember("first-line-of-it\nshort\n")  # a short line alone is not masked: it would garble evidence
    assert mask("short and first-line-of-it") == f"short and {MASK}"


def test_printable_masks_and_shows_controls_and_bidi_overrides_as_escapes() -> None:
    from mcp_bdd._text import printable

    remember("s3cr3t-value")
    assert printable("a\x1b[2Jb\u202ec\td s3cr3t-value") == "a\\x1b[2Jb\\u202ec\td ****"
    assert printable("one\u2028two\u2029three") == "one\\u2028two\\u2029three"  # no lines of a server's own


def test_a_secret_in_a_key_is_masked_too() -> None:
    """A map keyed by API key, a schema property named after a token: keys are evidence too."""
    remember("tok-S3CRET-98765")
    value = {"keys": {"tok-S3CRET-98765": "active", "other": "x"}, "n": [{"tok-S3CRET-98765": 1}]}
    assert mask_data(value) == {"keys": {MASK: "active", "other": "x"}, "n": [{MASK: 1}]}
    clean = {"keys": {"other": "x"}}
    assert mask_data(clean) is clean


def test_terminal_json_escapes_what_would_drive_a_terminal_and_reads_back_the_same() -> None:
    """json.dumps(ensure_ascii=False) keeps DEL, C1 controls, bidi overrides and line separators
    raw; `--json` output escapes them the JSON way, so a reader gets the same data (secrets masked)."""
    from mcp_bdd._text import terminal_json

    remember("tok-S3CRET-98765")
    value = {"name": "shop\u202e\x7f\x9b\u2028", "é": "naïve", "tok-S3CRET-98765": "k"}
    text = terminal_json(value)
    assert not any(c in text for c in "\u202e\x7f\x9b\u2028"), text
    assert "naïve" in text and "tok-S3CRET" not in text
    assert json.loads(text) == {"name": "shop\u202e\x7f\x9b\u2028", "é": "naïve", MASK: "k"}


def test_a_servers_line_separators_do_not_add_lines_to_a_failure() -> None:
    from mcp_bdd._text import produced_by
    from mcp_bdd.transcript import Exchange

    request = Exchange(seq=1, kind="request", server="s", method="tools/call", payload={"name": "t"}, at=0.0)
    answer = Exchange(
        seq=2, kind="response", server="s", method="tools/call", payload={"text": "a\u2028b\x0bc"}, at=0.0, related=1
    )
    text = produced_by([request, answer])
    assert len(text.split("\n")) == 8 and text.seq == 1, text  # two headers, two 3-line JSON bodies


@pytest.mark.parametrize(
    ("name", "secret"),
    [("GH_AUTH", True), ("Authorization", True), ("auth_token", True), ("author", False), ("AUTHOR_NAME", False)],
)
def test_auth_is_a_secret_name_but_author_is_not(name: str, secret: bool) -> None:
    assert secrets.is_secret_name(name) is secret


def test_a_variable_under_a_secret_name_is_a_secret_once_used_or_saved() -> None:
    """A token a server issued and a scenario remembered as `access_token` (or user code put in
    the variables): masked wherever it shows from then on. An `author` is not a secret."""
    from mcp_bdd.variables import interpolate

    before = secrets.generation()
    assert interpolate("by ${author}", {"author": "Jane Doe"}) == "by Jane Doe"
    assert mask("Jane Doe") == "Jane Doe" and secrets.generation() == before
    assert interpolate("Bearer ${access_token}", {"access_token": "iss-0123456789"}) == "Bearer iss-0123456789"
    assert mask("got iss-0123456789") == f"got {MASK}" and secrets.generation() > before


class _Opaque:
    def __str__(self) -> str:
        return 'opaque q"uo\\te-\u00e9-s3cr3t-tail'


DUMPED = [
    {"plain": ["no", "secret", 1, 2.5, None, True], "nested": {"a": {"b": "c"}}},
    {"env": {"API_TOKEN": "short", "PATH": "/bin"}},  # masked by name inside a scope
    {"Headers": {"Authorization": "Bearer zz"}},  # a scope's key in any case
    {"ENVIRONMENT": {"SECRET_KEY": "short"}, "eNv": {"DB_PASSWORD": "short"}},
    {"result": 'prose that quotes q"uo\\te-\u00e9-s3cr3t-tail in the middle'},  # escaped in the text
    {'q"uo\\te-\u00e9-s3cr3t-tail': "a secret key"},
    {"line": "first-of-many-lines-secret and more"},
    {"obj": _Opaque()},  # dumped with default=str: the text shows the value, the walk decides
    {"env": "a string under a scope's name, not a mapping"},
    [{"payload": {"environ": {"DB_PASSWORD": "pw"}}}],
    # a result whose text is JSON: the secret in it is escaped once already, twice in the dump
    {"text": json.dumps({"password": 'q"uo\\te-\u00e9-s3cr3t-tail'})},
    {"text": json.dumps({"line": "first-of-many-lines-secret"}, ensure_ascii=True)},
    {"body": json.dumps({"k": 'q"uo\\te-\u00e9-s3cr3t-tail'}, ensure_ascii=False)},
    {"proxy": MappingProxyType({"env": {"API_KEY": "short"}})},  # a Mapping that is not a dict
    {(1, 2): "a tuple key", "ok": 1},  # json.dumps cannot write it: the walk does, as before
]


@pytest.mark.parametrize("value", DUMPED)
def test_dumps_masked_is_json_dumps_of_mask_data_whichever_way_it_takes(value: object) -> None:
    """The text fast path (no walk when the dumped text shows nothing to mask) must agree with the
    walk everywhere: remembered values escaped in the text, scopes in any case, secret keys."""
    remember('q"uo\\te-\u00e9-s3cr3t-tail')
    remember("first-of-many-lines-secret\nsecond-line-of-the-secret")
    expected = json.dumps(mask_data(value), default=str)
    assert secrets.dumps_masked(value) == expected
    if "obj" not in value:  # mask_data leaves an object that is not JSON to its str(), as it did
        assert "s3cr3t" not in expected and "first-of-many" not in expected and "short" not in expected


def test_dumps_masked_of_data_with_nothing_to_mask_is_its_json() -> None:
    value = {"tools": [{"name": "add", "inputSchema": {"properties": {"api_key": {"type": "string"}}}}]}
    assert secrets.dumps_masked(value) == json.dumps(value)


@pytest.mark.parametrize(
    "logged",
    [
        "GET /cb?token=ab%2Fcd%2Bef%20gh%3D%3D HTTP/1.1",  # quote(safe="")
        "GET /cb?token=ab%2fcd%2bef%20gh%3d%3d HTTP/1.1",  # the same in lower-case hex
        "POST /cb token=ab%2Fcd%2Bef+gh%3D%3D HTTP/1.1",  # a form body: quote_plus
        "GET /cb/ab/cd%2Bef%20gh%3D%3D HTTP/1.1",  # a path segment: quote (safe="/")
    ],
)
def test_a_value_is_masked_as_a_url_encodes_it(logged: str) -> None:
    """A base64 token holds `/`, `+` and `=`: in a logged URL or a form body it is percent-encoded,
    and the plain value never matched there."""
    remember("ab/cd+ef gh==")
    masked = mask(logged)
    assert "cd" not in masked and MASK in masked, masked
    assert "cd" not in secrets.dumps_masked({"line": logged})


def test_the_value_of_a_secret_option_on_a_command_line_is_remembered_and_settings_are_not(tmp_path: Path) -> None:
    """`redis-server --requirepass hunter22` showed its password in every message that quotes its
    command line. An option that only holds a secret word takes a setting, and a remembered value
    is masked everywhere: `--no-auth serve` would hide every "serve", `--bypass stdio` every
    "stdio". A one-letter option's meaning is the program's own; a value that names a file is a
    path."""
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "dev.pem").write_text("")
    secret = [
        ("--requirepass", "hunter22"),
        ("--api-key=ak-77-value", None),
        ("--db-password", "pw-value-1"),
        ("--masterauth", "replica-pw"),
        ("--client-secret", "cs-value-2"),
        ("--auth-token", "at-value-3"),
        ("--cookie", "session=ck-value-4"),
        ("--AUTHORIZATION=Bearer bt-value-5", None),
        ("-token", "go-value-6"),  # Go's flags: one dash
        ("--secret-key", "sk-value-7"),
    ]
    setting = [
        ("--keyspace", "analytics"),
        ("--token-ttl", "360000"),
        ("--authenticationDatabase", "administrators"),
        ("--no-auth", "serve"),
        ("--no-password", "prompt"),
        ("--bypass", "stdio"),
        ("--auth", "basic"),
        ("--sort-key", "price"),
        ("--tls-key", "certs/server.key"),
        ("--secret-key", "keys/dev.pem"),  # a file: a path, not the secret
        ("-p", "shortopt1"),
        ("--password", None),  # the next is another option, not its value
        ("--verbose", None),
    ]
    argv = ["redis-server", *(arg for pair in secret + setting for arg in pair if arg is not None)]
    secrets.remember_argv(argv, str(tmp_path))
    masked = mask(" ".join(argv))
    for option, value in secret:
        assert (value or option.split("=", 1)[1].removeprefix("Bearer ")) not in masked, masked
    for option, value in setting:
        assert (f"{option} {value}" if value else option) in masked, masked
    assert mask("AUTH hunter22 failed") == f"AUTH {MASK} failed"  # and wherever the program echoes it
    assert mask("serve stdio basic price prompt") == "serve stdio basic price prompt"
