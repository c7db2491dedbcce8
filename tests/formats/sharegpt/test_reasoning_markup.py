"""Seed, "Разметка содержимого рассуждений" (reasoning markup): native reasoning and the scratchpad as
``<think>`` blocks, and the empty think block in every gpt turn."""

from __future__ import annotations

from typing import Any

import pytest

from tests.formats.sharegpt.helpers import (
    EMPTY,
    doc,
    values,
)


@pytest.mark.parametrize(
    ("reason", "want"),
    [
        ("r", "<think>\nr\n</think>\nhi"),
        ("line 1\nline 2", "<think>\nline 1\nline 2\n</think>\nhi"),
        ("", EMPTY + "hi"),
        ("  \n\t", EMPTY + "hi"),
        (None, EMPTY + "hi"),
    ],
)
def test_think_block_only_for_a_non_blank_reason(reason, want):
    turn: dict[str, Any] = {"src": "agent", "msg": "hi"}
    if reason is not None:
        turn["reason"] = reason
    assert values(doc([turn]))[1] == ("gpt", want)


def test_scratchpad_becomes_think():
    pad = "<REASONING_SCRATCHPAD>plan</REASONING_SCRATCHPAD>\nAnswer."
    assert values(doc([{"src": "agent", "msg": pad}]))[1][1] == "<think>plan</think>\nAnswer."
    # a reason and a scratchpad: both blocks, no empty one
    got = values(doc([{"src": "agent", "msg": pad, "reason": "r"}]))[1][1]
    assert got == "<think>\nr\n</think>\n<think>plan</think>\nAnswer."
    # also in a turn with calls
    calls = [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}]
    got = values(doc([{"src": "agent", "msg": pad, "tool_calls": calls}]))[1][1]
    assert got == '<think>plan</think>\nAnswer.\n<tool_call>\n{"name": "ls", "arguments": {"p": "."}}\n</tool_call>'


@pytest.mark.parametrize(
    ("turn", "want"),
    [
        ({"msg": "a <think> in the text"}, "a <think> in the text"),
        ({"msg": "<think>mine</think> done"}, "<think>mine</think> done"),
        ({"msg": "no tag"}, EMPTY + "no tag"),
        ({"msg": "</think> only the closing tag"}, EMPTY + "</think> only the closing tag"),
    ],
)
def test_empty_think_unless_a_think_tag_appears(turn, want):
    assert values(doc([{"src": "agent", **turn}]))[1][1] == want
