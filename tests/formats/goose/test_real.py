"""The real Goose 1.45.0 database (tests/data/goose/README.md: WildChildForLife/lantern's Docker run): every session,
message, call, result and usage counted from its rows by hand, against the documents, ``load_dataset`` and
``to_messages``; each session written back as its export and read again."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import from_storyline, into_storyline, iter_records

DATA = Path(__file__).resolve().parents[2] / "data" / "goose"
DB = DATA / "sessions.db"
EXPORTS = sorted(DATA.glob("2026*.json"))

#: Counted by hand from the rows (tests/data/goose/README.md): per session, its messages as (user text, tool results
#: only, assistant), its calls, its results (never ran, ran and failed, ran) and its thinking parts.
HAND = {
    "20260805_1": ((1, 1, 2), 1, (1, 0, 0), 428),
    "20260805_2": ((1, 2, 2), 2, (1, 1, 0), 831),
    "20260805_3": ((1, 4, 4), 4, (0, 2, 2), 1477),
    "20260805_4": ((1, 1, 2), 1, (1, 0, 0), 336),
}


def rows() -> dict[str, list[tuple[str, list]]]:
    """Each session's messages as (role, parts), in Goose's order, straight from sqlite3."""
    con = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
    try:
        out: dict[str, list] = {sid: [] for (sid,) in con.execute("select id from sessions")}
        for sid, role, content in con.execute(
            "select session_id, role, content_json from messages order by timestamp, id"
        ):
            out[sid].append((role, json.loads(content)))
        return out
    finally:
        con.close()


@pytest.fixture(scope="module")
def stories() -> dict[str, dict]:
    return {s["session"]: s for s in into_storyline("goose", DB.read_bytes(), document_id="sessions.db")}


def test_the_hand_counts_are_the_rows():
    got = {}
    for sid, messages in rows().items():
        kinds = Counter()
        results = Counter()
        for role, parts in messages:
            types = [p["type"] for p in parts]
            kinds["assistant" if role == "assistant" else "results" if set(types) == {"toolResponse"} else "user"] += 1
            kinds["calls"] += types.count("toolRequest")
            kinds["thinking"] += types.count("thinking")
            for p in parts:
                if p["type"] == "toolResponse":
                    tr = p["toolResult"]
                    results["never" if tr["status"] == "error" else "failed" if tr["value"]["isError"] else "ran"] += 1
        got[sid] = (
            (kinds["user"], kinds["results"], kinds["assistant"]),
            kinds["calls"],
            (results["never"], results["failed"], results["ran"]),
            kinds["thinking"],
        )
    assert got == HAND


def test_every_session_is_a_document_and_every_message_arrives(stories):
    assert sorted(stories) == sorted(HAND)
    for sid, ((users, _, answers), ncalls, (never, failed, ran), _) in HAND.items():
        story = stories[sid]
        assert [t["src"] for t in story["turns"]].count("user") == users
        assert [t["src"] for t in story["turns"]].count("agent") == answers
        calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
        assert len(calls) == ncalls and all("result" in c for c in calls)
        statuses = Counter(c["response"]["status"] for c in calls)
        assert (statuses["error"], statuses["success"]) == (never + failed, ran)
        assert story["agent"]["model"] == "qwen3:0.6b"
        assert story["task"]["env"]["state"]["cwd"] == "/work"
        assert story["started_at"].endswith("Z")


def test_reasoning_streamed_one_part_per_token_is_one_text(stories):
    """docs/formats/goose.md, "Reasoning streamed one part per token": a message's thinking parts joined with
    nothing between them, exactly."""
    for sid, messages in rows().items():
        answers = [t for t in stories[sid]["turns"] if t["src"] == "agent"]
        assistant = [parts for role, parts in messages if role == "assistant"]
        assert [t.get("reason", "") for t in answers] == [
            "".join(p["thinking"] for p in parts if p["type"] == "thinking") for parts in assistant
        ]
    first = stories["20260805_1"]["turns"][1]["reason"]
    assert first.startswith("Okay, the user is asking what average_item_price does.")  # 163 parts, no line breaks added
    assert "\n\n" not in first.split("\n\nNow")[0]


def test_two_levels_of_tool_failure(stories):
    """A call that never ran (``toolResult.status: "error"``) and one that ran and failed (``isError: true``):
    both failures for tool_stats; the first with Goose's error, the second with the tool's own text."""
    never = stories["20260805_2"]["turns"][1]["tool_calls"][0]
    failed = stories["20260805_2"]["turns"][2]["tool_calls"][0]
    ran = stories["20260805_3"]["turns"][2]["tool_calls"][0]
    assert never["result"] == {"error": never["result"]["error"]}
    assert never["result"]["error"].startswith("-32002: Tool 'read' not found")
    assert never["response"] == failed["response"] == {"status": "error"}
    assert failed["result"] == "Error: failed to read image file: No such file or directory (os error 2)"
    assert ran["response"] == {"status": "success"} and ran["result"].startswith("Extensions available to enable:")
    ds = _load(DB)
    stats = [entry for per_session in ds["tool_stats"] for entry in per_session]
    assert (sum(e["failure"] for e in stats), sum(e["success"] for e in stats)) == (6, 2)


def test_token_columns_agree_with_the_answers_usage(stories):
    """docs/formats/goose.md, "Token usage": each answer's usage is its turn's metrics; the session's accumulated
    columns (residual) are their sums, and the usage_ledger (residual) has one row per answer with usage."""
    for story in stories.values():
        fields = story["unknown_fields"]["sources"]["goose"]["fields"]
        metrics = [t["metrics"] for t in story["turns"] if "metrics" in t]
        assert fields["/accumulated_input_tokens"] == sum(m["prompt_tokens"] for m in metrics)
        assert fields["/accumulated_output_tokens"] == sum(m["completion_tokens"] for m in metrics)
        assert fields["/accumulated_total_tokens"] == sum(m["extra"]["total_tokens"] for m in metrics)
        ledger = fields["/usage_ledger"]
        assert [(r["input_tokens"], r["output_tokens"]) for r in ledger] == [
            (m["prompt_tokens"], m["completion_tokens"]) for m in metrics
        ]
        assert fields["/accumulated_cost"] is None  # never priced (a local provider), not free
    answer = stories["20260805_1"]["turns"][1]
    assert (answer["latency_ms"], answer["ttft_ms"]) == (45854, 32932)


def test_the_repeated_reasoning_is_read_as_goose_stored_it(stories):
    turns = stories["20260805_3"]["turns"]
    assert turns[2]["reason"] == turns[3]["reason"] and "metrics" in turns[2] and "metrics" not in turns[3]


def _load(path: Path, fmt: str = "goose"):
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    return load_dataset("pchronicle", fmt, data_files=str(path), split="train")


def test_load_dataset_and_to_messages_give_every_call_and_result():
    ds = _load(DB)
    assert sorted(ds["session"]) == sorted(HAND) and sorted(ds["num_tool_calls"]) == [1, 1, 2, 4]
    chat = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    for sid, row in zip(ds["session"], chat, strict=True):
        (users, _, answers), ncalls, _, _ = HAND[sid]
        roles = Counter(m["role"] for m in row["messages"])
        assert (roles["user"], roles["assistant"], roles["tool"]) == (users, answers, ncalls)
        calls = [c["id"] for m in row["messages"] for c in m.get("tool_calls") or []]
        assert [m["tool_call_id"] for m in row["messages"] if m["role"] == "tool"] == calls


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_the_exports_load_as_auto_and_give_the_databases_documents(path, stories):
    ds = _load(path, "auto")
    [story] = [pc.row_to_story(r) for r in ds]
    expected = stories[path.stem]
    assert story["turns"] == expected["turns"] and story["meta"] == expected["meta"]


@pytest.mark.parametrize("sid", sorted(HAND))
def test_each_session_is_written_back_as_its_export_and_read_again(sid, stories):
    [record] = [r for r in iter_records("goose", DB.read_bytes(), "sessions.db") if r.value["id"] == sid]
    with pc.collect_losses() as losses:
        out = from_storyline("goose", [stories[sid]])
    assert not losses
    assert json.loads(out) == record.value  # the export shape the database reader assembled
    assert into_storyline("auto", out, document_id="sessions.db") == [stories[sid]]
    committed = DATA / f"{sid}.json"
    if committed.exists():
        assert json.loads(committed.read_text(encoding="utf-8")) == json.loads(out)


def test_the_cli_reads_the_database_by_its_path(capsys):
    assert main(["inspect", "--from", "goose", str(DB)]) == 0
    out = capsys.readouterr().out
    assert "documents: 4   bad records: 0" in out and "tool calls: 8" in out
    assert main(["inspect", "--losses", "--from", "goose", str(DB)]) == 0
    assert "4 document(s), 0 bad record(s)" in capsys.readouterr().out
