"""Golden cases of the chat format (``tests/data/chat/``): one per mapping row and decision of
``docs/formats/chat.md``. Each input decodes to its expected documents, and the same-source writer gives
every record back as equal JSON."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.pointer import parse

from .common import DATA, source_records, written_records

CASES = sorted(p for p in DATA.glob("*.input.*"))


def _expected(path):
    return json.loads((DATA / (path.name.split(".input.")[0] + ".expected.json")).read_text("utf-8"))


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name.split(".input.")[0])
def test_golden_decode(path):
    stories = pc.into_storyline("chat", path.read_bytes(), document_id=path.name)
    assert stories == _expected(path)
    for story in stories:
        pc.validate(story)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name.split(".input.")[0])
def test_golden_same_source_round_trip(path):
    stories = pc.into_storyline("chat", path.read_bytes(), document_id=path.name)
    assert written_records(pc.from_storyline("chat", stories)) == source_records(path)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name.split(".input.")[0])
def test_golden_auto_detects_chat(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    assert {s["origin"]["format"] for s in stories} == {"chat"}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name.split(".input.")[0])
def test_every_residual_pointer_is_a_source_value(path):
    """Residual is kept under the source pointer of the value: it resolves in the source record."""
    records = source_records(path)
    for story, record in zip(pc.into_storyline("chat", path.read_bytes(), document_id=path.name), records, strict=True):
        for pointer, value in story["unknown_fields"]["sources"]["chat"]["fields"].items():
            node = record
            for token in parse(pointer):
                node = node[int(token)] if isinstance(node, list) else node[token]
            assert node == value


def _doc(case, n=0):
    return pc.into_storyline("chat", (DATA / case).read_bytes(), document_id=case)[n]


# ------------------------------------------------------------------------------------------ mapping rows


def test_id_keys_tried_in_order_and_fallback_session():
    stories = [_doc("basic_record.input.jsonl", i) for i in range(3)]
    assert [s["session"] for s in stories] == ["conv-1", "s-2", "basic_record.input.jsonl#3"]
    # session_id wins over conversation_id; the unused id key is residual
    assert stories[1]["unknown_fields"]["sources"]["chat"]["fields"] == {
        "/conversation_id": "ignored-as-id",
        "/messages/3/reasoning_content": None,
    }


def test_roles_developer_is_not_folded_into_system():
    story = _doc("basic_record.input.jsonl")
    assert [t["src"] for t in story["turns"]] == ["system", "developer", "user", "agent", "agent"]
    assert pc.to_messages(story, arguments="object")["messages"][1] == {
        "role": "developer",
        "content": "Answer in English.",
    }


def test_tools_model_and_record_fields():
    story = _doc("basic_record.input.jsonl")
    assert story["agent"] == {
        "id": "gpt-4o",
        "model": "gpt-4o",
        "name": "gpt-4o",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "ls",
                    "description": "list files",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ],
    }
    assert story["unknown_fields"]["sources"]["chat"]["fields"] == {"/split": "train"}


def test_reasoning_keys():
    first, second = _doc("basic_record.input.jsonl"), _doc("basic_record.input.jsonl", 1)
    assert first["turns"][3]["reason"] == "I should list."
    # `reasoning` and `thinking` are read when reasoning_content holds no string; the key is kept for export
    assert [t.get("reason") for t in second["turns"]] == [None, "greet back", None, "ok"]
    assert second["meta"]["chat"]["m"] == {"1": {"reason": "reasoning"}, "3": {"reason": "thinking"}}


def test_tool_calls_and_results_on_the_calling_turn():
    turn = _doc("basic_record.input.jsonl")["turns"][3]
    assert turn["tool_calls"] == [{"tcid": "call_1", "fn": "ls", "args": {"path": "."}}]
    assert turn["observation"] == {"results": [{"content": "a.txt\nb.txt", "source_call_id": "call_1"}]}


def test_parallel_calls_answered_out_of_order_keep_their_links():
    story = _doc("parallel_out_of_order.input.jsonl")
    assert story["turns"][1]["observation"]["results"] == [
        {"content": "notes", "source_call_id": "c_B"},
        {"content": "sunny", "source_call_id": "c_A"},
    ]
    tools = [
        (m["name"], m["tool_call_id"])
        for m in pc.to_messages(story, arguments="object")["messages"]
        if m["role"] == "tool"
    ]
    assert tools == [("read_file", "c_B"), ("web_search", "c_A")]  # c_C has no result: none invented


def test_legacy_function_call():
    story = _doc("legacy_function_call.input.json")
    assert story["turns"][1]["tool_calls"] == [{"tcid": "call-1-fc", "fn": "search", "args": {"q": "x"}}]
    assert story["turns"][1]["observation"]["results"] == [{"content": "found", "source_call_id": "call-1-fc"}]
    messages = pc.to_messages(story, arguments="object")["messages"]
    assert messages[1]["tool_calls"][0]["function"] == {"name": "search", "arguments": {"q": "x"}}
    assert messages[2] == {"role": "tool", "name": "search", "tool_call_id": "call-1-fc", "content": "found"}


def test_tool_message_name():
    story = _doc("tool_name.input.jsonl")
    fields = story["unknown_fields"]["sources"]["chat"]["fields"]
    # equal to the call's name: consumed; different: residual; a user's name: residual
    assert fields == {"/messages/3/name": "str_replace_editor", "/messages/4/name": "alice"}


def test_refusal():
    r1, r2, r3 = (_doc("refusal.input.jsonl", i) for i in range(3))
    assert r1["turns"][1]["msg"] == "I can't help with that."
    assert r2["turns"][1]["msg"] == "No."
    assert r3["unknown_fields"]["sources"]["chat"]["fields"] == {
        "/messages/1/refusal": None,
        "/messages/2/refusal": "also this",
    }


def test_results_matching_no_call_are_kept_in_place():
    o1, o2 = _doc("orphan_results.input.jsonl"), _doc("orphan_results.input.jsonl", 1)
    assert o1["turns"][2]["observation"]["results"][1:] == [
        {"content": "stray result", "source_call_id": "nobody"},
        {"content": "no id at all"},
    ]
    # a result before any assistant message is a turn of its own (issue 12: never a residual-only message)
    assert o1["turns"][0] == {"id": 1, "src": "tool", "msg": "before anything"}
    assert pc.to_messages(o1, arguments="object")["messages"][0] == {"role": "user", "content": "before anything"}
    tools = [
        (m["tool_call_id"], m["name"], m["content"])
        for m in pc.to_messages(o1, arguments="object")["messages"]
        if m["role"] == "tool"
    ]
    # an id that names no call is "unknown" (issue #23); without an id, named by position among the turn's calls
    # (the rule every writer shares), "unknown" past the end
    assert tools == [("k1", "run", "ran"), ("nobody", "unknown", "stray result"), ("", "unknown", "no id at all")]
    # a result on a turn without any call before it is written by to_messages right after that turn
    assert pc.to_messages(o2, arguments="object")["messages"][2] == {
        "role": "tool",
        "name": "unknown",
        "tool_call_id": "x9",
        "content": "result without any call",
    }


def test_missing_results_are_not_invented():
    story = _doc("orphan_results.input.jsonl", 2)
    assert "observation" not in story["turns"][1]
    assert [m["role"] for m in pc.to_messages(story, arguments="object")["messages"]] == ["user", "assistant"]


def test_content_parts_keep_their_json_value():
    story = _doc("content_parts.input.jsonl")
    assert story["turns"][0]["msg"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    # LLaMA-Factory's typed parts are read (issue 12): text, reasoning and tool calls; other parts stay as they are
    assert story["turns"][2]["msg"] == "Compute the area."
    assert story["turns"][3]["reason"] == "Use pi r^2."
    assert story["turns"][3]["tool_calls"] == [{"tcid": "call-3-p0", "fn": "circle_area", "args": {"radius": 1.5}}]
    assert story["turns"][3]["observation"]["results"] == [
        {"content": [{"type": "tool_output", "value": "7.0685834705770345"}]}
    ]
    assert pc.to_messages(story, arguments="object")["messages"][1]["content"] == "A cat."


def test_arguments_forms():
    calls = _doc("arguments_forms.input.jsonl")["turns"][1]["tool_calls"]
    assert [c["args"] for c in calls] == [
        {"a": 1, "b": [1.0, 2.5e-05], "c": "é"},
        {"a": 1, "b": "42"},
        {"c": "é"},
        {"a": 1},
        {"a": 1, "n": None},
        "ls -la",
        {},
        {},
    ]
    assert isinstance(calls[0]["args"]["b"][0], float)


def test_renamed_duplicate_ids_link_their_results():
    story = _doc("renamed_ids.input.jsonl")
    assert [c["tcid"] for c in story["turns"][2]["tool_calls"]] == ["call-3-0", "call-3-1", "call-3-2"]
    assert story["turns"][2]["observation"]["results"] == [{"content": "second", "source_call_id": "call-3-0"}]
    # the training outputs show the id the source wrote (issue 12)
    assert story["meta"]["source_call_ids"] == {"call-3-0": "call_0"}
    messages = pc.to_messages(story, arguments="object")["messages"]
    assert [c["id"] for c in messages[3]["tool_calls"]] == ["call_0", "call-3-1", "call-3-2"]
    assert messages[4]["tool_call_id"] == "call_0"


def test_values_that_are_not_calls_are_kept_whole_and_other_roles_are_turns():
    story = _doc("kept_whole.input.jsonl")
    assert set(story["unknown_fields"]["sources"]["chat"]["fields"]) == {
        "/messages/2/tool_calls/1",
        "/messages/2/tool_calls/2",
        "/messages/2/function_call",
    }
    assert story["turns"][1] == {"id": 2, "src": "ipython", "msg": "42"}  # a role of its own: a turn of that source


@pytest.mark.parametrize("bad", ['"not a message"', '{"content": "no role"}', "3"])
def test_a_value_that_is_not_a_message_is_an_error_naming_its_pointer(bad):
    text = '{"messages": [{"role": "user", "content": "x"}, ' + bad + "]}"
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("chat", text, document_id="bad.jsonl")
    assert err.value.pointer == "/messages/1" and "a message is an object with a string role" in str(err.value)


def test_litellm_response_is_the_last_assistant_turn():
    story = _doc("litellm_log.input.json")
    assert story["turns"][-1]["tool_calls"] == [{"tcid": "toolu_01", "fn": "terminal", "args": {"command": "ls"}}]
    fields = story["unknown_fields"]["sources"]["chat"]["fields"]
    assert fields["/response/usage"] == {"prompt_tokens": 10, "completion_tokens": 5}
    assert fields["/response/choices/1"]["message"]["content"] == "alt"
    assert fields["/response/choices/0/message/tool_calls/0/index"] == 0


def test_harbor_conversations_and_tool_definitions():
    story = _doc("harbor_conversations.input.json")
    assert story["session"] == "hello-world__abc"
    assert story["agent"]["tools"][0]["function"]["name"] == "bash"
    assert len(story["turns"]) == 3
    assert story["unknown_fields"]["sources"]["chat"]["fields"] == {"/reward": 1.0}


def test_bare_array_and_array_of_records():
    bare = _doc("bare_array.input.json")
    assert [t["src"] for t in bare["turns"]] == ["system", "user", "agent"]
    assert bare["session"] == "bare_array.input.json#1"
    records = pc.into_storyline("chat", (DATA / "array_of_records.input.json").read_bytes())
    assert [s["session"] for s in records] == ["a1", "a2"]


def test_carried_envelope():
    story = _doc("carried_envelope.input.jsonl")
    assert story["unknown_fields"]["sources"]["sharegpt"]["fields"] == {"/prompt_index": 42}
    assert story["unknown_fields"]["sources"]["chat"]["fields"] == {}
