"""A stdio MCP server of the 2025-11-25 era (standard library only) that, like an mcp<2 Python
server, logs a wall of validation errors to stderr for the `server/discover` probe it does not
know, then speaks the handshake; its tool `fail` logs the real cause of a failure and errs."""

from __future__ import annotations

import json
import sys

WALL = "\n".join(
    f"  Input should be 'tools/list' [type=literal_error, input_value='server/discover', input_type=str] #{i}"
    for i in range(40)
)


def _answer(message: dict[str, object]) -> dict[str, object]:
    method = message["method"]
    if method == "server/discover":
        sys.stderr.write(f"Failed to validate request: 40 validation errors for ClientRequest\n{WALL}\n")
        sys.stderr.flush()
        return {"error": {"code": -32602, "message": "Invalid request parameters"}}
    if method == "initialize":
        params = message["params"]
        assert isinstance(params, dict)
        info = {"name": "noisy", "version": "1"}
        return {
            "result": {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": info}
        }
    if method == "tools/list":
        return {"result": {"tools": [{"name": "fail", "inputSchema": {"type": "object"}}]}}
    sys.stderr.write("REAL-CAUSE: the orders table is locked\n")
    sys.stderr.flush()
    return {"error": {"code": -32603, "message": "internal error"}}


for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], **_answer(request)}) + "\n")
        sys.stdout.flush()
