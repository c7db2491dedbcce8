"""Two sessions of a real OpenCode 1.18.13 database (tests/data/opencode/README.md: WildChildForLife/lantern's
Docker run), as exports rebuilt from its rows: every message, part, call and usage counted from the file itself,
through ``load_dataset`` and ``to_messages``, and written back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline

REAL = Path(__file__).resolve().parents[2] / "data" / "opencode" / "lantern"
FILES = sorted(REAL.glob("ses_*.json"))
WRITE = REAL / "ses_031541bf9ffeMiy2LOFii47rch.json"


def read(path: Path) -> dict:
    [story] = into_storyline("auto", path.read_bytes(), document_id=path.name)
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_messages_parts_and_usage_arrive_and_the_export_is_written_back(path):
    story, src = read(path), json.loads(path.read_text(encoding="utf-8"))
    assert story["agent"]["ver"] == src["info"]["version"] == "1.18.13"
    messages = [m for m in src["messages"] if any(p["type"] in ("text", "reasoning", "tool") for p in m["parts"])]
    assert [t["src"] for t in story["turns"]] == [
        {"user": "user", "assistant": "agent"}[m["info"]["role"]] for m in messages
    ]
    for turn, m in zip(story["turns"], messages, strict=True):
        parts = m["parts"]
        assert [p["text"] for p in turn["msg"]] == [p["text"] for p in parts if p["type"] == "text"]
        assert turn.get("reason", "") == "\n\n".join(p["text"] for p in parts if p["type"] == "reasoning")
        calls = [p for p in parts if p["type"] == "tool"]
        assert [(c["tcid"], c["fn"], c["args"], c["result"]) for c in turn.get("tool_calls", [])] == [
            (p["callID"], p["tool"], p["state"]["input"], p["state"]["output"]) for p in calls
        ]
        tokens = m["info"].get("tokens")
        if tokens is not None:  # OpenCode 1.18 writes {total, input, output, reasoning, cache{read, write}}
            metrics = turn["metrics"]
            assert (metrics["prompt_tokens"], metrics["completion_tokens"], metrics["cached_tokens"]) == (
                tokens["input"],
                tokens["output"],
                tokens["cache"]["read"],
            )
            assert metrics["extra"] == {
                "reasoning": tokens["reasoning"],
                "cache_write": tokens["cache"]["write"],
                "total": tokens["total"],
            }
    with pc.collect_losses() as losses:
        out = from_storyline("opencode", [story])
    assert not losses
    assert json.loads(out) == src
    assert into_storyline("opencode", out, document_id=path.name) == [story]


def test_the_write_call_and_its_usage_reach_the_rows_and_the_messages():
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "opencode", data_files=str(WRITE), split="train")
    assert [(s["tool"], s["success"]) for s in ds[0]["tool_stats"]] == [("write", 1)]
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    messages = msgs[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2]["content"] == "Wrote file successfully."
    story = read(WRITE)
    assert [t["metrics"]["prompt_tokens"] for t in story["turns"] if t["src"] == "agent"] == [2050, 2050]
