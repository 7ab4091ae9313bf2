"""Results: check "the result" of the last tool call, resource read or prompt (whichever came last).

"The result" is structuredContent when present, else the text content parsed as JSON when it
parses, else the text. JSON a tool returned as text, which its framework wrapped as
structuredContent `{"result": "<json text>"}`, is the JSON it holds (`_base.json_held`). "The
result text" is the concatenated text content.
"""

from __future__ import annotations

import base64

from mcp_bdd import matchers
from mcp_bdd._text import pretty, produced_by
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.runtime import LastResult
from mcp_bdd.steps._base import (
    StepContext,
    content_kinds,
    docstring_json,
    expected_text,
    given,
    json_object,
    state,
    text,
    then,
    when,
)


def _last(context: StepContext) -> LastResult:
    st = state(context)
    if st.last is None:
        outcome = st.last_request
        if outcome is not None:
            raise ExpectationFailed(
                f"There is no result: the last {outcome.method} request did not return one",
                actual=outcome.describe(),
                exchange=produced_by(st.transcript.items),
                kind=outcome.failure_kind,
            )
        raise UsageError(f"{st.location}: there is no result yet: call a tool, read a resource or get a prompt first.")
    return st.last


def _exchange(context: StepContext) -> str:
    return produced_by(state(context).transcript.items)


@then('the result text is "{expected:Q}"')
def step_text_is(context: StepContext, expected: str) -> None:
    """Check the whole text content of the result.

    Example: Then the result text is "Result: 8"
    """
    last = _last(context)
    wanted = text(context, expected)
    if last.text != wanted:
        raise ExpectationFailed(
            "The result text differs", expected=wanted, actual=last.text, exchange=_exchange(context)
        )


@then('the result text contains "{needle:Q}"')
def step_text_contains(context: StepContext, needle: str) -> None:
    """Check that the result text contains a text (case-sensitive).

    Example: Then the result text contains "8"
    """
    wanted = expected_text(context, needle)
    last = _last(context)
    if wanted not in last.text:
        raise ExpectationFailed(
            f'The result text does not contain "{wanted}"', actual=last.text, exchange=_exchange(context)
        )


@then('the result text does not contain "{needle:Q}"')
def step_text_lacks(context: StepContext, needle: str) -> None:
    """Check that the result text does not contain a text (case-sensitive).

    Example: Then the result text does not contain "Traceback"
    """
    wanted = expected_text(context, needle)
    last = _last(context)
    if wanted in last.text:
        at = last.text.index(wanted)
        raise ExpectationFailed(
            f'The result text contains "{wanted}"',
            expected=f'text without "{wanted}"',
            actual=last.text,
            details=f"  Found at character {at}: …{last.text[max(0, at - 40) : at + len(wanted) + 40]}…",
            exchange=_exchange(context),
        )


@then('the result text matches "{pattern:Q}"')
def step_text_matches(context: StepContext, pattern: str) -> None:
    """Check the result text against a regular expression (searched, anchor with ^ and $).

    Example: Then the result text matches "^Result: \\d+$"
    """
    last = _last(context)
    regex = text(context, pattern)
    if matchers.regex_search(regex, last.text) is None:
        raise ExpectationFailed(
            "The result text does not match",
            expected=f"/{regex}/",
            actual=last.text,
            exchange=_exchange(context),
        )


@then("the result is:")
def step_result_is(context: StepContext) -> None:
    """Match the whole result against JSON; fuzzy markers like "#string" or "#uuid" are allowed.

    "The result" is the tool's structuredContent, else its text parsed as JSON when it parses, else
    its text. JSON returned as text is read as the JSON it holds: a tool that returns
    `json.dumps(...)` as a string (fastmcp and the SDK's MCPServer send it wrapped, as
    `{"result": "<json text>"}`) is checked, and read by path, as that JSON.

    Example:
        Then the result is:
          \"\"\"json
          {"result": 8}
          \"\"\"
    """
    matchers.assert_matches(docstring_json(context), _last(context).value, subset=False, exchange=_exchange(context))


@then("the result contains:")
def step_result_contains(context: StepContext) -> None:
    """Match part of the result: objects may have more keys, arrays more items (any order).

    Example:
        Then the result contains:
          \"\"\"json
          {"status": "#string"}
          \"\"\"
    """
    matchers.assert_matches(docstring_json(context), _last(context).value, subset=True, exchange=_exchange(context))


