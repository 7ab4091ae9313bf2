"""Report scale benchmark: 1,000 scenarios x 5 steps with MCP transcripts -> one HTML page.

Targets (issue 11): the page under 3 MB and rendered in under 2 s; with --own-features, this
repository's own features (`behave features/` with the living-doc formatter) under 1 MB of HTML.
Transcripts go through the same parsing as a real run (`parse_attachment` on JSON bytes: image
extraction, the 20 kB cut, masking), then the page and the run JSON are written. Timing is
printed, also as a ratio to writing the run's JSON in the same process (a baseline that moves
with the machine), never asserted; exits 1 only when a size target is missed.

    .venv/bin/python benchmarks/report_scale.py [--scenarios 1000] [--steps 5] [--out DIR] [--own-features] [--browser]
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_bdd.report.evidence import parse_attachment, surface_from_json
from mcp_bdd.report.formatter import write_run_json
from mcp_bdd.report.model import Evidence, Exchange, Feature, Rule, Run, Scenario, Status, Step, StepDef
from mcp_bdd.report.render import write_html
from mcp_bdd.transcript import TRANSCRIPT_MIME

TIME_TARGET_S = 2.0
SIZE_BUDGET_B = 3_000_000
OWN_SIZE_BUDGET_B = 1_000_000
ROOT = Path(__file__).resolve().parent.parent


def _png(width: int, height: int) -> str:
    """A real (noisy, so incompressible-ish) PNG as base64, made without any imaging library."""
    raw = b"".join(b"\x00" + bytes((x * 7 + y * 13) % 256 for x in range(width * 3)) for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + tag + data + zlib.crc32(tag + data).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _transcript(n: int, step: int, image: str) -> bytes:
    """What one step attaches: a tools/call request and its result; now and then big or visual."""
    now = time.time()
    request = {
        "name": f"tool_{n % 20}",
        "arguments": {"sku": f"SKU-{n:05d}", "quantity": step + 1, "note": "x" * 40},
    }
    text = json.dumps({"order": n, "lines": [{"sku": f"SKU-{i:05d}", "price": i * 1.25} for i in range(8)]})
    content: list[dict[str, str]] = [{"type": "text", "text": text}]
    if (n * 5 + step) % 50 == 0:  # a large payload: must be cut at 20 kB
        content = [{"type": "text", "text": "row;" * 30_000}]
    if (n * 5 + step) % 200 == 0:  # a screenshot
        content.append({"type": "image", "data": image, "mimeType": "image/png"})
    result = {
        "content": content,
        "structuredContent": {"order": n, "total": n * 3.5, "currency": "EUR"},
        "isError": n % 37 == 0,
    }
    items = [
        {
            "seq": 1,
            "kind": "request",
            "server": "shop",
            "method": "tools/call",
            "payload": request,
            "at": now,
        },
        {
            "seq": 2,
            "kind": "response",
            "server": "shop",
            "method": "tools/call",
            "payload": result,
            "at": now,
            "duration_ms": 1.2,
            "related": 1,
        },
    ]
    return json.dumps(items).encode()


def synthetic_run(scenarios: int, steps: int) -> Run:
    image = _png(64, 48)
    features = []
    per_feature = 25
    for f in range(0, scenarios, per_feature):
        children: list[Scenario | Rule] = []
        for n in range(f, min(f + per_feature, scenarios)):
            step_list = []
            for s in range(steps):
                status: Status = "failed" if (n % 23 == 0 and s == steps - 1) else "passed"
                parsed = parse_attachment(TRANSCRIPT_MIME, _transcript(n, s, image))
                assert isinstance(parsed, tuple) and all(isinstance(x, Exchange) for x in parsed)
                step_list.append(
                    Step(
                        keyword=("Given", "When", "Then", "And", "And")[s % 5],
                        name=f"the customer orders {s + 1} of SKU-{n:05d}",
                        step_type="given",
                        location=f"features/cap{f // 200}/f{f}.feature:{10 + n}",
                        status=status,
                        duration=0.002,
                        error_message="ASSERT FAILED: Expected total 12, got 11" if status == "failed" else None,
                        evidence=Evidence(exchanges=parsed),
                    )
                )
            children.append(
                Scenario(
                    id=f"f{f}--s{n}",
                    name=f"Ordering item {n}",
                    keyword="Scenario",
                    location=f"features/cap{f // 200}/f{f}.feature:{10 + n}",
                    status="failed" if n % 23 == 0 else "passed",
                    duration=0.01,
                    tags=("orders", f"batch{n % 4}"),
                    steps=tuple(step_list),
                )
            )
        features.append(
            Feature(
                id=f"f{f}",
                name=f"Orders {f}",
                keyword="Feature",
                filename=f"features/cap{f // 200}/f{f}.feature",
                location=f"features/cap{f // 200}/f{f}.feature:1",
                status="failed",
                duration=0.25,
                description=("Customers order items through the shop's MCP tools.",),
                children=tuple(children),
            )
        )
    surface = surface_from_json(
        {
            "server": "shop",
            "name": "Shop",
            "version": "1.0",
            "protocol": "2026-07-28",
            "transport": "stdio",
            "tools": [
                {"name": f"tool_{i}", "description": f"Tool {i}", "inputSchema": {"type": "object"}} for i in range(25)
            ],
        }
    )
    glossary = tuple(
        StepDef(step_type="given", pattern=f"phrase {i}", location=f"steps/s.py:{i}", doc="Does it.\n\nGiven it")
        for i in range(60)
    )
    return Run(
        label="bench",
        title="Report scale benchmark",
        started_at=time.time(),
        duration=12.0,
        status="failed",
        features=tuple(features),
        servers=(surface,),
        glossary=glossary,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="keep the files here (default: a temp folder)")
    parser.add_argument("--own-features", action="store_true", help="also report on this repo's features/")
    parser.add_argument("--browser", action="store_true", help="also time opening the page in headless Chromium")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="report-scale-") as tmp:
        out = args.out or Path(tmp)
        code = _measure(args.scenarios, args.steps, out)
        if args.browser:
            _open_in_browser(out / "living-doc.html")
        if args.own_features:
            code |= _own_features(out / "own")
        return code


def _open_in_browser(html: Path) -> None:
    """Time from navigation to the page's data unpacked and its failures drawn (data-ready), in Chromium."""
    import shutil

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        print("browser: headless Chromium not installed (apt-get install chromium chromium-driver); skipped")
        return
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    with tempfile.TemporaryDirectory(prefix="report-scale-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", f"--user-data-dir={profile}"):  # fmt: skip
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
        try:
            driver.get("about:blank")
            t0 = time.perf_counter()
            driver.get(html.as_uri())
            loaded = time.perf_counter() - t0
            ready = "return document.documentElement.getAttribute('data-ready')"
            WebDriverWait(driver, 60, poll_frequency=0.01).until(lambda d: d.execute_script(ready) == "1")
            total = time.perf_counter() - t0
        finally:
            driver.quit()
    print(f"browser: page loaded in {loaded:.2f} s, data unpacked and failures drawn at {total:.2f} s")


