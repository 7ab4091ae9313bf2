"""`mcp-bdd check`'s Apps group both ways: every defect planted in tests/servers/bad_apps.py is found,
and the demo cart (demo/cart_app.py, written with `mcp.server.apps`) gets no Apps finding.

Both servers run in-memory through a throwaway project, as a user's configured server would; the
real third-party Apps are checked over stdio in tests/test_realworld.py.
"""

from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from servers.bad_apps import CLEAN, PLANTED

from mcp_bdd.check import REGISTRY
from mcp_bdd.check._command import CheckCommand, run_check_command
from mcp_bdd.check.checks.apps import _EVERYWHERE

pytestmark = pytest.mark.slow

APPS = sorted(check_id for check_id in REGISTRY if check_id.startswith("apps."))


def _report(project: Path, target: str, *args: str) -> dict[str, Any]:
    """One `mcp-bdd check --only apps --json` of a configured server, read back."""
    old = Path.cwd()
    os.chdir(project)
    try:
        out = StringIO()
        code = run_check_command(CheckCommand(target=[target], only=["apps", *args], as_json=True), out)
    finally:
        os.chdir(old)
    data: dict[str, Any] = json.loads(out.getvalue())
    data["_exit"] = code
    return data


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    project = tmp_path_factory.mktemp("bad-apps")
    calls = project / "calls.txt"
    (project / "mcp-bdd.toml").write_text(
        f'[servers.bad]\napp = "servers.bad_apps:create_server"\nenv = {{ BAD_APPS_CALLS = "{calls}" }}\n'
    )
    return _report(project, "bad"), calls


def test_the_apps_checks_are_registered_in_their_group() -> None:
    assert APPS == ["apps.binding", "apps.csp", "apps.mime-type", "apps.text-fallback", "apps.visibility"]
    assert {REGISTRY[c].group for c in APPS} == {"apps"}


@pytest.mark.parametrize(("check_id", "target"), PLANTED, ids=[f"{c}@{t}" for c, t in PLANTED])
def test_every_planted_apps_defect_is_found(bad: tuple[dict[str, Any], Path], check_id: str, target: str) -> None:
    found = [(f["check"], f["target"]) for f in bad[0]["findings"]]
    assert (check_id, target) in found, f"{check_id} on {target} not found; found:\n" + "\n".join(map(str, found))


def test_nothing_else_is_found_and_no_write_is_made(bad: tuple[dict[str, Any], Path]) -> None:
    report, calls = bad
    assert report["_exit"] == 1
    found = {(f["check"], f["target"]) for f in report["findings"]}
    assert found == set(PLANTED), found ^ set(PLANTED)
    for name in CLEAN:
        assert not [f for f in report["findings"] if f["target"] == f"tool {name}"]
    # place_order has an app and no text, but is not read-only: never called, and the notes say so
    assert not calls.exists()
    assert any("place_order" in note and "not judged" in note for note in report["notes"])


def test_the_findings_say_what_the_host_reads(bad: tuple[dict[str, Any], Path]) -> None:
    by = {(f["check"], f["target"]): f for f in bad[0]["findings"]}
    web = by[("apps.binding", "tool web_page")]
    assert "https://example.com/app.html" in web["title"] and "not a ui:// resource" in web["title"]
    missing = by[("apps.binding", "tool missing_app")]
    assert missing["call"]["method"] == "resources/read" and missing["severity"] == "high"
    assert '"text/html"' in by[("apps.mime-type", "resource ui://bad/plain.html")]["title"]
    assert '["model", "app"]' in by[("apps.visibility", "tool admin_string")]["details"]
    assert "offer it to the model" in by[("apps.visibility", "tool admin_string")]["title"]
    assert "neither" in by[("apps.visibility", "tool admin_misspelt")]["title"]
    assert "ui/visibility" in by[("apps.visibility", "tool admin_flat")]["details"]
    silent = by[("apps.text-fallback", "tool silent_view")]
    assert silent["call"]["params"]["name"] == "silent_view" and silent["call"]["response"]["content"] == []
    csp = by[("apps.csp", "resource ui://bad/open.html")]
    assert "connectDomains: '*'" in csp["title"] and "resourceDomains: 'https:'" in csp["title"]
    assert "unsafe-eval" in csp["title"] and csp["severity"] == "high"


def test_the_demo_cart_gets_no_apps_finding(tmp_path: Path) -> None:
    (tmp_path / "mcp-bdd.toml").write_text('[servers.cart]\napp = "demo.cart_app:create_server"\n')
    report = _report(tmp_path, "cart")
    assert report["_exit"] == 0 and report["findings"] == [], report["findings"]
    assert set(report["checks"]) == set(APPS)
    # show_cart is not annotated read-only: never called, so its fallback is not judged, and said so
    assert any("show_cart" in note and "not judged" in note for note in report["notes"])


@pytest.mark.parametrize(
    ("source", "everywhere"),
    [
        ("*", True),
        ("https:", True),
        ("wss:", True),
        ("https://*", True),
        ("*://*", True),
        ("https://*.com", True),
        ("http://*:*", True),
        ("https://*.example.com", False),
        ("https://api.example.com", False),
        ("https://unpkg.com", False),
        ("'self'", False),
    ],
)
def test_what_allows_everything(source: str, everywhere: bool) -> None:
    assert bool(_EVERYWHERE.match(source)) is everywhere
