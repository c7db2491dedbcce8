"""The chat writer for documents of other formats (``docs/formats/chat.md``, "Writer"): the record holds the
conversation as ``to_messages`` renders it, and every Storyline value it has no key for (a turn's ``ts``,
``metrics``, ``/task``…) is counted in the loss report (``formats/chat/unwritten.py``), never dropped silently.

``tests/data/chat/other_formats/full.storyline.json`` is a hand-written document with a value of every kind;
``full.record.json`` is the record it must give and ``full.losses.json`` the loss report (kind → count and
first pointer)."""

from __future__ import annotations

import logging

import orjson
from hypothesis import HealthCheck, assume, given, settings

import pchronicle_datasets as pc
from pchronicle_datasets.formats.chat.unwritten import unwritten
from pchronicle_datasets.linking import loose_results
from tests.strategies import storylines

from .common import CORPUS, DATA

OTHER = DATA / "other_formats"


def load(name: str) -> dict:
    return orjson.loads((OTHER / name).read_bytes())


def test_a_document_of_another_format_gives_its_record_and_counts_the_rest() -> None:
    doc = load("full.storyline.json")
    with pc.collect_losses() as report:
        text = pc.from_storyline("chat", [doc])
    assert orjson.loads(text) == load("full.record.json")
    assert {k: {"count": n, "first": report.first[k]} for k, n in report.counts.items()} == load("full.losses.json")


def test_what_is_not_counted_comes_back() -> None:
    doc = load("full.storyline.json")
    [back] = pc.into_storyline("chat", pc.from_storyline("chat", [doc]), document_id="planner-7.jsonl")
    assert (back["session"], back["agent"]["model"]) == (doc["session"], doc["agent"]["model"])
    assert [t["function"]["name"] for t in back["agent"]["tools"]] == ["ls", "cat"]
    assert [t["msg"] for t in back["turns"]] == [
        t["msg"] if isinstance(t["msg"], str) else "Two files: a.txt, notes.txt" for t in doc["turns"]
    ]
    assert back["turns"][2]["reason"] == "need a listing"
    assert [(c["tcid"], c["fn"], c["args"]) for c in back["turns"][2]["tool_calls"]] == [
        ("c1", "ls", {"path": "."}),
        ("c2", "cat", "notes.txt"),
    ]
    results = back["turns"][2]["observation"]["results"]
    assert [(r.get("source_call_id"), r["content"]) for r in results] == [
        ("c2", '{"ok": true, "text": "hi"}'),
        ("c1", "a.txt\nnotes.txt"),
        ("", "late"),
    ]
    assert back["unknown_fields"]["sources"]["atif"] == doc["unknown_fields"]["sources"]["atif"]


def test_a_file_reports_each_kind_once_with_the_count_of_every_document(caplog) -> None:
    doc = load("full.storyline.json")
    second = {**doc, "session": "planner-8"}
    with caplog.at_level(logging.WARNING, logger="pchronicle_datasets.losses"):
        pc.from_storyline("chat", [doc, second])
    lines = [r.getMessage() for r in caplog.records if "/turns/*/ts" in r.getMessage()]
    assert lines == ["lossy write: not in chat: /turns/*/ts (6 values) at /turns/1/ts (first in session 'planner-7')"]
    assert len(caplog.records) == len(load("full.losses.json"))


def test_a_conversation_the_record_holds_whole_reports_no_loss() -> None:
    doc = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "m-1", "model": "m-1", "tools": [{"type": "function", "function": {"name": "ls"}}]},
        "turns": [
            {"id": 1, "src": "developer", "msg": "Be brief."},
            {"id": 2, "src": "user", "msg": "ls?"},
            {
                "id": 3,
                "src": "agent",
                "msg": "",
                "reason": "list it",
                "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]},
            },
        ],
    }
    with pc.collect_losses() as report:
        pc.from_storyline("chat", [doc])
    assert not report, report.summary()
    # Nor does a chat document written back to its own format (same source).
    with pc.collect_losses() as report:
        for path in sorted(CORPUS.glob("*.json")):
            pc.from_storyline("chat", pc.into_storyline("chat", path.read_bytes(), document_id=path.name))
    assert not report, report.summary()


_HELD = {
    "root": {"schema_version", "origin", "session", "agent", "turns", "unknown_fields", "unknown_key_counts"},
    "agent": {"model", "tools"},
    "turn": {"tool_calls", "observation"},
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storylines())
def test_every_value_comes_back_or_is_counted(story) -> None:
    """Read back, each field of a generated document either has its value again or is listed by
    ``unwritten`` (which the writer counts); tool results are checked by the golden case."""
    # A result that answers no call is written as the next user message (docs/training.md), a turn of its own
    # when read back: that placement is pinned by the training tests, not this turn-by-turn comparison.
    assume(not loose_results(story))
    listed = {pointer for _, pointer in unwritten(story)}
    with pc.collect_losses():
        text = pc.from_storyline("chat", [story])
    [back] = pc.into_storyline("chat", text, document_id="gen.jsonl")
    for key in story:
        assert key in _HELD["root"] or f"/{key}" in listed, key
    assert back["session"] == story["session"]
    for key, value in story["agent"].items():
        if key not in _HELD["agent"]:
            assert back["agent"].get(key) == value or f"/agent/{key}" in listed, key
    if story["agent"].get("model"):
        assert back["agent"]["model"] == story["agent"]["model"]
    assert len(back["turns"]) == len(story["turns"])
    for t, (turn, got) in enumerate(zip(story["turns"], back["turns"], strict=True)):
        for key, value in turn.items():
            if key not in _HELD["turn"]:
                same = orjson.dumps(got.get(key)) == orjson.dumps(value)
                assert same or f"/turns/{t}/{key}" in listed, (t, key)
        if turn["src"] == "agent":
            calls, calls_back = turn.get("tool_calls") or [], got.get("tool_calls") or []
            assert len(calls_back) == len(calls)
            for c, (call, call_back) in enumerate(zip(calls, calls_back, strict=True)):
                assert (call_back["tcid"], call_back["fn"]) == (call["tcid"], call["fn"])
                assert orjson.dumps(call_back["args"]) == orjson.dumps(call["args"])
                for key in call:
                    assert key in ("tcid", "fn", "args", "result") or f"/turns/{t}/tool_calls/{c}/{key}" in listed
        elif turn.get("tool_calls"):
            assert f"/turns/{t}/tool_calls" in listed