def _own_features(out: Path) -> int:
    """This repository's features, run by behave with the living-doc formatter (starts the demo servers)."""
    html = out / "living-doc.html"
    command = [sys.executable, "-m", "behave", "-f", "mcp_bdd.report:LivingDocFormatter", "-o", str(html), "features/"]
    t0 = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    took = time.perf_counter() - t0
    if not html.exists():
        print(f"own features: no report written (behave exit {proc.returncode})")
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        return 1
    size = html.stat().st_size
    json_size = html.with_suffix(".json").stat().st_size
    ok = size < OWN_SIZE_BUDGET_B
    print(f"own features: behave took {took:.1f} s -> HTML {size / 1e6:.2f} MB, run JSON {json_size / 1e6:.2f} MB")
    print(f"target: HTML < {OWN_SIZE_BUDGET_B / 1e6:.0f} MB: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


def _measure(scenarios: int, steps: int, out: Path) -> int:
    t0 = time.perf_counter()
    run = synthetic_run(scenarios, steps)
    t1 = time.perf_counter()
    html = write_html(out / "living-doc.html", [run])
    t2 = time.perf_counter()
    data = write_run_json(out / "living-doc.json", run)
    t3 = time.perf_counter()

    size = html.stat().st_size
    render, baseline = t2 - t1, t3 - t2
    print(f"scenarios: {scenarios} x {steps} steps, {scenarios * steps * 2} MCP messages")
    print(f"collect (parse transcripts into the model): {t1 - t0:.2f} s")
    print(f"render HTML: {render:.2f} s -> {size / 1e6:.2f} MB")
    print(f"write run JSON (baseline): {baseline:.2f} s -> {data.stat().st_size / 1e6:.2f} MB")
    print(f"render / baseline: {render / baseline:.2f}x")
    fast = "met" if render < TIME_TARGET_S else "missed on this machine (not asserted)"
    small = size < SIZE_BUDGET_B
    print(f"target: render < {TIME_TARGET_S:.0f} s: {fast}")
    print(f"target: HTML < {SIZE_BUDGET_B / 1e6:.0f} MB: {'met' if small else 'MISSED'}")
    return 0 if small else 1


if __name__ == "__main__":
    sys.exit(main())
