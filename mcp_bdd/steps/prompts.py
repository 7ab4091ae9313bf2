"""Prompts and completions.

Getting a prompt or asking for completions that the server rejects fails the step (naming what
the server offers), unless a later step of the scenario checks the rejection with "Then the
request is rejected with error code <code>"; then the step only records it. (MCPServer answers
an unknown prompt with JSON-RPC code 0 on 2025-11-25 and -32603 on 2026-07-28.)
"""

from __future__ import annotations

import base64

import mcp_types as types

from mcp_bdd._text import did_you_mean, produced_by
from mcp_bdd.errors import ExpectationFailed, UsageError
from mcp_bdd.runtime import LastResult
from mcp_bdd.session import Outcome, Session
from mcp_bdd.steps._base import (
    StepContext,
    argument_table,
    content_kinds,
    current_session,
    expected_text,
    json_items,
    json_object,
    keep_result,
    objects,
    state,
    table_rows,
    text,
    then,
    when,
)
from mcp_bdd.steps.resources import advertised, capability, failure_tip, rejection_checked_later

__all__: list[str] = []


def _prompt_list(session: Session) -> list[dict[str, object]]:
    return session.listing("prompts")


def _prompt_named(session: Session, name: str) -> dict[str, object] | None:
    try:
        return next((p for p in _prompt_list(session) if p.get("name") == name), None)
    except Exception:  # a hint only: the get itself tells what the server thinks
        return None


def _prompt_names(session: Session) -> list[str]:
    try:
        return [str(p.get("name")) for p in _prompt_list(session)]
    except Exception:  # a hint only
        return []


def _signature(prompt: dict[str, object]) -> str:
    args = objects(prompt.get("arguments"))
    if not args:
        return "no arguments"
    return ", ".join(f"{a.get('name')}{'' if a.get('required') else ' (optional)'}" for a in args)


# ---------------------------------------------------------------------------------------------
# listing


@when("I list the prompts")
def step_list_prompts(context: StepContext) -> None:
    """Fetch the server's prompt list (following every page).

    Example: When I list the prompts
    """
    current_session(context).list_all("prompts")


@when('I list the prompts on "{server:Q}"')
def step_list_prompts_on(context: StepContext, server: str) -> None:
    """Fetch the prompt list of a named server (following every page).

    Example: When I list the prompts on "shop"
    """
    current_session(context, server).list_all("prompts")


@then('the prompts include "{name:Q}"')
def step_prompts_include(context: StepContext, name: str) -> None:
    """Check that the prompt list includes a prompt (fetched if no list was taken yet).

    Example: Then the prompts include "greeting"
    """
    _prompts_include(context, name, None)


@then('the prompts include "{name:Q}" on "{server:Q}"')
def step_prompts_include_on(context: StepContext, name: str, server: str) -> None:
    """Check that a named server offers a prompt.

    Example: Then the prompts include "order_confirmation" on "shop"
    """
    _prompts_include(context, name, server)


def _prompts_include(context: StepContext, name: str, server: str | None) -> None:
    session = current_session(context, server)
    wanted = text(context, name)
    names = [str(p.get("name")) for p in _prompt_list(session)]
    if wanted not in names:
        raise ExpectationFailed(
            f'The server "{session.name}" offers no prompt "{wanted}"',
            actual=names or "(no prompts)",
            details="  " + did_you_mean(wanted, names, "prompt"),
        )


# ---------------------------------------------------------------------------------------------
# getting a prompt


def _get(context: StepContext, name: str, arguments: dict[str, str] | None, server: str | None = None) -> None:
    st = state(context)
    session = current_session(context, server)
    params = types.GetPromptRequestParams(name=name, arguments=arguments)
    outcome = session.request(types.GetPromptRequest(params=params))
    st.last_request = outcome
    keep_result(context, "prompt", outcome, name)
    session.raise_problems()
    if not outcome.ok and not rejection_checked_later(context):
        raise _get_failure(session, name, outcome)


