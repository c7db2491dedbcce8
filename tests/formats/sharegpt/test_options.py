"""The writer's options (``docs/formats/sharegpt.md``), every one off by default."""

from __future__ import annotations

import inspect
import json

import pchronicle_datasets as pc
from tests.formats.sharegpt.helpers import (
    EMPTY,
    EX2_TOOLS,
    EXAMPLES,
    PREAMBLE,
    SYSTEM_NO_TOOLS,
    conv,
    doc,
    load,
    values,
)
from tests.goldens import replay


def test_every_option_is_off_by_default():
    defaults = {n: p.default for n, p in inspect.signature(pc.to_sharegpt).parameters.items() if n != "example"}
    assert defaults == {
        "keep_system_prompt": False,
        "empty_think": True,
        "drop_copied": False,
        "keep_invalid_args": False,
        "strict": False,
        "trainable": "all",
        "mask_tool_arguments": False,
        "dialect": "reference",  # the seed's ShareGPT; "llamafactory" is LLaMA-Factory's strict alternation
    }
    for name in EXAMPLES:
        story = replay(load(f"{name}.input.json"))
        assert conv(story) == conv(story, **defaults)


def test_keep_system_prompt():
    story = doc(
        [{"src": "system", "msg": "Be brief."}, {"src": "user", "msg": "hi"}, {"src": "agent", "msg": "yo"}],
        tools=EX2_TOOLS,
    )
    assert values(story)[0][1].startswith(PREAMBLE)
    kept = values(story, keep_system_prompt=True)
    assert kept == [("system", "Be brief."), ("human", "hi"), ("gpt", EMPTY + "yo")]
    # no system turn: the generated prompt stays
    no_system = doc([{"src": "user", "msg": "hi"}])
    assert values(no_system, keep_system_prompt=True)[0] == ("system", SYSTEM_NO_TOOLS)
    # ex1: the source system message instead of the generated prompt, the rest as the reference wrote it
    ex1 = replay(load("ex1_reasoning.input.json"))
    want = load("ex1_reasoning.conversations.json")
    got = conv(ex1, keep_system_prompt=True)
    assert got[0] == {"from": "system", "value": "You are a helpful assistant."}
    assert got[1:] == want[1:]


def test_empty_think_false():
    ex3 = replay(load("ex3_plain.input.json"))
    assert conv(ex3, empty_think=False)[2] == {"from": "gpt", "value": "Hello!"}
    calls = [{"tcid": "c1", "fn": "ls", "args": {}}]
    story = doc([{"src": "agent", "msg": "x", "tool_calls": calls}, {"src": "agent", "msg": "y", "reason": "r"}])
    got = values(story, empty_think=False)
    assert got[1][1] == 'x\n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    assert got[2][1] == "<think>\nr\n</think>\ny"
    assert all(EMPTY not in v for _, v in got)


def test_drop_copied():
    story = doc(
        [
            {"src": "system", "msg": "ctx", "copied": True},
            {"src": "user", "msg": "old question", "copied": True},
            {"src": "agent", "msg": "old answer", "copied": True},
            {"src": "user", "msg": "new question"},
            {"src": "agent", "msg": "new answer"},
        ]
    )
    assert [v for _, v in values(story)][1:] == [
        "old question",
        EMPTY + "old answer",
        "new question",
        EMPTY + "new answer",
    ]
    assert [v for _, v in values(story, drop_copied=True)][1:] == ["new question", EMPTY + "new answer"]
    assert values(story, drop_copied=True, keep_system_prompt=True)[0] == ("system", SYSTEM_NO_TOOLS)


def test_options_pass_through_from_storyline():
    story = replay(load("ex3_plain.input.json"))
    record = json.loads(pc.from_storyline("sharegpt", story, empty_think=False))
    assert record["conversations"] == conv(story, empty_think=False)
