"""The shared message model: each shape's mapping of one message, the builder, and the way back."""

from __future__ import annotations

import pytest

from pchronicle_datasets.formats.messages import (
    Call,
    Reasoning,
    Result,
    TurnBuilder,
    read_message,
    shape_of,
    tools_back,
    tools_to_openai,
    write_message,
)
from pchronicle_datasets.pointer import parse

ANTHROPIC_ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "Check the dir.", "signature": "EqQBCkYIBxgCKkA"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "text", "text": "Listing.", "cache_control": {"type": "ephemeral"}},
        {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {"path": "."}},
    ],
}
ANTHROPIC_RESULT = {
    "role": "user",
    "content": [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "content": [{"type": "text", "text": "a.txt"}],
            "is_error": False,
        },
        {"type": "text", "text": "Now read it."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
    ],
}
RESPONSES = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List files."}]},
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Use ls."}],
        "encrypted_content": "gAAAA",
    },
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": '{"cmd":["ls"]}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
    {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"},
    {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done"},
    {
        "type": "local_shell_call",
        "call_id": "call_3",
        "action": {"type": "exec", "command": ["pwd"]},
        "status": "completed",
    },
    {"type": "local_shell_call_output", "call_id": "call_3", "output": "/w"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
    {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
    },
]
GEMINI = [
    {"role": "user", "parts": [{"text": "List files."}]},
    {
        "role": "model",
        "parts": [
            {"text": "I will list.", "thought": True, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "ls", "args": {"path": "."}}},
            {"functionCall": {"name": "ls", "args": {"path": "src"}}},
        ],
    },
    {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "ls", "response": {"output": "a.txt"}}},
            {"functionResponse": {"name": "ls", "response": {"output": "main.py"}}},
        ],
    },
    {"role": "model", "parts": [{"text": "Two files."}, {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}]},
]


def test_shapes_are_recognised_by_structure():
    assert shape_of(ANTHROPIC_ASSISTANT) == shape_of(ANTHROPIC_RESULT) == "anthropic"
    assert {shape_of(item) for item in RESPONSES} == {"responses"}
    assert {shape_of(c) for c in GEMINI} == {"gemini"}
    assert shape_of({"role": "tool", "tool_call_id": "c", "content": [{"type": "tool_output", "text": "a"}]}) == "typed"
    # a text-only content list is also an OpenAI content list: the chat format reads it as it always did
    assert shape_of({"role": "user", "content": [{"type": "text", "text": "hi"}]}) == "openai"
    assert shape_of({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}) == "openai"
    # LLaMA-Factory's {"type", "value"} parts are the chat format's own (typed_parts.py)
    assert shape_of({"role": "assistant", "content": [{"type": "tool_call", "value": "{}"}]}) == "openai"
    assert shape_of({"parts": [{"bogus": 1}]}) is None
    with pytest.raises(ValueError):
        read_message(42)


def test_anthropic_blocks():
    m = read_message(ANTHROPIC_ASSISTANT)
    assert m.reasoning == [
        Reasoning("Check the dir.", "EqQBCkYIBxgCKkA"),
        Reasoning(None, encrypted="EmwKAhgBEgy3va3pzix"),
    ]
    assert m.texts == ["Listing."]
    assert m.calls == [Call("ls", {"path": "."}, "toolu_01")]
    assert m.leftovers == {"/content/2/cache_control": {"type": "ephemeral"}}
    r = read_message(ANTHROPIC_RESULT)
    assert r.results == [Result([{"type": "text", "text": "a.txt"}], "toolu_01", None, False)]
    assert r.texts == ["Now read it."] and r.media == [ANTHROPIC_RESULT["content"][2]]


def test_anthropic_response_object_usage_and_leftovers():
    resp = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Hi."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 3},
    }
    m = read_message(resp)
    assert m.usage == {"input_tokens": 10, "output_tokens": 3}
    assert set(m.leftovers) == {"/id", "/type", "/model", "/stop_reason", "/stop_sequence"}


def test_responses_items():
    ms = [read_message(item) for item in RESPONSES]
    assert ms[0].role == "user" and ms[0].texts == ["List files."]
    assert ms[1].reasoning == [Reasoning("Use ls.", encrypted="gAAAA")] and ms[1].leftovers == {"/id": "rs_1"}
    assert ms[2].calls == [Call("shell", '{"cmd":["ls"]}', "call_1")] and ms[2].leftovers == {"/id": "fc_1"}
    assert ms[3].results == [Result("a.txt", "call_1")]
    assert ms[4].calls == [Call("apply_patch", "*** Begin Patch", "call_2", "custom")]
    assert ms[6].calls == [Call("local_shell", {"type": "exec", "command": ["pwd"]}, "call_3", "local_shell")]
    assert ms[8].calls == [Call("web_search", {"type": "search", "query": "x"}, "ws_1", "web_search")]
    assert ms[9].leftovers == {"/id": "msg_1", "/content/0/annotations": []}


