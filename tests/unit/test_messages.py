"""Message helpers that quote what a server sent: bounded, and never a hint that reads as a no-op."""

from __future__ import annotations

import unicodedata

import pytest

from mcp_bdd._text import did_you_mean, some_of


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


def test_a_masked_step_exception_keeps_its_type() -> None:
    """The stand-in for a step's exception whose text held a secret is still of its type: a user's
    TimeoutError stays a *Timeout* in the report, whatever its __init__ takes."""
    from mcp_bdd.hooks._step_failures import stand_in as _stand_in

    class Custom(Exception):
        def __init__(self, what: str, code: int) -> None:
            super().__init__(what)
            self.code = code

    for exc in (TimeoutError("t"), KeyError("k"), Custom("c", 2), AssertionError("a"), ConnectionError(1, "x")):
        shown = _stand_in(exc, "masked ****")
        assert isinstance(shown, type(exc)) and type(shown).__name__ == type(exc).__name__, exc
        assert str(shown) == "masked ****"


def test_the_sse_event_screen_reads_retry_and_ids_safely() -> None:
    """`retry:` is read whatever ends its line (CR alone too) and however many leading zeros; an id
    that is no valid JSON (`0123`), or one only inside a result, is no id: no request is failed for it."""
    from mcp_bdd.session._http import _RETRY, _id_of

    for event in (b"retry: 1\n\n", b"id: 1\rretry:1\r\r", b"retry: 0000000001\r\n\r\n"):
        found = _RETRY.search(event)
        assert found is not None and int(found.group(1)) == 1, event
    assert _RETRY.search(b"data: retry: 1\n\n") is None
    assert _id_of(b'data: {"id": 0123, "jsonrpc": "2.0", "result": {}}\n\n') is None
    assert _id_of(b'data: {"result": {"task": {"id": "t1"}}, "id": 7, "jsonrpc": "1"}\n\n') is None
    assert _id_of(b'data: {"jsonrpc": "2.0", "id": 3, "result": {"content": [\n\n') == 3


def test_only_the_sdks_validation_of_the_handshake_is_a_protocol_violation() -> None:
    """An in-process lifespan whose settings lack a variable raises pydantic's ValidationError too:
    that is a start that failed, not a server that broke the protocol."""
    import mcp_types as types
    from pydantic import BaseModel, ValidationError

    from mcp_bdd.session._session import _broke_the_handshake

    class Settings(BaseModel):
        api_key: str

    with pytest.raises(ValidationError) as settings:
        Settings.model_validate({})
    assert not _broke_the_handshake(settings.value)
    bad = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": "yes"},
        "serverInfo": {"name": "a", "version": "1"},
    }
    with pytest.raises(ValidationError) as answer:
        types.InitializeResult.model_validate(bad)
    assert _broke_the_handshake(answer.value)


def test_did_you_mean_never_claims_an_identical_name_differs_in_accents() -> None:
    from mcp_bdd._text import did_you_mean

    said = did_you_mean("contract", ["contract", "quality"], "check")
    assert "Unicode code points" not in said and '"contract" is one of them' in said
    assert "other Unicode code points" in did_you_mean("cafe\u0301", ["caf\u00e9"], "tool")
