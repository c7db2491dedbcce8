"""Seed, "Формат записи JSONL" (the record format): CLI and batch-runner records, their fields, timestamps and
model, bare conversation lines, arrays and ``.jsonl.gz`` files, read into Storyline."""

from __future__ import annotations

import gzip
import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from tests.formats.sharegpt.helpers import (
    EMPTY,
    EX2_TOOLS,
    G,
    H,
    assert_same,
    conv,
    jline,
    load,
    read,
    records_of,
    residual,
    same_source,
)


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
