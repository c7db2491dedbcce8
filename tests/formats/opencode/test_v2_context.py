"""What the model saw of OpenCode 2's other message kinds (docs/formats/opencode.md "OpenCode 2", "What the model
was sent"). The real dumps hold a `synthetic` plan-mode reminder and a `system` context update (test_v2.py); the rows
below are modelled on anomalyco/opencode's source (``session/message.ts`` for their data, ``session/runner/
to-llm-message.ts`` ``toLLMMessage`` for what the model is sent), added to the real fresh 2.0.26 database's plan
session: a command the user ran with ``!`` (``shell``), a skill's text, a compaction finished and one started (its
summary still empty), an ``agent-switched`` row, and a shell command a slash command ran (nothing sent)."""

from __future__ import annotations

import json
import sqlite3

import datasets

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline
from tests.formats.opencode.test_v2 import FRESH, _offline, build, records  # noqa: F401 (the fixture)

PLAN = "ses_caprockPlan0001"
SHELL = {"callID": "call_sh1", "command": "ls", "output": "a.txt\nb.txt\n", "time": {"created": 1791500494000}}
SKILL = {"text": '<skill name="review">Read the diff first.</skill>', "time": {"created": 1791500494100}}
DONE = {"reason": "auto", "summary": "The user asked for a plan; the agent proposed two steps.", "recent": "…",
        "time": {"created": 1791500494200}}  # fmt: skip
STARTED = {"reason": "manual", "summary": "", "time": {"created": 1791500494300}}
SLASH = {**SHELL, "callID": "call_sh2", "metadata": {"commandInvocation": True}, "time": {"created": 1791500494400}}
ROWS = [
    ("msg_t1", "shell", SHELL),
    ("msg_t2", "skill", SKILL),
    ("msg_t3", "compaction", DONE),
    ("msg_t4", "compaction", STARTED),
    ("msg_t5", "agent-switched", {"agent": "plan", "previous": "build", "time": {"created": 1791500494350}}),
    ("msg_t6", "shell", SLASH),
]


def database(tmp_path):
    path = build(FRESH, tmp_path / "db")
    con = sqlite3.connect(path)
    con.executemany(
        "insert into session_message (id, session_id, type, seq, time_created, time_updated, data) "
        "values (?, ?, ?, ?, 1791500494000, 1791500494000, ?)",
        [(rid, PLAN, kind, 100 + n, json.dumps(data)) for n, (rid, kind, data) in enumerate(ROWS)],
    )
    con.commit()
    con.close()
    return path


def plan(path):
    [record] = [r for r in records(path) if r.story and r.story["session"] == PLAN]
    return record


def test_each_kind_is_read_as_what_the_model_saw(tmp_path):
    record = plan(database(tmp_path))
    story = record.story
    context = [t for t in story["turns"] if t.get("kind") == "context"]
    assert [(t["src"], t["msg"][0]["text"], t["extra"]) for t in context[1:]] == [
        ("user", "Shell command: ls\n\na.txt\nb.txt\n", {"opencode": {"context": "shell"}}),
        ("user", SKILL["text"], {"opencode": {"context": "skill"}}),
        ("user", DONE["summary"], {"compaction": "summary"}),
    ]
    assert all(t["copied"] for t in context) and context[0]["extra"] == {"opencode": {"context": "synthetic"}}
    layout = story["meta"]["opencode"]["layout"]
    assert layout[-6:] == [["text"], ["text"], ["text"], None, None, None]  # started, agent-switched, slash: residual
    fields = story["unknown_fields"]["sources"]["opencode"]["fields"]
    assert fields[f"/messages/{len(layout) - 6}/info/command"] == "ls"  # the shell's own keys stay (the text derived)
    assert fields[f"/messages/{len(layout) - 3}"]["info"]["summary"] == ""
    assert "compaction" in pc.flags(story)
    with pc.collect_losses() as losses:  # the same-source writer gives the export back
        assert json.loads(from_storyline("opencode", [story])) == record.value
    assert not losses


def test_to_messages_renders_what_the_model_was_sent_and_nothing_else(tmp_path):
    path = database(tmp_path)
    ds = datasets.load_dataset(
        "pchronicle", "auto", data_dir=str(path.parent), split="train", cache_dir=str(tmp_path / "c")
    )
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    [row] = [m for m, s in zip(msgs["messages"], ds["session"], strict=True) if s == PLAN]
    users = [m["content"] for m in row if m["role"] == "user"]
    assert users[-3:] == ["Shell command: ls\n\na.txt\nb.txt\n", SKILL["text"], DONE["summary"]]
    assert sum(m["content"].startswith("Shell command:") for m in row) == 1  # the slash command's shell: not sent
    assert row == pc.to_messages(plan(path).story)["messages"]
