"""An MCP server with no SDK at all: newline-delimited JSON-RPC on stdio, 2025-11-25 handshake.

The Python SDK refuses to send some broken shapes (an inputSchema that is not an object schema,
an outputSchema of type string), so the checks for them need a server that writes its bytes
itself, as a server in any language may. It also answers `logging/setLevel` with an error
although it declares `logging`, and `ping` with an error: the legacy-era basics. With
RAW_SERVER_MODE=results it lists one well-formed tool whose results do not fit the schema;
with RAW_SERVER_MODE=crash the process exits on the first tool call; with RAW_SERVER_MODE=refloop
it lists one read-only tool whose schemas' `$ref`s loop (input: a → b → a; output: a → a), which
no validator can follow to an end, and answers its calls with structuredContent; with
RAW_SERVER_MODE=danglingref the same, but its schemas' `$ref`s point at nothing (input:
#/definitions/number, where the schema has only $defs; output: #/$defs/nope).

    python tests/servers/raw_server.py
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

#: "schemas": list tools whose schemas no SDK would send; "results": a tool whose results do not fit;
#: "crash": the same tool, but the process exits on the first call; "refloop": a tool whose schemas loop;
#: "danglingref": a tool whose schemas' $refs point at nothing
MODE = os.environ.get("RAW_SERVER_MODE", "schemas")

REF_LOOP = {
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

DANGLING_REF = {
    "name": "dangling",
    "description": "Echoes the number n back, as structured content.",
    "inputSchema": {
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/number", "description": "Any number."}},
        "$defs": {"number": {"type": "number"}},
    },
    "outputSchema": {"type": "object", "properties": {"n": {"$ref": "#/$defs/nope"}}},
    "annotations": {"readOnlyHint": True},
}

GOOD_TOOLS = [
    {
        "name": "bad_result",
        "description": "A tool whose results carry a content item of a type the spec does not have.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
]
BROKEN_TOOLS = [
    {
        "name": "array_schema",
        "description": "A tool whose inputSchema is an array schema, not an object schema.",
        "inputSchema": {"type": "array"},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "string_output",
        "description": "A tool whose outputSchema is a string schema, not an object schema.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "string"},
        "annotations": {"readOnlyHint": True},
    },
]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "raw", "version": "0.1.0"},
        }
    elif method == "tools/list":
        listed = {"schemas": BROKEN_TOOLS, "refloop": [REF_LOOP], "danglingref": [DANGLING_REF]}
        result = {"tools": listed.get(MODE, GOOD_TOOLS)}
    elif method == "tools/call" and MODE in ("refloop", "danglingref"):
        n = (request.get("params") or {}).get("arguments", {}).get("n", 5)
        result = {"content": [{"type": "text", "text": json.dumps({"n": n})}], "structuredContent": {"n": n}}
    elif method == "tools/call":
        if MODE == "crash":
            sys.exit(3)  # dies on the first call, as a server with an unhandled error in a tool does
        result = {"content": [{"type": "txt", "text": "ok"}], "isError": False}
    elif method in ("ping", "logging/setLevel"):
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"{method} is broken here"}}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
