"""Schema checks: tool names and schemas an LLM client can rely on, and results that keep their promise."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from mcp_bdd._schema import SchemaUnusable, guarded
from mcp_bdd.check._context import CheckContext
from mcp_bdd.check._finding import Problem, call_of
from mcp_bdd.check._registry import check

#: The spec's tool-name rule (2025-11-25): 1 to 128 characters of A-Z a-z 0-9 _ - .
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def _schema_problems(tool: dict[str, object], what: str, tip: str) -> list[Problem]:
    """What is wrong with the tool's `what` (inputSchema / outputSchema); `tip` for the shape problems."""
    schema, target = tool.get(what), f"tool {tool.get('name')}"
    if not isinstance(schema, dict):
        return [Problem(title=f"the {what} is not a JSON object", target=target, tip=tip)]
    problems = [
        Problem(f"the {what}{title}", target, details=details, tip=own_tip or tip)
        for title, details, own_tip in _invalid(json.dumps(schema, default=str))
    ]
    titles = []
    if schema.get("type") != "object":
        titles.append(f'the {what} has type {schema.get("type")!r}, not "object"')
    props = schema.get("properties")
    required = schema.get("required")
    if isinstance(required, list) and isinstance(props, dict):
        missing = [r for r in required if r not in props]
        if missing and schema.get("additionalProperties") is not True:
            titles.append(f"the {what} requires {missing} but declares no such properties")
    return problems + [Problem(title, target, tip=tip) for title in titles]


@functools.cache
def _flat_meta_schema() -> Any | None:
    """A validator of the 2020-12 meta-schema with its vocabularies merged into one schema and each
    `$dynamicRef: "#meta"` made a `$ref: "#"` (None if the meta-schema is not shaped as expected).

    The same verdict, several times faster: checking a schema against the meta-schema as published
    resolves a dynamic reference at every subschema, most of the check's time on a large catalog. It is
    the same schema: when checking a schema, the outermost `meta` anchor is the meta-schema's own
    root, and the vocabularies' keywords and `$defs` do not overlap (checked here)."""
    from urllib.parse import urljoin

    from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped, unused-ignore]

    root = Draft202012Validator.META_SCHEMA
    flat: dict[str, Any] = {"$schema": root["$schema"], "type": root["type"], "properties": {}, "$defs": {}}
    for part in [*root.get("allOf", ()), {"properties": root.get("properties", {})}]:
        vocabulary = SPECIFICATIONS.contents(urljoin(root["$id"], part["$ref"])) if "$ref" in part else part
        for key in ("properties", "$defs"):
            mine = vocabulary.get(key, {})
            if set(mine) & set(flat[key]):
                return None
            flat[key].update(mine)
    text = json.dumps(flat).replace('{"$dynamicRef": "#meta"}', '{"$ref": "#"}')
    text = re.sub(r'"\$ref": "meta/[\w-]+#/\$defs/', '"$ref": "#/$defs/', text)  # the root's own, to a vocabulary's
    if '"$dynamicRef": "#' in text or re.search(r'"\$ref": "[^#]', text):
        return None
    return Draft202012Validator(json.loads(text), format_checker=Draft202012Validator.FORMAT_CHECKER)


@functools.lru_cache(maxsize=2048)
def _invalid(schema_json: str) -> tuple[tuple[str, str, str], ...]:
    """Why a schema (as JSON text) is no valid JSON Schema: (title after "the inputSchema",
    details, tip or ""). Cached: checking a schema against its meta-schema is this check's
    costliest step, and the tools of a large server often share their schemas."""
    schema = json.loads(schema_json)
    try:
        cls = validator_for(schema, default=Draft202012Validator)
        fast = _flat_meta_schema() if cls is Draft202012Validator else None
        # the flat meta-schema says "valid" as the real one does; jsonschema's own check says why not
        guarded(schema, lambda: None if fast is not None and fast.is_valid(schema) else cls.check_schema(schema))
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return ((f" is not a valid JSON Schema (at {where}): {exc.message}", "", ""),)
    except SchemaUnusable as exc:  # a $ref that loops or points at nothing: every validator and generator fails
        return ((f"'s {exc.summary}", exc.details, exc.tip),)
    return ()


