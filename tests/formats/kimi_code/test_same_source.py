"""Writing (docs/formats/kimi-code.md, "Writing"): a Kimi Code journal comes back as equal JSON line by line; an
edited document is written with its edit; documents of other formats become journals that read back."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import from_storyline, into_storyline
from tests.formats.kimi_code.cases import (
    FILES,
    META,
    SYSTEM,
    VIS_FILES,
    document_id,
    event,
    lines,
    raw_records,
    step,
    text,
    user,
)
from tests.formats.kimi_code.cases import think as think_part

DOC = "wd_p_1/session_1/agents/main/wire.jsonl"


def back(out: str) -> list:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def round_trip(data: str, doc: str = DOC):
    [story] = into_storyline("kimi-code", data, document_id=doc)
    with pc.collect_losses() as losses:
        out = from_storyline("kimi-code", [story])
    assert not losses, losses.summary()  # the same source loses nothing
    assert into_storyline("kimi-code", out, document_id=doc) == [story]  # stable
    return story, out


@pytest.mark.parametrize("path", FILES + VIS_FILES, ids=lambda p: "/".join(p.parts[-4:]))
def test_real_files_come_back_as_equal_json(path):
    _story, out = round_trip(path.read_text(encoding="utf-8"), "/".join(path.parts[-5:]))
    assert back(out) == raw_records(path)


def test_edge_cases_come_back_as_equal_json():
    data = lines(
        META,
        SYSTEM,
        {"type": "profile.bind", "systemPrompt": SYSTEM["systemPrompt"]},
        user("hi"),
        {"type": "context.append_message", "message": {"role": "user", "content": "a string"}},
        {"type": "context.append_message", "message": {"role": "tool", "content": [text("x")]}},
        {"type": "context.append_message", "message": {"role": "user", "content": []}},
        {
            "type": "context.append_message",
            "message": {
                "role": "assistant",
                "content": [text("a"), {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}],
                "toolCalls": [{"type": "function", "id": "c0", "name": "Bash", "arguments": '{"command": "ls"}'}, 3],
            },
        },
        *step("s1", think_part("a"), {"type": "think", "text": "b"}, text("one"), calls=(("c0", "Bash", None),)),
        event(type="tool.result", toolCallId="c0", result={"output": [text("out")], "isError": True, "note": "n"}),
        event(type="tool.result", toolCallId="nope", result={"output": "stray"}),
        event(type="content.part", part=text("no step")),
        {"type": "context.apply_compaction", "summary": "S", "compactedCount": 3, "tokensBefore": 9},
        {"type": "context.apply_compaction", "summary": {"role": "user", "content": [text("legacy")]}, "count": 2},
        {"type": "context.undo", "agentId": "main", "count": 1},
        # a fork's copied history: an answer with a call, its tool message (two parts, an error), the task
        {
            "type": "context.append_message",
            "message": {
                "role": "assistant",
                "content": [],
                "toolCalls": [{"type": "function", "id": "k1", "name": "Read", "arguments": None}],
            },
        },
        {
            "type": "context.append_message",
            "message": {
                "role": "tool",
                "content": [text("a"), text("b")],
                "toolCalls": [],
                "toolCallId": "k1",
                "isError": True,
            },
        },
        user("task", {"kind": "system_trigger", "name": "subagent"}),
        {"no": "type"},
        [1, 2],
    )
    _story, out = round_trip(data)
    assert back(out) == back(data)


def test_an_edited_text_is_written_in_its_place():
    path = next(p for p in FILES if p.parent.name == "main" and "1bcbe023" in str(p))
    [story] = into_storyline("kimi-code", path.read_text(encoding="utf-8"), document_id=document_id(path))
    t = next(i for i, turn in enumerate(story["turns"]) if turn["msg"] == "run ls command")
    story["turns"][t]["msg"] = "run [REDACTED] command"
    out = back(from_storyline("kimi-code", [story]))
    raw = raw_records(path)
    changed = [i for i, (a, b) in enumerate(zip(out, raw, strict=True)) if a != b]
    assert len(changed) == 1 and out[changed[0]]["message"]["content"][0]["text"] == "run [REDACTED] command"


def test_other_documents_become_journals_that_read_back():
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a", "model": "m"},
        "turns": [
            {"id": 1, "src": "system", "msg": "sys"},
            {"id": 2, "src": "user", "msg": "list", "ts": "2026-08-01T19:33:32.820Z"},
            {
                "id": 3,
                "src": "agent",
                "msg": "on it",
                "reason": "ls",
                "tool_calls": [{"tcid": "t1", "fn": "Bash", "args": {"command": "ls"}}],
                "observation": {"results": [{"source_call_id": "t1", "content": "a.py", "is_error": True}]},
            },
            {"id": 4, "src": "user", "msg": "reminder", "copied": True, "kind": "context"},
        ],
    }
    with pc.collect_losses() as losses:
        out = from_storyline("kimi-code", [story])
    assert "not in kimi-code: /agent/model" in losses.summary()
    [again] = into_storyline("auto", out, document_id=DOC)
    turns = again["turns"]
    assert [(t["src"], t["msg"]) for t in turns] == [
        ("system", "sys"),
        ("user", "list"),
        ("agent", "on it"),
        ("user", "reminder"),
    ]
    assert turns[2]["reason"] == "ls" and turns[2]["tool_calls"][0]["args"] == {"command": "ls"}
    assert turns[2]["observation"]["results"][0] == {"content": "a.py", "source_call_id": "t1", "is_error": True}
    assert turns[3]["kind"] == "context"
    assert turns[1]["ts"] == "2026-08-01T19:33:32.820Z" and "ts" not in turns[2]
    assert pc.to_messages(again)["messages"][1:] == pc.to_messages(story)["messages"][1:]


def test_several_documents_are_refused():
    [story] = into_storyline("kimi-code", lines(user("hi"), *step("s1", text("x"))), document_id=DOC)
    with pytest.raises(FormatError, match="one agent of one session"):
        from_storyline("kimi-code", [story, story])
