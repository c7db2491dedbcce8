"""docs/formats/opencode.md on the schema-written exports of tests/data/opencode: every part counted from the
file itself (not by the reader) is where the table says; the same-source writer gives the file back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import detect, from_storyline, into_storyline

DATA = Path(__file__).resolve().parents[2] / "data" / "opencode"
FILES = sorted(DATA.glob("*.json"))
PARENT, CHILD = (DATA / "ses_6f1c2a9b0ffeXkQ2mN7pR4sT1u.json"), (DATA / "ses_6f1c2b33e77eYq8wLd3vB9nA0c.json")


def source(path):
    return json.loads(path.read_text(encoding="utf-8"))


def read(path):
    [story] = into_storyline("auto", path.read_bytes(), document_id=path.name)
    return story


def parts(path, kind):
    return [p for m in source(path)["messages"] for p in m["parts"] if p["type"] == kind]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_detected_and_written_back_equal(path):
    assert detect(path.read_bytes(), path.name).NAME == "opencode"
    story = read(path)
    with pc.collect_losses() as losses:
        out = from_storyline("opencode", [story])
    assert not losses and json.loads(out) == source(path)
    assert into_storyline("opencode", out, document_id=path.name) == [story]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_text_reasoning_and_call_is_in_the_turns(path):
    story = read(path)
    said = [m for m in source(path)["messages"] if any(p["type"] in ("text", "reasoning", "tool") for p in m["parts"])]
    assert [t["src"] for t in story["turns"]] == [
        {"user": "user", "assistant": "agent"}[m["info"]["role"]] for m in said
    ]
    assert [p["text"] for t in story["turns"] for p in t["msg"]] == [p["text"] for p in parts(path, "text")]
    assert [t["reason"] for t in story["turns"] if "reason" in t] == [p["text"] for p in parts(path, "reasoning")]
    calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    tools = parts(path, "tool")
    assert [(c["tcid"], c["fn"], c["args"]) for c in calls] == [
        (p["callID"], p["tool"], p["state"]["input"]) for p in tools
    ]
    stats = pc.story_to_row(story)["tool_stats"]
    assert sum(s["failure"] for s in stats) == sum(p["state"]["status"] == "error" for p in tools)
    assert sum(s["success"] + s["failure"] for s in stats) == len(tools)  # every result linked to its call
    tokens = [m["info"]["tokens"] for m in said if m["info"]["role"] == "assistant"]
    assert sum(t["metrics"]["prompt_tokens"] for t in story["turns"] if "metrics" in t) == sum(
        t["input"] for t in tokens
    )


def test_the_subagent_is_linked_both_ways_and_the_compaction_is_no_turn():
    parent, child = read(PARENT), read(CHILD)
    assert parent["children"] == [child["session"]] and child["parent"]["psid"] == parent["session"]
    fields = parent["unknown_fields"]["sources"]["opencode"]["fields"]
    assert fields["/messages/3"]["parts"][0]["type"] == "compaction"  # kept whole, not an empty agent turn
    assert "/messages/0/parts/1" in fields  # the file part, in its place


def test_a_chat_document_becomes_an_export_and_several_are_refused():
    chat = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    [doc] = into_storyline("chat", json.dumps(chat), document_id="c.json")
    [back] = into_storyline("auto", from_storyline("opencode", [doc]), document_id="o.json")
    assert [(t["src"], t["msg"]) for t in back["turns"]] == [
        ("user", [{"type": "text", "text": "hi"}]),
        ("agent", [{"type": "text", "text": "hello"}]),
    ]
    with pytest.raises(FormatError, match="per-document"):
        from_storyline("opencode", [doc, doc])
