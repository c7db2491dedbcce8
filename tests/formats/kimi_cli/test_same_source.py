"""Writing (docs/formats/kimi-cli.md, "Writing"): a Kimi CLI context comes back as equal JSON line by line; an
edited document is written with its edit; documents of other formats become contexts that read back."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import from_storyline, into_storyline
from pchronicle_datasets.linking import results_by_turn
from tests.formats.kimi_cli.cases import FILES, SYSTEM, THIRD_PARTY, call, document_id, key, lines, raw_records, tool


def back(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def round_trip(text: str, doc: str = "h/s1/context.jsonl"):
    [story] = into_storyline("kimi-cli", text, document_id=doc)
    with pc.collect_losses() as losses:
        out = from_storyline("kimi-cli", [story])
    assert not losses, losses.summary()  # the same source loses nothing
    assert into_storyline("kimi-cli", out, document_id=doc) == [story]  # stable
    return story, out


@pytest.mark.parametrize("path", FILES + THIRD_PARTY, ids=lambda p: "/".join(p.parts[-3:]))
def test_real_files_come_back_as_equal_json(path):
    _story, out = round_trip(path.read_text(encoding="utf-8"), "/".join(path.parts[-3:]))
    assert back(out) == raw_records(path)


def test_edge_cases_come_back_as_equal_json():
    text = lines(
        {"role": "user", "content": "hi"},  # before any bookkeeping (a context older than the system prompt line)
        {"role": "_checkpoint", "id": 0},
        {"role": "_system_prompt", "content": 3},  # not a string: Context skips it
        {
            "role": "assistant",
            "content": [{"type": "think", "think": "a", "encrypted": "sig"}],
            "tool_calls": [call("Shell:0", command="ls"), {"type": "function", "id": "", "function": {"name": "x"}}],
        },
        tool("Shell:0", "<system>ERROR: boom</system>", "out"),
        {"role": "assistant", "content": [], "tool_calls": [call("Shell:0", command="pwd")], "partial": True},
        tool("Shell:0", "/w"),
        {"role": "tool", "content": "stray", "tool_call_id": "nope"},
        {"no": "role"},
        {"role": ["user"], "content": "a role that is no string"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "name": "k"},
        {
            "role": "user",
            "content": [{"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AA", "id": None}}],
        },
        {"role": "assistant", "content": None},
        # the Rust kernel's lines (kimi-cli rust/kagent, 2026-02): keys sorted, absent values written as null
        {"id": 1, "role": "_checkpoint"},
        {"role": "assistant", "content": "x", "name": None, "tool_calls": None, "tool_call_id": None, "partial": None},
    )
    story, out = round_trip(text)
    assert back(out) == [json.loads(line) for line in text.splitlines()]
    assert [c["tcid"] for t in story["turns"] for c in t.get("tool_calls") or ()] == ["Shell:0", "Shell:0#2"]
    hints = story["meta"]["kimi-cli"]
    assert (hints["unread"], hints["orphan_results"], hints["checkpoint"]) == (3, 1, 2)
    assert story["turns"][-1]["msg"] == "x"


def test_an_edited_turn_is_written_with_the_edit():
    path = next(p for p in FILES if key(p).startswith("7884"))
    [story] = into_storyline("kimi-cli", path.read_bytes(), document_id=document_id(path))
    story["turns"][1]["msg"] = "[REDACTED]"
    out = back(from_storyline("kimi-cli", [story]))
    raw = raw_records(path)
    assert out[2] == {"role": "user", "content": "[REDACTED]"}
    assert out[:2] == raw[:2] and out[3:] == raw[3:]


def test_a_document_of_another_format_becomes_a_context_that_reads_back():
    story = {
        "schema_version": "storyline/v1",
        "session": "s9",
        "agent": {"id": "x", "model": "m"},
        "turns": [
            {"id": 1, "src": "system", "msg": "be brief"},
            {"id": 2, "src": "user", "msg": "list", "ts": "2026-01-01T00:00:00Z"},
            {
                "id": 3,
                "src": "agent",
                "msg": "ok",
                "reason": "ls",
                "tool_calls": [{"tcid": "c1", "fn": "Shell", "args": {"command": "ls"}, "result": "a.py"}],
            },
            {"id": 4, "src": "agent", "msg": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        ],
    }
    with pc.collect_losses() as losses:
        out = from_storyline("kimi-cli", [story])
    assert back(out) == [
        {"role": "_system_prompt", "content": "be brief"},
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "list"},
        {
            "role": "assistant",
            "content": [{"type": "think", "think": "ls", "encrypted": None}, {"type": "text", "text": "ok"}],
            "tool_calls": [
                {"type": "function", "id": "c1", "function": {"name": "Shell", "arguments": '{"command":"ls"}'}}
            ],
        },
        {"role": "tool", "content": "a.py", "tool_call_id": "c1"},
        {"role": "assistant", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
    ]
    assert {"not in kimi-cli: /agent/model", "not in kimi-cli: /turns/*/ts"} <= set(losses.counts)
    [again] = into_storyline("kimi-cli", out, document_id="h/s9/context.jsonl")
    assert [t["msg"] for t in again["turns"]] == [
        "be brief",
        "list",
        "ok",
        [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
    ]
    assert results_by_turn(again) == {2: [("c1", "Shell", "a.py")]}


def test_several_documents_are_refused():
    [story] = into_storyline(
        "kimi-cli", lines(SYSTEM, {"role": "user", "content": "hi"}), document_id="h/s/context.jsonl"
    )
    with pytest.raises(FormatError, match="one session"):
        from_storyline("kimi-cli", [story, story])
