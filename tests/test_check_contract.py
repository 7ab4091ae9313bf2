"""The contract lock: classification of differences (pure), and one file shared by
`mcp-bdd contract`, `mcp-bdd check --contract` and `mcp-bdd probe --baseline`."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_bdd.cli import main
from mcp_bdd.contract import Surface, compare, tools_hash
from mcp_bdd.probe import compare as probe_compare
from mcp_bdd.probe import tools_hash as probe_tools_hash

TOOL: dict[str, Any] = {
    "name": "search",
    "description": "Search the catalog by text.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "limit": {"type": ["integer", "null"]},
            "sort": {"type": "string", "enum": ["price", "name"]},
        },
        "required": ["query"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"items": {"type": "array"}, "total": {"type": "integer"}},
        "required": ["items", "total"],
    },
    "annotations": {"readOnlyHint": True},
}


def _surface(*tools: dict[str, Any], prompts: dict[str, Any] | None = None) -> Surface:
    return Surface(
        name="s", version="1", protocol="p", transport="t", target="x",
        tools={t["name"]: t for t in tools}, prompts=prompts or {},
    )  # fmt: skip


def _changed(edit: Any) -> list[tuple[str, str]]:
    new = copy.deepcopy(TOOL)
    edit(new)
    return [(c.category, c.text) for c in compare(_surface(TOOL), _surface(new)).items]


def test_a_tools_title_is_recorded_and_its_change_is_said() -> None:
    """Hosts show a tool's top-level title; the lock ignored it (issue: protocol 2026, metadata)."""
    titled = {**TOOL, "title": "Search the catalog"}
    assert tools_hash([titled]) != tools_hash([TOOL])
    assert _changed(lambda t: t.update(title="Find products")) == [("routing", "title changed: None -> 'Find products'")]


def test_one_implementation_with_probe() -> None:
    assert probe_compare is compare and probe_tools_hash is tools_hash


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t["inputSchema"]["required"].append("sort"), ("breaking", "argument 'sort' became required")),
        (lambda t: t["inputSchema"]["properties"].pop("limit"), ("breaking", "argument 'limit' removed")),
        (lambda t: t["inputSchema"]["properties"]["limit"].update(type="integer"),
         ("breaking", "argument 'limit' type ['integer', 'null'] -> ['integer']")),
        (lambda t: t["inputSchema"]["properties"]["sort"].update(enum=["price"]),
         ("breaking", "argument 'sort' enum value(s) removed: \"name\"")),
        (lambda t: t["outputSchema"]["properties"].pop("total"), ("breaking", "output field 'total' removed")),
        (lambda t: t["outputSchema"]["required"].remove("total"),
         ("breaking", "output field 'total' is no longer always present")),
        (lambda t: t.update(description="Find products."),
         ("routing", "description changed (it changes what the model picks)")),
        (lambda t: t["inputSchema"]["properties"]["query"].update(description="Text."),
         ("routing", "argument 'query' description changed")),
        (lambda t: t["annotations"].update(destructiveHint=False),
         ("annotations", "annotations changed: destructiveHint None -> False")),
        (lambda t: t["inputSchema"]["properties"].update(page={"type": "integer"}), ("additive", "argument 'page' added")),
        (lambda t: t["inputSchema"]["properties"]["sort"].update(enum=["price", "name", "date"]),
         ("additive", "argument 'sort' enum value(s) added: \"date\"")),
        (lambda t: t["inputSchema"]["properties"]["limit"].update(type=["integer", "null", "string"]),
         ("additive", "argument 'limit' type ['integer', 'null'] -> ['integer', 'null', 'string']")),
    ],
)  # fmt: skip
def test_classification(edit: Any, expected: tuple[str, str]) -> None:
    assert _changed(edit) == [expected]


def test_tools_and_prompts_added_and_removed() -> None:
    other = {**TOOL, "name": "other"}
    prompt = {"name": "p", "arguments": [{"name": "x", "required": False}]}
    stricter = {"name": "p", "arguments": [{"name": "x", "required": True}]}
    changes = compare(_surface(TOOL, prompts={"p": prompt}), _surface(other, prompts={"p": stricter}))
    assert sorted((c.category, c.kind, c.key, c.text) for c in changes.items) == [
        ("additive", "tool", "other", "added"),
        ("breaking", "prompt", "p", "argument 'x' became required"),
        ("breaking", "tool", "search", "removed"),
    ]
    assert changes.worst() == "breaking"
    assert changes.lines == ["+ tool added: other", "- tool removed: search", "~ prompt changed: p (arguments)"]