@then("the result does not contain:")
def step_result_lacks(context: StepContext) -> None:
    """Check that the result does NOT contain the doc string's JSON (the opposite of "the result contains:").

    Example:
        Then the result does not contain:
          \"\"\"json
          {"status": "cancelled"}
          \"\"\"
    """
    expected = docstring_json(context)
    actual = _last(context).value
    if not matchers.compare(expected, actual, subset=True):
        raise ExpectationFailed(
            "The result contains what it should not",
            expected=f"no match for {pretty(expected)}",
            actual=actual,
            exchange=_exchange(context),
            tip="the check passes when at least one expected key, value or item is absent or different.",
        )


def _at(context: StepContext, path: str, *, allow_empty: bool = False) -> tuple[str, object]:
    p = text(context, path)
    last = _last(context)
    try:
        return p, matchers.query_one(last.value, p, allow_empty=allow_empty)
    except ExpectationFailed as exc:
        if not last.held_json:
            raise
        # a path written for the wrapper (`$.result.rows`) was right before JSON text was read as JSON
        raise ExpectationFailed(
            exc.title,
            details=exc.details,
            tip=f'the tool "{last.name}" returned JSON as text (structuredContent {{"result": "<json text>"}}): '
            'paths read the JSON it holds, so "$.result.rows" is written "$.rows". ' + (exc.tip or ""),
        ) from None


@then('the result at "{path:Q}" is "{expected:Q}"')
def step_at_is_text(context: StepContext, path: str, expected: str) -> None:
    """Check the value at a JSONPath equals a string. Paths read "the result" (see "the result is:"),
    so JSON a tool returned as text is read by path too: `$.rows[0][0]`, not `$.result`.

    Example: Then the result at "$.status" is "pending"
    """
    p, value = _at(context, path)
    wanted = text(context, expected)
    if value != wanted:
        raise ExpectationFailed(
            f"Unexpected value at {p}",
            path=p,
            expected=wanted,
            actual=value,
            exchange=_exchange(context),
            tip="this step compares strings; for numbers, booleans or null write the value without quotes."
            if not isinstance(value, str)
            else None,
        )


@then('the result at "{path:Q}" is {literal:Literal}')
def step_at_is_literal(context: StepContext, path: str, literal: str) -> None:
    """Check the value at a JSONPath equals a JSON literal (number, true/false, null, array, object).

    Example: Then the result at "$.quantity" is 2
    """
    p, value = _at(context, path)
    wanted = matchers.coerce_literal(text(context, literal))
    if matchers.compare(wanted, value, subset=False):
        raise ExpectationFailed(
            f"Unexpected value at {p}", path=p, expected=wanted, actual=value, exchange=_exchange(context)
        )


@then('the result at "{path:Q}" contains "{needle:Q}"')
def step_at_contains(context: StepContext, path: str, needle: str) -> None:
    """Check that the value at a JSONPath contains a text (in a string) or an item (in an array).

    Example: Then the result at "$.items" contains "PROD-123"
    """
    wanted = expected_text(context, needle)
    p, value = _at(context, path)
    if isinstance(value, list):
        ok = any(
            item == wanted
            or (isinstance(item, str) and wanted in item)
            or (isinstance(item, dict) and wanted in [str(v) for v in item.values()])
            for item in value
        )
    elif isinstance(value, dict):
        ok = wanted in value or wanted in pretty(value)
    else:
        ok = wanted in str(value)
    if not ok:
        raise ExpectationFailed(
            f'The value at {p} does not contain "{wanted}"', path=p, actual=value, exchange=_exchange(context)
        )


@then('the result at "{path:Q}" matches "{pattern:Q}"')
def step_at_matches(context: StepContext, path: str, pattern: str) -> None:
    """Check the value at a JSONPath against a regular expression.

    Example: Then the result at "$.id" matches "^ORD-"
    """
    p, value = _at(context, path)
    regex = text(context, pattern)
    if matchers.regex_search(regex, value if isinstance(value, str) else pretty(value)) is None:
        raise ExpectationFailed(
            f"The value at {p} does not match",
            path=p,
            expected=f"/{regex}/",
            actual=value,
            exchange=_exchange(context),
        )


@then('the result at "{path:Q}" has {n:Int} {unit:Items}')
def step_at_count(context: StepContext, path: str, n: int, unit: str) -> None:
    """Count the items of the array (or keys of the object) at a JSONPath ("1 item" works too).

    Example: Then the result at "$.items" has 3 items
    """
    p, value = _at(context, path, allow_empty=True)
    count = matchers.count_items(value, path=p)
    if count != n:
        raise ExpectationFailed(f"The value at {p} has {count} items, not {n}", path=p, expected=n, actual=value)


