"""Gemini CLI's ``info`` / ``warning`` / ``error`` notices are shown to the user and never sent to the model
(gemini-cli ``convertSessionToClientHistory`` skips the three types): no training output renders them
(``notices.py``), every path alike (a document, a row, a batch read from Arrow), while the document and the
same-source round trip keep them."""

from __future__ import annotations

import json
import os

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline
from tests.formats.gemini_cli import replay
from tests.formats.gemini_cli.replay import FILES, LEGACY, MAIN

NOTICE_TYPES = ("info", "warning", "error")


def notices(path):
    """The notices' texts, counted from the raw file (not by the reader)."""
    return [replay.text(m) for m in replay.conversation(path) if m["type"] in NOTICE_TYPES]


def read(path):
    [story] = into_storyline("gemini-cli", path.read_bytes(), document_id=path.name)
    return story


def texts(messages):
    return [m["content"] for m in messages]


def test_the_real_file_and_the_written_one_hold_notices():
    assert notices(LEGACY) == ["Model switched to gemini-2.5-pro."]  # entireio/cli's real session
    assert notices(MAIN) == ["[API Error: exceeded quota for the day]"]  # its info line was rewound away


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_training_output_renders_a_notice(path):
    story = read(path)
    kept = [t["msg"] for t in story["turns"] if t.get("kind") in NOTICE_TYPES]
    assert kept == notices(path)  # the document keeps them, as system turns of their kind
    shown = len([m for m in replay.conversation(path) if not replay.echoes(m)])
    assert len(story["turns"]) == shown
    row = pc.story_to_row(story)
    outputs = [
        texts(pc.to_messages(story, arguments="object")["messages"]),
        texts(pc.to_messages(row)["messages"]),
        texts(pc.to_messages(story, trainable="last")["messages"]),
        [c["value"] for c in pc.to_sharegpt(story)["conversations"]],
        [c["value"] for c in pc.to_sharegpt(row)["conversations"]],
        [c["value"] for c in pc.to_sharegpt(story, keep_system_prompt=True)["conversations"]],
        [c["value"] for c in pc.to_sharegpt(story, dialect="llamafactory")["conversations"]],
        texts(pc.to_prompt_completion(story)["prompt"]),
    ]
    for out in outputs:
        assert not set(notices(path)) & set(out)
    # one message fewer per notice, nothing else changed: the system messages were the notices
    assert len(pc.to_messages(story)["messages"]) == len(
        pc.to_messages({**story, "turns": [t for t in story["turns"] if t.get("kind") not in NOTICE_TYPES]})["messages"]
    )
    assert [m["role"] for m in pc.to_messages(story)["messages"]].count("system") == 0


def test_keep_system_prompt_still_generates_the_tools_prompt_when_only_notices_are_system():
    story = read(LEGACY)
    [first] = pc.to_sharegpt(story, keep_system_prompt=True)["conversations"][:1]
    assert first["from"] == "system" and first["value"] != "Model switched to gemini-2.5-pro."
    assert first == pc.to_sharegpt(story)["conversations"][0]


def test_a_dataset_of_the_folder_renders_no_notice_batched_or_not(tmp_path):
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "auto", data_dir=str(replay.DATA), split="train", cache_dir=str(tmp_path))
    assert len(ds) == len(FILES)
    every = {text for path in FILES for text in notices(path)}
    for batched in (False, True):
        msgs = ds.map(
            pc.to_messages,
            batched=batched,
            remove_columns=ds.column_names,
            features=pc.MESSAGES_FEATURES,
        )
        share = ds.map(pc.to_sharegpt, batched=batched, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)
        assert not every & {m["content"] for row in msgs for m in row["messages"]}
        assert not every & {c["value"] for row in share for c in row["conversations"]}
        # every other message is there, as the document gives it
        stories = {read(p)["session"]: read(p) for p in FILES}
        for row, session in zip(msgs, ds["session"], strict=True):
            expected = pc.to_messages(stories[session], arguments="object")["messages"]
            assert [(m["role"], m["content"]) for m in row["messages"]] == [(m["role"], m["content"]) for m in expected]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_same_source_writer_and_the_chat_writer_keep_the_notices(path):
    story = read(path)
    written = from_storyline("gemini-cli", [story])
    assert notices(path) == [t["msg"] for t in read_text(written, path) if t.get("kind") in NOTICE_TYPES]
    chat = json.loads(from_storyline("chat", [story]).splitlines()[0])
    assert set(notices(path)) <= {m["content"] for m in chat["messages"]}  # a conversion, not a training output


def read_text(written, path):
    data = written if isinstance(written, bytes) else written.encode()
    [story] = into_storyline("gemini-cli", data, document_id=path.name)
    return story["turns"]


def test_a_system_prompt_is_no_notice():
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a"},
        "turns": [
            {"id": 1, "src": "system", "msg": "Be brief."},
            {"id": 2, "src": "system", "kind": "warning", "msg": "Model switched."},
            {"id": 3, "src": "user", "msg": "hi", "kind": "info"},
            {"id": 4, "src": "agent", "msg": "hello"},
        ],
    }
    assert texts(pc.to_messages(story, arguments="object")["messages"]) == ["Be brief.", "hi", "hello"]


@pytest.mark.parametrize(
    ("text", "api_error"),
    [
        ("[API Error: exceeded quota for the day]", True),  # the written session's line
        ("[API Error: Model stream ended with an invalid chunk. (Status: INTERNAL)]", True),
        ("Failed to load MCP server config.", False),  # an error notice that is not the model's API
        ("the [API Error: …] notice", False),  # only at the start, as parseAndFormatApiError writes it
    ],
)
def test_an_api_error_notice_flags_api_error(text, api_error):
    """gemini-cli's ``parseAndFormatApiError`` starts every text of a failed model stream with ``[API Error: ``
    and ``useGeminiStream`` records it as an ``error`` message: the turn got no answer from the API, as Codex's
    ``task_complete`` errors and Claude Code's ``<synthetic>`` answers say (docs/formats/gemini-cli.md, "Notices")."""
    original = "[API Error: exceeded quota for the day]"
    data = MAIN.read_bytes().replace(json.dumps(original).encode(), json.dumps(text).encode())
    assert data.count(json.dumps(text).encode()) == 1
    [story] = into_storyline("gemini-cli", data, document_id=MAIN.name)
    [notice] = [t for t in story["turns"] if t.get("kind") == "error"]
    assert notice["msg"] == text
    assert ("api_error" in pc.flags(story)) == api_error
    assert ("extra" in notice) == api_error
    assert "api_error" not in pc.flags(read(LEGACY))  # its notice is an info line
    with pc.collect_losses() as losses:
        rewritten = from_storyline("gemini-cli", [story])
    assert not losses, losses.summary()  # the mark is derived: the same source writes the file back
    lines = rewritten.decode() if isinstance(rewritten, bytes) else rewritten
    assert [json.loads(x) for x in lines.splitlines()] == [json.loads(x) for x in data.decode().splitlines()]
