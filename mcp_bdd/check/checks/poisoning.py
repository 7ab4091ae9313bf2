"""Tool poisoning and hygiene: text a server shows the model must not steer it against the user.

Descriptions are read by the model, not the user: an instruction hidden there ("ignore previous
instructions", "do not tell the user", an <IMPORTANT> block), text the user cannot see (zero-width
and bidirectional controls, Unicode tag characters) or a hint to send data somewhere is how a tool
attacks the assistant that loaded it. Error texts reach the model too: stack traces and secrets in
them leak the server's insides.

Instructions are judged by what they ask the model to do, not by their words (`_intent.score`:
weak signals combined into a score, tuned on tests/data/poisoning/), with the known attack phrases
below as a floor; every other pattern is deliberately specific (the real third-party servers the
suite installs produce no finding at all) and each names the exact text that matched.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from mcp_bdd.check._context import UNKNOWN_NAME, CheckContext, error_text, json_array, json_object
from mcp_bdd.check._finding import Problem, call_of
from mcp_bdd.check._registry import check
from mcp_bdd.check._secrets import find_shape
from mcp_bdd.check.checks._intent import (
    DESCRIPTION,
    MESSAGE,
    THRESHOLD,
    Evidence,
    Verdict,
    combine,
    prepare,
    score,
)
from mcp_bdd.check.checks._intent import INSTRUCTIONS as IN_INSTRUCTIONS
from mcp_bdd.session import Outcome

__all__ = ["hidden_instruction", "invisible_characters", "judge", "leaked_secret", "stack_trace"]

_INSTRUCTIONS = [
    r"\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding|other)\s+(?:instructions|prompts|rules|directions)",
    r"\bdisregard\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|system|user'?s?)\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to|show\s+(?:this|it)\s+to|notify|alert)\s+the\s+user",
    r"\b(?:without|before)\s+(?:telling|informing|notifying|asking)\s+the\s+user\b",
    r"\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|be\s+told)",
    r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>",
    r"\[\s*(?:system|inst)\s*\]|<<\s*sys\s*>>|<\|im_start\|>",
    r"\byou\s+(?:are|must\s+now\s+act\s+as)\s+now\b|\bnew\s+(?:system\s+)?instructions\s*:",
    r"\b(?:instead\s+of|rather\s+than)\s+(?:using|calling)\s+(?:the\s+)?[\w.-]+\s+tool\b",
    r"\bwhen(?:ever)?\s+(?:the\s+)?[\w.-]+\s+tool\s+is\s+(?:called|used|invoked),?\s+(?:also|first|always)\b",
    r"\b(?:read|open|cat|include|send|pass)\s+(?:the\s+)?(?:contents?\s+of\s+)?(?:~/|/etc/passwd|\.ssh|id_rsa|\.env\b|\.aws|mcp\.json|credentials?\s+file)",
    r"\b(?:pass|include|put|add|send)\s+(?:the\s+)?(?:entire\s+|whole\s+|full\s+)?(?:conversation|chat\s+history|system\s+prompt|previous\s+messages)\b",
]
INSTRUCTIONS = [re.compile(p, re.IGNORECASE) for p in _INSTRUCTIONS]
URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s\"'<>)]+", re.IGNORECASE)
_EXFIL = re.compile(
    r"\b(?:send|post|upload|forward|transmit|report|exfiltrate|leak|copy|mail|email)\b[^.\n]{0,80}"
    r"\b(?:to|at|into)\s+(?:https?://|[\w.-]+@[\w-]+\.[\w.]+|the\s+(?:url|endpoint|webhook|server)\b)",
    re.IGNORECASE,
)
_TRACES = [
    r"Traceback \(most recent call last\)",
    r"(?m)^\s*File \"[^\"]+\", line \d+, in \S+",
    r"(?m)^\s+at (?:async )?[\w$.<>\[\] ]+ \((?:file://)?[/\\\w.:-]+:\d+:\d+\)",
    r"(?m)^\s+at (?:file://)?/[\w/.-]+\.m?[jt]s:\d+:\d+",
    r"\bgoroutine \d+ \[running\]:",
    r"(?m)^\s+at [\w.$]+\([\w]+\.java:\d+\)",
    r"\bthread '[^']+' panicked at\b",
]
TRACES = [re.compile(p) for p in _TRACES]


def _known_phrase(prepared: str) -> str | None:
    for pattern in (*INSTRUCTIONS, _EXFIL):
        match = pattern.search(prepared)
        if match:
            return match.group(0)
    return None


def judge(text: str, kind: str = DESCRIPTION) -> Verdict:
    """What `text` asks the model to do (`kind`: where it sits: description, instructions, message).
    A known attack phrase is a finding on its own, whatever the score."""
    verdict = score(text, kind)
    if not verdict.flagged:
        phrase = _known_phrase(prepare(text))  # prepared: a long text is cut to its distinct sentences first
        if phrase:
            verdict.add(Evidence("known-attack-phrase", THRESHOLD, phrase))
    return verdict


def hidden_instruction(text: str) -> str | None:
    """The words of `text` that instruct the model behind the user's back, or None."""
    verdict = judge(text)
    if not verdict.flagged:
        return None
    return "; ".join(e.text for e in verdict.evidence.values() if e.behaviour != "addresses-model")