@then("the result matches the schema:")
def step_result_schema(context: StepContext) -> None:
    """Validate the result against a JSON Schema given as a doc string.

    Example:
        Then the result matches the schema:
          \"\"\"json
          {"type": "object"}
          \"\"\"
    """
    matchers.assert_schema(
        _last(context).value,
        docstring_json(context),
        title="The result does not match the schema",
        exchange=_exchange(context),
    )


@then("the result conforms to the tool's output schema")
def step_output_schema(context: StepContext) -> None:
    """Validate structuredContent against the outputSchema the tool declares (as the server sent it).

    Example: Then the result conforms to the tool's output schema
    """
    from mcp_bdd.steps._base import current_session

    last = _last(context)
    if last.kind != "tool":
        raise UsageError(f"{state(context).location}: the last result is a {last.kind} result, not a tool result.")
    produced = _exchange(context)  # the call: finding the schema may list the tools after it
    session = current_session(context, last.server)
    tool = session.tool_named(last.name) or {}
    schema = tool.get("outputSchema")
    if not schema:
        raise ExpectationFailed(f'The tool "{last.name}" declares no output schema', actual=tool)
    if "structuredContent" not in last.raw:
        raise ExpectationFailed(
            f'The tool "{last.name}" declares an output schema but returned no structuredContent',
            actual=last.raw,
            tip="a tool with an outputSchema must return structuredContent (MCP spec).",
        )
    matchers.assert_schema(
        last.raw["structuredContent"],
        schema,
        title=f'The structuredContent of "{last.name}" breaks its output schema',
        exchange=produced,
    )


def _blocks(context: StepContext) -> list[dict[str, object]]:
    """The content blocks of the result: a tool result's content, or those of every prompt message."""
    raw = _last(context).raw
    content = raw.get("content")
    blocks: list[object] = list(content) if isinstance(content, list) else []
    messages = raw.get("messages")
    for message in messages if isinstance(messages, list) else []:
        inner = message.get("content") if isinstance(message, dict) else None
        blocks.extend(inner if isinstance(inner, list) else [inner])
    return [b for b in blocks if isinstance(b, dict)]


@then('the result contains an image of type "{mime:Q}"')
def step_image(context: StepContext, mime: str) -> None:
    """Check for an image content block with a MIME type (and valid base64 data).

    Example: Then the result contains an image of type "image/png"
    """
    wanted = text(context, mime)
    images = [b for b in _blocks(context) if b.get("type") == "image"]
    match = [b for b in images if b.get("mimeType") == wanted]
    if not match:
        raise ExpectationFailed(
            f"No image of type {wanted} in the result",
            actual=[{"type": b.get("type"), "mimeType": b.get("mimeType")} for b in _blocks(context)],
        )
    try:
        base64.b64decode(str(match[0].get("data", "")), validate=True)
    except ValueError as exc:
        raise ExpectationFailed("The image data is not valid base64", actual=str(exc)) from None


@then('the result contains a link to the resource "{uri:Q}"')
def step_resource_link(context: StepContext, uri: str) -> None:
    """Check for a resource_link (or embedded resource) content block with this URI.

    Example: Then the result contains a link to the resource "demo://resource/1"
    """
    wanted = text(context, uri)
    uris = [
        b.get("uri") or json_object(b.get("resource")).get("uri")
        for b in _blocks(context)
        if b.get("type") in ("resource_link", "resource")
    ]
    if wanted not in uris:
        raise ExpectationFailed(
            f"No link to {wanted} in the result", expected=wanted, actual=uris or content_kinds(_blocks(context))
        )


@then('the result contains audio of type "{mime:Q}"')
def step_audio(context: StepContext, mime: str) -> None:
    """Check for an audio content block with a MIME type (and valid base64 data).

    Example: Then the result contains audio of type "audio/wav"
    """
    wanted = text(context, mime)
    match = [b for b in _blocks(context) if b.get("type") == "audio" and b.get("mimeType") == wanted]
    if not match:
        raise ExpectationFailed(
            f"No audio of type {wanted} in the result",
            expected=f'a block {{"type": "audio", "mimeType": "{wanted}", "data": "<base64>"}}',
            actual=content_kinds(_blocks(context)) or "(no content blocks)",
            exchange=_exchange(context),
            tip="audio is a content block of its own (type audio), not a link to an audio resource.",
        )
    try:
        base64.b64decode(str(match[0].get("data", "")), validate=True)
    except ValueError as exc:
        raise ExpectationFailed("The audio data is not valid base64", actual=str(exc)[:200]) from None