def _get_failure(session: Session, name: str, outcome: Outcome) -> ExpectationFailed:
    exchange = produced_by(session.transcript.items, session.name)  # before the listing made for the hint
    prompt = _prompt_named(session, name)
    if prompt is None:
        details = "  " + did_you_mean(name, _prompt_names(session), "prompt")
    else:
        sent = outcome.params.get("arguments") or {}
        details = f'  The prompt "{name}" takes: {_signature(prompt)}; the request sent: {sent}'
    return ExpectationFailed(
        f'Getting the prompt "{name}" from "{session.name}" failed',
        actual=outcome.describe(),
        details=details,
        exchange=exchange,
        kind=outcome.failure_kind,
        tip=failure_tip(session, outcome),
    )


@when('I get the prompt "{name:Q}"')
def step_get_prompt(context: StepContext, name: str) -> None:
    """Get a prompt without arguments; its messages become "the result".

    Example: When I get the prompt "greeting"
    """
    _get(context, text(context, name), None)


@when('I get the prompt "{name:Q}" on "{server:Q}"')
def step_get_prompt_on(context: StepContext, name: str, server: str) -> None:
    """Get a prompt of a named server without arguments; its messages become "the result".

    Example: When I get the prompt "greeting" on "shop"
    """
    _get(context, text(context, name), None, server)


def _get_with_table(context: StepContext, name: str, server: str | None) -> None:
    st = state(context)
    session = current_session(context, server)
    wanted = text(context, name)
    args = argument_table(context, session, wanted, kind="prompt")
    prompt = _prompt_named(session, wanted)
    if prompt is not None:
        known = [str(a.get("name")) for a in objects(prompt.get("arguments"))]
        for arg in args:
            if arg not in known:
                raise UsageError(
                    f'{st.location}: the prompt "{wanted}" has no argument "{arg}". '
                    f"{did_you_mean(arg, known, 'argument')}."
                )
    _get(context, wanted, {k: str(v) for k, v in args.items()}, server)


@when('I get the prompt "{name:Q}" with:')
def step_get_prompt_with(context: StepContext, name: str) -> None:
    """Get a prompt with an argument table: heading row = argument names, one row of (string) values.

    Example:
        When I get the prompt "greeting" with:
          | name |
          | Ada  |
    """
    _get_with_table(context, name, None)


@when('I get the prompt "{name:Q}" on "{server:Q}" with:')
def step_get_prompt_on_with(context: StepContext, name: str, server: str) -> None:
    """Get a prompt of a named server with an argument table (heading row = argument names, one row of values).

    Example:
        When I get the prompt "greeting" on "shop" with:
          | name |
          | Ada  |
    """
    _get_with_table(context, name, server)


def _last_prompt(context: StepContext) -> tuple[LastResult, list[dict[str, object]]]:
    st = state(context)
    last = st.last
    if last is None or last.kind != "prompt":
        outcome = st.last_request
        if last is None and outcome is not None and outcome.method == "prompts/get":
            session = st.sessions.get(outcome.server)
            if session is not None:
                raise _get_failure(session, str(outcome.params.get("name")), outcome)
        raise UsageError(
            f'{st.location}: no prompt was got yet in this scenario (use "When I get the prompt "<name>"").'
        )
    return last, objects(last.raw.get("messages"))


def _message_text(message: dict[str, object]) -> str:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "resource" and isinstance(block.get("resource"), dict):
            parts.append(str(block["resource"].get("text", "")))
        elif block.get("type") == "resource_link":
            parts.append(str(block.get("uri", "")))
    return "".join(parts)


def _overview(messages: list[dict[str, object]]) -> list[str]:
    return [f"{i}. {m.get('role')}: {_message_text(m)[:300]!r}" for i, m in enumerate(messages, start=1)]


@then("the prompt has {n:Int} {unit:Messages}")
def step_prompt_count(context: StepContext, n: int, unit: str) -> None:
    """Check the number of messages in the prompt just got ("1 message" works too).

    Example: Then the prompt has 2 messages
    """
    last, messages = _last_prompt(context)
    if len(messages) != n:
        raise ExpectationFailed(
            f'The prompt "{last.name}" has {len(messages)} message(s), not {n}', expected=n, actual=_overview(messages)
        )


