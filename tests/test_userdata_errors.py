"""A bad `-D` value names `-D` as its source, is printed once, and is not called an abort "by user";
an unknown key inside a server section gets a "did you mean" and the valid keys, like a top-level key."""

from __future__ import annotations

from pathlib import Path

import pytest
from behave_project import SHOP, make_project, run_behave

from mcp_bdd.config import load_config
from mcp_bdd.errors import ConfigError

FEATURE = {"a.feature": 'Feature: x\n  Scenario: y\n    Given the MCP server "shop" is running\n'}


@pytest.mark.parametrize(
    ("userdata", "expected"),
    [
        ({"transport": "bogus"}, '-D transport=bogus (behave userdata): transport: unknown transport "bogus"'),
        ({"timeout": "abc"}, "-D timeout=abc (behave userdata): timeout: Input should be a valid number"),
        ({"server": "shp"}, '-D server=shp (behave userdata): server = "shp" names no configured server. Did you mean'),
        ({"timeout": "5", "scope": "x"}, "-D scope=x (behave userdata): scope:"),
    ],
)
def test_a_bad_userdata_value_is_blamed_on_its_d(tmp_path: Path, userdata: dict[str, str], expected: str) -> None:
    (tmp_path / "mcp-bdd.toml").write_text('[servers.shop]\napp = "a:b"\n')
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, userdata=userdata)
    assert str(err.value).startswith(expected), str(err.value)
    assert "mcp-bdd.toml" not in str(err.value)


def test_the_file_is_still_blamed_for_its_own_mistakes(tmp_path: Path) -> None:
    (tmp_path / "mcp-bdd.toml").write_text('transprt = "stdio"\n[servers.shop]\napp = "a:b"\n')
    with pytest.raises(ConfigError, match=r"mcp-bdd\.toml: unknown key \"transprt\""):
        load_config(tmp_path, userdata={"transport": "stdio"})
    good = load_config(data={"servers": {"s": {"app": "a:b"}}}, userdata={"timeout": "3", "mcp_bdd.title": "x"})
    assert good.timeout == 3.0


def test_an_unknown_server_key_gets_did_you_mean_and_the_valid_keys() -> None:
    with pytest.raises(ConfigError) as err:
        load_config(data={"servers": {"time": {"comand": ["mcp-server-time"]}}}, source="mcp-bdd.toml")
    message = str(err.value)
    assert 'mcp-bdd.toml [servers.time]: unknown key "comand". Did you mean "command"?' in message
    # whole: "Valid keys: app, ..." was printed "Valid keys: ****, ..." (read as a NAME: value secret)
    assert "Valid keys are app, " in message and "url" in message and "****" not in message, message


def test_behave_prints_a_bad_d_once_and_no_abort_by_user(tmp_path: Path) -> None:
    root = make_project(tmp_path, SHOP, FEATURE)
    run = run_behave(root, "-D", "transport=bogus")
    assert run.returncode != 0
    assert run.output.count('unknown transport "bogus"') == 1, run.output
    assert "-D transport=bogus (behave userdata)" in run.output
    assert "mcp-bdd.toml" not in run.output
    assert "By user" not in run.output
