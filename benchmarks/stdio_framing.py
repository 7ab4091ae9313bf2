"""A large result over stdio: mcp-bdd's transport vs the SDK's own `stdio_client`, in the same run.

The server (tests/servers/hostile.py, stdlib only) answers `big` with N MB of text. Each side runs
in a fresh process; printed: seconds for the call, MB/s, and the peak of Python allocations during
the call (tracemalloc) as a multiple of the result's size — the result itself counts once.
Target (docs/performance.md): a 60 MB result in under 2 s, under 3x its size in extra memory.

    python benchmarks/stdio_framing.py [--mb 60]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "hostile.py")]


async def _call(client: object, mb: int) -> float:
    started = time.perf_counter()
    result = await client.call_tool("big", {"mb": mb})  # type: ignore[attr-defined]
    took = time.perf_counter() - started
    assert len(result.content[0].text) == mb * 1024 * 1024
    return took


def one(side: str, mb: int) -> dict[str, float]:
    """Connect, warm up with a small call, then time one `mb` MB call; in this fresh process."""
    import anyio
    from mcp import Client

    async def run() -> dict[str, float]:
        if side == "sdk":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            target: object = stdio_client(StdioServerParameters(command=SERVER[0], args=SERVER[1:]))
        else:
            from mcp_bdd.config import parse_config
            from mcp_bdd.servers import start_server

            config = parse_config({"servers": {"h": {"command": SERVER}}}, source="bench", root=ROOT)
            server = start_server(
                "h", config.servers["h"], config, "stdio", interpolate=lambda t, e: t, inject=dict, logdir=Path("/tmp")
            )
            target = server.target()
        async with Client(target, mode="legacy", cache=None) as client:
            await _call(client, 1)
            tracemalloc.start()
            took = await _call(client, mb)  # tracemalloc's own cost is in this time too: it is an upper bound
            extra = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        if side != "sdk":
            server.stop()
        return {"seconds": took, "extra_mb": extra}

    return anyio.run(run)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=60)
    parser.add_argument("--one", choices=["ours", "sdk"])
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.mb)))
        return
    print(f"{'transport':<22} {'seconds':>8} {'MB/s':>8} {'peak memory':>14}")
    results = {}
    for side in ("sdk", "ours"):
        out = subprocess.run(
            [sys.executable, __file__, "--one", side, "--mb", str(args.mb)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        results[side] = data = json.loads(out.strip().splitlines()[-1])
        label = "SDK stdio_client" if side == "sdk" else "mcp-bdd PipeTransport"
        print(
            f"{label:<22} {data['seconds']:>7.2f}s {args.mb / data['seconds']:>8.1f} "
            f"{data['extra_mb'] / args.mb:>12.1f}x"
        )
    ratio = results["sdk"]["seconds"] / results["ours"]["seconds"]
    print(f"mcp-bdd is {ratio:.1f}x the SDK's speed on a {args.mb} MB result.")
    print("Target: 60 MB in under 2 s, under 3x its size in extra memory.")


if __name__ == "__main__":
    main()
