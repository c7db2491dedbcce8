"""Writing (docs/formats/qwen-code.md, "Writing"): a Qwen Code file comes back as equal JSON line by line; an
edited document is written with its edit; documents of other formats become sessions that read back."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import from_storyline, into_storyline
from pchronicle_datasets.linking import results_by_turn
from tests.formats.qwen_code.cases import FILES, call, lines, model, raw_records, rec, result, user


def back(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def round_trip(text: str, document_id: str = "chats/s1.jsonl"):
    [story] = into_storyline("qwen-code", text, document_id=document_id)
    with pc.collect_losses() as losses:
        out = from_storyline("qwen-code", [story])
    assert not losses, losses.summary()  # the same source loses nothing
    assert into_storyline("qwen-code", out, document_id=document_id) == [story]  # stable
    return story, out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:8])
def test_real_files_come_back_as_equal_json(path):
    _story, out = round_trip(path.read_text(encoding="utf-8"), path.name)
    assert back(out) == raw_records(path)


def test_edge_cases_come_back_as_equal_json():
    text = lines(
        rec("t", None, "system", subtype="custom_title", systemPayload={"customTitle": "x"}),
        user("a", "t", "go"),
        model("b", "a", {"text": "t1", "thought": True}, {"text": "t2", "thought": True}, call("c0"), call("c0")),
        result("c", "b", "c0", {"output": "one"}),
        rec("d", "c", "user", subtype="notification", message={"role": "user", "parts": [{"text": "n"}]}),
        rec("e", "d", "assistant", message={"role": "model", "parts": []}, usageMetadata={"x": "1", "y": 2}),
        model("f", "a", {"text": "rewound"}),
        model("g", "e", {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, {"text": "a"}, {"text": "b"}),
    )
    story, out = round_trip(text)
    assert back(out) == [json.loads(line) for line in text.splitlines()]
    assert story["meta"]["qwen-code"]["off_chain"] == 1


def test_an_edited_turn_is_written_with_the_edit():
    path = FILES[0]
    [story] = into_storyline("qwen-code", path.read_bytes(), document_id=path.name)
    story["turns"][0]["msg"] = "[REDACTED]"
    out = back(from_storyline("qwen-code", [story]))
    assert out[0]["message"]["parts"] == [{"text": "[REDACTED]"}]
    assert out[1:] == raw_records(path)[1:]


def test_another_formats_document_becomes_a_session_that_reads_back():
    path = FILES[-1]
    [story] = into_storyline("qwen-code", path.read_bytes(), document_id=path.name)
    chat = from_storyline("chat", [story])
    [other] = into_storyline("chat", chat, document_id="c.json")
    with pc.collect_losses() as losses:
        text = from_storyline("qwen-code", [other])
    [again] = into_storyline("auto", text, document_id="s.jsonl")
    assert again["origin"]["format"] == "qwen-code"
    assert [(t["src"], t["msg"]) for t in again["turns"]] == [(t["src"], t["msg"]) for t in other["turns"]]
    got = [(c["tcid"], c["fn"], c["args"]) for t in again["turns"] for c in t.get("tool_calls") or ()]
    want = [(c["tcid"], c["fn"], c["args"]) for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert got == want and len(got) == 3
    # chat held each result as text (counted by its writer): written back in Qwen Code's own {"output": …} form
    results = [c["result"] for t in again["turns"] for c in t.get("tool_calls") or ()]
    assert results == [{"output": content} for t in results_by_turn(other).values() for _id, _fn, content in t]
    records = back(text)
    assert [r["parentUuid"] for r in records[1:]] == [r["uuid"] for r in records[:-1]]  # one chain
    assert {r["type"] for r in records} == {"user", "assistant", "tool_result"}
    assert not losses or all(k.startswith("not in qwen-code") for k in losses.counts), losses.summary()


def test_a_system_turn_is_written_as_a_user_record_and_counted():
    story = {
        "schema_version": "storyline/v1",
        "session": "s9",
        "agent": {"id": "x"},
        "turns": [{"id": 1, "src": "system", "msg": "be brief"}, {"id": 2, "src": "user", "msg": "hi"}],
    }
    with pc.collect_losses() as losses:
        text = from_storyline("qwen-code", [story])
    assert [r["type"] for r in back(text)] == ["user", "user"]
    assert any(k.startswith("not in qwen-code: /turns/*/src system") for k in losses.counts), losses.summary()


def test_several_documents_are_refused():
    [story] = into_storyline("qwen-code", FILES[0].read_bytes(), document_id=FILES[0].name)
    with pytest.raises(FormatError, match="per-document"):
        from_storyline("qwen-code", [story, story])


def test_observation_results_are_written_after_their_call_with_a_failure_status():
    story = {
        "schema_version": "storyline/v1",
        "session": "s9",
        "agent": {"id": "x"},
        "turns": [
            {"id": 1, "src": "user", "msg": "go"},
            {"id": 2, "src": "agent", "msg": None, "tool_calls": [{"tcid": "c1", "fn": "Bash", "args": {"cmd": "ls"}}]},
            {
                "id": 3,
                "src": "user",
                "msg": "",
                "observation": {"results": [{"source_call_id": "c1", "content": "no"}]},
            },
        ],
    }
    story["turns"][2]["observation"]["results"][0]["is_error"] = True
    records = back(from_storyline("qwen-code", [story]))
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result", "user"]
    assert records[2]["message"]["parts"] == [
        {"functionResponse": {"id": "c1", "name": "Bash", "response": {"output": "no"}}}
    ]
    assert records[2]["toolCallResult"] == {"callId": "c1", "status": "error"}
    [again] = into_storyline("qwen-code", lines(*records), document_id="s9.jsonl")
    [call] = again["turns"][1]["tool_calls"]
    assert (call["result"], call["response"]) == ({"output": "no"}, {"status": "error"})
