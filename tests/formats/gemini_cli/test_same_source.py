"""Writing: a Gemini CLI file comes back as equal JSON record by record; the replay's edge cases; documents of
other formats become sessions that read back (docs/formats/gemini-cli.md, "Writing")."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import from_storyline, into_storyline, iter_records
from tests.formats.gemini_cli.replay import FILES, LEGACY, MAIN, records

HEADER = {"sessionId": "s1", "projectHash": "ph", "startTime": "2026-10-01T00:00:00.000Z", "kind": "main"}


def lines(*recs) -> str:
    return "".join(json.dumps(r) + "\n" for r in recs)


def back(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def round_trip(text: str, document_id: str = "chats/session-x.jsonl"):
    [story] = into_storyline("gemini-cli", text, document_id=document_id)
    with pc.collect_losses() as losses:
        out = from_storyline("gemini-cli", [story])
    assert not losses, losses.summary()  # the same source loses nothing
    assert into_storyline("gemini-cli", out, document_id=document_id) == [story]  # stable
    return story, out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_files_come_back_as_equal_json(path):
    _story, out = round_trip(path.read_text(encoding="utf-8"), path.name)
    if path.suffix == ".json":
        assert json.loads(out) == records(path)[0]
    else:
        assert back(out) == records(path)


def test_an_edited_turn_is_written_with_the_edit():
    [story] = into_storyline("gemini-cli", MAIN.read_bytes(), document_id=MAIN.name)
    story["turns"][1]["msg"] = [{"type": "text", "text": "[REDACTED]"}]
    out = back(from_storyline("gemini-cli", [story]))
    assert next(r for r in out if r.get("id") == "u-0001")["content"] == [{"text": "[REDACTED]"}]


def test_rewind_to_an_unknown_id_cuts_everything():
    text = lines(
        HEADER,
        {"id": "a", "type": "user", "content": "x"},
        {"$rewindTo": "zz"},
        {"id": "b", "type": "user", "content": "y"},
    )
    story, out = round_trip(text)
    assert [t["msg"] for t in story["turns"]] == ["y"]
    assert story["meta"]["gemini-cli"]["rewound"] == 1
    assert back(out) == back(text)


def test_a_replaced_id_keeps_its_place():
    text = lines(
        HEADER,
        {"id": "a", "type": "user", "content": "1"},
        {"id": "b", "type": "gemini", "content": "2"},
        {"id": "a", "type": "user", "content": "1 again"},
    )
    story, out = round_trip(text)
    assert [t["msg"] for t in story["turns"]] == ["1 again", "2"]
    assert back(out) == back(text)


def test_a_line_that_is_not_json_is_its_own_error_and_the_session_still_reads():
    good = lines(HEADER, {"id": "a", "type": "user", "content": "hi"})
    text = good + '{"id": "b", "type": "gem\n'
    recs = list(iter_records("gemini-cli", text, "s.jsonl"))
    assert [r.error is None for r in recs] == [False, True]
    assert recs[0].error.line == 3
    assert [t["msg"] for t in recs[1].story["turns"]] == ["hi"]
    assert back(from_storyline("gemini-cli", [recs[1].story])) == back(good)


def test_a_file_without_its_metadata_record_is_refused_with_its_pointer():
    with pytest.raises(FormatError, match="metadata record") as err:
        into_storyline(
            "gemini-cli", lines({"id": "a", "type": "user", "content": "hi"}, {"$set": {"x": 1}}), document_id="s.jsonl"
        )
    assert err.value.document_id == "s.jsonl"


def test_a_repeated_call_id_is_renamed_and_written_back_as_it_was():
    call = {"id": "c1", "name": "ls", "args": {}, "status": "success"}
    text = lines(
        HEADER,
        {"id": "g1", "type": "gemini", "content": "", "toolCalls": [call]},
        {"id": "g2", "type": "gemini", "content": "", "toolCalls": [call]},
    )
    story, out = round_trip(text)
    assert [c["tcid"] for t in story["turns"] for c in t["tool_calls"]] == ["c1", "c1#2"]
    assert story["meta"]["source_call_ids"] == {"c1#2": "c1"}
    assert back(out) == back(text)


def test_odd_values_stay_residual_in_their_place():
    text = lines(
        HEADER,
        {
            "id": "g1",
            "type": "gemini",
            "content": [{"text": "a"}, {"text": "b", "thought": True}, {"functionCall": {"name": "x", "args": {}}}],
            "thoughts": [{"subject": "S", "description": "x\n\n**T**\n\ny"}, {"subject": "T", "description": "z"}],
            "tokens": None,
            "toolCalls": [{"name": "no id"}, {"id": "c", "name": "n", "args": {}, "result": None}, 5],
            "displayContent": "shown",
        },
        {"id": "w", "type": "warning", "content": "careful"},
        {"id": "o", "type": "other", "content": "?"},
        ["not", "an", "object"],
    )
    story, out = round_trip(text)
    [g1, w] = story["turns"]
    assert g1["msg"] == [{"type": "text", "text": "a"}] and "reason" not in g1  # not splittable: thoughts residual
    assert [c["tcid"] for c in g1["tool_calls"]] == ["c"] and "result" not in g1["tool_calls"][0]
    assert (w["src"], w["kind"]) == ("system", "warning")
    assert back(out) == back(text)


def test_a_legacy_file_is_written_pretty_printed():
    _story, out = round_trip(LEGACY.read_text(encoding="utf-8"), LEGACY.name)
    assert out.startswith('{\n  "sessionId"') and json.loads(out) == json.loads(LEGACY.read_text(encoding="utf-8"))


def test_several_documents_are_refused_one_file_holds_one_session():
    [story] = into_storyline("gemini-cli", MAIN.read_bytes(), document_id=MAIN.name)
    with pytest.raises(FormatError, match="per-document"):
        from_storyline("gemini-cli", [story, story])
    assert from_storyline("gemini-cli", []) == ""


def test_a_chat_document_becomes_a_session_that_reads_back():
    chat = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "ls?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"p": "."}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
            {"role": "assistant", "content": "a.txt"},
        ]
    }
    [doc] = into_storyline("chat", json.dumps(chat), document_id="c.json")
    with pc.collect_losses() as losses:
        text = from_storyline("gemini-cli", [doc])
    assert losses.counts["not in gemini-cli: /turns/*/src"] == 1  # the system prompt, written as an info notice
    [story] = into_storyline("auto", text, document_id="s.jsonl")
    [call] = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    assert (call["fn"], call["args"], call["result"]) == ("ls", {"p": "."}, {"output": "a.txt"})
    assert [t["src"] for t in story["turns"]] == ["system", "user", "agent", "agent"]
    assert story["unknown_fields"]["sources"]["chat"] == doc["unknown_fields"]["sources"]["chat"]  # the envelope
