"""A stdio MCP server (standard library only) that writes long lines to stderr, then dies mid-call:
the line that says why is its last."""

from __future__ import annotations

import json
import sys


def _answer(message: dict[str, object]) -> dict[str, object]:
    if message["method"] == "initialize":
        params = message["params"]
        assert isinstance(params, dict)
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "loud", "version": "1"},
        }
    if message["method"] == "tools/list":
        return {"tools": [{"name": "boom", "inputSchema": {"type": "object"}}]}
    for i in range(12):
        sys.stderr.write(f"log {i} " + "x" * 400 + "\n")
    sys.stderr.write("LAST-LINE-BEFORE-CRASH\n")
    sys.stderr.flush()
    sys.exit(3)


for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": _answer(request)}) + "\n")
        sys.stdout.flush()