SHOP = """\
[tool.mcp-bdd.servers.shop]
app = "demo.shop:create_server"
env = { SHOP_DB = "${fake.shop.path}", PAYMENTS_URL = "${fake.payments.url}" }
"""


@pytest.mark.slow
def test_contract_command_and_probe_read_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(SHOP)
    monkeypatch.chdir(tmp_path)
    contract = tmp_path / "contracts" / "shop.json"
    assert main(["contract", "update", str(contract), "shop"]) == 0
    assert capsys.readouterr().out.startswith(f"recorded: {contract}")
    assert main(["contract", "verify", str(contract), "shop"]) == 0
    assert main(["probe", "--server", "shop", "--baseline", str(contract)]) == 0  # probe reads the same file
    capsys.readouterr()

    data = json.loads(contract.read_text())
    data["tools"]["add"]["description"] = "An older text."
    contract.write_text(json.dumps(data))
    assert main(["contract", "verify", str(contract), "shop", "--fail-on", "breaking"]) == 0
    assert main(["probe", "--server", "shop", "--baseline", str(contract), "--fail-on", "breaking"]) == 0
    assert '[routing] tool "add": description changed' in capsys.readouterr().out  # probe classifies alike
    assert main(["contract", "verify", str(contract), "shop", "--json"]) == 1
    capsys.readouterr()
    assert main(["contract", "verify", str(contract), "shop", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["changes"] == [
        {
            "category": "routing",
            "kind": "tool",
            "key": "add",
            "text": "description changed (it changes what the model picks)",
        }
    ]
    data["tools"]["retired"] = {"name": "retired", "description": "Was here."}
    contract.write_text(json.dumps(data))
    assert main(["contract", "verify", str(contract), "shop", "--fail-on", "breaking"]) == 1
    assert '[breaking] tool "retired": removed' in capsys.readouterr().out
    assert main(["probe", "--server", "shop", "--baseline", str(contract), "--fail-on", "breaking", "--json"]) == 1
    probed = json.loads(capsys.readouterr().out)
    assert "- tool removed: retired" in probed["changes"] and probed["worst"] == "breaking"
    assert {"category": "breaking", "kind": "tool", "key": "retired", "text": "removed"} in probed["classified"]
    # check --contract turns each difference into a finding (breaking: high)
    assert main(["check", "shop", "--only", "protocol.identity", "--contract", str(contract), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert {(f["check"], f["severity"], f["target"]) for f in findings} == {
        ("contract.matches", "high", "tool retired"), ("contract.matches", "medium", "tool add")
    }  # fmt: skip
    assert main(["contract", "verify", str(tmp_path / "missing.json"), "shop"]) == 2
    assert "mcp-bdd contract update" in capsys.readouterr().err


@pytest.mark.slow
def test_a_name_listed_twice_is_said_never_dropped_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The contract kept one of two same-named tools (22 of 23 recorded) without a word."""
    server = [sys.executable, str(Path(__file__).parent / "servers" / "catalog.py"), "--tools", "3", "--duplicate"]
    contract = tmp_path / "contract.json"
    assert main(["contract", "update", str(contract), "--", *server]) == 0
    out = capsys.readouterr().out
    said = 'the server lists 2 tools named "get_order_0": the contract keeps the first one listed'
    assert "(3 tools of 4 listed, sha256" in out and f"  warning: {said}" in out, out
    data = json.loads(contract.read_text(encoding="utf-8"))
    assert data["duplicates"] == {"tools": {"get_order_0": 2}}
    assert data["tools"]["get_order_0"]["description"].startswith("Get the order records")  # the first one
    assert main(["contract", "verify", str(contract), "--", *server]) == 0
    assert f"(note) {said}" in capsys.readouterr().out
    code = main(["check", "--only", "contract", "--contract", str(contract), "--json", "--", *server])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert code == 1 and [(f["severity"], f["target"]) for f in findings] == [("medium", "tool get_order_0")]
    assert findings[0]["title"].endswith("only the first one is compared with the contract")
