"""Low-level servers whose tool listing is paginated: well-behaved, looping, and endless.

`PAGING_MODE` (read by the factory) picks the behaviour: "ok" (3 pages), "repeat" (page 2
points back to page 1's cursor), "endless" (a new cursor forever).
"""

from __future__ import annotations

import os
from typing import Any

import mcp_types as types
from mcp.server import Server


def create_server() -> Server[Any]:
    mode = os.environ.get("PAGING_MODE", "ok")

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        page = int((params.cursor if params and params.cursor else "0").removeprefix("p"))
        tools = [
            types.Tool(name=f"tool_{page}_{i}", description=f"Tool {i} of page {page}", input_schema={"type": "object"})
            for i in range(2)
        ]
        if mode == "ok":
            cursor = f"p{page + 1}" if page < 2 else None
        elif mode == "repeat":
            cursor = "p1"
        else:
            cursor = f"p{page + 1}"
        return types.ListToolsResult(tools=tools, next_cursor=cursor)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    return Server("paging", on_list_tools=list_tools, on_call_tool=call_tool)
