"""docs/formats/copilot-cli.md on the schema-written events file: messages, calls, results, failures and usage
counted from the file itself (not by the reader); the same-source writer gives every line back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import detect, from_storyline, into_storyline, iter_records

EVENTS = (
    Path(__file__).resolve().parents[2]
    / "data/copilot_cli/session-state/7c3e1f20-0000-4000-8000-00000000c0p1/events.jsonl"
)


def events():
    return [json.loads(line) for line in EVENTS.read_text(encoding="utf-8").splitlines() if line.strip()]


def read():
    [story] = into_storyline("auto", EVENTS.read_bytes(), document_id="events.jsonl")
    return story


def test_detected_and_written_back_line_by_line():
    assert detect(EVENTS.read_bytes(), EVENTS.name).NAME == "copilot-cli"
    story = read()
    with pc.collect_losses() as losses:
        out = from_storyline("copilot-cli", [story])
    assert not losses
    assert [json.loads(line) for line in out.splitlines()] == events()
    assert into_storyline("copilot-cli", out, document_id="events.jsonl") == [story]


def test_messages_calls_and_results_are_counted_from_the_file():
    story, evs = read(), events()
    said = [e for e in evs if e["type"] in ("user.message", "assistant.message")]
    assert [(t["src"], t["msg"]) for t in story["turns"]] == [
        ("user" if e["type"] == "user.message" else "agent", e["data"]["content"]) for e in said
    ]
    requests = [r for e in said for r in e["data"].get("toolRequests", [])]
    calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    assert [(c["tcid"], c["fn"], c["args"]) for c in calls] == [
        (r["toolCallId"], r["name"], r["arguments"]) for r in requests
    ]
    done = {e["data"]["toolCallId"]: e["data"] for e in evs if e["type"] == "tool.execution_complete"}
    stats = pc.story_to_row(story)["tool_stats"]
    assert sum(s["success"] + s["failure"] for s in stats) == len(done)  # every result on its call
    assert sum(s["failure"] for s in stats) == sum(not d["success"] for d in done.values())
    out_tokens = sum(e["data"].get("outputTokens", 0) for e in said)
    assert sum(t["metrics"]["completion_tokens"] for t in story["turns"] if "metrics" in t) == out_tokens
    [shutdown] = [e for e in evs if e["type"] == "session.shutdown"]
    assert story["final_metrics"] == shutdown["data"]["modelMetrics"]


def test_a_file_without_session_start_is_refused_and_a_bad_line_is_its_own_error():
    with pytest.raises(FormatError, match=r"session\.start"):
        into_storyline("copilot-cli", json.dumps(events()[2]) + "\n" + json.dumps(events()[4]) + "\n")
    text = "".join(json.dumps(e) + "\n" for e in events()[:3]) + '{"type": "user.mess\n'
    recs = list(iter_records("copilot-cli", text, "events.jsonl"))
    assert [r.error is None for r in recs] == [False, True]


def test_a_chat_document_becomes_an_events_file_that_reads_back():
    chat = {
        "messages": [
            {"role": "user", "content": "ls?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        ]
    }
    [doc] = into_storyline("chat", json.dumps(chat), document_id="c.json")
    [back] = into_storyline("auto", from_storyline("copilot-cli", [doc]), document_id="events.jsonl")
    [call] = [c for t in back["turns"] for c in t.get("tool_calls", [])]
    assert (call["fn"], call["result"]) == ("ls", "a.txt")


def test_a_call_id_repeated_three_times_is_renamed_each_time():
    # jazzyalex/agent-sessions' Copilot fixture (stage0/agents/copilot/small.jsonl) has three requests with one
    # id; the third used to take the first one's id again and the whole file was refused (duplicate tcid).
    start, user = events()[0], {"type": "user.message", "data": {"content": "go"}, "id": "u", "parentId": None}
    lines = [start, user]
    for n in range(3):
        req = {"toolCallId": "c", "name": "bash", "arguments": {"command": f"echo {n}"}}
        lines.append({"type": "assistant.message", "data": {"content": str(n), "toolRequests": [req]},
                      "id": f"a{n}", "parentId": None})  # fmt: skip
        lines.append({"type": "tool.execution_complete", "id": f"r{n}", "parentId": None,
                      "data": {"toolCallId": "c", "success": True, "result": {"content": f"out {n}"}}})  # fmt: skip
    text = "".join(json.dumps(e) + "\n" for e in lines)
    [story] = into_storyline("copilot-cli", text, document_id="events.jsonl")
    got = [(c["tcid"], c["result"]) for t in story["turns"] for c in t.get("tool_calls", [])]
    assert got == [("c", "out 0"), ("c#2", "out 1"), ("c#3", "out 2")]
    assert [json.loads(line) for line in from_storyline("copilot-cli", [story]).splitlines()] == lines
