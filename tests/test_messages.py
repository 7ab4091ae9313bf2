"""Message helpers that quote what a server sent: bounded, and never a hint that reads as a no-op."""

from __future__ import annotations

import unicodedata

from mcp_bdd.errors import did_you_mean, some_of


def test_a_name_that_differs_only_in_unicode_form_is_said_to() -> None:
    """`café` typed decomposed (e + U+0301) and served composed (U+00E9) got `Did you mean "café"?`,
    which reads as the very name given. The hint says what differs, in code points."""
    typed, served = unicodedata.normalize("NFD", "café_😀"), unicodedata.normalize("NFC", "café_😀")
    hint = did_you_mean(typed, [served, "other"], "tool")
    assert "looks the same, but its letters are other Unicode code points" in hint, hint
    assert ascii(typed) in hint and ascii(served) in hint and "Did you mean" not in hint, hint
    assert did_you_mean("cafe", [served], "tool").startswith('Did you mean "café_😀"?')


def test_a_list_in_a_message_is_bounded() -> None:
    """A server with 20,000 tools made "Then the tools are:" print one line of 270,000 characters."""
    names = [f"tool_{i:05d}" for i in range(20_000)]
    shown = some_of(names)
    assert shown.startswith("['tool_00000', 'tool_00001'") and shown.endswith(", … and 19980 more]"), shown
    assert len(shown) < 400
    assert some_of(["a", "b"]) == "['a', 'b']"
