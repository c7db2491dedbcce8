"""The reference converter's own outputs and the seed's "Полный пример" (full example), written byte for byte."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from tests.formats.sharegpt.helpers import (
    EXAMPLES,
    SYSTEM_NO_TOOLS,
    conv,
    doc,
    load,
)
from tests.goldens import replay


@pytest.mark.parametrize("name", EXAMPLES)
def test_reference_examples_byte_for_byte(name):
    story = replay(load(f"{name}.input.json"))
    want = load(f"{name}.conversations.json")
    got = conv(story)
    assert got == want
    assert json.dumps(got, ensure_ascii=False) == json.dumps(want, ensure_ascii=False)
    # the file writer gives the same conversations in a trajectory record
    assert json.loads(pc.from_storyline("sharegpt", story))["conversations"] == want


def test_reference_ex1_ignores_the_source_system_message_and_converts_the_scratchpad():
    story = replay(load("ex1_reasoning.input.json"))
    assert story["turns"][0]["msg"] == "You are a helpful assistant."
    got = conv(story)
    assert got[0]["value"] == SYSTEM_NO_TOOLS
    assert all("helpful assistant" not in c["value"] for c in got)
    assert got[4]["value"] == "<think>391/17 = 23 by the previous step.</think>\n\n\nIt is 23."
    assert "REASONING_SCRATCHPAD" not in json.dumps(got)


def test_seed_example_is_written_exactly():
    """The seed's full example, rebuilt as a Storyline document (bare tool schemas in /agent/tools)."""
    record = load("seed_example.record.json")
    tools = [
        {
            "name": "terminal",
            "description": "Execute shell commands",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        }
    ]
    story = doc(
        [
            {"src": "user", "msg": "What Python version is installed?"},
            {
                "src": "agent",
                "msg": None,
                "reason": "The user wants to know the Python version. I should run python3 --version.",
                "tool_calls": [{"tcid": "call_abc123", "fn": "terminal", "args": {"command": "python3 --version"}}],
            },
            {
                "src": "agent",
                "msg": "Python 3.11.6 is installed on this system.",
                "reason": "Got the version. I can now answer the user.",
                "observation": {"results": [{"source_call_id": "call_abc123", "content": "Python 3.11.6"}]},
            },
        ],
        tools=tools,
    )
    assert conv(story) == record["conversations"]
