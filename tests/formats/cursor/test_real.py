"""A real Cursor agent transcript (tests/data/cursor/README.md: captured 2026-08-24 by entireio/cli, copied by
langfuse/cursor-observability-plugin): its texts and calls counted from the file itself, through ``load_dataset``
and ``to_messages``, and written back line by line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline

ID = "7896c168-45c1-42d4-841a-c8c731c24f45"
REAL = (
    Path(__file__).resolve().parents[2] / "data/cursor/projects/tmp-cursor-probe/agent-transcripts" / ID / f"{ID}.jsonl"
)


def lines() -> list[dict]:
    return [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]


def read() -> dict:
    [story] = into_storyline("auto", REAL.read_bytes(), document_id=f"agent-transcripts/{ID}/{REAL.name}")
    return story


def test_texts_and_calls_arrive_and_the_file_is_written_back():
    story, src = read(), lines()
    said = [x for x in src if "role" in x]
    assert [t["src"] for t in story["turns"]] == [{"user": "user", "assistant": "agent"}[x["role"]] for x in said]
    uses = [(i, k, p) for i, x in enumerate(src) if "role" in x for k, p in enumerate(x["message"]["content"])]
    calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    assert [(c["tcid"], c["fn"], c["args"]) for c in calls] == [
        (f"cursor-{i}-{k}", p["name"], p["input"]) for i, k, p in uses if p["type"] == "tool_use"
    ]
    assert len(calls) == 7
    with pc.collect_losses() as losses:
        out = from_storyline("cursor", [story])
    assert not losses
    assert out.encode() == REAL.read_bytes()  # compact JSON, as Cursor writes it: byte for byte
    assert into_storyline("cursor", out, document_id=f"agent-transcripts/{ID}/{REAL.name}") == [story]


def test_the_redacted_thinking_marker_is_not_the_agent_s_words():
    """Cursor ends every assistant text with ``\\n\\n[REDACTED]``, its placeholder for the thinking it does not
    store: the text is the words before it, the marker kept for the writer (as the user_query wrapper is)."""
    story = read()
    texts = [p["text"] for t in story["turns"] if t["src"] == "agent" for p in t["msg"]]
    assert texts[1] == "Step 1: creating `notes.md`."
    assert not any("[REDACTED]" in text for text in texts)
    assert story["meta"]["cursor"]["wrapped"]["2/0"] == ["", "\n\n[REDACTED]"]
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "cursor", data_files=str(REAL), split="train")
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    messages = msgs[0]["messages"]
    assert messages[0] == {**messages[0], "role": "user", "content": "ls"}
    assert not any("[REDACTED]" in (m["content"] or "") for m in messages)
