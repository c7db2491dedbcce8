"""Reading the ``conversations`` array back: think blocks, tool calls and responses, their ids, the generated
system prompt's tools, other system values, and ``tool_stats``."""

from __future__ import annotations

import pytest

import pchronicle_datasets as pc
from tests.formats.sharegpt.helpers import (
    EMPTY,
    SYSTEM_NO_TOOLS,
    G,
    H,
    T,
    assert_same,
    call_block,
    conv,
    jline,
    load,
    read,
    residual,
    response_block,
    same_source,
)


@pytest.mark.parametrize(
    ("value", "reason", "msg"),
    [
        ("<think>\nplan\n</think>\nanswer", "plan", "answer"),
        ("<think>plan</think>answer", "plan", "answer"),
        ("<think>plan</think>\n\nanswer  ", "plan", "answer"),
        ("<think>a</think>\nx\n<think>\nb\n</think>\ny", "a\nb", "x\n\ny"),
        ("<think>\n\nspaced\n\n</think>\nz", "\nspaced\n", "z"),
        ("x<think>late</think>", "late", "x"),
    ],
)
def test_read_think_blocks(value, reason, msg):
    record = {"conversations": [H("q"), G(value)]}
    [story] = read(jline(record))
    turn = story["turns"][1]
    assert (turn["src"], turn.get("reason"), turn["msg"]) == ("agent", reason, msg)
    assert_same(same_source(record), record)


def test_read_empty_think_gives_no_reason():
    [story] = read(jline({"conversations": [G(EMPTY + "Hello!")]}))
    assert not (story["turns"][0].get("reason") or "").strip()
    assert story["turns"][0]["msg"] == "Hello!"
    assert residual(story) == {}


def test_read_every_tool_call_and_every_tool_response():
    calls = [("ls", {"p": "."}), ("cat", {"f": "a.txt"}), ("web_search", {"q": "Zürich", "n": [1, 2.5, None]})]
    gpt = EMPTY + "Three calls.\n" + "\n".join(call_block(n, a) for n, a in calls)
    contents = ["a.txt", {"k": [1]}, ["x", "y"]]
    tool = "\n".join(response_block(f"id{k}", n, c) for k, ((n, _), c) in enumerate(zip(calls, contents, strict=True)))
    record = {"conversations": [H("go"), G(gpt), T(tool), G(EMPTY + "done")]}
    [story] = read(jline(record))
    turn = story["turns"][1]
    assert turn["msg"] == "Three calls."
    assert [(c["tcid"], c["fn"], c["args"]) for c in turn["tool_calls"]] == [
        ("id0", "ls", {"p": "."}),
        ("id1", "cat", {"f": "a.txt"}),
        ("id2", "web_search", {"q": "Zürich", "n": [1, 2.5, None]}),
    ]
    assert turn["observation"]["results"] == [
        {"source_call_id": f"id{k}", "content": c} for k, c in enumerate(contents)
    ]
    assert residual(story) == {}
    assert [t["id"] for t in story["turns"]] == [1, 2, 3]
    assert_same(same_source(record), record)
    stats = {s["tool"]: s["count"] for s in pc.compute_tool_stats(story)}
    assert stats == {"cat": 1, "ls": 1, "web_search": 1}


def test_read_call_ids_from_responses_in_any_order():
    gpt = EMPTY + call_block("ls", {}) + "\n" + call_block("cat", {})
    tool = response_block("B", "cat", "c") + "\n" + response_block("A", "ls", "l")
    record = {"conversations": [G(gpt), T(tool)]}
    [story] = read(jline(record))
    calls = story["turns"][0]["tool_calls"]
    assert [(c["tcid"], c["fn"]) for c in calls] == [("A", "ls"), ("B", "cat")]
    assert story["turns"][0]["observation"]["results"] == [
        {"source_call_id": "B", "content": "c"},
        {"source_call_id": "A", "content": "l"},
    ]
    assert_same(same_source(record), record)


def test_read_deterministic_call_ids_when_absent():
    gpt = EMPTY + call_block("ls", {}) + "\n" + call_block("cat", {})
    tool = (
        '<tool_response>\n{"name": "ls", "content": "l"}\n</tool_response>\n'
        '<tool_response>\n{"name": "cat", "content": "c"}\n</tool_response>'
    )
    record = {"conversations": [{"from": "system", "value": SYSTEM_NO_TOOLS}, H("go"), G(gpt), T(tool)]}
    first = read(jline(record))[0]
    second = read(jline(record))[0]
    ids = [c["tcid"] for c in first["turns"][1]["tool_calls"]]
    assert ids == [c["tcid"] for c in second["turns"][1]["tool_calls"]]
    assert ids == ["call-2-0", "call-2-1"]  # call-{element}-{c}
    assert [r["source_call_id"] for r in first["turns"][1]["observation"]["results"]] == ids
    assert_same(same_source(record), record)


def test_read_generated_prompt_tools_back_into_agent_tools():
    record = load("seed_example.record.json")
    [story] = read(jline(record))
    assert story["agent"]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "terminal",
                "description": "Execute shell commands",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            },
        }
    ]
    assert all(t["src"] != "system" for t in story["turns"])
    assert [c["tcid"] for c in story["turns"][1]["tool_calls"]] == ["call_abc123"]
    assert conv(story) == record["conversations"]
    assert_same(same_source(record), record)
    # an empty <tools> list: no /agent/tools, still the generated prompt
    [story] = read(jline({"conversations": [{"from": "system", "value": SYSTEM_NO_TOOLS}, H("hi")]}))
    assert "tools" not in story["agent"]
    assert story["meta"]["sharegpt"]["system"] == "generated"


def test_read_other_system_values_as_system_turns():
    changed = SYSTEM_NO_TOOLS + " Be brief."
    record = {"conversations": [{"from": "system", "value": changed}, H("hi")]}
    [story] = read(jline(record))
    assert story["turns"][0]["src"] == "system" and story["turns"][0]["msg"] == changed
    assert "tools" not in story["agent"]
    assert_same(same_source(record), record)


def test_derived_tool_stats_agree_with_the_batch_record():
    record = load("ex2_parallel_tools.batch_record.json")
    [story] = read(jline(record))
    derived = {s["tool"]: {k: s[k] for k in ("count", "success", "failure")} for s in pc.compute_tool_stats(story)}
    used = {tool: stats for tool, stats in record["tool_stats"].items() if stats["count"] > 0}
    assert derived == used
    row = pc.story_to_row(story)
    assert {s["tool"] for s in row["tool_stats"]} == set(used)
