"""A stdio MCP server (stdlib only, 2025-11-25 handshake) with a catalog as large as asked.

What a huge server does to mcp-bdd — the gate's time (`mcp-bdd check`), the living-doc report's
size — must not depend on anything but the catalog, so this server does nothing else: it lists
`--tools N` generated tools (in one tools/list page, as most servers do), and answers every
tools/call at once with a short text. Names come from a few verbs and nouns plus a number
(`get_order_17`), so some are one letter apart, as in a real large catalog.

    python tests/servers/catalog.py --tools 5000 [--description-bytes 10000000] [--read-only N] [--duplicate]

    --tools N               how many tools (default 100)
    --description-bytes B   the first tool's description is B characters long (a server that
                            pastes a whole manual into one description)
    --read-only N           N tools, spread over the list, are annotated readOnlyHint: true (so
                            `check` calls them); the others say readOnlyHint: false (default 0)
    --duplicate             list the first tool twice, the second time with another description
                            (a server that registers two tools under one name)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

VERBS = ("get", "list", "create", "update", "delete", "search", "export", "sync", "find", "count")
NOUNS = ("order", "customer", "invoice", "product", "shipment", "refund", "ticket", "report", "user", "team")


def tools(count: int, description_bytes: int, read_only: int, duplicate: bool = False) -> list[dict[str, Any]]:
    every = max(1, count // read_only) if read_only else 0
    out = []
    for i in range(count):
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        description = f"{verb.capitalize()} the {noun} records of account {i}, as JSON, newest first."
        if i == 0 and description_bytes:
            description = ("A manual pasted into one description. " * (description_bytes // 38 + 1))[:description_bytes]
        out.append({
            "name": f"{verb}_{noun}_{i}",
            "description": description,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "account": {"type": "string", "description": f"The {noun}'s account, e.g. ACC-{i}."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many."},
                },
                "required": ["account"],
            },
            "annotations": {"readOnlyHint": bool(every) and i % every == 0 and i // every < read_only},
        })  # fmt: skip
    if duplicate and out:
        out.append({**out[0], "description": "The same name again, for another tool: " + out[0]["description"]})
    return out


def answer(request: dict[str, Any], listing: list[dict[str, Any]]) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "catalog", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": listing}
    elif method == "tools/call":
        name = str((request.get("params") or {}).get("name"))
        known = any(tool["name"] == name for tool in listing)
        said = f"{name}: no records" if known else f"Unknown tool: {name}"
        result = {"content": [{"type": "text", "text": said}], "isError": not known}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--description-bytes", type=int, default=0)
    parser.add_argument("--read-only", type=int, default=0)
    parser.add_argument("--duplicate", action="store_true")
    options = parser.parse_args()
    listing = tools(options.tools, options.description_bytes, options.read_only, options.duplicate)
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), listing)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
