"""Same-source round trips: a ShareGPT record read and written back gives back equal JSON (compared
type-strictly: ``True`` is not ``1``, ``1.0`` is not ``1``), for the reference records, irregular records
and generated ones."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from pchronicle_datasets.formats.sharegpt import conversation
from tests.formats.sharegpt.helpers import (
    EMPTY,
    SYSTEM_NO_TOOLS,
    G,
    H,
    T,
    assert_same,
    call_block,
    jline,
    load,
    read,
    response_block,
    same_source,
)
from tests.strategies import sharegpt_records

IRREGULAR: dict[str, Any] = {
    "unknown roles": {
        "conversations": [{"from": "function_call", "value": "x"}, {"from": "observation", "value": "y"}, H("q")]
    },
    "extra element keys": {"conversations": [{"from": "human", "value": "hi", "weight": 0}, {**G("yo"), "loss": 1.0}]},
    "role aliases": {"conversations": [{"from": "user", "value": "hi"}, {"from": "assistant", "value": "yo"}]},
    "llamafactory dialect": {
        "conversations": [
            H("2+3?"),
            {"from": "function_call", "value": '{"name": "add", "arguments": {"a": 2, "b": 3}}'},
            {"from": "observation", "value": "5"},
            {"from": "observation", "value": "answers nothing"},
            {
                "from": "function_call",
                "value": '[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]',
            },
            {"from": "observation", "value": '{"r": 1}'},
            G("It is 5."),
        ],
        "tools": '[{"name": "add", "description": "", "parameters": {}}]',
        "system": "Be brief.",
    },
    "mislabelled name": {
        "conversations": [G(EMPTY + call_block("ls", {"p": 1})), T(response_block("c9", "wrong", "x"))]
    },
    "missing tool_call_id": {
        "conversations": [
            G(EMPTY + call_block("ls", {})),
            T('<tool_response>\n{"name": "ls", "content": "x"}\n</tool_response>'),
        ]
    },
    "non-string tool_call_id": {"conversations": [G(EMPTY + call_block("ls", {})), T(response_block(7, "ls", "x"))]},
    "duplicate call ids": {
        "conversations": [
            G(EMPTY + call_block("ls", {}) + "\n" + call_block("ls", {})),
            T(response_block("c1", "ls", "a") + "\n" + response_block("c1", "ls", "b")),
            G(EMPTY + call_block("ls", {})),
            T(response_block("c1", "ls", "c")),
        ]
    },
    "more responses than calls": {
        "conversations": [
            G(EMPTY + call_block("ls", {})),
            T(response_block("a", "ls", 1) + "\n" + response_block("b", "x", 2)),
        ]
    },
    "irregular think placement": {
        "conversations": [
            G("text <think>mid</think> more"),
            G("<think>a</think><think>b</think>"),
            G("<think>\nx\n</think>"),
        ]
    },
    "scratchpad kept literally": {"conversations": [G("<REASONING_SCRATCHPAD>x</REASONING_SCRATCHPAD>")]},
    "non-string values": {"conversations": [H(42), G(None), G(["a"]), T({"a": 1}), {"from": "system", "value": True}]},
    "content parts": {"conversations": [H([{"type": "text", "text": "hi"}]), G([{"type": "text", "text": "yo"}])]},
    "orphan tool turns": {"conversations": [T(response_block("a", "ls", "x")), H("x"), G("y"), T("no blocks")]},
    "two tool turns": {
        "conversations": [
            G(EMPTY + call_block("ls", {})),
            T(response_block("a", "ls", "x")),
            T(response_block("a", "ls", "x")),
        ]
    },
    "invalid tool call block": {
        "conversations": [G("<tool_call>\nnot json\n</tool_call>"), T(response_block("a", "ls", "x"))]
    },
    "string arguments": {"conversations": [G(EMPTY + '<tool_call>\n{"name": "ls", "arguments": "raw"}\n</tool_call>')]},
    "compact call JSON": {"conversations": [G(EMPTY + '<tool_call>{"name":"ls","arguments":{"a":1}}</tool_call>')]},
    "tool_call without arguments": {"conversations": [G(EMPTY + '<tool_call>\n{"name": "ls"}\n</tool_call>')]},
    "unparsed response content": {
        "conversations": [G(EMPTY + call_block("ls", {})), T(response_block("a", "ls", "{x"))]
    },
    "system later": {"conversations": [H("a"), {"from": "system", "value": SYSTEM_NO_TOOLS}]},
    "odd whitespace": {"conversations": [H("  padded \n"), G("\n" + EMPTY + "x  \n"), G(EMPTY + " lead")]},
    "bare": [H("hi"), {"from": "gpt", "value": "yo", "extra": [1]}],
    "empty conversations": {"conversations": []},
    "empty bare": [],
    "type-strict fields": {
        "conversations": [H("x")],
        "completed": 1,
        "partial": "no",
        "api_calls": 2.0,
        "toolsets_used": "x",
        "model": 5,
        "metadata": [1],
    },
    "model twice": {"conversations": [H("x")], "model": "m", "metadata": {"model": "other", "timestamp": None}},
    "empty model": {"conversations": [H("x")], "model": ""},
    "other keys": {"conversations": [H("x")], "extra": {"k": [1, 2.0, -0.0, None, True]}, "id": "abc"},
    "storyline key that is not an envelope": {"conversations": [H("x")], "_storyline": {"version": 2}},
}


@pytest.mark.parametrize(
    "name", ["ex2_parallel_tools.record.json", "ex2_parallel_tools.batch_record.json", "seed_example.record.json"]
)
def test_same_source_reference_records(name):
    record = load(name)
    assert_same(same_source(record), record)


@pytest.mark.parametrize("name", sorted(IRREGULAR))
def test_same_source_irregular_records(name):
    record = IRREGULAR[name]
    assert_same(same_source(copy.deepcopy(record)), record)


def test_same_source_a_human_turn_between_a_call_and_its_tool_turn():
    """A tool element that does not follow its gpt turn directly must stay where it stands."""
    record = {
        "conversations": [
            H("hi"),
            G(EMPTY + call_block("ls", {"p": 1})),
            H("interrupt"),
            T(response_block("c1", "ls", "x")),
        ]
    }
    assert_same(same_source(record), record)


def test_same_source_an_extra_response_whose_id_names_an_earlier_call():
    """A response with no call of its own in its turn must not be linked to another turn's call."""
    record = {
        "conversations": [
            G(EMPTY + call_block("ls", {})),
            T(response_block("call_A", "ls", "1")),
            G(EMPTY + call_block("ls", {})),
            T(response_block("call_B", "ls", "2") + "\n" + response_block("call_A", "ls", "3")),
        ]
    }
    [story] = read(jline(record))
    first_tool = conversation(story)[2]  # the rendering (to_sharegpt gives this record back exactly)
    assert first_tool == T(response_block("call_A", "ls", "1")), "a result of the second turn moved to the first"
    assert_same(same_source(record), record)


@pytest.mark.parametrize(
    "record",
    [
        {
            "conversations": [
                G(EMPTY + call_block("ls", {})),
                T('<tool_response>\n{"tool_call_id": "c1", "name": "ls", "content": {"v": NaN}}\n</tool_response>'),
            ]
        },
        {
            "conversations": [
                G(EMPTY + '<tool_call>\n{"name": "ls", "arguments": {"n": 18446744073709551616}}\n</tool_call>')
            ]
        },
    ],
    ids=["NaN in a tool response", "integer beyond 64 bits in arguments"],
)
def test_same_source_values_the_reference_can_write(record):
    """``json.dumps`` in the reference writes NaN and big integers it parsed from tool output and arguments."""
    assert_same(same_source(record), record)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sharegpt_records)
def test_hypothesis_same_source_round_trip(record):
    assert_same(same_source(copy.deepcopy(record)), record)
