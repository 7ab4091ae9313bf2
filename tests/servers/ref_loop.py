"""An SDK-free stdio MCP server whose one tool has `$ref` cycles in both of its schemas.

The inputSchema's property `n` refers to `a`, which refers to `b`, which refers to `a`; the
outputSchema's `n` refers to `a`, which refers to itself. No value can be checked against
either: every validator follows the chain until Python's recursion limit. The tool is
read-only, so `mcp-bdd check` calls it without --allow-writes, and it returns structuredContent.

    python tests/servers/ref_loop.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

LOOP = {
    "name": "loop",
    "description": "Echoes the number n back, as structured content.",
    "inputSchema": {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/a", "description": "Any number."}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    },
    "outputSchema": {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/a"}},
    },
    "annotations": {"readOnlyHint": True},
}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "ref-loop", "version": "0.1.0"},
        }
    elif method == "tools/list":
        result = {"tools": [LOOP]}
    elif method == "tools/call":
        n = (request.get("params") or {}).get("arguments", {}).get("n", 5)
        result = {"content": [{"type": "text", "text": json.dumps({"n": n})}], "structuredContent": {"n": n}}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