@check(
    "schemas.tool-name",
    severity="medium",
    group="schemas",
    rationale="Clients reject or rewrite tool names outside the spec's charset (A-Z a-z 0-9 _ - .) and length (1-128).",
)
def tool_name(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool name is 1-128 characters of A-Z, a-z, 0-9, `_`, `-` and `.` (spec 2025-11-25, tools)."""
    for tool in ctx.tools:
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            bad = sorted({c for c in str(name) if not re.fullmatch(r"[A-Za-z0-9_.-]", c)})
            yield Problem(
                title="the tool name breaks the spec's naming rule",
                target=f"tool {name!r}",
                details=f"length {len(str(name))}; characters outside the rule: {' '.join(repr(c) for c in bad)}",
                tip="use 1-128 characters of A-Z a-z 0-9 _ - . (e.g. get_weather).",
            )


@check(
    "schemas.input-valid",
    severity="high",
    group="schemas",
    rationale="A model fills in arguments from inputSchema; an invalid or non-object schema cannot be followed.",
)
def input_valid(ctx: CheckContext) -> Iterator[Problem]:
    """Each tool's inputSchema is a valid JSON Schema (2020-12 unless `$schema` says otherwise) of
    `type: object`, and every `required` name is a declared property."""
    for tool in ctx.tools:
        tip = 'declare {"type": "object", "properties": {...}, "required": [...]} with valid keywords.'
        yield from _schema_problems(tool, "inputSchema", tip)


@check(
    "schemas.output-valid",
    severity="high",
    group="schemas",
    rationale="Clients validate structuredContent against outputSchema; an invalid outputSchema breaks every call.",
)
def output_valid(ctx: CheckContext) -> Iterator[Problem]:
    """Each outputSchema that is given is a valid JSON Schema (2020-12) of `type: object`."""
    for tool in ctx.tools:
        if tool.get("outputSchema") is None:
            continue
        yield from _schema_problems(
            tool, "outputSchema", "structuredContent is always a JSON object: describe it as one."
        )


def _mismatches(schema: dict[str, object], value: object) -> list[Any]:
    """Every error of `value` against `schema`, by path (SchemaUnusable when its `$ref`s loop or dangle);
    jsonschema's errors, which it ships no types for."""
    validator = validator_for(schema, default=Draft202012Validator)(schema)
    return guarded(schema, lambda: sorted(validator.iter_errors(value), key=lambda e: list(e.path)))


@check(
    "schemas.structured-output",
    severity="high",
    group="schemas",
    rationale="Clients (the SDKs included) reject a result whose structuredContent does not match outputSchema.",
    calls_tools=True,
    late=True,
)
def structured_output(ctx: CheckContext) -> Iterator[Problem]:
    """Every successful call any check made to a tool with an outputSchema returned `structuredContent`
    that validates against it. Tools nobody called yet get one call with their required arguments
    generated from the inputSchema (read-only tools only, unless --allow-writes)."""
    from mcp_bdd.check.checks.honest import minimal_call

    called = {c.tool for c in ctx.calls}
    for tool in ctx.tools:
        name = str(tool.get("name"))
        if tool.get("outputSchema") and name not in called and ctx.may_call(tool):
            args = minimal_call(ctx, tool)
            if args is not None:
                ctx.call(name, args, "minimal valid call", generated=True)
    for call in ctx.calls:
        listed = ctx.tool(call.tool)  # a lookup: the calls times the tools was quadratic
        schema = (listed or {}).get("outputSchema")
        raw = call.outcome.raw
        if not isinstance(schema, dict) or raw is None or raw.get("isError"):
            continue
        if "structuredContent" not in raw:
            yield Problem(
                title="a tool with an outputSchema returned no structuredContent",
                target=f"tool {call.tool}",
                details=f"call: {call.purpose}",
                call=call_of(call.outcome),
                tip="return structuredContent matching outputSchema on every successful call.",
            )
            continue
        try:
            errors = _mismatches(schema, raw["structuredContent"])
        except SchemaError:
            continue  # reported by schemas.output-valid
        except SchemaUnusable as exc:
            if not exc.up_front:  # one found up front is reported by schemas.output-valid; this one is not
                ctx.notes.append(f"tool {call.tool}: structuredContent not checked against its outputSchema: {exc}")
            continue
        if errors:
            first = errors[0]
            where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in first.path)
            yield Problem(
                title="structuredContent does not match the tool's outputSchema",
                target=f"tool {call.tool}",
                details=f"call: {call.purpose}\nat {where}: {first.message}"
                + (f"\n(+{len(errors) - 1} more mismatches)" if len(errors) > 1 else ""),
                call=call_of(call.outcome),
                tip="fix the result or the outputSchema so that they agree.",
            )