def invisible_characters(text: str) -> list[str]:
    """Code points a user cannot see: format controls (zero-width, bidi, tags) and private-use ones."""
    found = []
    for char in set(text):  # each distinct letter once: letter by letter, a long description took seconds
        category = unicodedata.category(char)
        if category in ("Cf", "Co") or (category == "Cc" and char not in "\n\r\t"):
            found.append(f"U+{ord(char):04X} {unicodedata.name(char, category)}")
    return sorted(found)


def leaked_secret(text: str) -> str | None:
    return find_shape(text)


def stack_trace(text: str) -> bool:
    return any(p.search(text) for p in TRACES)


def _texts(ctx: CheckContext) -> Iterator[tuple[str, str, str]]:
    """(target, field, text) of everything the server wrote for the model to read."""
    for tool in ctx.tools:
        name = str(tool.get("name"))
        yield f"tool {name}", "name", name
        for field, text in _walk({k: v for k, v in tool.items() if k != "name"}, ""):
            yield f"tool {name}", field, text
    for prompt in ctx.prompts:
        name = str(prompt.get("name"))
        for field, text in _walk(prompt, ""):
            yield f"prompt {name}", field, text
    for kind, items in (("resource", ctx.resources), ("resource template", ctx.templates)):
        for item in items:
            key = str(item.get("uri") or item.get("uriTemplate"))
            for field, text in _walk(item, ""):
                yield f"{kind} {key}", field, text
    instructions = ctx.session.client.instructions if ctx.session.client else None
    if instructions:
        yield "server", "instructions", instructions


def _walk(value: object, path: str) -> Iterator[tuple[str, str]]:
    """(field, text) of a definition's texts a model reads: titles and descriptions at any depth,
    and the values a schema suggests (default, const, examples, enum)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                yield f"{path}[{i}]", item
            else:
                yield from _walk(item, f"{path}[{i}]")
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key in ("description", "title") and isinstance(item, str):
            yield f"{path}.{key}".lstrip("."), item
        elif isinstance(item, dict | list):
            yield from _walk(item, f"{path}.{key}")
        elif isinstance(item, str) and key in ("default", "const", "examples", "enum"):
            yield f"{path}.{key}".lstrip("."), item


def _said(verdict: Verdict) -> str:
    shown = [f"{e.behaviour} ({e.text!r})" for e in verdict.evidence.values()]
    return f"{', '.join(shown)}: score {verdict.score} (threshold {THRESHOLD})"


def _judged(target: str, texts: list[tuple[str, str]]) -> Iterator[Problem]:
    """One finding per text that asks the model to act against the user; when no text does alone but the
    target's texts do together (an instruction split across a description and its arguments), one for all."""
    verdicts = []
    for field, text in texts:
        verdict = judge(text, IN_INSTRUCTIONS if field == "instructions" else DESCRIPTION)
        verdicts.append(verdict)
        if verdict.flagged:
            yield _problem(target, f'"{field}"', verdict)
    together = combine(verdicts)
    if len(texts) > 1 and together.flagged and not any(v.flagged for v in verdicts):
        fields = [f'"{field}"' for (field, _), v in zip(texts, verdicts, strict=True) if v.evidence]
        yield _problem(target, " + ".join(fields), together)


def _problem(target: str, where: str, verdict: Verdict) -> Problem:
    asks = ", ".join(b for b in verdict.behaviours() if b != "addresses-model") or "act"
    return Problem(
        title=f"text the model reads gives it instructions: {asks}",
        target=target,
        details=f"{where}: {_said(verdict)}",
        tip="a description says what the tool does and what its arguments mean; it never tells the model what "
        "to hide from the user, which secrets to read, which other tools to call or where to send data.",
    )


@check(
    "poisoning.hidden-instructions",
    severity="high",
    group="poisoning",
    rationale="Descriptions go to the model unseen by the user: instructions hidden there hijack the assistant.",
)
def hidden_instructions(ctx: CheckContext) -> Iterator[Problem]:
    """No text the model reads (tool titles and descriptions, argument descriptions at any depth, the
    server's instructions, prompt and prompt-argument descriptions, resource and template descriptions)
    asks it to act against the user: to hide something from the user, read or send secrets, call other
    tools or change how they are used, reach an outside address, or drop its instructions. Each text is
    scored on what it asks (weak signals combined, see docs/check.md), and a tool's texts together too."""
    by_target: dict[str, list[tuple[str, str]]] = {}
    for target, field, text in _texts(ctx):
        if field == "instructions" or field.endswith(("description", "title")):
            by_target.setdefault(target, []).append((field, text))
    for target, texts in by_target.items():
        yield from _judged(target, texts)