@then('prompt message {n:Int} is from the "{role:Q}" and contains "{needle:Q}"')
def step_prompt_message(context: StepContext, n: int, role: str, needle: str) -> None:
    """Check one message of the prompt just got (counted from 1): its role and a text it contains.

    Example: Then prompt message 1 is from the "user" and contains "Ada"
    """
    wanted = expected_text(context, needle)
    last, messages = _last_prompt(context)
    wanted_role = text(context, role)
    if not 1 <= n <= len(messages):
        raise ExpectationFailed(
            f'The prompt "{last.name}" has no message {n} (it has {len(messages)}; they count from 1)',
            actual=_overview(messages),
        )
    message = messages[n - 1]
    body = _message_text(message)
    if message.get("role") != wanted_role or wanted not in body:
        raise ExpectationFailed(
            f'Prompt message {n} of "{last.name}" differs',
            expected=f'from the "{wanted_role}", containing "{wanted}"',
            actual=f'from the "{message.get("role")}": {body!r}',
        )


def _message_blocks(context: StepContext, n: int) -> tuple[str, list[dict[str, object]]]:
    """Prompt message `n` (from 1) of the prompt just got: the prompt's name and its content blocks."""
    last, messages = _last_prompt(context)
    if not 1 <= n <= len(messages):
        raise ExpectationFailed(
            f'The prompt "{last.name}" has no message {n} (it has {len(messages)}; they count from 1)',
            actual=_overview(messages),
        )
    content = messages[n - 1].get("content")
    blocks = content if isinstance(content, list) else [content]
    return last.name, [b for b in blocks if isinstance(b, dict)]


@then('prompt message {n:Int} contains an image of type "{mime:Q}"')
def step_prompt_image(context: StepContext, n: int, mime: str) -> None:
    """Check that one message of the prompt just got (counted from 1) is an image of a MIME type.

    Example: Then prompt message 2 contains an image of type "image/png"
    """
    wanted = text(context, mime)
    name, blocks = _message_blocks(context, n)
    images = [b for b in blocks if b.get("type") == "image" and b.get("mimeType") == wanted]
    if not images:
        raise ExpectationFailed(
            f'Prompt message {n} of "{name}" has no image of type {wanted}',
            expected=f'{{"type": "image", "mimeType": "{wanted}", "data": "<base64>"}}',
            actual=content_kinds(blocks) or "(no content)",
        )
    try:
        base64.b64decode(str(images[0].get("data", "")), validate=True)
    except ValueError as exc:
        raise ExpectationFailed(
            f'The image of prompt message {n} of "{name}" is not valid base64', actual=str(exc)[:200]
        ) from None


@then('prompt message {n:Int} contains a link to the resource "{uri:Q}"')
def step_prompt_link(context: StepContext, n: int, uri: str) -> None:
    """Check that one message of the prompt just got links to (resource_link) or embeds a resource by its URI.

    Example: Then prompt message 3 contains a link to the resource "shop://docs/inventory"
    """
    wanted = text(context, uri)
    name, blocks = _message_blocks(context, n)
    uris = [
        b.get("uri") or json_object(b.get("resource")).get("uri")
        for b in blocks
        if b.get("type") in ("resource_link", "resource")
    ]
    if wanted not in uris:
        raise ExpectationFailed(
            f'Prompt message {n} of "{name}" has no link to {wanted}',
            expected=f'a resource_link (or an embedded resource) with the URI "{wanted}"',
            actual=content_kinds(blocks) or "(no content)",
        )


# ---------------------------------------------------------------------------------------------
# completions


def _complete(
    context: StepContext,
    ref: types.PromptReference | types.ResourceTemplateReference,
    arg: str, value: str, what: str, arguments: dict[str, str] | None = None
) -> None:
    st = state(context)
    session = current_session(context)
    if not capability(session, "completions"):
        raise ExpectationFailed(
            f'The server "{session.name}" does not support completions',
            expected="the capability completions",
            actual=advertised(session),
            tip='check it with "Then the server does not support completions" instead.',
        )
    params = types.CompleteRequestParams(
        ref=ref,
        argument=types.CompletionArgument(name=arg, value=value),
        context=types.CompletionContext(arguments=arguments) if arguments is not None else None,
    )
    outcome = session.request(types.CompleteRequest(params=params))
    st.last_request = outcome
    session.raise_problems()
    if outcome.ok and outcome.raw is not None:
        completion = json_object(outcome.raw.get("completion"))
        st.completions = [str(v) for v in json_items(completion.get("values"))]
        return
    st.completions = None
    if rejection_checked_later(context):
        return
    raise ExpectationFailed(
        f'Completing the argument "{arg}" of {what} failed',
        actual=outcome.describe(),
        exchange=produced_by(session.transcript.items, session.name),
        kind=outcome.failure_kind,
    )


