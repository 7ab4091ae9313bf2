"""What setup did, in plain words: "Connected to shop 1.0.0 over stdio in 0.21 s", "Seeded the
table inventory with 3 rows", "The fake payments received POST /charges".

The transcript records sessions opening and fakes working as `info` / `fake` messages (see
mcp_bdd.transcript); the report says what they did on the step (or hook) itself, so a reader
never has to open the raw messages to learn that the server started or the data was seeded.
Unknown messages are left to the raw view. Pure module: no behave, no jinja2.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_bdd.report.model import Exchange

__all__ = ["actions"]


def _seconds(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _connected(x: Exchange, opened: Exchange | None) -> str:
    payload, info = _dict(x.payload), _dict(_dict(x.payload).get("server_info"))
    name = " ".join(str(p) for p in (info.get("name") or x.server, info.get("version")) if p)
    transport = _dict(opened.payload).get("transport") if opened else None
    text = f"Connected to {name}" + (f" over {transport}" if transport else "")
    if payload.get("protocol"):
        text += f" (protocol {payload['protocol']})"
    took = x.duration_ms
    if took is None and opened is not None and x.at >= opened.at:
        took = (x.at - opened.at) * 1000
    return text + (f" in {_seconds(took)}" if took is not None else "")


def _fake(x: Exchange) -> str | None:
    payload = _dict(x.payload)
    seeded = payload.get("rows")
    if x.method.startswith("seed ") and isinstance(seeded, list):
        rows, table = len(seeded), payload.get("table") or x.method[5:]
        return f"Seeded the table {table} of {x.server} with {rows} row{'s' if rows != 1 else ''}"
    if x.method.startswith("write ") and "path" in payload:
        size = payload.get("size")
        return f"Wrote {payload['path']} in the workspace {x.server}" + (
            f" ({size} characters)" if size is not None else ""
        )
    if payload.get("method") and payload.get("path") is not None:
        status = payload.get("status")
        return f"The fake {x.server} received {payload['method']} {payload['path']}" + (
            f" and answered {status}" if status is not None else ""
        )
    return None


def actions(exchanges: Sequence[Exchange]) -> list[str]:
    """One plain sentence per thing the session or a fake did (connections, seeding, calls received)."""
    out: list[str] = []
    opened: dict[str, Exchange] = {}
    for x in exchanges:
        if x.kind == "info":
            if x.method == "connect":
                opened[x.server] = x
            elif x.method == "connected":
                out.append(_connected(x, opened.pop(x.server, None)))
            elif x.method.startswith("fake ") and x.method.endswith(" started"):
                out.append(f"Started the {x.method[:-8]} {x.server}")
        elif x.kind == "fake":
            sentence = _fake(x)
            if sentence:
                out.append(sentence)
    return out