def _embedded(context: StepContext, uri: str) -> dict[str, object]:
    for block in _blocks(context):
        resource = block.get("resource")
        if block.get("type") == "resource" and isinstance(resource, dict) and resource.get("uri") == uri:
            return resource
    raise ExpectationFailed(
        f"No embedded resource {uri} in the result",
        expected=f'a block {{"type": "resource", "resource": {{"uri": "{uri}", ...}}}}',
        actual=content_kinds(_blocks(context)) or "(no content blocks)",
        exchange=_exchange(context),
        tip='a resource_link only names a resource; check it with "Then the result contains a link to the resource".',
    )


@then('the result embeds the resource "{uri:Q}" with text containing "{needle:Q}"')
def step_embedded_text(context: StepContext, uri: str, needle: str) -> None:
    """Check an embedded resource (a content block of type resource) by its URI and the text it carries.

    Example: Then the result embeds the resource "shop://docs/returns" with text containing "30 days"
    """
    wanted_uri = text(context, uri)
    wanted = expected_text(context, needle)
    resource = _embedded(context, wanted_uri)
    body = resource.get("text")
    if not isinstance(body, str) or wanted not in body:
        raise ExpectationFailed(
            f'The embedded resource {wanted_uri} does not contain "{wanted}"',
            expected=f'text containing "{wanted}"',
            actual=body if isinstance(body, str) else f"no text (a {'blob' if 'blob' in resource else 'resource'})",
            exchange=_exchange(context),
        )


def _annotated(context: StepContext, audience: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for block in _blocks(context):
        notes = block.get("annotations")
        if isinstance(notes, dict) and isinstance(notes.get("audience"), list) and audience in notes["audience"]:
            found.append(notes)
    return found


def _annotations_shown(context: StepContext) -> list[object]:
    return [{"type": b.get("type"), "annotations": b.get("annotations")} for b in _blocks(context)[:20]]


@then('the result has content for the "{audience:Q}" audience')
def step_audience(context: StepContext, audience: str) -> None:
    """Check that a content block is annotated for an audience ("user" or "assistant").

    Example: Then the result has content for the "user" audience
    """
    wanted = text(context, audience)
    if not _annotated(context, wanted):
        raise ExpectationFailed(
            f'No content of the result is annotated for the "{wanted}" audience',
            expected=f'a block with annotations.audience including "{wanted}"',
            actual=_annotations_shown(context) or "(no content blocks)",
            exchange=_exchange(context),
            tip='the audience is "user" (shown to people) or "assistant" (read by the model).',
        )


@then('the result has content for the "{audience:Q}" audience with priority {priority:Num}')
def step_audience_priority(context: StepContext, audience: str, priority: float) -> None:
    """Check that a content block is annotated for an audience with a priority (0 least, 1 most important).

    Example: Then the result has content for the "assistant" audience with priority 1.0
    """
    wanted = text(context, audience)
    step_audience(context, audience)
    priorities = [n.get("priority") for n in _annotated(context, wanted)]
    if not any(isinstance(p, int | float) and abs(float(p) - priority) < 1e-9 for p in priorities):
        raise ExpectationFailed(
            f'No content for the "{wanted}" audience has priority {priority:g}',
            expected=priority,
            actual=priorities,
            exchange=_exchange(context),
        )


# ---------------------------------------------------------------------------------------------
# variables


@when('I remember the result at "{path:Q}" as "{var:Q}"')
def step_remember_at(context: StepContext, path: str, var: str) -> None:
    """Save the value at a JSONPath as a variable, for `${var}` in later steps.

    Example: When I remember the result at "$.id" as "order"
    """
    import json

    _, value = _at(context, path)
    state(context).set_variable(text(context, var), value if isinstance(value, str) else json.dumps(value))


@when('I remember the result text as "{var:Q}"')
def step_remember_text(context: StepContext, var: str) -> None:
    """Save the result text as a variable.

    Example: When I remember the result text as "reply"
    """
    state(context).set_variable(text(context, var), _last(context).text)


@given('the variable "{var:Q}" is "{value:Q}"')
def step_variable(context: StepContext, var: str, value: str) -> None:
    """Set a variable for `${var}` in later steps.

    Example: Given the variable "user" is "alice"
    """
    state(context).set_variable(text(context, var), text(context, value))
