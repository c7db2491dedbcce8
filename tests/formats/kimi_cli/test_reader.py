"""Reading Kimi CLI contexts (docs/formats/kimi-cli.md): the files counted by hand, detection, messages, calls and
results, and the decisions where the source is silent."""

from __future__ import annotations

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import NoConversationError
from pchronicle_datasets.formats import detect, into_storyline, iter_records
from pchronicle_datasets.linking import tool_outcomes
from pchronicle_datasets.sidecars import index_files
from tests.formats.kimi_cli.cases import (
    BY_HAND,
    FILES,
    SYSTEM,
    THIRD_PARTY,
    WORK_DIR_HASH,
    call,
    document_id,
    key,
    lines,
    raw_records,
    tool,
)


def read(text: str, doc: str = "h/s1/context.jsonl") -> dict:
    [story] = into_storyline("kimi-cli", text, document_id=doc)
    return story


@pytest.mark.parametrize("path", FILES, ids=key)
def test_real_files_counted_by_hand(path):
    n, prompts, users, agents, results, checkpoints, usages, calls, thinks, errors = BY_HAND[key(path)]
    raw = raw_records(path)
    assert len(raw) == n
    roles = [r["role"] for r in raw]
    assert [roles.count(r) for r in ("_system_prompt", "user", "assistant", "tool", "_checkpoint", "_usage")] == [
        prompts,
        users,
        agents,
        results,
        checkpoints,
        usages,
    ]
    [story] = into_storyline("auto", path.read_bytes(), document_id=document_id(path))
    pc.validate(story)
    assert story["origin"]["format"] == "kimi-cli"
    turns = story["turns"]
    assert [t["src"] for t in turns].count("system") == prompts and turns[0]["src"] == "system"
    assert [t["src"] for t in turns].count("user") == users
    assert [t["src"] for t in turns].count("agent") == agents
    got_calls = [c for t in turns for c in t.get("tool_calls") or ()]
    assert len(got_calls) == calls
    outcomes = list(tool_outcomes(story))
    assert len(outcomes) == results  # every result linked to its call
    assert sum(failed for _fn, _content, failed, _call in outcomes) == errors
    assert sum("reason" in t for t in turns) == thinks
    hints = story["meta"]["kimi-cli"]
    assert (hints["records"], hints["checkpoint"], hints["usage"]) == (n, checkpoints, usages)
    assert "unread" not in hints and "orphan_results" not in hints
    assert story["agent"] == {"id": "kimi-cli", "name": "Kimi CLI"}  # no model: the context does not name it
    assert story["extra"]["kimi_cli"]["work_dir_hash"] == WORK_DIR_HASH


def test_a_turn_of_the_first_session():
    path = next(p for p in FILES if key(p).endswith("7884d440-3c18-45c4-af21-a614fd3e0d2d/context.jsonl"))
    story = read(path.read_text(encoding="utf-8"), document_id(path))
    assert story["session"] == "7884d440-3c18-45c4-af21-a614fd3e0d2d"
    turn = story["turns"][3]  # think + text + two parallel calls
    assert turn["reason"].startswith("It prints one line.")
    assert turn["msg"].startswith("`hello.py` prints")
    assert [c["fn"] for c in turn["tool_calls"]] == ["WriteFile", "Shell"]
    assert turn["tool_calls"][1]["args"] == {"command": "ls tests"}
    results = turn["observation"]["results"]
    assert [r["source_call_id"] for r in results] == [c["tcid"] for c in turn["tool_calls"]]
    assert results[1]["content"][0]["text"] == "<system>ERROR: Command failed with exit code: 2.</system>"
    assert [r.get("is_error") for r in results] == [None, True]


@pytest.mark.parametrize("path", FILES + THIRD_PARTY, ids=lambda p: p.name + str(len(p.parts)))
def test_auto_detects_kimi_cli(path):
    assert detect(path.read_bytes()).NAME == "kimi-cli"