def test_gemini_parts():
    m = read_message(GEMINI[1])
    assert m.role == "assistant"
    assert m.reasoning == [Reasoning("I will list.", "c2ln")]
    assert [c.name for c in m.calls] == ["ls", "ls"] and m.calls[0].id is None
    r = read_message(GEMINI[2])
    assert r.results == [Result({"output": "a.txt"}, None, "ls"), Result({"output": "main.py"}, None, "ls")]
    assert read_message(GEMINI[3]).media == [{"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}]
    unknown = read_message({"role": "model", "parts": [{"executableCode": {"code": "1"}}]})
    assert not unknown.mapped and unknown.leftovers == {"/parts/0": {"executableCode": {"code": "1"}}}


def _build(messages):
    b, kept, hints = TurnBuilder(), {}, []
    for i, msg in enumerate(messages):
        hints.append(b.add(read_message(msg), f"/messages/{i}", kept.__setitem__))
    return b, kept, hints


def _put(node, pointer, value):
    tokens = parse(pointer)
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    if isinstance(node, list):
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


def _round_trip(messages):
    b, kept, hints = _build(messages)
    story = {"turns": b.turns}
    out = [write_message(story, h) for h in hints]
    wrapped = {"messages": out}
    for pointer, value in kept.items():
        _put(wrapped, pointer, value)
    return wrapped["messages"]


def test_builder_anthropic_turns():
    b, kept, _ = _build([{"role": "user", "content": "List."}, ANTHROPIC_ASSISTANT, ANTHROPIC_RESULT])
    user, agent, follow = b.turns
    assert user == {"id": 1, "src": "user", "msg": "List."}
    assert agent["msg"] == "Listing." and agent["reason"] == "Check the dir."
    assert agent["extra"]["reasoning"] == [
        {"signature": "EqQBCkYIBxgCKkA"},
        {"encrypted_content": "EmwKAhgBEgy3va3pzix"},
    ]
    assert agent["tool_calls"] == [{"tcid": "toolu_01", "fn": "ls", "args": {"path": "."}}]
    assert agent["observation"]["results"] == [
        {"content": [{"type": "text", "text": "a.txt"}], "source_call_id": "toolu_01", "is_error": False}
    ]
    assert follow["src"] == "user" and follow["msg"] == "Now read it."
    assert follow["extra"]["media"] == [ANTHROPIC_RESULT["content"][2]]
    assert kept == {"/messages/1/content/2/cache_control": {"type": "ephemeral"}}


def test_builder_responses_items_make_one_turn_per_answer():
    b, _, _ = _build(RESPONSES)
    turns = b.turns
    assert [t["src"] for t in turns] == ["user", "agent", "agent", "agent", "agent"]
    first = turns[1]
    assert first["reason"] == "Use ls." and first["extra"]["reasoning"] == [{"encrypted_content": "gAAAA"}]
    assert first["tool_calls"] == [{"tcid": "call_1", "fn": "shell", "args": {"cmd": ["ls"]}}]
    assert first["observation"]["results"] == [{"content": "a.txt", "source_call_id": "call_1"}]
    assert turns[2]["tool_calls"][0]["kind"] == "custom"
    last = turns[4]
    assert last["tool_calls"][0]["fn"] == "web_search" and last["msg"] == "Done."


def test_builder_gemini_links_results_by_name_and_order():
    b, _, _ = _build(GEMINI)
    agent = b.turns[1]
    tcids = [c["tcid"] for c in agent["tool_calls"]]
    assert tcids == ["call-1-0", "call-1-1"]
    results = agent["observation"]["results"]
    assert [(r["source_call_id"], r["content"]["output"]) for r in results] == [
        ("call-1-0", "a.txt"),
        ("call-1-1", "main.py"),
    ]
    assert agent["extra"]["reasoning"] == [{"signature": "c2ln"}]


def test_result_that_answers_no_call():
    b, _, _ = _build([{"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}])
    assert b.turns == [{"id": 1, "src": "tool", "msg": {}}]
    b, _, _ = _build(
        [
            {"role": "model", "parts": [{"text": "x"}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "z", "name": "ls", "response": {}}}]},
        ]
    )
    assert b.turns[0]["observation"]["results"] == [{"content": {}, "source_call_id": "z"}]


OPENAI = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Look."}, {"type": "image_url", "image_url": {"url": "u"}}]},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Use ls.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}}],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "ls", "content": "a.txt"},
]


@pytest.mark.parametrize(
    "messages",
    [[{"role": "user", "content": "q"}, ANTHROPIC_ASSISTANT, ANTHROPIC_RESULT], RESPONSES, GEMINI, OPENAI],
    ids=["anthropic", "responses", "gemini", "openai"],
)
def test_write_message_gives_the_source_back(messages):
    assert _round_trip(messages) == messages


def test_round_trip_keeps_odd_spellings():
    messages = [
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"a":  1}'},  # no encoder spells it
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "not json"},  # a reused id
        {"role": "model", "parts": [{"text": "a", "thoughtSignature": "s"}, {"functionCall": {"name": "g"}}]},
    ]
    assert _round_trip(messages) == messages


def test_tools_to_openai_and_back():
    gemini = [
        {"functionDeclarations": [{"name": "ls", "parametersJsonSchema": {"type": "object"}}, {"name": "rm"}]},
        {"googleSearch": {}},
    ]
    tools, hint = tools_to_openai(gemini)
    assert tools[:2] == [
        {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "rm"}},
    ]
    assert tools[2] == {"googleSearch": {}}
    assert tools_back(tools, hint) == gemini
    responses = [{"type": "function", "name": "f", "parameters": {}, "strict": True}]
    tools, hint = tools_to_openai(responses)
    assert tools == [{"type": "function", "function": {"name": "f", "parameters": {}, "strict": True}}]
    assert tools_back(tools, hint) == responses


def test_typed_reasoning_parts_are_reasoning_not_content():
    msg = {"role": "assistant", "content": [{"type": "reasoning", "text": "Think."}, {"type": "text", "text": "Done."}]}
    assert shape_of(msg) == "typed"
    m = read_message(msg)
    assert m.reasoning == [Reasoning("Think.")] and m.texts == ["Done."]
    assert _round_trip([msg]) == [msg]
