"""The chat format on every shape of the shared message model (``formats/messages``): Anthropic blocks,
Responses items, Gemini Content, typed tool parts. The golden cases (``tests/data/chat/{anthropic_blocks,
responses_items,gemini_contents,typed_tool_parts}``) pin the mapping; here: training outputs write each call
once and never flatten a block, records whose content all falls into residual are refused with a pointer,
and a file may mix shapes."""

from __future__ import annotations

import json

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.losses import collect_losses

from .common import DATA

SHAPE_CASES = ["anthropic_blocks.input.jsonl", "responses_items.input.jsonl", "gemini_contents.input.jsonl"]
SHAPE_CASES += ["typed_tool_parts.input.jsonl"]


def _stories(case):
    return pc.into_storyline("auto", (DATA / case).read_bytes(), document_id=case)


def _source_calls(case):
    """(id or None, name) of every call in the source, walked here without the reader."""
    calls = []
    for line in (DATA / case).read_bytes().splitlines():
        record = orjson.loads(line)
        messages = (
            record
            if isinstance(record, list)
            else next(record[k] for k in ("messages", "contents", "input") if k in record)
        )
        for msg in messages:
            content = msg.get("content") if isinstance(msg.get("content"), list) else []
            if msg.get("tool_calls"):  # typed parts beside tool_calls: the listed calls are the calls
                calls += [(c["id"], c["function"]["name"]) for c in msg["tool_calls"]]
            else:
                calls += [
                    (b.get("id") or b.get("tool_call_id"), b["name"])
                    for b in content
                    if b.get("type") in ("tool_use", "tool_call")
                ]
            calls += [
                (p["functionCall"].get("id"), p["functionCall"]["name"])
                for p in msg.get("parts", ())
                if "functionCall" in p
            ]
            if msg.get("type") in ("function_call", "custom_tool_call"):
                calls.append((msg["call_id"], msg["name"]))
            elif msg.get("type") == "local_shell_call":
                calls.append((msg["call_id"], "local_shell"))
            elif msg.get("type") == "web_search_call":
                calls.append((msg["id"], "web_search"))
    return calls


@pytest.mark.parametrize("case", SHAPE_CASES)
def test_every_call_once_in_to_messages_and_to_sharegpt(case):
    want = _source_calls(case)
    assert want
    got_messages, got_sharegpt = [], 0
    with collect_losses() as report:
        for story in _stories(case):
            out = pc.to_messages(story)["messages"]
            got_messages += [(c["id"], c["function"]["name"]) for m in out for c in m.get("tool_calls") or ()]
            text = orjson.dumps(out).decode()
            assert '"tool_use"' not in text and '"functionCall"' not in text and '"tool_call"' not in text
            conv = pc.to_sharegpt(story)["conversations"]
            got_sharegpt += sum(t["value"].count("<tool_call>") for t in conv if t["from"] == "gpt")
            assert not any('"type": "tool_use"' in t["value"] or "functionCall" in t["value"] for t in conv)
    assert [name for _, name in got_messages] == [name for _, name in want]
    assert [i for i, _ in got_messages if i in {w for w, _ in want}] == [w for w, _ in want if w]
    assert got_sharegpt == len(want)
    assert "content_flattened" not in report.counts


def test_a_file_may_mix_shapes():
    record = {
        "messages": [
            {"role": "user", "content": "List."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
            {"type": "function_call", "call_id": "c2", "name": "cat", "arguments": '{"f": "a"}'},
            {"type": "function_call_output", "call_id": "c2", "output": "x"},
            {"role": "model", "parts": [{"functionCall": {"name": "rm", "args": {"f": "a"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "rm", "response": {}}}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c4", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c4", "content": ""},
        ]
    }
    text = orjson.dumps(record).decode() + "\n"
    [story] = pc.into_storyline("auto", text, document_id="mixed.jsonl")
    calls = [(c["tcid"], c["fn"]) for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert calls == [("t1", "ls"), ("c2", "cat"), ("call-5-0", "rm"), ("c4", "ls")]
    linked = [r["source_call_id"] for t in story["turns"] for r in t.get("observation", {}).get("results", [])]
    assert linked == ["t1", "c2", "call-5-0", "c4"]
    assert story["meta"]["chat"]["shapes"] == {"anthropic": 2, "responses": 2, "gemini": 2}
    assert orjson.loads(pc.from_storyline("chat", [story])) == record


@pytest.mark.parametrize(
    ("message", "pointer"),
    [
        ({"role": "model", "parts": [{"executableCode": {"code": "print(1)"}}]}, "/messages/1/parts/0"),
        ({"role": "assistant", "text": "hello"}, "/messages/1/text"),
        ({"role": "assistant", "parts": [{"bogus": "x"}]}, "/messages/1/parts"),
        ({"type": "function_call", "call_id": "c"}, "/messages/1"),
        ({"role": "tool", "tool_call_id": "c", "output": "done"}, "/messages/1/output"),
    ],
    ids=["gemini-unknown-part", "openai-text-key", "unknown-parts", "nameless-call", "tool-output-key"],
)
def test_content_that_all_falls_into_residual_is_refused(message, pointer):
    text = orjson.dumps({"messages": [{"role": "user", "content": "hi"}, message]}).decode()
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("chat", text, document_id="bad.jsonl")
    assert err.value.pointer == pointer
    assert "bad.jsonl" in str(err.value)


def test_a_message_with_some_content_keeps_the_rest_as_residual():
    msg = {"role": "model", "parts": [{"text": "Ran it."}, {"executableCode": {"code": "print(1)"}}]}
    [story] = pc.into_storyline("chat", orjson.dumps({"messages": [msg]}), document_id="a.json")
    assert story["turns"][0]["msg"] == "Ran it."
    assert story["unknown_fields"]["sources"]["chat"]["fields"] == {"/messages/0/parts/1": msg["parts"][1]}
    assert orjson.loads(pc.from_storyline("chat", [story])) == {"messages": [msg]}


def test_inspect_counts_messages_per_shape(capsys):
    files = [str(DATA / case) for case in SHAPE_CASES]
    assert main(["inspect", "--json", *files]) == 0
    report = json.loads(capsys.readouterr().out)
    # counted here from the golden sources: 5 Anthropic messages (the first user message is a plain string,
    # an OpenAI one), 10 Responses items, 6 + 2 Gemini Content, 1 + 3 typed-part messages (text-only lists are
    # OpenAI content lists)
    assert report["message_shapes"] == {"anthropic": 5, "gemini": 8, "responses": 10, "typed": 4}
    assert main(["inspect", *files]) == 0
    assert "messages per provider shape: anthropic 5, gemini 8, responses 10, typed 4" in capsys.readouterr().out