def test_chat_messages_without_bookkeeping_stay_other_formats():
    # a bare message list, one message per line, is no Kimi CLI context: no format claims it as one
    assert detect(b'[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]').NAME == "chat"
    # the first line is a plain message, the second a checkpoint: Kimi CLI (a context before 2026's system prompt)
    text = lines(
        {"role": "user", "content": "hi"}, {"role": "_checkpoint", "id": 0}, {"role": "assistant", "content": "hello"}
    )
    assert detect(text.encode()).NAME == "kimi-cli"


def test_kimi_codes_journal_is_not_read_as_kimi_cli():
    # Kimi Code (the successor) keeps agents/<agent>/wire.jsonl journals: another format (kimi-code), and not left out
    # as Kimi CLI's wire.jsonl (which lies in sessions/<md5>/<session>/)
    journal = lines(
        {"type": "metadata", "protocol_version": "1.4", "created_at": 1784950509920},
        {"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    )
    assert detect(journal.encode(), "wire.jsonl").NAME == "kimi-code"
    kimi_code = "home/.kimi-code/sessions/wd_p_ac3bb318f98e/session_1/agents/main/wire.jsonl"
    assert index_files([kimi_code, "home/.kimi/sessions/0a1b/s1/wire.jsonl"]).keys() == {1}


def test_usage_and_checkpoints_stay_residual():
    text = lines(
        SYSTEM,
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "go"},
        {"role": "_usage", "token_count": 10412},
        {"role": "assistant", "content": "done"},
        {"role": "_usage", "token_count": 10420},
    )
    story = read(text)
    assert [t["src"] for t in story["turns"]] == ["system", "user", "agent"]
    assert all("metrics" not in t for t in story["turns"])
    fields = story["unknown_fields"]["sources"]["kimi-cli"]["fields"]
    assert fields["/3"] == {"role": "_usage", "token_count": 10412} and fields["/1"] == {"role": "_checkpoint", "id": 0}


_USER_HI = ({"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"})


def test_the_clis_own_user_messages_are_context_turns():
    compaction = [
        {
            "type": "text",
            "text": "<system>Previous context has been compacted. Here is the compaction output:</system>",
        },
        {"type": "text", "text": "## Current state\n…"},
    ]
    text = lines(
        SYSTEM,
        {"role": "user", "content": compaction},
        {"role": "user", "content": "<system>CHECKPOINT 1</system>"},
        {"role": "user", "content": "<system-reminder>\nplan mode\n</system-reminder>"},
        {"role": "user", "content": "fix the <system> tag parser"},
        {"role": "assistant", "content": "ok"},
    )
    turns = read(text)["turns"]
    assert [t.get("extra", {}).get("kimi_cli", {}).get("context") for t in turns[1:5]] == [
        "compaction",
        "system",
        "system-reminder",
        None,
    ]
    assert turns[1]["kind"] == "context" and turns[1]["copied"] is True
    assert turns[1]["extra"]["compaction"] == "summary"
    assert "compaction" in pc.flags(read(text)) and "compaction" not in pc.flags(read(lines(SYSTEM, *_USER_HI)))
    assert turns[1]["msg"] == compaction  # both texts, as written
    assert "kind" not in turns[4]


def test_think_parts_images_and_encrypted_signatures():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "id": None}}
    text = lines(
        {"role": "user", "content": [{"type": "text", "text": "what is this?"}, image]},
        {
            "role": "assistant",
            "content": [
                {"type": "think", "think": "a", "encrypted": "sig-1"},
                {"type": "think", "think": "b", "encrypted": None},
                {"type": "text", "text": "a square"},
            ],
        },
    )
    story = read(text)
    user, agent = story["turns"]
    assert user["msg"] == [{"type": "text", "text": "what is this?"}, image]  # the image kept in the message
    assert agent["reason"] == "a\n\nb" and agent["msg"] == "a square"
    fields = story["unknown_fields"]["sources"]["kimi-cli"]["fields"]
    assert fields["/1/content/0"]["encrypted"] == "sig-1"  # several think parts: kept whole


