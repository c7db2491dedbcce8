"""A message the user types while the agent works (Claude Code 2.1.x): no ``user`` record but an ``attachment``
record ``{"type": "queued_command", "commandMode": "prompt", "origin": {"kind": "human"}, "prompt": …}``, shown to the
model mid-turn inside a system reminder. On the conversation it is a user turn at its place in the file (``extra.
claude_code.queued``), in the training text between the tool result and the next answer; a task notification
queued the same way, and one typed on an abandoned branch, stay residual. The session file is written in the shape
of a real 2.1.280 session's lines (tests/data/claude_code/README.md); it is written back as equal JSON lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import claude_code

from .test_reader import decode, rec

DATA = Path(__file__).resolve().parents[2] / "data" / "claude_code" / "queued_2.1.280"
QUEUED = DATA / "7d3c1a52-9e4b-4f0e-b1a8-2c6f0d9e5a31.written.jsonl"
#: The keys of the real line (MaxWolf-01/agents, mx/skills/session-page/fixtures/transcript.jsonl at 65a1a3d: the
#: attachment of 2026-09-23T00:29:24.937Z, Claude Code 2.1.280) the written file copies.
REAL_KEYS = [
    "parentUuid", "isSidechain", "attachment", "type", "uuid", "timestamp", "rendered", "session_id", "userType",
    "entrypoint", "cwd", "sessionId", "version", "gitBranch",
]  # fmt: skip
REAL_ATTACHMENT_KEYS = ["type", "prompt", "source_uuid", "commandMode", "origin", "timestamp", "humanTurn"]


def src_lines() -> list[dict]:
    return [json.loads(x) for x in QUEUED.read_bytes().splitlines() if x.strip()]


def story() -> dict:
    (doc,) = claude_code.decode(QUEUED.read_bytes(), QUEUED.name)
    pc.validate(doc)
    return doc


def test_the_written_file_has_the_real_lines_keys():
    src = src_lines()
    human = [line for line in src if line.get("attachment", {}).get("commandMode") == "prompt"]
    assert len(human) == 2 and all(list(line) == REAL_KEYS for line in human)
    assert all(list(line["attachment"]) == REAL_ATTACHMENT_KEYS for line in human)
    assert all(line["version"] == "2.1.280" for line in src if "version" in line)


def test_a_message_typed_mid_turn_is_a_user_turn_at_its_place():
    src, doc = src_lines(), story()
    (i,) = [i for i, line in enumerate(src) if line.get("attachment", {}).get("prompt") == "and log each retry, please"]
    notes = [line.get("attachment", {}) for line in src]
    (note,) = [a["prompt"] for a in notes if a.get("commandMode") == "task-notification"]
    # where Claude Code wrote it: after the Grep result, the parent of the next response
    assert src[i]["parentUuid"] == src[i - 1]["uuid"] and src[i + 1]["parentUuid"] == src[i]["uuid"]
    assert [(t["src"], t["msg"]) for t in doc["turns"]] == [
        ("user", "The upload retries never stop. Can you make them give up after three tries?"),
        ("agent", "Looking at the retry loop first."),
        ("user", "and log each retry, please"),
        ("agent", "Three tries, each one logged."),
        ("user", note),  # the task notification queued mid-turn: a context turn
        ("agent", "Done: the upload gives up after three tries and logs each one."),
        ("user", "Thanks, that is all for now."),
        ("agent", "You're welcome."),
    ]  # fmt: skip
    queued = doc["turns"][2]
    assert queued == {"id": 3, "src": "user", "msg": "and log each retry, please", "ts": src[i]["timestamp"],
                      "extra": {"claude_code": {"queued": True}}}  # fmt: skip
    assert "copied" not in queued  # the user's own words: in the training text
    # every other key of the record is residual, the system reminder the model saw among them
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"]
    assert (
        kept[f"/{i}/rendered"] == src[i]["rendered"]
        and "The user sent a new message" in kept[f"/{i}/rendered"][0]["content"]
    )
    for key in ("type", "source_uuid", "commandMode", "origin", "timestamp", "humanTurn"):
        assert kept[f"/{i}/attachment/{key}"] == src[i]["attachment"][key]
    assert f"/{i}/attachment/prompt" not in kept and f"/{i}" not in kept
    assert doc["meta"]["claude-code"]["lines"][i]["q"]["v"] == [["/prompt", "/turns/2/msg", 0, 26]]


def test_the_words_are_in_the_turns_once():
    """The queue's bookkeeping repeats the words (``enqueue``, ``remove``): residual, not turns; no ``user`` record
    holds them (in the real session neither)."""
    src, doc = src_lines(), story()
    words = "and log each retry, please"
    assert [line["type"] for line in src if words in json.dumps(line)] == [
        "queue-operation",
        "queue-operation",
        "attachment",
    ]
    assert [t["msg"] for t in doc["turns"]].count(words) == 1
    assert sum(words in t["msg"] for t in doc["turns"]) == 1


def test_a_task_notification_is_a_context_turn_and_a_message_on_an_abandoned_branch_stays_residual():
    # A background task's end queued the same way is shown to the model as the user's words are, and is in no user
    # record either (as the real session's absorbed notifications): a context turn, left out by drop_copied.
    src, doc = src_lines(), story()
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"]
    (note,) = [i for i, line in enumerate(src) if line.get("attachment", {}).get("commandMode") == "task-notification"]
    (gone,) = [i for i, line in enumerate(src) if line.get("attachment", {}).get("prompt") == "skip the tests for it"]
    assert kept[f"/{gone}"]["attachment"] == src[gone]["attachment"]  # the whole record
    (turn,) = [t for t in doc["turns"] if t.get("copied")]
    assert turn["msg"] == src[note]["attachment"]["prompt"] and turn["kind"] == "context"
    assert turn["extra"] == {"claude_code": {"queued": True, "context": "task-notification"}}
    assert not any("skip the tests" in t["msg"] for t in doc["turns"])
    # the rewind: the second question, its call and its result are abandoned; the attachment hanging from them too
    assert doc["meta"]["claude-code"]["abandoned"] == [gone - 5, gone - 4, gone - 1]
    assert doc["meta"]["claude-code"]["counts"]["attachment"] == 3


def test_to_messages_puts_the_message_between_the_tool_result_and_the_next_answer():
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "claude-code", data_files=str(QUEUED), split="train")
    out = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    (messages,) = out["messages"]
    assert [(m["role"], m["content"]) for m in messages[:6]] == [
        ("user", "The upload retries never stop. Can you make them give up after three tries?"),
        ("assistant", "Looking at the retry loop first."),
        ("tool", "src/upload.py:41:    while True:  # retry"),
        ("user", "and log each retry, please"),
        ("assistant", "Three tries, each one logged."),
        ("tool", "The file /srv/garden-app/src/upload.py has been updated."),
    ]
    assert [m["role"] for m in messages[6:]] == ["user", "assistant", "user", "assistant"]  # the task notification
    out = ds.map(
        pc.to_messages, batched=True, fn_kwargs={"drop_copied": True}, remove_columns=ds.column_names,
        features=pc.MESSAGES_FEATURES,
    )  # fmt: skip
    assert [m["role"] for m in out["messages"][0][6:]] == ["assistant", "user", "assistant"]


def test_the_file_is_written_back_as_equal_json_lines():
    doc = story()
    written = claude_code.encode([doc])
    assert [json.loads(x) for x in written.splitlines()] == src_lines()
    assert claude_code.decode(written, QUEUED.name) == [doc]


def _queued(uid: str, parent: str | None, prompt, **attachment) -> dict:
    attachment = {"type": "queued_command", "prompt": prompt, "commandMode": "prompt", **attachment}
    return {"type": "attachment", "uuid": uid, "parentUuid": parent, "sessionId": "s1", "attachment": attachment}


CALL = [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]
RESULT = [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]


@pytest.mark.parametrize(
    ("attachment", "turn", "context"),
    [
        ({"origin": {"kind": "human"}}, True, None),
        ({}, True, None),  # older lines have no origin
        ({"origin": {"kind": "peer", "from": "another-session"}}, True, "peer"),  # another session's message
        ({"origin": "human"}, False, None),
        ({"commandMode": "task-notification"}, True, "task-notification"),
        ({"prompt": [{"type": "text", "text": "also this"}]}, True, None),  # a prompt of blocks (2.1.2xx)
        ({"prompt": [{"type": "nothing-known"}]}, False, None),  # blocks no reader maps: kept whole, not a turn
        ({"prompt": 7}, False, None),
    ],
)
def test_a_human_prompt_of_text_is_a_user_turn_and_another_a_context_turn(attachment, turn, context):
    prompt = attachment.pop("prompt", "also this")
    doc = decode([
        rec("user", "u1", None, "list"),
        rec("assistant", "a1", "u1", CALL),
        rec("user", "r1", "a1", RESULT),
        _queued("q1", "r1", prompt, **attachment),
        rec("assistant", "a2", "q1", [{"type": "text", "text": "done"}]),
    ])  # fmt: skip
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"]
    expected = ["user", "agent", "user", "agent"] if turn else ["user", "agent", "agent"]
    assert [t["src"] for t in doc["turns"]] == expected
    assert ("/3" in kept) is not turn
    if turn:
        assert doc["turns"][2].get("copied", False) is (context is not None)
        assert doc["turns"][2]["extra"]["claude_code"].get("context") == context


def test_a_message_typed_as_the_session_ended_hangs_from_the_conversation():
    """The last record of the file (no response after it): hanging from the result, it is still a turn; one whose
    parent is not in the file is not on the conversation."""
    doc = decode([
        rec("user", "u1", None, "list"),
        rec("assistant", "a1", "u1", CALL),
        rec("user", "r1", "a1", RESULT),
        {"type": "progress", "uuid": "p1", "parentUuid": "r1", "sessionId": "s1", "data": {"type": "hook_progress"}},
        _queued("q1", "p1", "stop there"),
        _queued("q2", "elsewhere", "not here"),
    ])  # fmt: skip
    assert [(t["src"], t["msg"]) for t in doc["turns"]][-1] == ("user", "stop there")
    assert "/5" in doc["unknown_fields"]["sources"]["claude-code"]["fields"]


def test_a_user_record_claude_code_wrote_itself_is_a_context_turn():
    # The real 2.1.280 session writes a background task's end as a user record of origin "task-notification"
    # (promptSource "system"); the user's prompts say origin "human". The first is context the harness wrote, left
    # out by drop_copied as isMeta lines are; records without origin (every earlier version) are unchanged.
    note = "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"
    doc = decode([
        rec("user", "u1", None, "look it up", origin={"kind": "human"}, promptSource="typed"),
        rec("assistant", "a1", "u1", [{"type": "text", "text": "Started."}]),
        rec("user", "u2", "a1", note, origin={"kind": "task-notification"}, promptSource="system"),
        rec("assistant", "a2", "u2", [{"type": "text", "text": "It is done."}]),
        rec("user", "u3", "a2", "thanks"),
    ])  # fmt: skip
    turns = doc["turns"]
    assert [t["src"] for t in turns] == ["user", "agent", "user", "agent", "user"]
    assert "copied" not in turns[0] and "copied" not in turns[4]
    assert turns[2]["msg"] == note and turns[2]["copied"] is True and turns[2]["kind"] == "context"
    assert turns[2]["extra"] == {"claude_code": {"context": "task-notification"}}
    kept = pc.to_messages(doc, drop_copied=True)["messages"]
    assert [m["content"] for m in kept if m["role"] == "user"] == ["look it up", "thanks"]


def test_a_prompt_of_blocks_is_read_as_a_user_records_content():
    # Recent versions write the words typed mid-turn as content blocks (``"prompt": [{"type": "text", …}]``, an
    # image pasted with them as an ``image`` block; seen in real 2.1.2xx sessions, tests/data/claude_code/README.md):
    # the same user turn as a prompt of text, its image kept as the turn's media; written back as it was.
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    prompt = [{"type": "text", "text": "[Image #2] why is this offline?"}, image]
    doc = decode([
        rec("user", "u1", None, "list"),
        rec("assistant", "a1", "u1", CALL),
        rec("user", "r1", "a1", RESULT),
        _queued("q1", "r1", prompt, origin={"kind": "human"}, delivery_id="d1", humanTurn=True),
        rec("assistant", "a2", "q1", [{"type": "text", "text": "done"}]),
    ])  # fmt: skip
    turn = doc["turns"][2]
    assert (turn["src"], turn["msg"]) == ("user", "[Image #2] why is this offline?")
    assert turn["extra"]["media"] == [image] and turn["extra"]["claude_code"] == {"queued": True}
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"]
    assert kept["/3/attachment/delivery_id"] == "d1" and "/3" not in kept
    user = [m["content"] for m in pc.to_messages(doc)["messages"] if m["role"] == "user"]
    assert user == ["list", "[Image #2] why is this offline?"]
