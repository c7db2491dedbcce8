"""What the model saw in a Goose session: ``metadata.userVisible`` / ``agentVisible`` (docs/formats/goose.md "Hidden
messages"). The real database and exports hold both flags true on every message (tests/data/goose); the session
below is modelled on Goose's compaction (block/goose ``context_mgmt/mod.rs`` ``compact_messages``: the history made
agent-invisible, the summary a ``user`` message and the continuation an ``assistant`` message, both agent-only, the
last question not yet answered made invisible and sent again after them) and on its ``user_only`` notices."""

from __future__ import annotations

import json
import os
import sqlite3

import pchronicle_datasets as pc
from pchronicle_datasets.formats import into_storyline
from tests.formats.goose.test_goose import export, message, request, response, roundtrip, text

USER_ONLY = {"userVisible": True, "agentVisible": False}
AGENT_ONLY = {"userVisible": False, "agentVisible": True}
INVISIBLE = {"userVisible": False, "agentVisible": False}
SUMMARY = "The user asked for the files; the agent listed a.py."
CONTINUATION = "Your context was compacted. The previous message contains a summary of the conversation so far."


def compacted() -> dict:
    """A session compacted once, as ``compact_messages`` leaves it, then a notice Goose showed only its user."""
    return export(
        [
            message("user", [text("list the files")], 1, metadata=USER_ONLY),
            message("assistant", [request("c1")], 2, metadata=USER_ONLY),
            message("user", [response("c1")], 3, metadata=USER_ONLY),
            message("assistant", [text("a.py")], 4, metadata=USER_ONLY),
            message("user", [text("and the tests?")], 5, metadata=INVISIBLE),  # not yet answered: sent again below
            message("user", [text(SUMMARY)], 6, metadata=AGENT_ONLY),
            message("assistant", [text(CONTINUATION)], 7, metadata=AGENT_ONLY),
            message("user", [text("and the tests?")], 8),  # the fresh copy the model answers
            message("assistant", [text("none")], 9),
            message("user", [text("Context limit reached: compacting.")], 10, metadata=USER_ONLY),  # never sent
        ]
    )


def seen(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages]


def test_a_compacted_session_is_read_as_the_model_saw_it():
    story = roundtrip(compacted())  # the same-source writer gives the export back, flags and hidden messages
    turns = story["turns"]
    # the history the model saw before the compaction stays turns; the unanswered original and the notice do not
    assert [t.get("msg", [{}])[0].get("text") if t.get("msg") else None for t in turns] == [
        "list the files",
        None,
        "a.py",
        SUMMARY,
        CONTINUATION,
        "and the tests?",
        "none",
    ]
    assert turns[1]["tool_calls"][0]["result"] == "a.py"
    assert [(t["src"], t.get("kind"), t.get("copied"), t.get("extra")) for t in turns[3:5]] == [
        ("user", "context", True, {"compaction": "summary"}),
        ("agent", "context", True, {"compaction": "continuation"}),
    ]
    assert not any(t.get("copied") for t in turns[:3] + turns[5:])
    fields = story["unknown_fields"]["sources"]["goose"]["fields"]
    assert fields["/conversation/4"]["metadata"] == INVISIBLE
    assert fields["/conversation/9"]["content"] == [text("Context limit reached: compacting.")]
    assert "compaction" in pc.flags(story)


def test_no_training_output_renders_what_the_model_never_saw():
    story = roundtrip(compacted())
    out = seen(pc.to_messages(story)["messages"])
    assert out.count("and the tests?") == 1 and "Context limit reached: compacting." not in out
    assert SUMMARY in out and CONTINUATION in out  # the model saw them: kept, as other formats' compactions
    assert SUMMARY not in seen(pc.to_messages(story, drop_copied=True)["messages"])


def test_an_agent_only_message_without_a_compaction_is_context():
    story = roundtrip(
        export(
            [
                message("user", [text("hi")], 1),
                message("user", [text("<info-msg>It is 09:00.</info-msg>")], 2, metadata=AGENT_ONLY),
                message("assistant", [text("hello")], 3),
            ]
        )
    )
    injected = story["turns"][1]
    assert (injected["kind"], injected["copied"], injected["extra"]) == (
        "context",
        True,
        {"goose": {"context": "agent_only"}},
    )
    assert "compaction" not in pc.flags(story)


def test_a_later_compaction_keeps_an_earlier_summary_a_summary():
    # compact_messages marks every earlier message agent-invisible: the first summary becomes invisible
    first = [
        message("user", [text("s1")], 1, metadata=INVISIBLE),
        message("assistant", [text("c1")], 2, metadata=INVISIBLE),
    ]
    rest = [
        message("user", [text("more")], 3, metadata=USER_ONLY),
        message("assistant", [text("done")], 4, metadata=USER_ONLY),
        message("user", [text("s2")], 5, metadata=AGENT_ONLY),
        message("assistant", [text("c2")], 6, metadata=AGENT_ONLY),
        message("user", [text("next")], 7),
        message("assistant", [text("ok")], 8),
    ]
    story = roundtrip(export(first + rest))
    assert [t.get("extra") for t in story["turns"]] == [
        {"compaction": "summary"},
        {"compaction": "continuation"},
        None,
        None,
        {"compaction": "summary"},
        {"compaction": "continuation"},
        None,
        None,
    ]


def test_a_database_of_a_compacted_session_through_the_builder(tmp_path):
    from tests.formats.goose.test_goose import SCHEMA

    db = tmp_path / "data" / "sessions.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    con.execute(
        "insert into sessions (id, working_dir, created_at) values ('20260805_1', '/work', '2026-08-05 21:19:21')"
    )
    for m, msg in enumerate(compacted()["conversation"]):
        con.execute(
            "insert into messages (message_id, session_id, role, content_json, created_timestamp, timestamp,"
            " metadata_json) values (?, '20260805_1', ?, ?, ?, ?, ?)",
            (
                msg["id"],
                msg["role"],
                json.dumps(msg["content"]),
                msg["created"],
                f"2026-08-05 21:20:{m:02d}",
                json.dumps(msg.get("metadata")) if "metadata" in msg else None,
            ),
        )
    con.commit()
    con.close()
    [story] = into_storyline("goose", db.read_bytes(), document_id="sessions.db")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "auto", data_dir=str(db.parent), split="train", cache_dir=str(tmp_path / "c"))
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    [row] = msgs
    assert seen(row["messages"]) == seen(pc.to_messages(story)["messages"])
    assert seen(row["messages"]).count("and the tests?") == 1
    assert "Context limit reached: compacting." not in seen(row["messages"])
