"""The deliberate differences from the reference converter (``docs/formats/sharegpt.md``)."""

from __future__ import annotations

import json
from typing import Any

import pchronicle_datasets as pc
from tests.formats.sharegpt.helpers import (
    EMPTY,
    assert_same,
    conv,
    doc,
    jline,
    read,
    response_block,
    same_source,
    values,
)


def _reference_tool_value(calls: list[dict[str, Any]], results: list[tuple[str, Any]]) -> str:
    """The reference converter's rule: the k-th result is named after the k-th call, "unknown" past the end."""
    blocks = []
    for k, (cid, content) in enumerate(results):
        name = calls[k]["fn"] if k < len(calls) else "unknown"
        blocks.append(response_block(cid, name, content))
    return "\n".join(blocks)


def test_difference_1_result_name_through_the_call_id():
    calls = [{"tcid": "c_A", "fn": "web_search", "args": {"q": "x"}}, {"tcid": "c_B", "fn": "read_file", "args": {}}]
    arrived = [("c_B", "notes"), ("c_A", "sunny")]
    story = doc(
        [
            {"src": "agent", "msg": "", "tool_calls": calls},
            {
                "src": "agent",
                "msg": "ok",
                "observation": {"results": [{"source_call_id": i, "content": x} for i, x in arrived]},
            },
        ]
    )
    ours = values(story)[2]
    assert ours == (
        "tool",
        response_block("c_B", "read_file", "notes") + "\n" + response_block("c_A", "web_search", "sunny"),
    )
    reference = _reference_tool_value(calls, arrived)
    assert reference != ours[1]
    assert reference.startswith(response_block("c_B", "web_search", "notes"))  # what the reference would mislabel


def test_difference_1_position_fallback_and_unknown_past_the_end():
    calls = [{"tcid": "c1", "fn": "ls", "args": {}}, {"tcid": "c2", "fn": "cat", "args": {}}]
    results = [{"content": "one"}, {"content": "two"}, {"content": "three"}]
    want = "\n".join(
        [response_block("", "ls", "one"), response_block("", "cat", "two"), response_block("", "unknown", "three")]
    )
    same_turn = doc([{"src": "agent", "msg": "", "tool_calls": calls, "observation": {"results": results}}])
    assert values(same_turn)[2] == ("tool", want)
    next_turn = doc(
        [
            {"src": "agent", "msg": "", "tool_calls": calls},
            {"src": "agent", "msg": "ok", "observation": {"results": results}},
        ]
    )
    assert values(next_turn)[2] == ("tool", want)
    assert values(next_turn)[3] == ("gpt", EMPTY + "ok")
    # the fallback is the reference's own rule
    assert want == _reference_tool_value(calls, [("", "one"), ("", "two"), ("", "three")])


def test_difference_2_every_value_is_a_string():
    parts = [
        {"type": "text", "text": "look "},
        {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
        {"type": "text", "text": " here"},
    ]
    story = doc(
        [
            {"src": "user", "msg": parts},
            {"src": "agent", "msg": None},
            {"src": "user", "msg": 42},
            {"src": "agent", "msg": {"answer": "Zürich"}},
            {"src": "user", "msg": None},
            {"src": "agent", "msg": [{"type": "output_text", "text": "a"}, {"type": "text", "text": "b"}]},
        ]
    )
    got = values(story)
    assert got[1:] == [
        ("human", 'look {"type": "image_url", "image_url": {"url": "https://x/a.png"}} here'),
        ("gpt", EMPTY.strip()),
        ("human", "42"),
        ("gpt", EMPTY + '{"answer": "Zürich"}'),
        ("human", ""),
        ("gpt", EMPTY + "ab"),
    ]
    assert all(type(v) is str for _, v in got)


def test_difference_3_to_sharegpt_adds_nothing_but_conversations():
    story = doc(
        [{"src": "user", "msg": "hi"}],
        finished_at="2026-03-30T14:22:31Z",
        task={"result": {"completed": True}},
        unknown_fields={"sources": {"other": {"source_document_id": "o.json", "fields": {"/x": 1}}}},
    )
    story["agent"]["model"] = "m"
    assert list(pc.to_sharegpt(story)) == ["conversations"]
    record = json.loads(pc.from_storyline("sharegpt", story))
    assert record == {
        "conversations": conv(story),
        "timestamp": "2026-03-30T14:22:31Z",
        "model": "m",
        "completed": True,
    }


def test_difference_3_storyline_envelope_only_when_asked():
    rows = [
        {
            "session_id": "s1",
            "step_id": 1,
            "messages": [{"role": "user", "content": "hi"}],
            "response": {"role": "assistant", "content": "hello"},
            "custom_probe": {"a": [1, 2.5]},
        }
    ]
    [story] = pc.into_storyline("openai-msg", json.dumps(rows))
    sources = story["unknown_fields"]["sources"]
    assert "custom_probe" in json.dumps(sources)
    plain = json.loads(pc.from_storyline("sharegpt", story))
    assert "_storyline" not in plain
    assert list(pc.to_sharegpt(story)) == ["conversations"]
    carried = json.loads(pc.from_storyline("sharegpt", story, carry_residual=True))
    assert_same(carried["_storyline"], {"version": 1, "unknown_fields": {"sources": sources}})
    assert carried["conversations"] == plain["conversations"]
    # read back: the other format's residual returns to /unknown_fields, and the record is given back whole
    [back] = read(jline(carried))
    assert_same(back["unknown_fields"]["sources"]["openai-msg"], sources["openai-msg"])
    assert_same(same_source(carried), carried)
