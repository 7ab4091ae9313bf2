"""`mcp-bdd check` on each real third-party stdio server the project installs.

Target (docs/performance.md): under 10 s per server over stdio. The baseline, measured in the same run,
is `mcp-bdd probe` on the same command (spawn, connect, list): the ratio is what the checks
themselves cost. Also printed: the per-server findings table the README quotes.

    python benchmarks/check_servers.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MCP = ROOT / "node_modules" / "@modelcontextprotocol"
TARGET_S = 10.0


def _git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(
        ["git", "-C", str(path), "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q",
         "--allow-empty", "-m", "init"],
        check=True,
    )  # fmt: skip
    return path


def real_servers(tmp: Path) -> dict[str, list[str]]:
    """The six third-party stdio servers of package.json and the dev extra, as argv."""
    return {
        "time": [str(BIN / "mcp-server-time"), "--local-timezone", "UTC"],
        "git": [str(BIN / "mcp-server-git"), "--repository", str(_git_repo(tmp / "repo"))],
        "fetch": [str(BIN / "mcp-server-fetch")],
        "everything": ["node", str(MCP / "server-everything" / "dist" / "index.js"), "stdio"],
        "filesystem": ["node", str(MCP / "server-filesystem" / "dist" / "index.js"), str(tmp)],
        "memory": ["node", str(MCP / "server-memory" / "dist" / "index.js")],
    }


def installed(argv: list[str]) -> bool:
    if argv[0] == "node":
        return shutil.which("node") is not None and Path(argv[1]).exists()
    return Path(argv[0]).exists()


def _run(args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    exe = BIN / "mcp-bdd"
    env = {**os.environ, "MEMORY_FILE_PATH": str(cwd / "memory.jsonl")}
    started = time.perf_counter()
    proc = subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - started, proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the results here")
    options = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for name, argv in real_servers(cwd).items():
            if not installed(argv):
                print(f"{name}: not installed (npm ci / pip install -e '.[dev]'), skipped")
                continue
            probe_s, _ = _run(["probe", "--", *argv], cwd)
            check_s, proc = _run(["check", "--json", "--", *argv], cwd)
            data = json.loads(proc.stdout)
            findings = data.get("findings", [])
            count = {level: sum(1 for f in findings if f["severity"] == level) for level in ("high", "medium", "low")}
            rows.append({
                "server": name, "protocol": data.get("protocol"), "tools": data.get("counts", {}).get("tools"),
                "calls": data.get("counts", {}).get("tool calls"), "skipped": len(data.get("skipped", {})),
                "findings": count, "poisoning": sum(1 for f in findings if f["group"] == "poisoning"),
                "checks": sorted({f["check"] for f in findings if f["severity"] != "low"}),
                "check_s": round(check_s, 2), "probe_s": round(probe_s, 2),
                "ratio": round(check_s / probe_s, 2) if probe_s else None,
            })  # fmt: skip
    print(f"{'server':<11} {'protocol':<11} {'tools':>5} {'calls':>5} {'high':>4} {'med':>4} {'low':>4} "
          f"{'poison':>6} {'check s':>8} {'probe s':>8} {'ratio':>6}  target < {TARGET_S:g} s")  # fmt: skip
    for r in rows:
        f = r["findings"]
        verdict = "ok" if r["check_s"] < TARGET_S else "SLOW"
        print(f"{r['server']:<11} {r['protocol']:<11} {r['tools']:>5} {r['calls']:>5} {f['high']:>4} "
              f"{f['medium']:>4} {f['low']:>4} {r['poisoning']:>6} {r['check_s']:>8.2f} {r['probe_s']:>8.2f} "
              f"{r['ratio']:>6}  {verdict}")  # fmt: skip
    print("\nhigh/medium findings by check:")
    for r in rows:
        print(f"  {r['server']}: {', '.join(r['checks']) or '-'}")
    if options.json:
        options.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["check_s"] < TARGET_S and r["poisoning"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
