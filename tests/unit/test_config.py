from __future__ import annotations

from pathlib import Path

import pytest

from mcp_bdd.config import AppServer, CommandServer, UrlServer, load_config, parse_config
from mcp_bdd.errors import ConfigError, UsageError
from mcp_bdd.variables import interpolate, names_in


def parse(raw: dict[str, object]):  # type: ignore[no-untyped-def]
    return parse_config(raw, source="pyproject.toml [tool.mcp-bdd]", root=Path("."))


def test_one_model_per_server_kind() -> None:
    config = parse(
        {
            "servers": {
                "shop": {"app": "demo.shop:create_server", "env": {"A": "1"}},
                "time": {"command": "mcp-server-time --local-timezone UTC"},
                "remote": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer t"}},
            }
        }
    )
    assert isinstance(config.servers["shop"], AppServer)
    time = config.servers["time"]
    assert isinstance(time, CommandServer) and time.command == ["mcp-server-time", "--local-timezone", "UTC"]
    assert isinstance(config.servers["remote"], UrlServer)
    assert config.transport == "in-memory" and config.protocol == "auto" and config.scope == "scenario"


def test_unknown_top_level_key_names_key_file_and_closest() -> None:
    with pytest.raises(ConfigError) as err:
        parse({"transprt": "stdio"})
    assert 'unknown key "transprt"' in str(err.value)
    assert 'Did you mean "transport"?' in str(err.value)
    assert "pyproject.toml [tool.mcp-bdd]" in str(err.value)


def test_pin_threads_is_no_longer_a_key() -> None:
    """mcp-bdd no longer pins CPUs (design.md: nothing is patched for speed): an old config that
    names the key is told, like any unknown key, where it is."""
    with pytest.raises(ConfigError) as err:
        parse({"pin_threads": False})
    assert 'unknown key "pin_threads"' in str(err.value) and "pyproject.toml [tool.mcp-bdd]" in str(err.value)


def test_unknown_server_key_names_the_section() -> None:
    with pytest.raises(ConfigError) as err:
        parse({"servers": {"shop": {"app": "a:b", "evn": {}}}})
    assert "[servers.shop]" in str(err.value) and 'Did you mean "env"?' in str(err.value)


def test_server_kinds_cannot_be_combined_or_missing() -> None:
    with pytest.raises(ConfigError, match="cannot be combined"):
        parse({"servers": {"x": {"app": "a:b", "command": ["y"]}}})
    with pytest.raises(ConfigError, match="exactly one of `app`"):
        parse({"servers": {"x": {"env": {}}}})


def test_bad_values_are_explained() -> None:
    with pytest.raises(ConfigError, match='unknown transport "htp"'):
        parse({"transport": "htp"})
    with pytest.raises(ConfigError, match="Valid protocols"):
        parse({"protocol": "2024"})
    with pytest.raises(ConfigError, match="timeout"):
        parse({"timeout": -1})
    with pytest.raises(ConfigError, match='"module:attribute"'):
        parse({"servers": {"x": {"app": "nocolon"}}})


def test_default_server_must_exist() -> None:
    with pytest.raises(ConfigError, match='Did you mean "shop"'):
        parse({"server": "shp", "servers": {"shop": {"app": "a:b"}}})


def test_transport_a_server_cannot_serve_is_refused_with_what_it_can() -> None:
    with pytest.raises(ConfigError, match="it can serve: stdio"):
        parse({"servers": {"t": {"command": ["x"], "transport": "sse"}}})


def test_transport_spellings_and_fallback() -> None:
    config = parse(
        {"servers": {"t": {"command": ["x"], "http": {"command": ["x"], "url": "http://127.0.0.1:${port}/mcp"}}}}
    )
    # the implicit default (in-memory) falls back to what a command server can do
    assert config.transport_for("t") == "stdio"
    assert parse({"transport": "streamable HTTP"}).transport == "streamable-http"
    assert parse({"transport": "SSE"}).transport == "sse"


def test_userdata_overrides_top_level(tmp_path: Path) -> None:
    (tmp_path / "mcp-bdd.toml").write_text('[servers.shop]\napp = "a:b"\n')
    config = load_config(tmp_path, userdata={"transport": "stdio", "protocol": "legacy", "timeout": "5"})
    assert (config.transport, config.protocol, config.timeout) == ("stdio", "legacy", 5.0)
    assert config.default_server() == "shop"
    assert str(tmp_path / "mcp-bdd.toml") in config.source


def test_pyproject_section_is_found_from_a_subfolder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\n[tool.mcp-bdd]\nscope = "feature"\n')
    (tmp_path / "features").mkdir()
    assert load_config(tmp_path / "features").scope == "feature"


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "mcp-bdd.toml").write_text("servers = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tmp_path)


def test_interpolation_of_variables_env_uuid_and_escape() -> None:
    out = interpolate("${user}-${env.HOME_X}-$${literal}", {"user": "ada"}, environ={"HOME_X": "h"})
    assert out == "ada-h-${literal}"
    a, b = interpolate("${uuid}", {}), interpolate("${uuid}", {})
    assert a != b and len(a) == 36
    assert names_in("a ${x} $${y} ${z.w}") == ["x", "z.w"]


def test_unknown_variable_lists_available_names() -> None:
    with pytest.raises(UsageError) as err:
        interpolate("${ordr}", {"order": "1"}, where="features/a.feature:3")
    text = str(err.value)
    assert text.startswith("features/a.feature:3:")
    assert 'Did you mean "order"?' in text and "env.<NAME>" in text


def test_missing_env_variable_is_explained() -> None:
    with pytest.raises(UsageError, match=r'"NOPE_X" .* is not set'):
        interpolate("${env.NOPE_X}", {}, environ={})


def test_fake_placeholders_go_through_the_callback() -> None:
    seen: list[tuple[str, str]] = []

    def fake(name: str, attr: str) -> str:
        seen.append((name, attr))
        return "http://127.0.0.1:1"

    assert interpolate("${fake.payments.url}/x", {}, fake=fake) == "http://127.0.0.1:1/x"
    assert seen == [("payments", "url")]
    with pytest.raises(UsageError, match=r"\$\{fake.<name>.<attribute>\}"):
        interpolate("${fake.payments}", {}, fake=fake)


def test_endpoint_keys_are_checked_with_suggestions() -> None:
    with pytest.raises(ConfigError) as err:
        parse({"servers": {"x": {"command": ["y"], "http": {"command": ["y"], "url": "u", "evn": {}}}}})
    assert '[servers.x].http: unknown key "evn". Did you mean "env"?' in str(err.value)
    with pytest.raises(ConfigError, match="needs `url`"):
        parse({"servers": {"x": {"command": ["y"], "sse": {"command": ["y"]}}}})


def test_context_built_ins_win_over_scenario_variables() -> None:
    assert interpolate("${i}-${port}", {"i": "x", "port": "y"}, extra={"i": "3", "port": "8080"}) == "3-8080"


def test_an_unknown_server_is_told_where_servers_go_in_the_files_own_form(tmp_path: Path) -> None:
    """A mcp-bdd.toml has `[servers.<name>]`; pyproject.toml `[tool.mcp-bdd.servers.<name>]`."""
    toml = parse_config({"servers": {"shop": {"app": "a:b"}}}, source=str(tmp_path / "mcp-bdd.toml"), root=tmp_path)
    with pytest.raises(UsageError) as err:
        toml.server_named("shp")
    assert "[servers.<name>] in" in str(err.value) and "tool.mcp-bdd" not in str(err.value)
    assert "[tool.mcp-bdd.servers.<name>] in pyproject.toml" in parse({}).where_servers_go()
