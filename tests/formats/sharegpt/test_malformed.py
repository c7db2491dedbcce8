"""Malformed ShareGPT input: a clear ``FormatError`` naming the document, the line and the JSON Pointer."""

from __future__ import annotations

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from tests.formats.sharegpt.helpers import (
    H,
    jline,
    records_of,
)

GOOD = jline({"conversations": [H("fine")]})


@pytest.mark.parametrize(
    ("text", "pointer", "line"),
    [
        ('{"conversations": [', "", 1),
        (GOOD + "\n{not json\n", "", 2),
        (GOOD + '\n{"conversations": {"from": "human", "value": "x"}}\n', "/conversations", 2),
        ('{"model": "m"}', "/conversations", 1),
        (GOOD + "\n42\n", "", 2),
        ("42", "", 1),
        ('"a string"', "", 1),
    ],
    ids=[
        "not JSON",
        "not JSON on line 2",
        "conversations not an array",
        "no conversations",
        "number",
        "number alone",
        "string",
    ],
)
def test_malformed_input(text, pointer, line):
    with pytest.raises(FormatError) as info:
        pc.into_storyline("sharegpt", text, document_id="bad.jsonl")
    err = info.value
    assert (err.pointer, err.line, err.document_id) == (pointer, line, "bad.jsonl")
    assert "bad.jsonl" in str(err)
    recs = records_of(text, "bad.jsonl")
    if line == 2:  # the good record before it is kept
        assert recs[0].error is None and recs[0].story["turns"][0]["msg"] == "fine"
    assert isinstance(recs[-1].error, FormatError)


@pytest.mark.parametrize(
    ("record", "pointer", "words"),
    [
        ({"conversations": [H("ok"), {"role": "user", "content": "hi"}]}, "/conversations/1", "--from chat"),
        ({"conversations": [{"from": "gpt"}]}, "/conversations/0", "an object with from and value"),
        ({"conversations": [H("ok"), "str"]}, "/conversations/1", "got string"),
        ({"conversations": [{"from": "bing", "value": "hi"}]}, "/conversations/0/from", 'role "bing"'),
        ([1, 2, 3], "/0", "got integer"),
        ([H("ok"), None], "/1", "got null"),
    ],
    ids=["chat message", "no value", "a string", "unknown role", "any JSON array", "null element"],
)
def test_an_element_that_is_not_a_turn_is_an_error_naming_its_pointer(record, pointer, words):
    """Issue 12: a record whose conversation holds elements the reader does not understand is no valid document
    with fewer (or zero) turns."""
    with pytest.raises(FormatError) as info:
        pc.into_storyline("sharegpt", jline(record), document_id="bad.jsonl")
    assert info.value.pointer == pointer and info.value.line == 1
    assert words in str(info.value)


def test_a_chat_record_under_conversations_is_detected_as_chat():
    [story] = pc.into_storyline("auto", jline({"conversations": [{"role": "user", "content": "hi"}]}))
    assert story["origin"]["format"] == "chat" and story["turns"][0]["msg"] == "hi"
