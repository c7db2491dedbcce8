"""docs/formats/cursor.md on the schema-written transcript: texts and calls counted from the file itself (not by
the reader), derived call ids, calls without results, the user_query wrapper; the writer gives every line back."""

from __future__ import annotations

import json
from pathlib import Path

import pchronicle_datasets as pc
from pchronicle_datasets.formats import detect, from_storyline, into_storyline

DATA = Path(__file__).resolve().parents[2] / "data" / "cursor"
TRANSCRIPT = DATA / "projects/work-app/agent-transcripts/3b9f0c2e-7d41-4e8a-9c1f-5a2b6d8e0f13.jsonl"


def lines():
    return [json.loads(line) for line in TRANSCRIPT.read_text(encoding="utf-8").splitlines() if line.strip()]


def read():
    [story] = into_storyline("auto", TRANSCRIPT.read_bytes(), document_id=f"agent-transcripts/{TRANSCRIPT.name}")
    return story


def test_detected_and_written_back_line_by_line():
    assert detect(TRANSCRIPT.read_bytes(), TRANSCRIPT.name).NAME == "cursor"
    story = read()
    with pc.collect_losses() as losses:
        out = from_storyline("cursor", [story])
    assert not losses
    assert [json.loads(line) for line in out.splitlines()] == lines()
    assert into_storyline("cursor", out, document_id=f"agent-transcripts/{TRANSCRIPT.name}") == [story]


def test_texts_and_calls_are_counted_from_the_file():
    story, src = read(), lines()
    assert story["session"] == TRANSCRIPT.stem
    assert [t["src"] for t in story["turns"]] == [{"user": "user", "assistant": "agent"}[x["role"]] for x in src]
    uses = [
        (i, k, p) for i, x in enumerate(src) for k, p in enumerate(x["message"]["content"]) if p["type"] == "tool_use"
    ]
    calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    assert [(c["tcid"], c["fn"], c["args"]) for c in calls] == [
        (f"cursor-{i}-{k}", p["name"], p["input"]) for i, k, p in uses
    ]
    stats = pc.story_to_row(story)["tool_stats"]
    assert sum(s["count"] for s in stats) == len(uses) and sum(s["success"] + s["failure"] for s in stats) == 0
    texts = [p["text"] for x in src if x["role"] == "assistant" for p in x["message"]["content"] if p["type"] == "text"]
    assert [p["text"] for t in story["turns"] if t["src"] == "agent" for p in t["msg"]] == texts


def test_the_user_query_wrapper_is_unwrapped_and_the_image_kept():
    story = read()
    users = [t for t in story["turns"] if t["src"] == "user"]
    assert [t["msg"][0]["text"] for t in users] == [
        "create hello.py that prints hello, then run it",
        "now replace hello with hi",
    ]
    assert story["meta"]["cursor"]["wrapped"]["0/0"][0].startswith("<timestamp>")
    fields = story["unknown_fields"]["sources"]["cursor"]["fields"]
    assert fields["/3/message/content/1"]["type"] == "image"
    assert pc.to_messages(pc.story_to_row(story))["messages"][0]["content"] == users[0]["msg"][0]["text"]
