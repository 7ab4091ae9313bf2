#!/usr/bin/env node
// A tiny MCP server on the official TypeScript SDK, over stdio.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "notes", version: "1.0.0" });
const notes = [];

server.registerTool(
  "add_note",
  { description: "Add a note to the list.", inputSchema: { text: z.string() } },
  async ({ text }) => {
    notes.push(text);
    return { content: [{ type: "text", text: `noted: ${text} (${notes.length} notes)` }] };
  },
);

await server.connect(new StdioServerTransport());
