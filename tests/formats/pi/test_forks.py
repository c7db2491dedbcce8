"""A branched or forked Pi session (docs/formats/pi.md, "Forks"): its header names the parent's file
(``parentSession``, once ``branchedFrom``) and its first entries are the parent's, copied with their own times
under a header stamped when the copy was made; their turns are context of the fork, never trained. The pair in
tests/data/pi/fork is written from pi-mono's ``SessionManager.createBranchedSession`` (``/fork``); the real v1
excerpt is the author's own branched session. The counts below are made from the raw lines, independently of the
reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import pi

DATA = Path(__file__).resolve().parents[2] / "data" / "pi"
PARENT_ID = "5f0c2a7e-1b3d-4c8e-9a61-0d2e7b4f9c10"
FORK_ID = "9d41e6b2-7a58-4f0e-b3c9-2e6a1d8f4b71"
PARENT = DATA / "fork" / f"2026-03-01T10-00-00-000Z_{PARENT_ID}.written.jsonl"
FORK = DATA / "fork" / f"2026-03-01T10-05-00-000Z_{FORK_ID}.written.jsonl"
REAL_V1 = DATA / "before-compaction.excerpt.jsonl"  # branchedFrom: every entry but one is the parent's


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read(path: Path) -> dict:
    (doc,) = pi.decode(path.read_bytes(), path.name)
    pc.validate(doc)
    return doc


def test_a_forks_copied_entries_are_context_and_it_names_its_parent():
    recs = lines(FORK)
    header, entries = recs[0], recs[1:]
    # by hand: the header is stamped at the fork; the 4 entries before it (user, call, result, answer) carry the
    # parent's ids and times; the fork's own question and answer come after it
    copied = [e for e in entries if e["timestamp"] < header["timestamp"]]
    assert [e["id"] for e in copied] == [e["id"] for e in lines(PARENT)[1:5]]
    assert len(entries) - len(copied) == 2
    doc = read(FORK)
    assert doc["session"] == FORK_ID
    assert doc["parent"] == {"psid": PARENT_ID, "rel": "fork"}
    marks = [(t["src"], t.get("copied", False), t.get("extra", {}).get("pi", {}).get("context")) for t in doc["turns"]]
    # the result is on its call: 3 copied turns, then the fork's 2
    assert marks == [("user", True, "fork"), ("agent", True, "fork"), ("agent", True, "fork"),
                     ("user", False, None), ("agent", False, None)]  # fmt: skip
    assert all(t["kind"] == "context" for t in doc["turns"][:3])
    assert doc["agent"]["model"] == "claude-sonnet-4-5"
    assert pc.flags(doc) == []  # a fork is the user's own conversation, no subagent
    # the same-source writer gives the file back, the header's parentSession with it
    assert [json.loads(x) for x in pi.encode([doc]).splitlines()] == recs


def test_training_output_of_a_fork_has_its_own_turns_once():
    doc = read(FORK)
    full = pc.to_messages(doc, arguments="object")["messages"]
    assert [m["role"] for m in full] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    own = pc.to_messages(doc, arguments="object", drop_copied=True)["messages"]
    assert [(m["role"], m["content"]) for m in own] == [
        ("user", lines(FORK)[-2]["message"]["content"][0]["text"]),
        ("assistant", lines(FORK)[-1]["message"]["content"][0]["text"]),
    ]
    assert [m["train"] for m in pc.to_messages(doc, trainable="last")["messages"]] == [False] * 5 + [True]


def test_a_session_without_a_parent_and_a_new_session_with_one():
    # the parent itself: nothing copied, no /parent
    doc = read(PARENT)
    assert "parent" not in doc and not any(t.get("copied") for t in doc["turns"])
    # newSession({parentSession}) (an extension's, or /fork at the first message): a header naming a parent and
    # entries all stamped after it: linked, nothing copied
    recs = lines(FORK)
    fresh = [recs[0], *(dict(e, timestamp="2026-03-01T10:06:00.000Z") for e in recs[1:])]
    (doc,) = pi.decode("".join(json.dumps(x) + "\n" for x in fresh).encode(), "fresh.jsonl")
    assert doc["parent"] == {"psid": PARENT_ID, "rel": "fork"}
    assert not any(t.get("copied") for t in doc["turns"])


def test_the_real_v1_branch_is_its_parents_copy():
    # badlogic's own session, branched in v1 (SessionManager.createBranchedSessionFromEntries: the parent's entries
    # before the branch point, then the new header's time): every message of the excerpt is older than its header
    recs = lines(REAL_V1)
    assert "branchedFrom" in recs[0] and all(e["timestamp"] < recs[0]["timestamp"] for e in recs[1:])
    doc = read(REAL_V1)
    assert doc["parent"] == {"psid": "d97339c6-6c10-4827-846b-9ff1d9c3dc37", "rel": "fork"}
    assert doc["turns"] and all(t["copied"] and t["kind"] == "context" for t in doc["turns"])
    # its compaction and bash execution stay context turns of their own kind; the model is still the session's
    assert [t["extra"]["pi"]["context"] for t in doc["turns"]] == ["fork"] * len(doc["turns"])
    assert doc["agent"]["model"] == "claude-opus-4-5"
    assert pc.to_messages(doc, drop_copied=True)["messages"] == []
    assert [json.loads(x) for x in pi.encode([doc]).splitlines()] == recs


def test_a_folder_with_a_parent_and_its_fork(tmp_path):
    project = tmp_path / "sessions" / "--work-proj--"
    project.mkdir(parents=True)
    for path in (PARENT, FORK):
        shutil.copy(path, project / path.name.replace(".written", ""))
    ds = load_dataset("pchronicle", "auto", data_dir=str(project), split="train", cache_dir=str(tmp_path / "c"))
    stories = {s["session"]: s for s in map(pc.row_to_story, ds)}
    assert set(stories) == {PARENT_ID, FORK_ID}
    assert stories[FORK_ID]["parent"] == {"psid": PARENT_ID, "rel": "fork"}
    kwargs = {"batched": True, "remove_columns": ds.column_names, "features": pc.MESSAGES_FEATURES}
    chat = ds.map(pc.to_messages, **kwargs)
    own = ds.map(pc.to_messages, fn_kwargs={"drop_copied": True}, **kwargs)
    row = {s: k for k, s in enumerate(ds["session"])}
    # the parent's 6 messages once as trainable text (its row); the fork's 2 own beside them
    assert len(chat[row[PARENT_ID]]["messages"]) == len(own[row[PARENT_ID]]["messages"]) == 6
    assert (len(chat[row[FORK_ID]]["messages"]), len(own[row[FORK_ID]]["messages"])) == (6, 2)
    assert main(["inspect", str(project / FORK.name.replace(".written", "")), "--losses"]) == 0
