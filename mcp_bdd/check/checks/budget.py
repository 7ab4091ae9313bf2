"""What the server costs a model's context window: the results it returns and the tool definitions
it lists.

A model reads every listed tool's definition on every turn, and every result in full: a 3 MB
result is about 750,000 tokens, more than any model's context, and a catalog of long definitions
crowds out the conversation. The thresholds are options (`--max-result-bytes`,
`--max-tool-tokens`, `--max-catalog-tokens`).

Tokens are estimated, not counted: a tokenizer is model-specific and a download. The estimate is
the number of characters of the JSON a model is shown for a tool (its name, title, description
and inputSchema, compact, unescaped), divided by 4 and rounded up: the usual rule of thumb for
English text and JSON under the common BPE tokenizers, deterministic, and the same on every machine.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from mcp_bdd.check._context import CheckContext
from mcp_bdd.check._finding import Call, Problem, bounded
from mcp_bdd.check._registry import Severity, check

__all__ = ["CHARS_PER_TOKEN", "result_bytes", "tool_tokens"]

#: characters per token of the estimate
CHARS_PER_TOKEN = 4
#: the parts of a tool's definition a model reads
READ_BY_MODEL = ("name", "title", "description", "inputSchema")


def tool_tokens(tool: dict[str, object]) -> int:
    """The estimated tokens of one tool's definition: characters of its compact JSON / 4, rounded up."""
    shown = {key: tool[key] for key in READ_BY_MODEL if key in tool}
    text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def result_bytes(raw: dict[str, object]) -> int:
    """The size of a result as sent: its compact JSON, in UTF-8 bytes."""
    return len(json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace"))


@check(  # not "token-budget": `token...: value` reads as a credential to the masking of every output
    "quality.context-budget",
    severity="low",
    group="quality",
    rationale="A model reads every tool definition on every turn: long ones crowd out the conversation.",
)
def token_budget(ctx: CheckContext) -> Iterator[Problem]:
    """No tool's definition (name, title, description, inputSchema) is estimated at more than
    `--max-tool-tokens` tokens (default 1,000), and all of them together at no more than
    `--max-catalog-tokens` (default 20,000). Estimate: characters of the compact JSON / 4."""
    limit, total = ctx.options.max_tool_tokens, 0
    for tool in ctx.tools:
        tokens = tool_tokens(tool)
        total += tokens
        if tokens > limit:
            yield Problem(
                title=f"the tool's definition costs about {tokens:,} tokens (more than {limit:,})",
                target=f"tool {tool.get('name')}",
                details=f"description {len(str(tool.get('description') or '')):,} characters, inputSchema "
                f"{len(json.dumps(tool.get('inputSchema') or {})):,}; estimated as characters / {CHARS_PER_TOKEN}",
                tip="say what the tool does and when to use it in a few sentences; move guides and examples to a "
                "resource or a prompt the model reads when it needs them (or raise --max-tool-tokens).",
            )
    catalog = ctx.options.max_catalog_tokens
    if total > catalog:
        yield Problem(
            title=f"the tool definitions cost about {total:,} tokens together (more than {catalog:,})",
            details=f"{len(ctx.tools):,} tools; every one is read by the model on every turn",
            tip="offer fewer tools (group them, or let the user enable sets of them), and shorten the longest "
            "definitions (or raise --max-catalog-tokens).",
            severity=Severity.LOW,
        )


def _sized(ctx: CheckContext) -> Iterator[tuple[str, str, dict[str, object], dict[str, object]]]:
    """(target, method, params, result) of every answer any check got: tool calls, reads, prompts."""
    for made in ctx.calls:
        if made.outcome.raw is not None:
            yield f"tool {made.tool}", "tools/call", made.outcome.params, made.outcome.raw
    for outcome in ctx.answers:
        if outcome.raw is not None and outcome.method in ("resources/read", "prompts/get"):
            what = "resource" if outcome.method == "resources/read" else "prompt"
            key = "uri" if what == "resource" else "name"
            yield f"{what} {outcome.params.get(key)}", outcome.method, outcome.params, outcome.raw


@check(
    "quality.result-size",
    severity="medium",
    group="quality",
    rationale="A model reads a result whole: one larger than its context is cut, or fails the turn.",
    late=True,
)
def result_size(ctx: CheckContext) -> Iterator[Problem]:
    """No result any check received (tool calls, resources/read, prompts/get) is larger than
    `--max-result-bytes` bytes of JSON (default 1,000,000); the largest of each tool, resource or
    prompt is reported, with its estimated tokens."""
    largest: dict[str, tuple[int, str, dict[str, object]]] = {}
    limit = ctx.options.max_result_bytes
    for target, method, params, raw in _sized(ctx):
        size = result_bytes(raw)
        if size > limit and size > largest.get(target, (0, "", {}))[0]:
            largest[target] = (size, method, params)
    for target, (size, method, params) in largest.items():
        sent = bounded({k: v for k, v in params.items() if k != "_meta"})
        yield Problem(
            title=f"a result of {size:,} bytes (more than {limit:,}): about {size // CHARS_PER_TOKEN:,} tokens",
            target=target,
            details="the whole result goes into the model's context; clients cut it or fail the turn",
            call=Call(method=method, params=sent, note=f"a result of {size:,} bytes (not quoted)"),
            tip="page the result (a cursor or offset/limit arguments), summarise it, or return a resource link "
            "the client reads when it needs it (or raise --max-result-bytes).",
        )
