"""The vocabulary's step matcher: the literal-head check changes how fast a step finds its
definition, never which definition it finds; and the vocabulary is registered as parse patterns
whichever matcher the user's steps module chose."""

from __future__ import annotations

from pathlib import Path

from behave.matchers import ParseMatcher
from behave.model import Step
from behave.step_registry import registry
from behave_project import REPO, make_project, run_behave
from test_editor import _contract_steps, _example_steps

import mcp_bdd.steps  # noqa: F401 - registers the vocabulary
from mcp_bdd.steps._base import HeadedMatcher


def _plain_first(keyword: str, text: str) -> object:
    """The definition behave's plain parse matching would pick: the first, in order, that parses."""
    for definition in [*registry.steps[keyword], *registry.steps["step"]]:
        if ParseMatcher.match(definition, text):
            return definition.func
    return None


def test_every_vocabulary_step_finds_the_definition_plain_parse_would() -> None:
    builtin = [m for ms in registry.steps.values() for m in ms if m.func.__module__.startswith("mcp_bdd.")]
    assert len(builtin) > 100 and all(isinstance(m, HeadedMatcher) for m in builtin)
    lines = _contract_steps() + _example_steps()
    assert len(lines) > 150
    for keyword, text in lines:
        match = registry.find_match(Step("x.feature", 1, keyword.title(), keyword, text))
        assert match is not None, text
        assert match.func is _plain_first(keyword, text), text


def test_a_step_that_differs_only_in_case_or_spacing_is_still_undefined() -> None:
    for text in ('The MCP server "shop" is running', 'the MCP server  "shop" is running'):
        assert registry.find_match(Step("x.feature", 1, "Given", "given", text)) is None


REGEX_STEPS = """\
from behave import then, use_step_matcher

use_step_matcher("re")

from mcp_bdd.steps import *  # noqa: E402,F401,F403


@then(r"the sum was (?P<total>\\d+) as a regex says")
def step_regex(context, total):
    assert context.mcp.last.value == {"result": int(total)}, context.mcp.last.value
"""


def test_the_vocabulary_works_after_a_user_chose_the_regex_matcher(tmp_path: Path) -> None:
    """Before: registering the vocabulary's parse types under the "re" matcher raised at import,
    and its phrases would have been compiled as regular expressions."""
    root = make_project(
        tmp_path,
        f'[servers.shop]\napp = "demo.shop:create_server"\ncwd = "{REPO}"\n',
        {
            "regex.feature": """\
                Feature: a regex steps module
                  Scenario: both kinds of step
                    Given the MCP server "shop" is running
                    When I call the tool "add" with:
                      | a | b |
                      | 2 | 3 |
                    Then the tool call succeeds
                    And the sum was 5 as a regex says
                """
        },
    )
    (root / "steps" / "mcp_steps.py").write_text(REGEX_STEPS)
    run = run_behave(root)
    assert run.counts() == {"passed": 1, "failed": 0, "error": 0, "skipped": 0}, run.failures()


def test_the_head_is_parse_literal_text() -> None:
    """`}}` in a pattern is one brace in the step; a case-insensitive parse gets no head check."""

    def func(context: object) -> None: ...

    assert HeadedMatcher(func, "a }} b {x}").match("a } b 1")
    assert not HeadedMatcher(func, "a }} b {x}").match("a }} b 1")
    assert HeadedMatcher(func, "a {{ b {x}").match("a { b 1")

    class Insensitive(HeadedMatcher):  # type: ignore[misc]
        CASE_SENSITIVE = False

    assert Insensitive(func, "the MCP server {x} is up").match("The mcp server shop is up")


def test_the_decorators_pass_behaves_keyword_arguments_on() -> None:
    """behave's decorators take keyword arguments (`timeout=` for an async step)."""
    from mcp_bdd.steps._base import _headed_decorator

    seen: list[tuple[str, dict[str, object]]] = []

    def decorator(pattern: str, **kwargs: object) -> object:
        seen.append((pattern, kwargs))
        return lambda func: func

    _headed_decorator(decorator)("a step", timeout=5)(print)  # type: ignore[arg-type]
    assert seen == [("a step", {"timeout": 5})]


def test_the_pending_phrases_of_the_contract_are_still_undefined() -> None:
    """tests/data/contract-pending.txt lists what the vocabulary lacks; a phrase defined since must
    leave the list (then the tests above check it like every other phrase)."""
    from contract_phrases import contract_steps, pending

    listed = pending()
    steps = [(k, t) for k, t in contract_steps(with_pending=True) if t in listed]
    assert {t for _, t in steps} == listed  # every pending line is a phrase of the contract
    defined = [t for k, t in steps if registry.find_match(Step("x.feature", 1, k.title(), k, t)) is not None]
    assert defined == [], "defined now: remove from tests/data/contract-pending.txt"
