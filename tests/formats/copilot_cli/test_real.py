"""The real Copilot CLI 1.0.78 events files (tests/data/copilot_cli/README.md: WildChildForLife/lantern's Docker
run): every message, request and completion counted from the file itself, through ``load_dataset`` and
``to_messages``, and written back line by line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline

REAL = Path(__file__).resolve().parents[2] / "data" / "copilot_cli" / "lantern"
FILES = sorted(REAL.rglob("events.jsonl"))
FAILED = REAL / "session-state" / "049410b4-c1df-44ee-87a5-caa1c349091e" / "events.jsonl"


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read(path: Path) -> dict:
    [story] = into_storyline("auto", path.read_bytes(), document_id="events.jsonl")
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name[:8])
def test_every_event_arrives_and_the_file_is_written_back(path):
    story, evs = read(path), events(path)
    said = [e for e in evs if e["type"] in ("system.message", "user.message", "assistant.message")]
    src = {"system.message": "system", "user.message": "user", "assistant.message": "agent"}
    assert [(t["src"], t["msg"]) for t in story["turns"]] == [(src[e["type"]], e["data"]["content"]) for e in said]
    assert [t.get("model") for t in story["turns"]] == [e["data"].get("model") for e in said]
    requests = [r for e in said for r in e["data"].get("toolRequests") or ()]
    calls = {c["tcid"]: c for t in story["turns"] for c in t.get("tool_calls") or ()}
    assert [(c["tcid"], c["fn"], c["args"]) for c in calls.values()] == [
        (r["toolCallId"], r["name"], r["arguments"]) for r in requests
    ]
    for e in (e for e in evs if e["type"] == "tool.execution_complete"):  # every completion on its call
        d, call = e["data"], calls[e["data"]["toolCallId"]]
        if d["success"]:
            assert call["result"] == d["result"]["content"] and call["response"]["status"] == "success"
        else:
            assert call["result"] == {"error": d["error"]["message"]} and call["response"]["status"] == "error"
    with pc.collect_losses() as losses:
        out = from_storyline("copilot-cli", [story])
    assert not losses
    assert [json.loads(line) for line in out.splitlines()] == evs
    assert into_storyline("copilot-cli", out, document_id="events.jsonl") == [story]


def test_failed_calls_reach_the_messages_as_tool_errors():
    """Both ``view`` calls failed (``success: false``, ``error{message, code}``, no ``result``): each is answered by
    a tool message, so no request is left without its response."""
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "copilot-cli", data_files=str(FAILED), split="train")
    stats = {s["tool"]: s for s in ds[0]["tool_stats"]}
    assert (stats["view"]["success"], stats["view"]["failure"]) == (0, 2)
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    messages = msgs[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["call_fpjobf9a", "call_de798t9c"]
    assert all("Required" in m["content"] for m in messages if m["role"] == "tool")