@when('I ask for completions of the argument "{arg:Q}" of the prompt "{name:Q}" with "{value:Q}"')
def step_complete_prompt(context: StepContext, arg: str, name: str, value: str) -> None:
    """Ask the server to complete a prompt argument from a partial value.

    Example: When I ask for completions of the argument "name" of the prompt "greeting" with "A"
    """
    prompt = text(context, name)
    ref = types.PromptReference(type="ref/prompt", name=prompt)
    _complete(context, ref, text(context, arg), text(context, value), f'the prompt "{prompt}"')


@when('I ask for completions of the argument "{arg:Q}" of the resource template "{template:Q}" with "{value:Q}"')
def step_complete_template(context: StepContext, arg: str, template: str, value: str) -> None:
    """Ask the server to complete a variable of a resource template from a partial value.

    Example: When I ask for completions of the argument "topic" of the resource template "shop://docs/{topic}" with "o"
    """
    uri = text(context, template)
    ref = types.ResourceTemplateReference(type="ref/resource", uri=uri)
    _complete(context, ref, text(context, arg), text(context, value), f'the resource template "{uri}"')


def _context_arguments(context: StepContext) -> dict[str, str]:
    """The arguments already chosen (a heading row of names, one row of values): the request's context."""
    st = state(context)
    headings, rows = table_rows(context)
    if len(rows) != 1:
        raise UsageError(
            f"{st.location}: the arguments already chosen are a heading row of names and one row of values "
            f"(got {len(rows)} rows). Example:\n      | department  |\n      | Engineering |"
        )
    return {h: v for h, v in zip(headings, rows[0], strict=True) if v != ""}


@when('I ask for completions of the argument "{arg:Q}" of the prompt "{name:Q}" with "{value:Q}" given:')
def step_complete_prompt_given(context: StepContext, arg: str, name: str, value: str) -> None:
    """Ask to complete a prompt argument, telling the server the arguments already chosen (context.arguments).

    Example:
        When I ask for completions of the argument "name" of the prompt "team" with "" given:
          | department  |
          | Engineering |
    """
    prompt = text(context, name)
    ref = types.PromptReference(type="ref/prompt", name=prompt)
    arguments = _context_arguments(context)
    _complete(context, ref, text(context, arg), text(context, value), f'the prompt "{prompt}"', arguments)


@when('I ask for completions of the argument "{arg:Q}" of the resource template "{template:Q}" with "{value:Q}" given:')
def step_complete_template_given(context: StepContext, arg: str, template: str, value: str) -> None:
    """Ask to complete a resource template variable, telling the server the variables already chosen.

    Example:
        When I ask for completions of the argument "col" of the resource template "db://{table}/{col}" with "n" given:
          | table |
          | users |
    """
    uri = text(context, template)
    ref = types.ResourceTemplateReference(type="ref/resource", uri=uri)
    arguments = _context_arguments(context)
    _complete(context, ref, text(context, arg), text(context, value), f'the resource template "{uri}"', arguments)


@then('the completions include "{value:Q}"')
def step_completions_include(context: StepContext, value: str) -> None:
    """Check that the last completion request offered a value.

    Example: Then the completions include "Ada"
    """
    st = state(context)
    if st.completions is None:
        raise UsageError(f'{st.location}: no completions were asked for yet ("When I ask for completions of ...").')
    wanted = text(context, value)
    if wanted not in st.completions:
        raise ExpectationFailed(
            f'The completions do not include "{wanted}"',
            actual=st.completions or "(no values)",
            tip='completions are usually filtered by the partial value: check what you typed after "with".',
        )
