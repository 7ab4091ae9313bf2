"""A server that asks the client to sample without checking the client's capabilities (legacy era)."""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer


def create_server() -> MCPServer:
    server = MCPServer("rude", version="0.1.0")

    @server.tool()
    async def ask_llm(question: str, ctx: Context) -> str:
        """Ask the client's LLM, whether or not the client said it can sample."""
        try:
            result = await ctx.session.create_message(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
                max_tokens=20,
            )
        except Exception as exc:
            return f"refused: {exc}"
        content = result.content
        return f"answer: {getattr(content, 'text', content)}"

    return server
