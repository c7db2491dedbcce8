"""Goose's session files from before its database (docs/formats/goose.md, "Before the database"):
``<id>.jsonl``, a metadata line then one message per line, read as one session of the JSON shape, written back line
for line, and left out of a folder whose ``sessions.db`` Goose imported them into. The file in
tests/data/goose/legacy is written from Goose's source (its README says how); the counts below are made from its
raw lines, independently of the reader."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import detect, goose

DATA = Path(__file__).resolve().parents[2] / "data" / "goose"
LEGACY = DATA / "legacy" / "20250801_071500.written.jsonl"
NAME = "20250801_071500.jsonl"  # as Goose names it: the session id, then .jsonl

#: The metadata line of a real Goose 1.0.x session file (June 2025, quoted in a public note; its keys in Goose's
#: order, the counts as written): no extension_data, no recipe yet.
REAL_1_0_METADATA = {
    "working_dir": "/home/u",
    "description": "System recovery under way",
    "schedule_id": None,
    "message_count": 100,
    "total_tokens": 46663,
    "input_tokens": 45430,
    "output_tokens": 1233,
    "accumulated_total_tokens": 1393655,
    "accumulated_input_tokens": 1378998,
    "accumulated_output_tokens": 14657,
}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read(data: bytes, name: str = NAME) -> dict:
    (doc,) = goose.decode(data, name)
    pc.validate(doc)
    return doc


def test_a_session_file_is_one_session_of_its_messages():
    recs = lines(LEGACY)
    meta, messages = recs[0], recs[1:]
    # by hand: 6 messages (2 user texts, 1 of tool responses only, 3 assistant, one with a call), 1 call,
    # 1 response answering it (the bare content list of Goose's older tool results)
    kinds = Counter(p["type"] for m in messages for p in m["content"])
    assert meta["message_count"] == len(messages) == 6
    assert kinds == {"text": 5, "toolRequest": 1, "toolResponse": 1}
    results_only = sum(1 for m in messages if {p["type"] for p in m["content"]} == {"toolResponse"})
    doc = read(LEGACY.read_bytes())
    assert len(doc["turns"]) == len(messages) - results_only == 5
    assert [t["src"] for t in doc["turns"]] == ["user", "agent", "agent", "user", "agent"]
    (call,) = [c for t in doc["turns"] for c in t.get("tool_calls", ())]
    assert (call["fn"], call["args"]) == ("developer__shell", {"command": "cat prices.csv"})
    blocks = messages[2]["content"][0]["toolResult"]["value"]
    # the shell's output twice, for the model and for the user: the result is what the model was sent
    assert [b["annotations"]["audience"] for b in blocks] == [["assistant"], ["user"]]
    assert call["result"] == blocks[0]["text"]
    # the session: its id is the file's name (Goose's own import names it so), its folder the working_dir
    assert doc["session"] == "20250801_071500"
    assert doc["task"]["env"]["state"]["cwd"] == meta["working_dir"]
    assert [t["ts"] for t in doc["turns"]] == [m["created"] for m in messages if m is not messages[2]]
    # the description is the session's name (Goose: Session.name's serde alias), kept as written too
    assert doc["notes"] == meta["description"] == "Average item price"
    residual = doc["unknown_fields"]["sources"]["goose"]["fields"]
    assert residual["/description"] == meta["description"] and residual["/extension_data"] == meta["extension_data"]
    assert doc["meta"]["goose"]["jsonl"] == {"header": True, "named": True}
    assert doc["meta"]["goose"]["notes"] == "description"
    # the same-source writer gives the file back, line for line
    assert [json.loads(x) for x in goose.encode([doc]).splitlines()] == recs
    assert detect(LEGACY.read_bytes()) is goose


def test_goose_1_0_metadata_and_a_file_without_one():
    message = lines(LEGACY)[1]
    text = "\n".join(json.dumps(x) for x in (REAL_1_0_METADATA, message)) + "\n"
    assert detect(text.encode()) is goose
    doc = read(text.encode(), "sessions/20250614_171009.jsonl")
    assert (doc["session"], len(doc["turns"]), doc["meta"]["goose"]["jsonl"]["header"]) == ("20250614_171009", 1, True)
    assert [json.loads(x) for x in goose.encode([doc]).splitlines()] == [REAL_1_0_METADATA, message]
    # a file whose first line is a message (Goose reads it as one when it is no metadata): all lines are messages
    bare = "\n".join(json.dumps(x) for x in lines(LEGACY)[1:]) + "\n"
    doc = read(bare.encode())
    assert len(doc["turns"]) == 5 and doc["meta"]["goose"]["jsonl"] == {"header": False, "named": True}
    assert [json.loads(x) for x in goose.encode([doc]).splitlines()] == lines(LEGACY)[1:]


def test_what_such_a_file_cannot_give_is_refused():
    meta_only = (json.dumps(REAL_1_0_METADATA) + "\n").encode()
    (record,) = goose.iter_records(meta_only, NAME)
    assert record.error is not None and "no message" in record.error.reason  # a session never used: no document
    (record,) = goose.iter_records(LEGACY.read_bytes(), None)  # no file name: no id
    assert record.error is not None and "named by its file" in record.error.reason
    # a line that is not JSON is an error of its own; the other lines still make the session
    broken = LEGACY.read_bytes().replace(b"\n", b"\nnot json\n", 1)
    records = list(goose.iter_records(broken, NAME))
    assert [(r.line, r.error is not None) for r in records] == [(2, True), (1, False)]
    assert len(records[1].story["turns"]) == 5


def test_a_folder_of_them_loads(tmp_path):
    folder = tmp_path / "goose" / "sessions"
    folder.mkdir(parents=True)
    shutil.copy(LEGACY, folder / NAME)
    ds = load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "c"))
    assert ds["session"] == ["20250801_071500"]
    chat = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    roles = [m["role"] for m in chat[0]["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert main(["inspect", str(folder / NAME), "--losses"]) == 0


@pytest.mark.parametrize("fmt", ["auto", "goose"])
def test_beside_its_database_the_file_is_left_out(tmp_path, fmt):
    # Goose 1.10 imports the files into the sessions.db it creates and leaves them there: read both and each session
    # would be twice. The database is what Goose reads from then on.
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(LEGACY, folder / NAME)
    shutil.copy(DATA / "sessions.db", folder / "sessions.db")
    ds = load_dataset("pchronicle", fmt, data_dir=str(folder), split="train", cache_dir=str(tmp_path / "c"))
    assert sorted(ds["session"]) == [f"20260805_{k}" for k in range(1, 5)]
    # named alone, the file is read
    ds = load_dataset("pchronicle", fmt, data_files=str(folder / NAME), split="train", cache_dir=str(tmp_path / "d"))
    assert ds["session"] == ["20250801_071500"]


@pytest.mark.parametrize(
    "names,notes",
    [
        ({"name": "", "description": "Imported"}, "Imported"),  # a row imported from a file: name empty
        ({"description": "Imported"}, "Imported"),  # a file's metadata: no name yet
        ({"name": "Renamed", "description": "Imported"}, "Renamed"),  # the name wins
        ({"name": ""}, ""),  # an empty name and no description: as written
    ],
)
def test_a_session_without_a_name_is_named_by_its_description(names, notes):
    # Goose's own rule (Session's #[serde(alias = "description")] on name; from_row: name, else description)
    message = lines(LEGACY)[1]
    shape = {"id": "20250801_071500", "working_dir": "/w", "extension_data": {}, **names, "conversation": [message]}
    (doc,) = goose.decode(json.dumps(shape))
    assert doc["notes"] == notes
    assert json.loads(goose.encode([doc])) == shape  # the name is not invented, the description is given back


def test_a_later_metadata_line_with_its_own_id():
    # the shape of Goose's own legacy.rs tests (test_load_legacy_session_without_metadata): the metadata names the
    # session and its times, the messages have ids
    meta = {"description": "test", "id": "20240101_120000", "created_at": "2024-01-01T12:00:00Z",
            "updated_at": "2024-01-01T12:00:00Z", "extension_data": {}, "message_count": 0}  # fmt: skip
    messages = [
        {"id": "msg1", "role": "user", "created": 1704110400, "content": [{"type": "text", "text": "Hello"}]},
        {"id": "msg2", "role": "assistant", "created": 1704110401, "content": [{"type": "text", "text": "Hi there"}]},
    ]
    text = "".join(json.dumps(x) + "\n" for x in (meta, *messages))
    assert detect(text.encode()) is goose
    doc = read(text.encode(), "other-name.jsonl")
    assert (doc["session"], doc["started_at"], doc["notes"]) == ("20240101_120000", "2024-01-01T12:00:00Z", "test")
    assert doc["meta"]["goose"]["jsonl"] == {"header": True, "named": False}
    assert [json.loads(x) for x in goose.encode([doc]).splitlines()] == [meta, *messages]
