"""Hypothesis round trips: conversations → Storyline → conversations, equal as JSON, with tool calls whose
results arrive out of order, parallel calls, missing results, string and object arguments, content parts."""

from __future__ import annotations

import json

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from tests.strategies import AWKWARD_STRINGS

from .common import written_records

_text = st.one_of(st.sampled_from(AWKWARD_STRINGS), st.text(max_size=12))
_json_value = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        _text,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=6,
)
_content = st.one_of(
    _text,
    st.none(),
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, _text),
            st.builds(lambda u: {"type": "image_url", "image_url": {"url": u}}, _text),
        ),
        max_size=3,
    ),
)


@st.composite
def _arguments(draw):
    args = draw(st.dictionaries(st.text(max_size=5), _json_value, max_size=3))
    form = draw(st.sampled_from(["spaced", "compact", "object", "raw"]))
    if form == "spaced":
        return json.dumps(args, ensure_ascii=False)
    if form == "compact":
        return json.dumps(args, separators=(",", ":"))
    if form == "raw":
        return draw(_text)
    return args


@st.composite
def conversations(draw):
    messages = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(_content)})
    n = 0
    for _ in range(draw(st.integers(1, 4))):
        messages.append({"role": "user", "content": draw(_content)})
        assistant = {"role": "assistant", "content": draw(_content)}
        if draw(st.booleans()):
            assistant[draw(st.sampled_from(["reasoning_content", "reasoning", "thinking"]))] = draw(_text)
        calls = []
        for _ in range(draw(st.integers(0, 3))):  # parallel calls
            n += 1
            calls.append(
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": draw(st.sampled_from(["ls", "cat"])), "arguments": draw(_arguments())},
                }
            )
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
        answered = draw(st.permutations(calls))  # out of order
        answered = answered[: draw(st.integers(0, len(answered)))]  # some missing
        for call in answered:
            result = {"role": "tool", "tool_call_id": call["id"], "content": draw(_content)}
            if draw(st.booleans()):
                result["name"] = call["function"]["name"]
            messages.append(result)
    record = {"messages": messages}
    if draw(st.booleans()):
        record["id"] = draw(st.text(min_size=1, max_size=6))
    if draw(st.booleans()):
        record["tools"] = [{"type": "function", "function": {"name": "ls"}}]
    if draw(st.booleans()):
        record["extra_field"] = draw(_json_value)
    return record if draw(st.integers(0, 4)) else messages


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(conversations(), min_size=1, max_size=3))
def test_conversations_round_trip(records):
    text = b"".join(orjson.dumps(r) + b"\n" for r in records)
    stories = pc.into_storyline("auto", text, document_id="p.jsonl")
    assert len(stories) == len(records)
    assert written_records(pc.from_storyline("chat", stories)) == records


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_to_messages_links_every_result_to_its_call(record):
    [story] = pc.into_storyline("chat", orjson.dumps(record) + b"\n", document_id="p.jsonl")
    messages = record if isinstance(record, list) else record["messages"]
    names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
    out = pc.to_messages(story, keep_invalid_args=True, arguments="object")["messages"]
    want = [(m["tool_call_id"], names[m["tool_call_id"]]) for m in messages if m["role"] == "tool"]
    assert sorted((m["tool_call_id"], m["name"]) for m in out if m["role"] == "tool") == sorted(want)
    assert [m["role"] for m in out if m["role"] != "tool"] == [m["role"] for m in messages if m["role"] != "tool"]
