"""A ``chat_compression`` checkpoint (qwen-code ``recordChatCompression``): its ``compressedHistory`` is the history
the model sees from then on — the summary as a ``user`` entry, the model's acknowledgement, the kept tail
(``ChatCompressionService``). The summary is a context turn where the checkpoint stands, as Codex's ``compacted``
lines are (docs/formats/qwen-code.md, "Records on the chain"); everything else of the record stays residual and
the same-source writer gives the line back. No public session file holds one (tests/data/qwen_code/README.md):
the records are written here in the shape the recorder writes, on top of a real session."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import NoConversationError
from pchronicle_datasets.formats import from_storyline, into_storyline
from tests.formats.qwen_code.cases import FILES, lines, model, raw_records, rec, user

SUMMARY = "<state_snapshot>\n<overall_goal>Fix average_item_price.</overall_goal>\n</state_snapshot>"
ACK = "Got it. Thanks for the additional context!"


def checkpoint(uuid, parent, tail, *summary_parts):
    parts = list(summary_parts) or [{"text": SUMMARY}]
    history = [{"role": "user", "parts": parts}, {"role": "model", "parts": [{"text": ACK}]}, *tail]
    payload = {"info": {"originalTokenCount": 9000, "newTokenCount": 1200, "compressionStatus": 1}}
    return rec(
        uuid, parent, "system", subtype="chat_compression", systemPayload={**payload, "compressedHistory": history}
    )


def compressed_session():
    """A real session (85aa748a…), a checkpoint after its last record, then the user's next prompt and a reply."""
    raw = raw_records(next(p for p in FILES if p.name.startswith("85aa748a")))
    last = raw[-1]["uuid"]
    tail = [r["message"] for r in raw[-2:] if "message" in r]  # the kept tail: copies of the chain's records
    more = [checkpoint("c1", last, tail), user("u9", "c1", "Now add a test."), model("a9", "u9", {"text": "Added."})]
    return raw, [{**r, "sessionId": raw[0]["sessionId"]} for r in more]


def read(records):
    [story] = into_storyline("qwen-code", lines(*records), document_id="chats/s1.jsonl")
    return story


def test_the_summary_is_a_context_turn_where_the_checkpoint_stands():
    raw, more = compressed_session()
    before = read(raw)
    story = read(raw + more)
    turns = story["turns"]
    n = len(before["turns"])
    assert turns[:n] == before["turns"]  # the conversation before the checkpoint is unchanged
    assert turns[n] == {
        "id": n + 1,
        "src": "system",
        "msg": SUMMARY,
        "kind": "context",
        "ts": more[0]["timestamp"],
        "extra": {"compaction": "chat_compression"},
    }
    assert [(t["src"], t["msg"]) for t in turns[n + 1 :]] == [("user", "Now add a test."), ("agent", "Added.")]
    assert story["meta"]["qwen-code"]["system"]["chat_compression"] == 1
    assert pc.flags(story) == ["compaction"]
    # the trainer reads the summary as the model did, never as the user's words
    messages = pc.to_messages(story, arguments="object")["messages"]
    assert {"role": "system", "content": SUMMARY} in messages
    assert ACK not in {m["content"] for m in messages}  # the acknowledgement stays residual


def test_the_line_comes_back_as_equal_json():
    raw, more = compressed_session()
    story = read(raw + more)
    written = [json.loads(line) for line in from_storyline("qwen-code", [story]).splitlines() if line.strip()]
    assert written == raw + more


def test_several_summary_parts_are_a_list_and_other_parts_stay_residual():
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    records = [
        user("u1", None, "hi"),
        checkpoint("c1", "u1", [], {"text": "part one"}, image, {"text": "part two"}),
        user("u2", "c1", "go on"),
    ]
    story = read(records)
    assert story["turns"][1]["msg"] == [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]
    written = [json.loads(line) for line in from_storyline("qwen-code", [story]).splitlines() if line.strip()]
    assert written == records


@pytest.mark.parametrize(
    "payload",
    [
        {"info": {"compressionStatus": 1}},  # no compressedHistory (what some tools write)
        {"compressedHistory": []},
        {"compressedHistory": [{"role": "model", "parts": [{"text": "not a summary"}]}]},
        {"compressedHistory": [{"role": "user", "parts": [{"inlineData": {}}]}]},
    ],
)
def test_a_checkpoint_without_a_summary_stays_residual_whole(payload):
    records = [user("u1", None, "hi"), rec("c1", "u1", "system", subtype="chat_compression", systemPayload=payload)]
    story = read(records)
    assert [t["src"] for t in story["turns"]] == ["user"]
    assert story["meta"]["qwen-code"]["system"] == {"chat_compression": 1}


def test_a_file_of_a_checkpoint_alone_holds_no_conversation():
    with pytest.raises(NoConversationError):
        read([checkpoint("c1", None, [])])
