"""LLaMA-Factory's ShareGPT dialect (``formats/sharegpt/llamafactory.py``, ``docs/formats/sharegpt.md``): its
``function_call``/``observation`` elements are tool calls and results, ``tools`` (a JSON string) is
``/agent/tools``, ``system`` the first turn; the same source comes back exactly; the training outputs show
every call and result. Its typed-parts file is read by the chat format."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

import pchronicle_datasets as pc

DATA = Path(__file__).parents[2] / "data" / "sharegpt"
GLAIVE = DATA / "llamafactory_glaive_toolcall_en_demo.json"
PARTS = DATA / "llamafactory_reason_tool_use_demo_50.jsonl"


def _calls(stories):
    return sum(len(t.get("tool_calls") or ()) for s in stories for t in s["turns"])


def _results(stories):
    return sum(len((t.get("observation") or {}).get("results") or ()) for s in stories for t in s["turns"])


def test_glaive_calls_observations_and_tools_are_read():
    source = json.loads(GLAIVE.read_text())
    function_calls = sum(e["from"] == "function_call" for r in source for e in r["conversations"])
    observations = sum(e["from"] == "observation" for r in source for e in r["conversations"])
    stories = pc.into_storyline("auto", GLAIVE.read_bytes(), document_id=GLAIVE.name)
    assert len(stories) == 300 and function_calls == observations == 211
    assert _calls(stories) == function_calls and _results(stories) == observations
    with_tools = [s for s, r in zip(stories, source, strict=True) if json.loads(r["tools"])]
    assert all(s["agent"]["tools"] for s in with_tools) and len(with_tools) == 191
    first = stories[0]
    assert first["agent"]["tools"] == json.loads(source[0]["tools"])
    call_turn = first["turns"][3]
    assert call_turn["tool_calls"][0]["fn"] == "search_recipes"
    assert call_turn["tool_calls"][0]["args"] == {"ingredients": ["chicken", "bell peppers", "rice"]}
    assert call_turn["observation"]["results"][0]["content"] == source[0]["conversations"][4]["value"]
    assert first["meta"]["sharegpt"]["dialect"] == "llamafactory"


def test_glaive_comes_back_exactly_from_its_documents():
    stories = pc.into_storyline("sharegpt", GLAIVE.read_bytes(), document_id=GLAIVE.name)
    written = [orjson.loads(line) for line in pc.from_storyline("sharegpt", stories).splitlines()]
    assert written == json.loads(GLAIVE.read_text())


def test_glaive_training_outputs_hold_every_call_and_result():
    stories = pc.into_storyline("sharegpt", GLAIVE.read_bytes(), document_id=GLAIVE.name)
    with pc.collect_losses() as report:
        messages = [pc.to_messages(s, arguments="object") for s in stories]
        shared = [pc.to_sharegpt(s) for s in stories]
    assert not report
    assert sum(len(m.get("tool_calls", [])) for out in messages for m in out["messages"]) == 211
    assert sum(m["role"] == "tool" for out in messages for m in out["messages"]) == 211
    values = [c["value"] for out in shared for c in out["conversations"] if c["from"] != "system"]
    assert sum(v.count("<tool_call>") for v in values) == 211
    assert sum(v.count("<tool_response>") for v in values) == 211
    # to_sharegpt writes the reference agent's dialect: function_call elements become gpt <tool_call> blocks
    assert {c["from"] for out in shared for c in out["conversations"]} == {"system", "human", "gpt", "tool"}


def test_system_key_parallel_calls_and_unanswered_observations():
    record = {
        "conversations": [
            {"from": "human", "value": "weather in a and b?"},
            {
                "from": "function_call",
                "value": '[{"name": "w", "arguments": {"c": "a"}}, {"name": "w", "arguments": {"c": "b"}}]',
            },
            {"from": "observation", "value": "sun"},
            {"from": "observation", "value": "rain"},
            {"from": "observation", "value": "extra output"},
            {"from": "gpt", "value": "Sun in a, rain in b."},
        ],
        "system": "Be brief.",
        "tools": '[{"name": "w", "description": "weather", "parameters": {"type": "object"}}]',
    }
    [story] = pc.into_storyline("sharegpt", json.dumps(record), document_id="lf.jsonl")
    assert story["turns"][0] == {"id": 1, "src": "system", "msg": "Be brief.", "kind": "context"}
    calls = story["turns"][2]["tool_calls"]
    assert [c["args"] for c in calls] == [{"c": "a"}, {"c": "b"}]
    results = story["turns"][2]["observation"]["results"]
    assert results == [{"source_call_id": c["tcid"], "content": v} for c, v in zip(calls, ("sun", "rain"), strict=True)]
    assert story["turns"][3] == {"id": 4, "src": "tool", "msg": "extra output"}  # answers no call: its own turn
    roles = [m["role"] for m in pc.to_messages(story, arguments="object")["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "assistant"]
    [back] = [orjson.loads(line) for line in pc.from_storyline("sharegpt", [story]).splitlines()]
    assert back == record


def test_reason_tool_use_typed_parts_are_read_by_chat():
    stories = pc.into_storyline("auto", PARTS.read_bytes(), document_id=PARTS.name)
    raw = PARTS.read_bytes()
    assert {s["origin"]["format"] for s in stories} == {"chat"} and len(stories) == 50
    assert _calls(stories) == raw.count(b'"type": "tool_call"') == 68
    assert _results(stories) == 42
    assert sum(1 for s in stories for t in s["turns"] if t.get("reason")) == 112
    written = [orjson.loads(line) for line in pc.from_storyline("chat", stories).splitlines()]
    assert written == [orjson.loads(line) for line in raw.splitlines() if line.strip()]
    with pc.collect_losses() as report:
        outs = [pc.to_messages(s, arguments="object") for s in stories]
    assert not report  # every part was text, reasoning or a call: nothing flattened
    assert sum(len(m.get("tool_calls", [])) for out in outs for m in out["messages"]) == 68
    # the tools JSON string is read as the schemas
    source_tools = [json.loads(orjson.loads(line)["tools"]) for line in raw.splitlines() if line.strip()]
    assert [len(out["tools"]) for out in outs] == [len(t) for t in source_tools] and any(source_tools)
