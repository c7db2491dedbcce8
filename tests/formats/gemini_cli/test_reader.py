"""The mapping table of docs/formats/gemini-cli.md on the test data: every message, call, result and token count
of each file (counted by ``replay``, not by the reader) is in the document, where the table says."""

from __future__ import annotations

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import detect, into_storyline
from tests.formats.gemini_cli import replay
from tests.formats.gemini_cli.replay import CHILD, FILES, LEGACY, MAIN


def read(path):
    [story] = into_storyline("gemini-cli", path.read_bytes(), document_id=str(path.relative_to(replay.DATA)))
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_detected_and_one_document_per_file(path):
    assert detect(path.read_bytes(), path.name).NAME == "gemini-cli"
    assert [s["session"] for s in into_storyline("auto", path.read_bytes(), document_id=path.name)] == [
        replay.records(path)[0]["sessionId"]
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_message_is_a_turn_in_order(path):
    story = read(path)
    shown = [m for m in replay.conversation(path) if not replay.echoes(m)]
    assert [ref[1] for ref in story["meta"]["gemini-cli"]["turns"]] == [m["id"] for m in shown]
    kinds = {
        "user": ("user", None),
        "gemini": ("agent", None),
        "info": ("system", "info"),
        "error": ("system", "error"),
    }
    # the CLI's own <session_context> (gemini-cli isIgnoredUserContent) is a user turn marked as context
    context = [m["type"] == "user" and replay.text(m).lstrip().startswith("<session_context>") for m in shown]
    assert [(t["src"], t.get("kind")) for t in story["turns"]] == [
        ("user", "context") if ctx else kinds[m["type"]] for m, ctx in zip(shown, context, strict=True)
    ]
    assert [t.get("copied", False) for t in story["turns"]] == context
    for turn, m in zip(story["turns"], shown, strict=True):
        text = m["content"] if isinstance(m["content"], str) else [p["text"] for p in m["content"] if "text" in p]
        got = turn["msg"] if isinstance(turn["msg"], str) else [p["text"] for p in turn["msg"]]
        assert got == text
        assert turn["ts"] == m["timestamp"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_call_has_its_result_and_name(path):
    story = read(path)
    calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    expected = replay.calls(path)
    assert [(c["tcid"], c["fn"], c["args"]) for c in calls] == [(c["id"], c["name"], c["args"]) for c in expected]
    assert [c["result"] for c in calls] == [c["result"][0]["functionResponse"]["response"] for c in expected]
    assert [c["response"]["status"] for c in calls] == [c["status"] for c in expected]
    stats = {s["tool"]: s for s in pc.story_to_row(story)["tool_stats"]}
    failed = [c["name"] for c in expected if c["status"] in ("error", "cancelled")]
    assert sum(s["failure"] for s in stats.values()) == len(failed)
    assert sum(s["count"] for s in stats.values()) == len(expected)
    assert sum(s["success"] + s["failure"] for s in stats.values()) == len(expected)  # every result linked


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_usage_is_counted_once_per_message(path):
    story = read(path)
    names = {"input": "prompt_tokens", "output": "completion_tokens", "cached": "cached_tokens"}
    got: dict[str, int] = {}
    for turn in story["turns"]:
        metrics = turn.get("metrics") or {}
        for key, n in {**{k: v for k, v in metrics.items() if k != "extra"}, **metrics.get("extra", {})}.items():
            got[key] = got.get(key, 0) + n
    assert got == {names.get(k, k): n for k, n in replay.tokens(path).items()}


def test_the_replay_applies_rewind_set_and_last_wins():
    story = read(MAIN)
    hints = story["meta"]["gemini-cli"]
    assert (hints["superseded"], hints["rewound"], hints["echoes"]) == (2, 2, 1)
    texts = [t["msg"] for t in story["turns"] if t["src"] == "agent"]
    assert "Done, and I also deleted the tests." not in texts  # the reply the $rewindTo abandoned
    fields = story["unknown_fields"]["sources"]["gemini-cli"]["fields"]
    rewound = [v for v in fields.values() if isinstance(v, dict) and v.get("id") == "g-0009"]
    assert len(rewound) == 1  # kept, not interleaved
    assert story["turns"][0]["msg"][0]["text"].startswith("<session_context>")  # $set.messages, then the prompt
    assert story["finished_at"] == "2026-10-01T09:01:30.000Z" and story["notes"] == "Fix add() and have it reviewed"


def test_the_image_part_is_kept_in_its_place():
    story = read(MAIN)
    fields = story["unknown_fields"]["sources"]["gemini-cli"]["fields"]
    [(_pointer, part)] = [(p, v) for p, v in fields.items() if p.endswith("/content/1")]
    assert part["inlineData"]["mimeType"] == "image/png"
    [turn] = [t for t in story["turns"] if isinstance(t["msg"], list) and t["msg"][0]["text"].startswith("Wait")]
    assert turn["msg"] == [{"type": "text", "text": "Wait, look at this screenshot first."}]


def test_thoughts_are_the_reason_exactly():
    story = read(MAIN)
    [turn] = [t for t in story["turns"] if t["msg"] == "Fixing `add` now."]
    assert turn["reason"] == (
        "**Making the edit**\n\nOne replacement in app.ts.\n\n**Recording it**\n\nA note in NOTES.md too."
    )
    assert read(LEGACY)["turns"][1]["reason"] == "**Plan**\n\nRun tests, then read the file."


def test_the_subagent_is_linked_both_ways():
    parent, child = read(MAIN), read(CHILD)
    assert parent["children"] == [child["session"]]
    assert child["parent"] == {"psid": parent["session"], "rel": "subagent"}
    [call] = [c for t in parent["turns"] for c in t.get("tool_calls", []) if c["fn"] == "codebase_investigator"]
    fields = parent["unknown_fields"]["sources"]["gemini-cli"]["fields"]
    assert child["session"] in [v for p, v in fields.items() if p.endswith("/agentId")]
    assert call["result"]["output"].startswith("Subagent codebase_investigator finished")


def test_training_text_shows_each_result_once():
    row = pc.story_to_row(read(MAIN))
    messages = pc.to_messages(row)["messages"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert len(tools) == len(replay.calls(MAIN))
    assert [m["name"] for m in tools] == [c["name"] for c in replay.calls(MAIN)]
    assert not [m for m in messages if m["role"] == "user" and not m["content"]]  # no empty echo turn
