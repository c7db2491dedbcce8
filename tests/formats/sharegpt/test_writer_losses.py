"""What a fresh ShareGPT record cannot hold of a document is counted (``not in sharegpt: <pointer>``), as the
chat and layout writers count theirs; a document read from ShareGPT comes back whole and counts nothing.

Before, ``convert --to sharegpt`` of a Claude Code session left out every turn's time, model and usage, the
session id and the agent's identity without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pchronicle_datasets as pc
from pchronicle_datasets.losses import collect_losses

DATA = Path(__file__).resolve().parents[2] / "data"


def _kinds(stories: list[dict], **options) -> dict[str, int]:
    with collect_losses(propagate=False) as report:
        pc.from_storyline("sharegpt", stories, **options)
    return dict(report.counts)


def test_a_claude_code_session_counts_what_the_record_leaves_out():
    path = next((DATA / "claude_code" / "entire_2.1.36_compact").rglob("*.jsonl"))
    stories = pc.into_storyline("claude-code", path.read_bytes(), document_id=path.name)
    kinds = _kinds(stories)
    turns = stories[0]["turns"]
    for field in ("ts", "metrics", "model", "kind"):
        want = sum(field in t for t in turns)
        assert want and kinds[f"not in sharegpt: /turns/*/{field}"] == want, field
    for pointer in ("/session", "/agent/id", "/agent/name"):
        assert kinds[f"not in sharegpt: {pointer}"] == 1
    # Written: a turn's place, its text, reasoning and calls; the record's model; a call's id (in its response).
    assert not [k for k in kinds if k.startswith("not in sharegpt: /turns/*/") and k.split("/")[-1] in
                ("id", "src", "msg", "reason", "tool_calls", "observation")]  # fmt: skip
    assert "not in sharegpt: /agent/model" not in kinds and "not in sharegpt: /turns/*/tool_calls/*/tcid" not in kinds


def test_the_record_keys_it_writes_are_not_counted_and_the_others_are():
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", "model": "m"},
             "finished_at": "2026-03-01T10:00:00Z", "task": {"result": {"completed": True, "status": "ok"}},
             "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "yo"}]}  # fmt: skip
    kinds = _kinds([story])
    assert set(kinds) == {
        "not in sharegpt: /session",
        "not in sharegpt: /agent/id",
        "not in sharegpt: /task/result/status",
    }
    numeric = {**story, "finished_at": 1753872000}  # a time the record's string timestamp does not take
    assert "not in sharegpt: /finished_at" in _kinds([numeric])


def test_a_document_read_from_sharegpt_counts_nothing():
    text = (DATA / "sharegpt" / "cymru_trajectory_samples.jsonl").read_text(encoding="utf-8")
    stories = pc.into_storyline("sharegpt", text, document_id="cymru_trajectory_samples.jsonl")
    assert _kinds(stories) == {}
    back = pc.from_storyline("sharegpt", stories)
    assert [json.loads(line) for line in back.splitlines()] == [json.loads(line) for line in text.splitlines()]


def test_other_formats_residual_is_counted_unless_carried():
    path = next((DATA / "claude_code" / "entire_2.1.36_compact").rglob("*.jsonl"))
    stories = pc.into_storyline("claude-code", path.read_bytes(), document_id=path.name)
    assert stories[0].get("unknown_fields")
    assert "not in sharegpt: /unknown_fields" in _kinds(stories)
    assert "not in sharegpt: /unknown_fields" not in _kinds(stories, carry_residual=True)
