"""Helpers of the report tests: run behave on the sample project; build tiny model objects."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_bdd.report.model import Evidence, Exchange, Feature, Run, Scenario, Step

REPO = Path(__file__).resolve().parents[2]
#: headless Chromium and its driver (Debian's `chromium` + `chromium-driver`), None when missing
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
DRIVER = shutil.which("chromedriver")
SAMPLE = Path(__file__).resolve().parent / "sample_project"
FORMATTER = "mcp_bdd.report:LivingDocFormatter"


def run_behave(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m behave ARGS features/` in `project`, with this checkout importable (and `env` added)."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}  # CI's own summary stays ours
    env = {**base, "PYTHONPATH": path, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "behave", *args, "features/"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@dataclass
class SampleRun:
    project: Path
    html: Path
    data: dict[str, Any]
    proc: subprocess.CompletedProcess[str]

    @property
    def text(self) -> str:
        return self.html.read_text(encoding="utf-8")


def make_sample_run(root: Path, label: str = "stdio", *extra: str, files: dict[str, str] | None = None) -> SampleRun:
    """The sample project copied to `root/project` (plus `files`: relative path -> text), run once."""
    project = root / "project"
    shutil.copytree(SAMPLE, project)
    for name, text in (files or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    proc = run_behave(
        project,
        "-f",
        FORMATTER,
        "-o",
        "reports/living-doc.html",
        "-f",
        "mcp_bdd.report:JUnitFormatter",
        "-o",
        "reports/junit.xml",
        "-D",
        f"transport={label}",
        "-D",
        "mcp_bdd.title=Shop <MCP> server",
        *extra,
    )
    html = project / "reports" / "living-doc.html"
    assert html.exists(), f"no report written\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    data = json.loads((project / "reports" / "living-doc.json").read_text(encoding="utf-8"))
    return SampleRun(project, html, data, proc)


def exchange(seq: int, kind: str, method: str, payload: Any, related: int | None = None, **kw: Any) -> Exchange:
    target = None
    if kind == "request" and isinstance(payload, dict):
        target = payload.get("name") or payload.get("uri")
    is_error = kind == "error" or (isinstance(payload, dict) and payload.get("isError") is True)
    return Exchange(
        seq=seq,
        kind=kind,
        server=kw.pop("server", "shop"),
        method=method,
        at=0.0,
        related=related,
        payload=payload,
        target=target,
        is_error=is_error,
        **kw,
    )


def scenario(sid: str, status: str = "passed", exchanges: tuple[Exchange, ...] = (), **kw: Any) -> Scenario:
    step = Step(
        keyword="When",
        name=kw.pop("step_name", "I do it"),
        step_type="when",
        location="features/x.feature:5",
        status=status,  # type: ignore[arg-type]
        error_message=kw.pop("error", None),
        evidence=Evidence(exchanges=exchanges),
    )
    return Scenario(
        id=sid,
        name=kw.pop("name", sid),
        keyword="Scenario",
        location="features/x.feature:4",
        status=status,  # type: ignore[arg-type]
        steps=(step,),
        **kw,
    )


def feature(fid: str, *children: Any, filename: str = "features/tools/x.feature", **kw: Any) -> Feature:
    return Feature(
        id=fid,
        name=kw.pop("name", fid),
        keyword="Feature",
        filename=filename,
        location=f"{filename}:1",
        status=kw.pop("status", "passed"),
        children=children,
        **kw,
    )


def run(*features: Feature, **kw: Any) -> Run:
    return Run(features=features, **kw)


def open_page(driver: Any, url: str, timeout: float = 10.0) -> None:
    """Load a report in the browser and wait until its script has unpacked the page data."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    ready = "return document.documentElement.getAttribute('data-ready')"
    WebDriverWait(driver, timeout, poll_frequency=0.02).until(lambda d: d.execute_script(ready) == "1")