def test_results_link_by_id_and_a_result_of_no_call_stays_residual():
    text = lines(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [], "tool_calls": [call("c1", command="ls"), call("c1", command="pwd")]},
        tool("c1", "first"),
        tool("c1", "second"),
        tool("nope", "stray"),
    )
    story = read(text)
    calls = story["turns"][1]["tool_calls"]
    assert [c["tcid"] for c in calls] == ["c1", "c1#2"]
    assert story["meta"]["source_call_ids"] == {"c1#2": "c1"}
    # the latest call of an id not yet answered takes the result
    assert [(r["source_call_id"], r["content"]) for r in story["turns"][1]["observation"]["results"]] == [
        ("c1#2", "first"),
        ("c1", "second"),
    ]
    assert story["meta"]["kimi-cli"]["orphan_results"] == 1
    assert story["turns"][1]["msg"] is None


def test_only_bookkeeping_is_no_conversation():
    text = lines(SYSTEM, {"role": "_checkpoint", "id": 0})
    [record] = list(iter_records("kimi-cli", text, "h/s1/context.jsonl"))
    assert isinstance(record.error, NoConversationError)


def test_messages_without_content_are_refused():
    # their content would all be residual: refused, naming the first (not a file of bookkeeping)
    text = lines(SYSTEM, {"role": "user", "text": "hi"}, tool("c9", "stray"))
    [record] = list(iter_records("kimi-cli", text, "h/s1/context.jsonl"))
    assert not isinstance(record.error, NoConversationError)
    assert record.error.pointer == "/1" and "no user or assistant message" in str(record.error)


def test_a_line_that_is_not_json_is_its_own_error():
    text = (
        lines(SYSTEM, {"role": "user", "content": "hi"}) + "{not json\n" + lines({"role": "assistant", "content": "yo"})
    )
    records = list(iter_records("kimi-cli", text, "h/s1/context.jsonl"))
    assert [r.error is not None for r in records] == [True, False]
    assert [t["msg"] for t in records[1].story["turns"]] == ["You are Kimi CLI.", "hi", "yo"]


def test_a_third_party_fixture_reads():
    # claude-code-history-viewer's hand-written context: a checkpoint id "cp-1", a token_count object
    path = next(p for p in THIRD_PARTY if p.parent.name == "session-1")
    story = read(path.read_text(encoding="utf-8"), "project-hash/session-1/context.jsonl")
    assert story["session"] == "session-1"
    assert [t["src"] for t in story["turns"]] == ["system", "user", "agent", "agent"]
    fields = story["unknown_fields"]["sources"]["kimi-cli"]["fields"]
    assert fields["/1"] == {"role": "_checkpoint", "id": "cp-1"}
    assert fields["/3"] == {"role": "_usage", "token_count": {"input_tokens": 12, "output_tokens": 0}}


@pytest.mark.parametrize(
    ("doc", "session", "parent", "extra"),
    [
        ("h/s1/context.jsonl", "s1", None, {"work_dir_hash": "h"}),
        ("h/s1/context_3.jsonl", "s1/context_3", None, {"work_dir_hash": "h", "rotated": 3}),
        (
            "h/s1/subagents/a1/context.jsonl",
            "s1/subagents/a1",
            {"psid": "s1", "rel": "subagent"},
            {"work_dir_hash": "h"},
        ),
        ("h/s0.jsonl", "s0", None, {"work_dir_hash": "h"}),
        ("context.jsonl", "context.jsonl", None, None),
        (None, "kimi-cli", None, None),
    ],
)
def test_the_path_gives_the_session(doc, session, parent, extra):
    [story] = into_storyline("kimi-cli", lines({"role": "user", "content": "hi"}), document_id=doc)
    assert story["session"] == session
    assert story.get("parent") == parent
    assert story.get("extra", {}).get("kimi_cli") == extra