def _messages(outcome: Outcome) -> Iterator[tuple[str, str]]:
    result = outcome.raw if isinstance(outcome.raw, dict) else {}
    for i, message in enumerate(result.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            yield f"messages[{i}]", content["text"]


@check(
    "poisoning.prompt-messages",
    severity="high",
    group="poisoning",
    rationale="A prompt's messages go to the model as the user's own words: instructions hidden there hijack it.",
)
def prompt_messages(ctx: CheckContext) -> Iterator[Problem]:
    """No prompt's messages (prompts/get, read-only, with each required argument set to "example"; up to
    `max_items` prompts) ask the model to act against the user, scored as descriptions are."""
    for prompt in ctx.prompts[: ctx.options.max_items]:
        name = str(prompt.get("name"))
        arguments = {str(a.get("name")): "example" for a in json_array(prompt.get("arguments"))
                     if isinstance(a, dict) and a.get("required")}  # fmt: skip
        outcome = ctx.get_prompt(name, arguments or None)
        if outcome is None or outcome.error is not None:
            continue  # unreachable or broken: protocol.prompts-get reports it
        for field, text in _messages(outcome):
            verdict = judge(text, MESSAGE)
            if verdict.flagged:
                yield _problem(f"prompt {name}", f'"{field}"', verdict)


@check(
    "poisoning.invisible-unicode",
    severity="high",
    group="poisoning",
    rationale="Zero-width, bidirectional and tag characters hide text from the user that the model still reads.",
)
def invisible_unicode(ctx: CheckContext) -> Iterator[Problem]:
    """No name, description, title or server instructions contain format / private-use / control characters
    (zero-width space, RLO and other bidi controls, Unicode tags U+E0000-E007F, ...)."""
    for target, field, text in _texts(ctx):
        found = invisible_characters(text)
        if found:
            yield Problem(
                title="text the user cannot see: invisible or bidirectional unicode",
                target=target,
                details=f'"{field}": {", ".join(found[:8])}',
                tip="remove them: what a model reads must be what the user sees.",
            )


@check(
    "poisoning.urls",
    severity="medium",
    group="poisoning",
    rationale="A URL in a description can steer the model to fetch or send data somewhere the user never chose.",
)
def urls(ctx: CheckContext) -> Iterator[Problem]:
    """No tool or argument description carries a URL (documentation links belong in the server's docs,
    not in what the model reads at every turn); each one found is listed."""
    for target, field, text in _texts(ctx):
        if not target.startswith("tool ") or not field.endswith(("description", "title")):
            continue  # a URL as a default value or an enum member is data, not text the model is told
        found = URL.findall(text)
        if found:
            yield Problem(
                title="a tool description carries a URL",
                target=target,
                details=f'"{field}": {", ".join(found[:5])}',
                tip="keep URLs out of what the model reads; if the tool talks to a host, configure it server-side.",
            )


def _error_samples(ctx: CheckContext) -> list[tuple[str, Outcome]]:
    """Every rejected call any check made, plus (when none was made) an unknown tool and an empty call."""
    samples = [(f"tool {c.tool}", c.outcome) for c in ctx.calls if c.outcome.error or c.outcome.is_error_result]
    if not ctx.calls and ctx.declares("tools"):
        probes = [(UNKNOWN_NAME, "unknown tool")]
        probes += [
            (str(t.get("name")), "no arguments")
            for t in ctx.callable_tools()
            if json_object(t.get("inputSchema")).get("required")
        ]
        for name, purpose in probes:
            outcome = ctx.call(name, {}, purpose)
            if outcome is not None:  # refused (401/403): no error text of the server's to judge
                samples.append((f"tool {name}", outcome))
    return samples


@check(
    "poisoning.error-leaks",
    severity="high",
    group="poisoning",
    rationale="Error texts reach the model and the logs: stack traces and secrets in them leak the server's insides.",
    calls_tools=True,
    late=True,
)
def error_leaks(ctx: CheckContext) -> Iterator[Problem]:
    """No error a call got (JSON-RPC error message and data, or an isError result's text) contains a stack
    trace (Python, Node, Java, Go, Rust) or a secret (API keys, tokens, private keys, passwords)."""
    for target, outcome in _error_samples(ctx):
        raw_text = error_text(outcome)
        secret = leaked_secret(raw_text)
        if secret:
            yield Problem(
                title=f"an error text leaks {secret}",
                target=target,
                call=call_of(outcome),
                tip="never put credentials in errors; log them server-side (masked) if at all.",
            )
        if stack_trace(raw_text):
            yield Problem(
                title="an error text carries a stack trace",
                target=target,
                call=call_of(outcome),
                tip="catch exceptions in the tool and return a short isError text that says what to fix.",
                severity=None,
            )
