"""The hub API around the Storyline format: ``into_storyline``, ``from_storyline``, ``convert``,
``format_names``, and errors that name the document and survive pickling."""

from __future__ import annotations

import pickle

import pytest

from pchronicle_datasets import (
    FormatError,
    PchronicleError,
    StorylineError,
    convert,
    format_names,
    from_storyline,
    into_storyline,
)
from pchronicle_datasets.formats import storyline_file as fmt
from tests.formats.storyline.helpers import (
    FULL,
    FULL_TEXT,
    jsonl,
    line,
    story,
)


def test_into_storyline():
    assert into_storyline("storyline", FULL_TEXT, document_id="full.storyline.json") == [FULL]
    assert into_storyline("storyline", FULL_TEXT.encode()) == [FULL]


def test_into_storyline_error_names_the_document():
    with pytest.raises(StorylineError) as info:
        into_storyline("storyline", line(story("")), document_id="logs/a.json")
    assert "in logs/a.json" in str(info.value)


def test_into_storyline_unknown_format_lists_names():
    with pytest.raises(ValueError) as info:
        into_storyline("nope", FULL_TEXT)
    assert "storyline" in str(info.value)
    assert "nope" in str(info.value)
    assert not isinstance(info.value, PchronicleError)


def test_into_storyline_refuses_non_text():
    with pytest.raises(TypeError):
        into_storyline("storyline", FULL)  # type: ignore[arg-type]


def test_from_storyline():
    assert fmt.decode(from_storyline("storyline", FULL)) == [FULL]
    assert fmt.decode(from_storyline("storyline", [FULL, story()])) == [FULL, story()]


def test_from_storyline_unknown_format_lists_names():
    with pytest.raises(ValueError, match="storyline"):
        from_storyline("nope", FULL)


def test_convert_storyline_to_storyline():
    text = jsonl(story("s1"), story("s2"))
    out = convert("storyline", "storyline", text, document_id="logs/a.jsonl")
    assert out == from_storyline("storyline", into_storyline("storyline", text))
    assert fmt.decode(out) == [story("s1"), story("s2")]
    assert fmt.decode(convert("storyline", "storyline", FULL_TEXT)) == [FULL]


def test_convert_unknown_target_fails_before_decoding():
    with pytest.raises(ValueError, match="storyline") as info:
        convert("storyline", "nope", "{not json")
    assert not isinstance(info.value, FormatError)


def test_convert_unknown_source():
    with pytest.raises(ValueError, match="storyline"):
        convert("nope", "storyline", FULL_TEXT)


def test_format_names():
    assert "storyline" in format_names()


# ---------------------------------------------------------------------------------------------- errors


def test_errors_survive_pickling():
    with pytest.raises(StorylineError) as info:
        fmt.decode(jsonl(story("s1"), story("")), "logs/a.jsonl")
    err = pickle.loads(pickle.dumps(info.value))
    assert type(err) is StorylineError
    assert (err.pointer, err.document_id, err.line, str(err)) == (
        "/session",
        "logs/a.jsonl",
        2,
        str(info.value),
    )
