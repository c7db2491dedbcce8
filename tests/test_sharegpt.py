"""The ``sharegpt`` format (issue 4, ``docs/formats/sharegpt.md``): writer, reader and same-source round trips.

The reference agent's converter (hermes-agent 0.19.0) is the ground truth for every byte: its outputs for three
inputs are copied in ``tests/data/sharegpt/`` (see the README there). The writer tests are golden cases for every
rule of the issue and every deliberate difference; the reader tests check the mapping table of the doc; the
same-source tests compare JSON values type-strictly (``True`` is not ``1``, ``1.0`` is not ``1``).
"""

from __future__ import annotations

import copy
import gzip
import inspect
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets import formats as pc_formats
from pchronicle_datasets.formats import sharegpt as fmt

DATA = Path(__file__).resolve().parent / "data" / "sharegpt"
EXAMPLES = ("ex1_reasoning", "ex2_parallel_tools", "ex3_plain")
EMPTY = "<think>\n</think>\n"
PREAMBLE = "You are a function calling AI model."


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


SYSTEM_NO_TOOLS = load("ex3_plain.conversations.json")[0]["value"]  # the reference's prompt for no tools
EX2_TOOLS = load("ex2_parallel_tools.input.json")["tools"]


# ------------------------------------------------------------------------------------------------ helpers


def assert_same(got: Any, want: Any, path: str = "") -> None:
    """Type-strict JSON equality (``True`` ≠ ``1``, ``1.0`` ≠ ``1``), naming the first difference."""
    assert type(got) is type(want), f"{path or '(root)'}: {type(got).__name__} {got!r} != {type(want).__name__}"
    if isinstance(want, dict):
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_same(got[key], want[key], f"{path}/{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{path}/{i}")
    else:
        assert got == want, f"{path or '(root)'}: {got!r} != {want!r}"


def replay(inp: Any) -> dict[str, Any]:
    """A reference input (OpenAI messages) as a Storyline document, read through gateway rows."""
    messages = inp if isinstance(inp, list) else inp["messages"]
    rows = []
    for i, message in enumerate(messages):
        if message["role"] == "assistant":
            rows.append({"session_id": "x", "step_id": len(rows) + 1, "messages": messages[:i], "response": message})
    [story] = pc.into_storyline("openai-msg", json.dumps(rows))
    if isinstance(inp, dict) and "tools" in inp:
        story["agent"]["tools"] = inp["tools"]
    pc.validate(story)
    return story


def jline(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False)


