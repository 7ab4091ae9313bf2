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


def _answer(match: object) -> tuple[object, list[object]] | None:
    if match is None:
        return None
    return match.func, [(a.name, a.value) for a in match.arguments]  # type: ignore[attr-defined]


def test_a_remembered_lookup_gives_behaves_own_answer_every_time() -> None:
    """The look-ahead and behave ask the registry about every step: a text's definition is found
    once per run, and the same definition with the same arguments comes back each time after."""
    from behave.step_registry import StepRegistry

    from mcp_bdd._matching import forget_matches, remember_matches

    lines = _contract_steps() + _example_steps()
    steps = [Step("x.feature", 1, keyword.title(), keyword, text) for keyword, text in lines]
    steps.append(Step("x.feature", 1, "Then", "then", "no step says this"))
    plain = [_answer(StepRegistry.find_match(registry, step)) for step in steps]
    remember_matches(registry)
    try:
        assert "find_match" in registry.__dict__
        for _ in range(2):  # first found, then remembered
            assert [_answer(registry.find_match(step)) for step in steps] == plain
    finally:
        forget_matches(registry)
    assert "find_match" not in registry.__dict__  # behave's own lookup is back


def test_what_is_remembered_follows_the_registry() -> None:
    """A text that matched nothing is asked again (a definition added later may match it); a
    definition added later that comes first, or a cleared registry, forgets what was found."""
    from behave.step_registry import StepRegistry

    from mcp_bdd._matching import remember_matches

    def first(context: object) -> None: ...

    def second(context: object, what: str) -> None: ...

    first.__module__ = second.__module__ = "mcp_bdd.steps.tools"  # as the vocabulary's are: remembered
    mine = StepRegistry()
    remember_matches(mine)
    step = Step("x.feature", 1, "Given", "given", "a thing")
    assert mine.find_match(step) is None
    mine.add_step_definition("step", "a thing", first)
    assert mine.find_match(step).func is first
    mine.add_step_definition("given", "a {what}", second)  # given comes before step: now the first match
    assert mine.find_match(step).func is second
    mine.clear()
    mine.add_step_definition("given", "a thing", first)
    assert mine.find_match(step).func is first
    mine.clear()
    mine.add_step_definition("given", "a {what}", second)
    match = mine.find_match(step)
    assert match.func is second and _answer(match) == (second, [("what", "thing")])


def test_a_projects_own_types_are_converted_for_every_step() -> None:
    """A project's type may read the clock, count, or hand out a list a step changes: its steps are
    looked up every time. So is a vocabulary step whose argument failed to convert."""
    from behave.matchers import MatchWithError
    from behave.step_registry import StepRegistry

    from mcp_bdd._matching import forget_matches, remember_matches

    calls: list[str] = []

    def stamped(text: str) -> str:
        calls.append(text)  # a clock, a counter, the environment: a value of this moment
        return f"{text}-{len(calls)}"

    def stamp(context: object, stamp: str) -> None: ...

    def append_one(context: object, items: list[str]) -> None:
        items.append("one")

    def refuse(text: str) -> str:
        raise ValueError(f"not a size: {text}")

    def sized(context: object, size: str) -> None: ...

    sized.__module__ = "mcp_bdd.steps.tools"
    mine = StepRegistry()
    mine.steps["given"].append(ParseMatcher(append_one, "the items {items:Items}", custom_types={"Items": str.split}))
    mine.steps["given"].append(ParseMatcher(stamp, "the stamp {stamp:Stamp}", custom_types={"Stamp": stamped}))
    mine.steps["given"].append(ParseMatcher(sized, "the size {size:Size}", custom_types={"Size": refuse}))
    plugins = StepRegistry.find_match.__get__(mine)
    mine.find_match = plugins  # another plugin's lookup, in place before the run
    remember_matches(mine)
    step = Step("x.feature", 1, "Given", "given", "the items a b")
    first, second = mine.find_match(step), mine.find_match(step)
    first.run(_context())
    assert second.arguments[0].value == ["a", "b"]  # not the list the first step changed
    now = Step("x.feature", 1, "Given", "given", "the stamp t")
    assert [mine.find_match(now).arguments[0].value for _ in range(2)] == ["t-1", "t-2"]
    bad = Step("x.feature", 1, "Given", "given", "the size huge")
    assert isinstance(mine.find_match(bad), MatchWithError)
    assert not mine.find_match.found  # neither was kept
    forget_matches(mine)
    assert mine.__dict__["find_match"] is plugins  # what was there before is back


def _context() -> object:
    class Context:
        @staticmethod
        def use_with_user_mode() -> object:
            import contextlib

            return contextlib.nullcontext()

    return Context()
