"""The Storyline writer: documents round trip, one document is a valid single-document file, order is kept,
and what is not valid Storyline or not JSON is refused."""

from __future__ import annotations

import copy
import json

import pytest

from pchronicle_datasets import (
    StorylineError,
)
from pchronicle_datasets.formats import storyline_file as fmt
from tests.formats.storyline.helpers import (
    FULL,
    story,
)


@pytest.mark.parametrize(
    "docs",
    [
        [FULL],
        [story()],
        [story("s1"), FULL, story("s3")],
        [story(turns=[{"id": 1, "src": "user", "msg": 'héllo 🌍 "q" \\ \n \u2028 \u0000'}])],
        [story(extra={"f": [0.1, 1e-300, 1.7976931348623157e308, -0.0, 2**64 - 1, -(2**63)]})],
    ],
    ids=["full", "minimal", "several", "unicode", "numbers"],
)
def test_encode_then_decode_round_trips(docs):
    before = copy.deepcopy(docs)
    text = fmt.encode(docs)
    assert docs == before
    assert isinstance(text, str)
    assert text.endswith("\n")
    assert text.count("\n") == len(docs)  # JSON Lines split on \n only (not on U+2028)
    assert fmt.decode(text, "round.jsonl") == docs
    assert fmt.decode(text.encode("utf-8")) == docs


def test_encode_single_document_is_a_valid_single_document_file():
    text = fmt.encode([FULL])
    assert json.loads(text) == FULL
    assert fmt.decode(text) == [FULL]


def test_encode_preserves_turn_order():
    [decoded] = fmt.decode(fmt.encode([FULL]))
    assert [t["id"] for t in decoded["turns"]] == [10, 11, 3]


def test_encode_validates():
    with pytest.raises(StorylineError) as info:
        fmt.encode([story(), story(session="")])
    assert info.value.pointer == "/session"


def test_encode_refuses_non_json_values():
    with pytest.raises(StorylineError) as info:
        fmt.encode([story(extra={"s": {1, 2}})])
    assert info.value.pointer == "/extra/s"