def read(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    stories = pc.into_storyline("sharegpt", data, document_id=document_id)
    for story in stories:
        pc.validate(story)
        assert story["unknown_key_counts"] == pc.compute_unknown_key_counts(story["unknown_fields"])
    return stories


def same_source(record: Any) -> Any:
    """``from_storyline("sharegpt", into_storyline("sharegpt", line))`` as a JSON value."""
    stories = read(jline(record), "same.jsonl")
    assert len(stories) == 1
    out = pc.from_storyline("sharegpt", stories)
    assert out.endswith("\n") and out.count("\n") == 1
    return json.loads(out)


def doc(turns: list[dict[str, Any]], tools: Any = None, **fields: Any) -> dict[str, Any]:
    agent: dict[str, Any] = {"id": "a"}
    if tools is not None:
        agent["tools"] = tools
    story = {"schema_version": "storyline/v1", "session": "s", "agent": agent, **fields}
    story["turns"] = [{"id": i + 1, **turn} for i, turn in enumerate(turns)]
    pc.validate(story)
    return story


def conv(story: dict[str, Any], **options: Any) -> list[dict[str, str]]:
    out = pc.to_sharegpt(story, **options)
    assert list(out) == ["conversations"]
    return out["conversations"]


def values(story: dict[str, Any], **options: Any) -> list[tuple[str, str]]:
    return [(c["from"], c["value"]) for c in conv(story, **options)]


def H(value: Any) -> dict[str, Any]:
    return {"from": "human", "value": value}


def G(value: Any) -> dict[str, Any]:
    return {"from": "gpt", "value": value}


def T(value: Any) -> dict[str, Any]:
    return {"from": "tool", "value": value}


def call_block(name: str, arguments: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"


def response_block(cid: Any, name: str, content: Any) -> str:
    payload = {"tool_call_id": cid, "name": name, "content": content}
    return f"<tool_response>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_response>"


def residual(story: dict[str, Any]) -> dict[str, Any]:
    return story["unknown_fields"]["sources"]["sharegpt"]["fields"]


# ------------------------------------------------------------------------------------ reference examples


@pytest.mark.parametrize("name", EXAMPLES)
def test_reference_examples_byte_for_byte(name):
    story = replay(load(f"{name}.input.json"))
    want = load(f"{name}.conversations.json")
    got = conv(story)
    assert got == want
    assert json.dumps(got, ensure_ascii=False) == json.dumps(want, ensure_ascii=False)
    # the file writer gives the same conversations in a trajectory record
    assert json.loads(pc.from_storyline("sharegpt", story))["conversations"] == want


def test_reference_ex1_ignores_the_source_system_message_and_converts_the_scratchpad():
    story = replay(load("ex1_reasoning.input.json"))
    assert story["turns"][0]["msg"] == "You are a helpful assistant."
    got = conv(story)
    assert got[0]["value"] == SYSTEM_NO_TOOLS
    assert all("helpful assistant" not in c["value"] for c in got)
    assert got[4]["value"] == "<think>391/17 = 23 by the previous step.</think>\n\n\nIt is 23."
    assert "REASONING_SCRATCHPAD" not in json.dumps(got)


def test_seed_example_is_written_exactly():
    """The seed's full example, rebuilt as a Storyline document (bare tool schemas in /agent/tools)."""
    record = load("seed_example.record.json")
    tools = [
        {
            "name": "terminal",
            "description": "Execute shell commands",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        }
    ]
    story = doc(
        [
            {"src": "user", "msg": "What Python version is installed?"},
            {
                "src": "agent",
                "msg": None,
                "reason": "The user wants to know the Python version. I should run python3 --version.",
                "tool_calls": [{"tcid": "call_abc123", "fn": "terminal", "args": {"command": "python3 --version"}}],
            },
            {
                "src": "agent",
                "msg": "Python 3.11.6 is installed on this system.",
                "reason": "Got the version. I can now answer the user.",
                "observation": {"results": [{"source_call_id": "call_abc123", "content": "Python 3.11.6"}]},
            },
        ],
        tools=tools,
    )
    assert conv(story) == record["conversations"]


# ------------------------------------------------------------------------------------ writer: golden rules


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


@pytest.mark.parametrize(
    ("reason", "want"),
    [
        ("r", "<think>\nr\n</think>\nhi"),
        ("line 1\nline 2", "<think>\nline 1\nline 2\n</think>\nhi"),
        ("", EMPTY + "hi"),
        ("  \n\t", EMPTY + "hi"),
        (None, EMPTY + "hi"),
    ],
)
def test_think_block_only_for_a_non_blank_reason(reason, want):
    turn: dict[str, Any] = {"src": "agent", "msg": "hi"}
    if reason is not None:
        turn["reason"] = reason
    assert values(doc([turn]))[1] == ("gpt", want)


def test_scratchpad_becomes_think():
    pad = "<REASONING_SCRATCHPAD>plan</REASONING_SCRATCHPAD>\nAnswer."
    assert values(doc([{"src": "agent", "msg": pad}]))[1][1] == "<think>plan</think>\nAnswer."
    # a reason and a scratchpad: both blocks, no empty one
    got = values(doc([{"src": "agent", "msg": pad, "reason": "r"}]))[1][1]
    assert got == "<think>\nr\n</think>\n<think>plan</think>\nAnswer."
    # also in a turn with calls
    calls = [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}]
    got = values(doc([{"src": "agent", "msg": pad, "tool_calls": calls}]))[1][1]
    assert got == '<think>plan</think>\nAnswer.\n<tool_call>\n{"name": "ls", "arguments": {"p": "."}}\n</tool_call>'


@pytest.mark.parametrize(
    ("msg", "want"),
    [
        ("Let me look.", EMPTY + "Let me look.\n" + call_block("ls", {"p": "."})),
        ("", EMPTY + call_block("ls", {"p": "."})),
        ("  \n ", EMPTY + call_block("ls", {"p": "."})),
        (None, EMPTY + call_block("ls", {"p": "."})),
        ("two\nlines  ", EMPTY + "two\nlines  \n" + call_block("ls", {"p": "."})),
    ],
)
def test_content_in_a_turn_with_calls_only_when_non_blank(msg, want):
    story = doc([{"src": "agent", "msg": msg, "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}]}])
    assert values(story)[1] == ("gpt", want)


def test_one_tool_call_block_per_call():
    calls = [
        {"tcid": "c1", "fn": "web_search", "args": {"query": "weather Zürich"}},
        {"tcid": "c2", "fn": "read_file", "args": {"path": "notes.txt", "offset": 0}},
        {"tcid": "c3", "fn": "noop", "args": {}},
    ]
    got = values(doc([{"src": "agent", "msg": "x", "reason": "r", "tool_calls": calls}]))[1][1]
    assert got == (
        "<think>\nr\n</think>\nx\n"
        '<tool_call>\n{"name": "web_search", "arguments": {"query": "weather Zürich"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt", "offset": 0}}\n</tool_call>\n'
        '<tool_call>\n{"name": "noop", "arguments": {}}\n</tool_call>'
    )
    assert got.count("<tool_call>") == 3


def test_string_arguments_become_an_empty_object_with_a_counted_logged_warning(caplog):
    story = doc([{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": "{not json"}]}])
    with pc.collect_losses() as report:
        got = values(story)[1][1]
    assert got == EMPTY + '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    assert report.counts["invalid_arguments"] == 1
    # outside a loss report, each loss is a logged warning
    with caplog.at_level(logging.WARNING):
        values(story)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and all(r.name.startswith("pchronicle_datasets") for r in warnings)
    # keep_invalid_args keeps the raw string, with no loss and no warning
    caplog.clear()
    with pc.collect_losses() as report:
        kept = values(story, keep_invalid_args=True)[1][1]
    assert kept == EMPTY + '<tool_call>\n{"name": "ls", "arguments": "{not json"}\n</tool_call>'
    assert not report
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize(
    ("turn", "want"),
    [
        ({"msg": "a <think> in the text"}, "a <think> in the text"),
        ({"msg": "<think>mine</think> done"}, "<think>mine</think> done"),
        ({"msg": "no tag"}, EMPTY + "no tag"),
        ({"msg": "</think> only the closing tag"}, EMPTY + "</think> only the closing tag"),
    ],
)
def test_empty_think_unless_a_think_tag_appears(turn, want):
    assert values(doc([{"src": "agent", **turn}]))[1][1] == want


def test_right_strip_with_calls_strip_without():
    calls = [{"tcid": "c1", "fn": "ls", "args": {}}]
    with_calls = doc([{"src": "agent", "msg": "  lead", "tool_calls": calls}])
    assert (
        values(with_calls, empty_think=False)[1][1]
        == '  lead\n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    )
    without = doc([{"src": "agent", "msg": "\n  x  \n"}])
    assert values(without, empty_think=False)[1][1] == "x"
    assert values(without)[1][1] == EMPTY + "\n  x"  # the think block is added first, then stripped
    assert values(doc([{"src": "agent", "msg": "  "}]))[1][1] == EMPTY.strip()


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


# ------------------------------------------------------------------------------ deliberate differences


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


# -------------------------------------------------------------------------------------------- options


def test_every_option_is_off_by_default():
    defaults = {n: p.default for n, p in inspect.signature(pc.to_sharegpt).parameters.items() if n != "example"}
    assert defaults == {
        "keep_system_prompt": False,
        "empty_think": True,
        "drop_copied": False,
        "keep_invalid_args": False,
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


# -------------------------------------------------------------------------------------------- reader


def test_read_a_trajectory_record():
    record = load("ex2_parallel_tools.record.json")
    [story] = read(jline(record), "trajectory_samples.jsonl")
    assert story["session"] == "trajectory_samples.jsonl#1"
    assert story["origin"]["format"] == "sharegpt"
    assert story["agent"]["model"] == story["agent"]["id"] == story["agent"]["name"] == "unknown-model"
    assert_same(story["agent"]["tools"], EX2_TOOLS)  # the <tools> of the generated prompt, in OpenAI form
    assert story["task"] == {"result": {"completed": True}}
    assert "finished_at" not in story  # the reference's timestamp has no UTC offset
    assert residual(story)["/timestamp"] == "2026-11-29T23:54:14.004766"
    assert [(t["id"], t["src"]) for t in story["turns"]] == [(1, "user"), (2, "agent"), (3, "agent")]
    agent = story["turns"][1]
    assert agent["reason"] == "I need two tools in parallel."
    assert agent["msg"] == "Let me check both."
    assert agent["tool_calls"] == [
        {"tcid": "call_A", "fn": "web_search", "args": {"query": "weather Zürich"}},
        {"tcid": "call_B", "fn": "read_file", "args": {"path": "notes.txt", "offset": 0}},
    ]
    results = agent["observation"]["results"]
    assert [r["source_call_id"] for r in results] == ["call_A", "call_B"]
    assert results[1]["content"] == ["line 1", "line 2"]
    assert story["meta"]["sharegpt"]["system"] == "generated"
    # the reader's document is written back as the reference wrote it
    assert conv(story) == record["conversations"]


def test_read_a_batch_record():
    record = load("ex2_parallel_tools.batch_record.json")
    [story] = read(jline(record), "batch_000_output.jsonl")
    assert story["agent"]["model"] == "unknown-model"  # from /metadata/model
    assert story["task"]["result"] == {"completed": True, "partial": False}
    assert story["final_metrics"] == {"api_calls": 2}
    assert story["agent"]["extra"] == {"toolsets_used": []}
    assert "finished_at" not in story
    fields = residual(story)
    assert fields["/prompt_index"] == 0
    assert fields["/metadata/batch_num"] == 0
    assert fields["/metadata/timestamp"] == "2026-11-29T23:57:00.969313"
    assert_same(fields["/tool_stats"], record["tool_stats"])
    assert_same(fields["/tool_error_counts"], record["tool_error_counts"])
    assert len(record["tool_stats"]) == 79
    assert conv(story) == record["conversations"]


def test_mapping_of_record_fields():
    record = {
        "conversations": [H("hi"), G(EMPTY + "yo")],
        "timestamp": "2026-03-30T14:22:31.456789+02:00",
        "model": "anthropic/claude-sonnet-4.6",
        "completed": False,
        "partial": True,
        "api_calls": 7,
        "toolsets_used": ["code_tools", "file_tools"],
        "prompt_index": 42,
        "metadata": {"prompt_source": "gsm8k", "difficulty": "hard"},
    }
    [story] = read(jline(record), "failed_trajectories.jsonl")
    assert story["finished_at"] == "2026-03-30T14:22:31.456789+02:00"
    assert story["agent"] == {
        "id": "anthropic/claude-sonnet-4.6",
        "model": "anthropic/claude-sonnet-4.6",
        "name": "anthropic/claude-sonnet-4.6",
        "extra": {"toolsets_used": ["code_tools", "file_tools"]},
    }
    assert story["task"] == {"result": {"completed": False, "partial": True}}
    assert story["final_metrics"] == {"api_calls": 7}
    assert residual(story) == {"/prompt_index": 42, "/metadata/prompt_source": "gsm8k", "/metadata/difficulty": "hard"}
    assert_same(same_source(record), record)


@pytest.mark.parametrize(
    ("record", "finished_at", "residual_pointer"),
    [
        ({"timestamp": "2026-03-30T14:22:31.456789"}, None, "/timestamp"),
        ({"timestamp": "2026-03-30T14:22:31Z"}, "2026-03-30T14:22:31Z", None),
        ({"timestamp": "2026-03-30T14:22:31.5-05:00"}, "2026-03-30T14:22:31.5-05:00", None),
        ({"metadata": {"timestamp": "2026-11-29T23:57:00.969313"}}, None, "/metadata/timestamp"),
        ({"metadata": {"timestamp": "2026-11-29T23:57:00+00:00"}}, "2026-11-29T23:57:00+00:00", None),
        ({"timestamp": 1753872000}, None, "/timestamp"),
    ],
)
def test_timestamps(record, finished_at, residual_pointer):
    record = {"conversations": [H("hi")], **record}
    [story] = read(jline(record))
    assert story.get("finished_at") == finished_at
    if residual_pointer is not None:
        assert residual_pointer in residual(story)
        for turn in story["turns"]:
            assert "ts" not in turn and "finished_at" not in turn
    assert_same(same_source(record), record)


def test_model_from_metadata_and_default_agent():
    [story] = read(jline({"conversations": [H("hi")], "metadata": {"model": "m1", "batch_num": 3}}))
    assert story["agent"]["model"] == story["agent"]["id"] == "m1"
    [story] = read(jline({"conversations": [H("hi")]}))
    assert story["agent"]["id"] == story["agent"]["name"] == "sharegpt"
    assert "model" not in story["agent"]
    assert story["session"] == "sharegpt#1"


def test_read_a_bare_conversation_line():
    line = [{"from": "system", "value": "sys"}, H("two"), G("2")]
    [story] = read(jline(line) + "\n", "bare.jsonl")
    assert story["session"] == "bare.jsonl#1"
    assert story["meta"]["sharegpt"]["bare"] is True
    assert [(t["src"], t["msg"]) for t in story["turns"]] == [("system", "sys"), ("user", "two"), ("agent", "2")]
    assert json.loads(pc.from_storyline("sharegpt", story)) == line


def test_read_a_file_of_bare_conversation_lines():
    lines = [[H("one"), G(EMPTY + "1")], [{"from": "system", "value": "sys"}, H("two"), G("2")]]
    stories = read("".join(jline(x) + "\n" for x in lines), "bare.jsonl")
    assert [s["session"] for s in stories] == ["bare.jsonl#1", "bare.jsonl#2"]
    assert [(t["src"], t["msg"]) for t in stories[0]["turns"]] == [("user", "one"), ("agent", "1")]
    out = pc.from_storyline("sharegpt", stories)
    assert [json.loads(x) for x in out.splitlines()] == lines


def test_read_records_and_bare_lines_mixed():
    lines = [{"conversations": [H("one")], "completed": True}, [H("two"), G("2")]]
    stories = read("".join(jline(x) + "\n" for x in lines), "mixed.jsonl")
    assert [s["session"] for s in stories] == ["mixed.jsonl#1", "mixed.jsonl#2"]
    out = pc.from_storyline("sharegpt", stories)
    assert [json.loads(x) for x in out.splitlines()] == lines


def test_read_a_json_array_of_records():
    records = [load("ex2_parallel_tools.record.json"), {"conversations": [H("hi"), G(EMPTY + "yo")], "completed": True}]
    stories = read(json.dumps(records, indent=2), "data.json")
    assert [s["session"] for s in stories] == ["data.json#1", "data.json#2"]
    out = pc.from_storyline("sharegpt", stories)
    for got, want in zip([json.loads(x) for x in out.splitlines()], records, strict=True):
        assert_same(got, want)


def records_of(data: str | bytes, document_id: str) -> list[Any]:
    """Every record of a file with its document or its error (the hub's reader when it has one)."""
    hub = getattr(pc_formats, "iter_records", None)
    if hub is not None:
        return list(hub("sharegpt", data, document_id))
    return list(fmt.iter_records(data, document_id))


def _gz(*chunks: str) -> bytes:
    return b"".join(gzip.compress(chunk.encode("utf-8")) for chunk in chunks)


def test_read_jsonl_gz_as_concatenated_members():
    records = [
        load("ex2_parallel_tools.record.json"),
        {"conversations": [H("a"), G(EMPTY + "b")], "completed": True},
        [H("bare"), G("x")],
    ]
    data = _gz(*(jline(r) + "\n" for r in records))
    stories = read(data, "t.jsonl.gz")
    assert [s["session"] for s in stories] == ["t.jsonl.gz#1", "t.jsonl.gz#2", "t.jsonl.gz#3"]
    for story, want in zip(stories, records, strict=True):
        assert_same(json.loads(pc.from_storyline("sharegpt", story)), want)
    # a member may hold several lines; line numbers continue across members
    data = _gz(jline(records[0]) + "\n" + jline(records[1]) + "\n", jline(records[2]) + "\n")
    assert [s["session"] for s in read(data, "t.jsonl.gz")] == ["t.jsonl.gz#1", "t.jsonl.gz#2", "t.jsonl.gz#3"]


def test_truncated_last_gzip_member_is_an_error_after_the_good_records():
    good = [{"conversations": [H(str(i)), G(EMPTY + "ok")]} for i in range(2)]
    last = gzip.compress((jline({"conversations": [H("cut"), G("short")]}) + "\n").encode())
    data = _gz(*(jline(r) + "\n" for r in good)) + last[: len(last) // 2]
    recs = records_of(data, "t.jsonl.gz")
    assert len(recs) == 3
    assert [r.error for r in recs[:2]] == [None, None]
    assert [r.story["turns"][0]["msg"] for r in recs[:2]] == ["0", "1"]
    for r in recs[:2]:
        pc.validate(r.story)
    assert isinstance(recs[2].error, FormatError) and recs[2].story is None
    assert "t.jsonl.gz" in str(recs[2].error)
    with pytest.raises(FormatError):
        pc.into_storyline("sharegpt", data, document_id="t.jsonl.gz")


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


# --------------------------------------------------------------------------------------- same source

IRREGULAR: dict[str, Any] = {
    "unknown roles": {
        "conversations": [{"from": "function_call", "value": "x"}, {"from": "observation", "value": "y"}, H("q")]
    },
    "extra element keys": {"conversations": [{"from": "human", "value": "hi", "weight": 0}, {**G("yo"), "loss": 1.0}]},
    "not elements": {"conversations": [{"from": "gpt"}, {"value": "x"}, "str", None, 5, [H("nested")]]},
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
    first_tool = conv(story)[2]
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


# ---------------------------------------------------------------------------------------- malformed


GOOD = jline({"conversations": [H("fine")]})


@pytest.mark.parametrize(
    ("text", "pointer", "line"),
    [
        ('{"conversations": [', "", 1),
        (GOOD + "\n{not json\n", "", 2),
        (GOOD + '\n{"conversations": {"from": "human", "value": "x"}}\n', "/conversations", 2),
        ('{"model": "m"}', "/conversations", 1),
        (GOOD + "\n42\n", "", 2),
        ("42", "", 1),
        ('"a string"', "", 1),
    ],
    ids=[
        "not JSON",
        "not JSON on line 2",
        "conversations not an array",
        "no conversations",
        "number",
        "number alone",
        "string",
    ],
)
def test_malformed_input(text, pointer, line):
    with pytest.raises(FormatError) as info:
        pc.into_storyline("sharegpt", text, document_id="bad.jsonl")
    err = info.value
    assert (err.pointer, err.line, err.document_id) == (pointer, line, "bad.jsonl")
    assert "bad.jsonl" in str(err)
    recs = records_of(text, "bad.jsonl")
    if line == 2:  # the good record before it is kept
        assert recs[0].error is None and recs[0].story["turns"][0]["msg"] == "fine"
    assert isinstance(recs[-1].error, FormatError)


# ----------------------------------------------------------------------------------------- hypothesis

_TEXT = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
    st.sampled_from(["", " ", "\n", "42", "Zürich ☀", "<think>", "</think>", "{", "[1]", "null", "a\u0000b"]),
)
_WS = st.sampled_from(["", " ", "\n", "\n\n", "\t", " \n "])
_NAMES = st.sampled_from(["ls", "cat", "web_search", "terminal"])
_IDS = st.sampled_from(["c1", "c2", "call_A", "", "call-2-0"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_ARGS = st.dictionaries(_TEXT, _JSON, max_size=3)


def _dump(value: Any, style: str) -> str:
    if style == "compact":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if style == "ascii":
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


_STYLE = st.sampled_from(["default", "default", "default", "compact", "ascii"])


@st.composite
def _think(draw):
    body = draw(_TEXT)
    return f"<think>\n{body}\n</think>\n" if draw(st.booleans()) else f"<think>{body}</think>"


@st.composite
def _call(draw):
    payload = {"name": draw(_NAMES), "arguments": draw(_ARGS)}
    sep = draw(st.sampled_from(["\n", "\n", ""]))
    return f"<tool_call>{sep}{_dump(payload, draw(_STYLE))}{sep}</tool_call>"


@st.composite
def _gpt(draw):
    if draw(st.booleans()):  # the writer's own shape
        think = draw(_think()) if draw(st.booleans()) else EMPTY
        content = draw(_TEXT)
        calls = draw(st.lists(_call(), max_size=3))
        if calls:
            return (think + (content + "\n" if content.strip() else "") + "\n".join(calls)).rstrip()
        return (think + content).strip()
    parts = draw(st.lists(st.one_of(_think(), _TEXT, _call(), _WS), max_size=5))
    return "".join(parts)


@st.composite
def _response(draw):
    payload: dict[str, Any] = {}
    if draw(st.integers(0, 4)):
        payload["tool_call_id"] = draw(_IDS)
    if draw(st.integers(0, 4)):
        payload["name"] = draw(_NAMES)
    payload["content"] = draw(st.one_of(_TEXT, _JSON))
    return f"<tool_response>\n{_dump(payload, draw(_STYLE))}\n</tool_response>"


_TOOL = st.builds(
    lambda blocks, sep: sep.join(blocks),
    st.lists(_response(), min_size=1, max_size=3),
    st.sampled_from(["\n", "\n", "\n\n"]),
)
_ELEMENT = st.one_of(
    st.builds(H, _TEXT),
    st.builds(G, _gpt()),
    st.builds(G, _gpt()),
    st.builds(T, _TOOL),
    st.builds(T, _TOOL),
    st.builds(lambda v: {"from": "system", "value": v}, st.one_of(_TEXT, st.just(SYSTEM_NO_TOOLS))),
    st.builds(lambda r, v: {"from": r, "value": v}, st.sampled_from(["function_call", "observation", "user"]), _TEXT),
    st.builds(lambda v, w: {**H(v), "weight": w}, _TEXT, st.integers(0, 1)),
)
_CONVERSATION = st.lists(_ELEMENT, max_size=7)
_RECORD = st.one_of(
    _CONVERSATION,
    st.fixed_dictionaries(
        {"conversations": _CONVERSATION},
        optional={
            "timestamp": st.sampled_from(["2026-03-30T14:22:31.456789", "2026-03-30T14:22:31Z", 5]),
            "model": st.sampled_from(["m", "", "anthropic/claude-sonnet-4.6"]),
            "completed": st.booleans(),
            "partial": st.booleans(),
            "api_calls": st.integers(0, 9),
            "toolsets_used": st.lists(_NAMES, max_size=2),
            "prompt_index": st.integers(0, 9),
            "metadata": st.fixed_dictionaries(
                {},
                optional={"batch_num": st.integers(0, 3), "timestamp": st.just("2026-11-29T23:57:00"), "model": _NAMES},
            ),
        },
    ),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_RECORD)
def test_hypothesis_same_source_round_trip(record):
    assert_same(same_source(copy.deepcopy(record)), record)
