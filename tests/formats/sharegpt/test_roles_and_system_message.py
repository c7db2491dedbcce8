"""Seed, "Массив диалогов" (roles) and "Системное сообщение" (the system message generated at save time)."""

from __future__ import annotations

import json

import pytest

from pchronicle_datasets.formats import sharegpt as fmt
from tests.formats.sharegpt.helpers import (
    EMPTY,
    EX2_TOOLS,
    SYSTEM_NO_TOOLS,
    conv,
    doc,
    load,
)


def test_roles_and_the_generated_system_prompt():
    story = doc(
        [
            {"src": "system", "msg": "Be brief."},
            {"src": "user", "msg": "ls?"},
            {"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}]},
            {"src": "agent", "msg": "done", "observation": {"results": [{"source_call_id": "c1", "content": "a"}]}},
            {"src": "user", "msg": "thanks"},
            {"src": "agent", "msg": "bye"},
        ]
    )
    got = conv(story)
    assert [c["from"] for c in got] == ["system", "human", "gpt", "tool", "gpt", "human", "gpt"]
    assert got[0]["value"] == SYSTEM_NO_TOOLS
    assert all("Be brief." not in c["value"] for c in got)
    assert got[1]["value"] == "ls?"
    assert got[2]["value"] == EMPTY + '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    assert got[3]["value"] == '<tool_response>\n{"tool_call_id": "c1", "name": "ls", "content": "a"}\n</tool_response>'
    assert got[4]["value"] == EMPTY + "done"


@pytest.mark.parametrize("tools", [None, [], "not a list"])
def test_system_prompt_without_tools_is_the_empty_list(tools):
    story = doc([{"src": "user", "msg": "hi"}], tools=tools)
    assert conv(story)[0] == {"from": "system", "value": SYSTEM_NO_TOOLS}
    assert "<tools>\n[]\n</tools>" in SYSTEM_NO_TOOLS
    assert fmt.system_prompt([]) == SYSTEM_NO_TOOLS


def test_system_prompt_from_openai_and_bare_tool_schemas():
    bare = [t["function"] for t in EX2_TOOLS]
    want = load("ex2_parallel_tools.conversations.json")[0]
    for tools in (EX2_TOOLS, bare, [EX2_TOOLS[0], bare[1]]):
        assert conv(doc([{"src": "user", "msg": "hi"}], tools=tools))[0] == want
    # each tool as {"name", "description", "parameters", "required": null}, ensure_ascii=False
    listed = json.loads(want["value"].split("\n<tools>\n")[1].split("\n</tools>\n")[0])
    assert [list(t) for t in listed] == [["name", "description", "parameters", "required"]] * 2
    assert all(t["required"] is None for t in listed)
    unicode_tool = [{"name": "météo", "description": "Température à Zürich", "parameters": {}}]
    prompt = fmt.system_prompt(unicode_tool)
    assert '"name": "météo", "description": "Température à Zürich", "parameters": {}, "required": null' in prompt


def test_seed_system_prompt_for_a_bare_schema():
    record = load("seed_example.record.json")
    tools = [
        {
            "name": "terminal",
            "description": "Execute shell commands",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        }
    ]
    assert fmt.system_prompt(tools) == record["conversations"][0]["value"]
