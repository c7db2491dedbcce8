"""Seed, "Нормализация ответов инструментов" (tool response normalisation): results grouped in one tool turn
after the calling turn, content parsed when it looks like JSON, names through the call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.formats.sharegpt.helpers import (
    EMPTY,
    assert_same,
    call_block,
    conv,
    doc,
    response_block,
    values,
)


def _turns_with_results(style: str) -> list[dict[str, Any]]:
    calls = [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}, {"tcid": "c2", "fn": "cat", "args": {"f": "a"}}]
    contents = ["a.txt\nb.txt", '  {"size": 3, "name": "Zürich"}']
    results = [{"source_call_id": c["tcid"], "content": x} for c, x in zip(calls, contents, strict=True)]
    if style == "call.result":  # ATIF style: the result on the call
        calls = [{**c, "result": x} for c, x in zip(calls, contents, strict=True)]
        return [
            {"src": "user", "msg": "go"},
            {"src": "agent", "msg": "", "tool_calls": calls},
            {"src": "agent", "msg": "ok"},
        ]
    if style == "same-turn":  # observation on the calling turn
        return [
            {"src": "user", "msg": "go"},
            {"src": "agent", "msg": "", "tool_calls": calls, "observation": {"results": results}},
            {"src": "agent", "msg": "ok"},
        ]
    return [  # RFC-0009: the results on the next response turn
        {"src": "user", "msg": "go"},
        {"src": "agent", "msg": "", "tool_calls": calls},
        {"src": "agent", "msg": "ok", "observation": {"results": results}},
    ]


@pytest.mark.parametrize("style", ["call.result", "same-turn", "next-turn"])
def test_results_are_placed_after_the_calling_turn_wherever_they_are_held(style):
    got = values(doc(_turns_with_results(style)))
    assert got[1:] == [
        ("human", "go"),
        ("gpt", EMPTY + call_block("ls", {"p": "."}) + "\n" + call_block("cat", {"f": "a"})),
        (
            "tool",
            '<tool_response>\n{"tool_call_id": "c1", "name": "ls", "content": "a.txt\\nb.txt"}\n</tool_response>\n'
            '<tool_response>\n{"tool_call_id": "c2", "name": "cat", "content": {"size": 3, "name": "Zürich"}}'
            "\n</tool_response>",
        ),
        ("gpt", EMPTY + "ok"),
    ]


@pytest.mark.parametrize(
    ("content", "written"),
    [
        ('{"a": 1}', {"a": 1}),
        (' \n[1, "x"]', [1, "x"]),
        ("{not json", "{not json"),
        ("[unbalanced", "[unbalanced"),
        ("42", "42"),
        ("null", "null"),
        ("plain text", "plain text"),
        ("", ""),
        ({"already": "an object"}, {"already": "an object"}),
    ],
)
def test_result_content_parsed_only_when_its_stripped_text_starts_with_a_brace_or_bracket(content, written):
    story = doc([{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "f", "args": {}, "result": content}]}])
    value = values(story)[2][1]
    assert value == response_block("c1", "f", written)
    payload = json.loads(value.removeprefix("<tool_response>\n").removesuffix("\n</tool_response>"))
    assert_same(payload["content"], written)


def test_json_is_written_with_ensure_ascii_false_and_default_separators():
    story = doc(
        [
            {"src": "user", "msg": "Zürich ☀"},
            {"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "météo", "args": {"ville": "Zürich"}}]},
            {
                "src": "agent",
                "msg": "☀",
                "observation": {"results": [{"source_call_id": "c1", "content": '{"t": "12°C"}'}]},
            },
        ],
        tools=[{"name": "météo", "description": "°C", "parameters": {"type": "object"}}],
    )
    text = json.dumps(conv(story), ensure_ascii=False)
    for value in (c["value"] for c in conv(story)):
        assert "\\u" not in value
    assert '{"name": "météo", "arguments": {"ville": "Zürich"}}' in text.replace('\\"', '"')
    assert '{"tool_call_id": "c1", "name": "météo", "content": {"t": "12°C"}}' in text.replace('\\"', '"')
