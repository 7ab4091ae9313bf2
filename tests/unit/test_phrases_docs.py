"""docs/steps.md and `mcp-bdd steps` show phrases as people write them, from one generator."""

from __future__ import annotations

import re

import pytest
from behave.step_registry import registry
from behave_project import REPO

import mcp_bdd.steps  # noqa: F401 - registers the vocabulary
from mcp_bdd.cli import main
from mcp_bdd.steps._phrases import catalog, human, quote_hint, to_regex

_PARSE_FIELD = re.compile(r"\{\w*(?::\w*)?\}")


def _patterns() -> list[str]:
    return [str(m.pattern) for defs in registry.steps.values() for m in defs]


def test_docs_steps_md_is_the_generator_output() -> None:
    generated = catalog(registry.steps, markdown=True)
    on_disk = (REPO / "docs" / "steps.md").read_text(encoding="utf-8")
    assert on_disk == generated, "docs/steps.md is stale: run `mcp-bdd steps --markdown > docs/steps.md`"


@pytest.mark.parametrize("markdown", [True, False])
def test_the_catalog_never_shows_parse_types(markdown: bool, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["steps", *(["--markdown"] if markdown else [])]) == 0
    out = capsys.readouterr().out
    starts = ("- **",) if markdown else ("  Given ", "  When ", "  Then ")  # examples are indented further
    phrases = [line for line in out.splitlines() if line.startswith(starts)]
    assert len(phrases) >= 100
    for line in phrases:
        assert not _PARSE_FIELD.search(line), line
    for name in ("FakeQ", ":Q}", ":Int}", "{status:d}", "SecondWord"):
        assert name not in out


def test_placeholders() -> None:
    assert human('the result at "{path:Q}" has {n:Int} {unit:Items}') == 'the result at "<path>" has <n> item(s)'
    assert human('received {count:d} {noun:Requests} to "{path:Q}"') == 'received <n> request(s) to "<path>"'
    assert human("the server supports {capability}") == "the server supports <capability>"
    assert human('the server logged {article:A} "{level:Q}" message') == 'the server logged a(n) "<level>" message'


def test_every_phrase_regex_matches_its_own_docstring_example() -> None:
    """The regexes (editor files, quote hints) agree with behave: each step's example matches its phrase."""
    from mcp_bdd.steps._phrases import split_doc

    checked = 0
    for defs in registry.steps.values():
        for matcher in defs:
            _, example = split_doc(matcher.func.__doc__ or "")
            if not example:
                continue
            lines = [re.sub(r"^(Given|When|Then|And|But) ", "", line) for line in example.splitlines()]
            regex = to_regex(str(matcher.pattern))
            assert any(re.match(regex, line) for line in lines), (matcher.pattern, lines)
            checked += 1
    assert checked >= 100


def test_quote_hint_rewrites_the_step_with_escapes() -> None:
    hint = quote_hint('the result text contains "say "hi""', _patterns())
    assert hint is not None and 'the result text contains "say \\"hi\\""' in hint
    assert quote_hint('the result text contains "plain"', _patterns()) is None
