"""Reasoning (docs/formats/openai-msg.md, reading 4): ``reasoning`` or ``thinking`` is read when
``reasoning_content`` is absent and written back under its own key; ``reasoning_content`` wins."""

from __future__ import annotations

import pytest

from pchronicle_datasets import from_storyline
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import NAME, case, family, fields, one, rows_of, turn


@pytest.mark.parametrize("key", family("reasoning_key"))
def test_reasoning_or_thinking_read_when_reasoning_content_is_absent_and_written_back(key: str) -> None:
    golden = case(f"reasoning_key/{key}")
    story = one(golden)
    assert turn(story, 2)["reason"] == golden.expected["turn_2_reason"]
    assert fields(story) == golden.expected["fields"]
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == rows_of(golden)


def test_reasoning_content_wins_and_the_other_keys_are_residual() -> None:
    golden = case("reasoning_priority")
    story = one(golden)
    assert turn(story, 2)["reason"] == golden.expected["turn_2_reason"]
    assert fields(story) == golden.expected["fields"]
