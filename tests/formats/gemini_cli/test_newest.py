"""What the newest Gemini CLI writes (google-gemini/gemini-cli ``chatRecordingService.ts`` and ``sessionUtils.ts`` at
5411f113, 2026-08-21; CLI 0.44.1 files seen by a public survey, docs/formats/gemini-cli.md): the CLI's own
``<session_context>`` is a context turn, a resumed session's abandoned first file holds no conversation, and a
checkpoint's model parts with a ``thoughtSignature`` keep their text."""

from __future__ import annotations

import json
import shutil

import datasets
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import NoConversationError
from pchronicle_datasets.formats import from_storyline, into_storyline
from pchronicle_datasets.formats.residual import source_fields
from tests.formats.gemini_cli.replay import MAIN

SID = "63a95ada-876f-483a-bc98-099900d7ee46"
# The first two records of every 0.44.1 session (the shape of the real lines the survey quotes; the text
# shortened): the metadata record, then the <session_context> under the fixed id sha256("environment-context")[:32].
HEADER = {"sessionId": SID, "projectHash": "7e7e4c22546469191410fc4c67feef18ad127598999c4e28e2d5c3e1bdd8b14a",
          "startTime": "2026-09-20T10:18:01.708Z", "lastUpdated": "2026-09-20T10:18:01.708Z",
          "kind": "main"}  # fmt: skip
CONTEXT = {"$set": {"messages": [{"id": "d04923d38bb0f6017037e74183378ef4", "timestamp": "2026-09-20T10:18:01.710Z",
           "type": "user", "content": [{"text": "<session_context>\nThis is the Gemini CLI. We are setting up the "
           "context for our chat.\nMy operating system is: win32\n</session_context>"}]}],
           "lastUpdated": "2026-09-20T10:18:01.710Z"}}  # fmt: skip
PROMPT = {"id": "495eefe3-93e3-4359-bf5d-c25557c57f81", "timestamp": "2026-09-20T10:18:01.875Z", "type": "user",
          "content": [{"text": "Reply with exactly: pong"}]}  # fmt: skip


def text(*recs) -> str:
    return "".join(json.dumps(r) + "\n" for r in recs)


def test_the_session_context_the_cli_writes_is_a_context_turn():
    # it was a plain user turn: the first "prompt" of every session, though no user typed it
    out = text(
        HEADER, CONTEXT, PROMPT, {"$set": {"lastUpdated": "2026-09-20T10:18:01.875Z"}}, {"$set": {"sessionId": SID}}
    )
    [story] = into_storyline("gemini-cli", out, document_id="chats/session-2026-09-20T10-18-63a95ada.jsonl")
    context, prompt = story["turns"]
    assert (context["src"], context["kind"], context["copied"]) == ("user", "context", True)
    assert context["extra"] == {"gemini-cli": {"context": "session_context"}}
    assert "kind" not in prompt and "copied" not in prompt
    row = pc.story_to_row(story)
    assert [m["content"] for m in pc.to_messages(row, drop_copied=True)["messages"]] == ["Reply with exactly: pong"]
    assert len(pc.to_messages(row)["messages"]) == 2  # kept by default: the model read it
    assert [json.loads(x) for x in from_storyline("gemini-cli", [story]).splitlines()] == [
        json.loads(x) for x in out.splitlines()
    ]


@pytest.mark.parametrize("start", ["<hook_context>\nbranch: main\n</hook_context>", "  <session_context>x"])
def test_every_start_the_cli_ignores_marks_the_context(start):
    out = text(HEADER, {**PROMPT, "id": "c1", "content": start}, PROMPT)
    [story] = into_storyline("gemini-cli", out, document_id="s.jsonl")
    assert story["turns"][0]["kind"] == "context" and "kind" not in story["turns"][1]


def test_a_resumed_sessions_abandoned_first_file_holds_no_conversation(tmp_path):
    # ``gemini --resume`` first writes a new file (the header and the session context, under the resumed session's
    # id: the CLI's hasResumableContent skips it), then appends to the old one. It was read as a second document
    # with the same session id as the real one.
    with pytest.raises(NoConversationError, match="only what the CLI writes at start"):
        into_storyline("gemini-cli", text(HEADER, CONTEXT), document_id="chats/session-2026-09-20T10-19-63a95ada.jsonl")
    chats = tmp_path / "tmp" / "7e7e" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(MAIN, chats / MAIN.name)
    orphan = json.loads(MAIN.read_text(encoding="utf-8").splitlines()[0])
    (chats / "session-2026-10-01T09-05-a1b2c3d4.jsonl").write_text(text(orphan, CONTEXT), encoding="utf-8")
    ds = datasets.load_dataset("pchronicle", "auto", data_dir=str(tmp_path), split="train")
    assert [pc.row_to_story(r)["session"] for r in ds] == [orphan["sessionId"]]  # one row, the real session


def test_a_model_part_with_a_thought_signature_keeps_its_text():
    # updateMessagesFromHistory (a /compress, a masking sync) records the model's own parts in the checkpoint: a
    # text part may carry Gemini 3's thoughtSignature, a thought part is the model's thinking, a functionCall part
    # repeats a call the record holds. The text was residual with its part, and the reply had no text.
    reply = {"id": "g1", "timestamp": "2026-09-20T10:18:05.000Z", "type": "gemini", "model": "gemini-3-pro-preview",
             "content": [{"text": "Thinking it over.", "thought": True},
                         {"text": "pong", "thoughtSignature": "CiQB0e2Kb"},
                         {"functionCall": {"id": "c1", "name": "ls", "args": {}}}]}  # fmt: skip
    out = text(HEADER, {"$set": {"messages": [PROMPT, reply]}})
    [story] = into_storyline("gemini-cli", out, document_id="s.jsonl")
    assert story["turns"][1]["msg"] == [{"type": "text", "text": "pong"}]
    fields = source_fields(story, "gemini-cli")["fields"]
    assert fields["/1/$set/messages/1/content/1/thoughtSignature"] == "CiQB0e2Kb"
    assert fields["/1/$set/messages/1/content/0"] == reply["content"][0]  # the thought part, residual whole
    assert fields["/1/$set/messages/1/content/2"] == reply["content"][2]
    assert [json.loads(x) for x in from_storyline("gemini-cli", [story]).splitlines()] == [
        json.loads(x) for x in out.splitlines()
    ]
