"""behave's record of where a context attribute was set, made by mcp-bdd's stand-in during a run."""

from __future__ import annotations

import sys
import traceback
import types
import warnings
import zipfile
from pathlib import Path

import behave.runner
from behave.runner import Context, ContextMaskWarning

from mcp_bdd._context_records import lighten_context_records


class _Runner:
    config = types.SimpleNamespace(verbose=False)


def _set_answer(context: Context) -> int:
    context.answer = 42
    return sys._getframe().f_lineno - 1


def test_the_record_names_the_same_file_line_function_and_source_as_behaves_own() -> None:
    by_behave = Context(_Runner())
    line = _set_answer(by_behave)
    restore = lighten_context_records()
    try:
        assert behave.runner.traceback is not traceback
        by_the_stand_in = Context(_Runner())
        assert _set_answer(by_the_stand_in) == line
    finally:
        restore()
    expected = (__file__, line, "_set_answer", "context.answer = 42")
    assert tuple(by_behave._record["answer"]) == expected
    assert tuple(by_the_stand_in._record["answer"]) == expected  # the source line, read when asked for


def test_a_masking_warning_still_says_where_the_attribute_was_set() -> None:
    restore = lighten_context_records()
    try:
        context = Context(_Runner())
        context._push()  # a scenario's layer
        context._mode = behave.runner.ContextMode.USER
        line = _set_answer(context)
        context._mode = behave.runner.ContextMode.BEHAVE
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            context._set_root_attribute("answer", 2)  # behave sets it for the whole run
    finally:
        restore()
    said = [str(w.message) for w in caught if issubclass(w.category, ContextMaskWarning)]
    assert said == [
        f"behave runner is masking context attribute 'answer' originally set in context.answer = 42 ({__file__}:{line})"
    ]


def test_the_module_is_put_back_and_another_stand_in_is_left_alone() -> None:
    restore = lighten_context_records()
    restore()
    assert behave.runner.traceback is traceback
    restore()  # twice (after_all, then atexit): still the module
    assert behave.runner.traceback is traceback

    theirs = types.SimpleNamespace(extract_stack=traceback.extract_stack)
    behave.runner.traceback = theirs
    try:
        restore_ours = lighten_context_records()
        assert behave.runner.traceback is theirs
        restore_ours()
        assert behave.runner.traceback is theirs
    finally:
        behave.runner.traceback = traceback


def test_the_frame_asked_about_is_the_one_summed_up() -> None:
    restore = lighten_context_records()
    try:
        caller = sys._getframe()
        [frame], line = behave.runner.traceback.extract_stack(caller, 1), caller.f_lineno  # one line: the same
    finally:
        restore()
    assert (frame.name, frame.lineno) == ("test_the_frame_asked_about_is_the_one_summed_up", line)


def test_a_module_loaded_from_a_zip_still_shows_its_line(tmp_path: Path) -> None:
    """`extract_stack` registers each frame's module with linecache: a step module loaded from a
    zip (a zipapp, a pex) has no file to read its line from."""
    archive = tmp_path / "steps.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_steps.py", "def set_answer(context):\n    context.answer = 42\n")
    sys.path.insert(0, str(archive))
    restore = lighten_context_records()
    try:
        import zipped_steps  # type: ignore[import-not-found]

        context = Context(_Runner())
        zipped_steps.set_answer(context)
    finally:
        restore()
        sys.path.remove(str(archive))
        sys.modules.pop("zipped_steps", None)
    assert tuple(context._record["answer"])[1:] == (2, "set_answer", "context.answer = 42")


def test_other_questions_go_to_the_module() -> None:
    restore = lighten_context_records()
    try:
        stand_in = behave.runner.traceback
        assert stand_in.format_exception_only is traceback.format_exception_only
        whole = stand_in.extract_stack()  # no limit: the module's own answer
        assert [frame.name for frame in whole][-1] == "test_other_questions_go_to_the_module"
    finally:
        restore()
