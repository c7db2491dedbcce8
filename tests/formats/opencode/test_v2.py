"""OpenCode 2's storage (docs/formats/opencode.md, "OpenCode 2"): databases built here from the SQL dumps of two real
databases OpenCode 2.0.26 wrote (tests/data/opencode/v2/, dspv/caprock, Apache-2.0: one upgraded from 1.15.10, so
both storages, one fresh), through every loader: hand counts from their rows against the documents, ``to_messages``,
``inspect --losses`` and the same-source writer; and the decisions the source is silent on, each pinned by a row
modelled on a real one."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import datasets
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import from_storyline, iter_records
from pchronicle_datasets.formats.opencode.fields import V2_BACKFILL_VERSION
from pchronicle_datasets.formats.opencode.v2 import export_message

DATA = Path(__file__).resolve().parents[2] / "data" / "opencode" / "v2"
UPGRADED = DATA / "opencode-1.15.10-then-2.0.26.sql"
FRESH = DATA / "opencode-2.0.26.sql"
# The upgraded database (counted by hand from the dump: `select type, count(*) from session_message group by 1`):
# one 1.15.10 session (4 `message` rows, 10 `part` rows) that OpenCode 2.0.26 backfilled into `session_v2` and
# `session_message` under the same ids (seq 0-3) and then continued (a `system` notice, an `agent-switched`, a user
# prompt, an answer, an `idle`), and one session of 2.0.26 alone: 14 `session_message` rows (3 user, 7 assistant,
# 1 system, 1 agent-switched, 2 idle).
OLD, NEW = "ses_ee23f48fafferHslj7rwP1LkA5", "ses_ee23f2130ffeQJ1hVVb2kYmDG5"
# The fresh 2.0.26 database: 5 sessions (one a subagent's child), 21 rows (5 user, 10 assistant, 1 synthetic, 5 idle).
FRESH_SESSIONS = [
    "ses_ee23fe547ffeGrZPc2puP1wUU1",
    "ses_ee23fe1e7ffeeiMs3y3TW987xd",
    "ses_ee23fe0f4ffeylWZL6V350JpvY",
    "ses_ee23fdf58ffew3vRe12Fd7Ah2n",
    "ses_caprockPlan0001",
]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def build(sql: Path, folder: Path, name: str = "opencode.db") -> Path:
    """The database the dump was made from, built by SQLite from its statements."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    con = sqlite3.connect(path)
    con.executescript(sql.read_text(encoding="utf-8"))
    con.close()
    return path


def records(path: Path, fmt: str = "auto") -> list:
    return list(iter_records(fmt, path.read_bytes(), "opencode.db"))


def calls(story: dict) -> list[tuple]:
    return [
        (c["fn"], c["response"]["status"], c.get("result")) for t in story["turns"] for c in t.get("tool_calls", [])
    ]


def test_an_upgraded_database_reads_each_session_once_with_its_later_messages(tmp_path):
    path = build(UPGRADED, tmp_path)
    con = sqlite3.connect(path)
    assert dict(con.execute("select type, count(*) from session_message group by 1")) == {
        "user": 3,
        "assistant": 7,
        "system": 1,
        "agent-switched": 1,
        "idle": 2,
    }
    assert [r[0] for r in con.execute("select id from session")] == [OLD]  # frozen at the upgrade
    backfilled = con.execute("select count(*) from session_message where id in (select id from message)").fetchone()
    assert backfilled == (4,)
    con.close()
    got = records(path)
    assert [r.error for r in got] == [None, None]
    old, new = (r.story for r in got)
    assert [old["session"], new["session"]] == [OLD, NEW]
    # the 1.x session: its four 1.x messages (read from `message`/`part`, the fuller rows), then what 2.0.26 added
    # (and its `system` row: the context update the model was sent as a system message, a context turn)
    assert [t["src"] for t in old["turns"]] == ["user", "agent", "agent", "agent", "system", "user", "agent"]
    update = old["turns"][4]
    assert update["msg"][0]["text"].startswith("The available tools have changed.\n\nThe `bash` tool is now `shell`")
    assert (update["kind"], update["copied"], update["extra"]) == ("context", True, {"opencode": {"context": "system"}})
    assert old["turns"][5]["msg"] == [{"type": "text", "text": '"Continue this in v2"'}]
    assert old["turns"][6]["msg"] == [{"type": "text", "text": "Hello from the fake model. The answer is 42. "}]
    assert calls(old) == [
        ("bash", "completed", "hi\n"),
        (
            "read",
            "error",
            {
                "error": 'The read tool was called with invalid arguments: SchemaError(Missing key\n  at ["filePath"])'
                ".\nPlease rewrite the input so it satisfies the expected schema."
            },
        ),
    ]
    assert old["agent"]["ver"] == "1.15.10"  # session_v2 keeps the version that started the session
    layout = old["meta"]["opencode"]["layout"]
    assert layout[:4] == [["text"], ["r", "tool", "r"], ["r", "tool", "r"], ["r", "text", "r"]]  # 1.x step parts
    assert layout[4:6] == [["text"], None]  # the `system` update a turn; the `agent-switched` row residual, in place
    assert old["unknown_fields"]["sources"]["opencode"]["fields"]["/messages/4/info/role"] == "system"
    # the session's info: session_v2's row, the 1.x row filling what the backfill left empty (its permission)
    assert old["unknown_fields"]["sources"]["opencode"]["fields"]["/info/time"]["updated"] == 1791500541274
    assert old["unknown_fields"]["sources"]["opencode"]["fields"]["/info/permission"][0]["permission"] == "question"
    # the session of 2.0.26 alone: 2.x tool items, the output a text block
    assert [t["src"] for t in new["turns"]] == ["user", "agent", "agent", "agent"]
    assert calls(new) == [("shell", "completed", "hi\n"), ("read", "completed", "Read file note.txt, lines 1-1\n1: hi")]
    assert new["turns"][1]["model"] == "m1" and new["turns"][1]["metrics"]["prompt_tokens"] == 1000
    assert new["turns"][1]["ts"] == 1791500541.858


def test_a_fresh_opencode_2_database_is_read_subagents_linked(tmp_path):
    path = build(FRESH, tmp_path)
    con = sqlite3.connect(path)
    assert {r[0] for r in con.execute("select name from sqlite_master where type = 'table'")} == {
        "session_v2",
        "session_message",
    }
    assert dict(con.execute("select type, count(*) from session_message group by 1")) == {
        "user": 5,
        "assistant": 10,
        "synthetic": 1,
        "idle": 5,
    }
    con.close()
    got = {r.story["session"]: r.story for r in records(path)}  # auto: the two tables name an OpenCode database
    assert list(got) == FRESH_SESSIONS
    assert sum(len(s["turns"]) for s in got.values()) == 16  # every user, assistant and synthetic row one turn
    parent, child = got[FRESH_SESSIONS[1]], got[FRESH_SESSIONS[2]]
    assert parent["children"] == [child["session"]]
    assert child["parent"] == {"psid": parent["session"], "rel": "subagent"} and child["agent"]["name"] == "general"
    assert calls(got[FRESH_SESSIONS[3]]) == [("read", "error", {"error": "File not found: /nonexistent/file.txt"})]
    fields = got[FRESH_SESSIONS[3]]["unknown_fields"]["sources"]["opencode"]["fields"]
    assert fields["/messages/1/parts/0/state/errorType"] == "tool.execution"
    plan = got["ses_caprockPlan0001"]
    # the synthetic plan-mode reminder: sent the model as a user message (toLLMMessage), a context turn
    reminder = next(t for t in plan["turns"] if t.get("kind") == "context")
    assert reminder["src"] == "user" and reminder["extra"] == {"opencode": {"context": "synthetic"}}
    assert reminder["msg"][0]["text"].startswith("<system-reminder>\nYou are in Plan mode.")
    assert plan["meta"]["opencode"]["layout"][2] == ["text"]
    assert plan["unknown_fields"]["sources"]["opencode"]["fields"]["/messages/2/info/role"] == "synthetic"


@pytest.mark.parametrize("sql", [UPGRADED, FRESH], ids=["upgraded", "fresh"])
def test_each_session_is_written_back_as_its_export_and_loses_nothing(tmp_path, sql):
    for record in records(build(sql, tmp_path)):
        with pc.collect_losses() as losses:
            text = from_storyline("opencode", [record.story])
        assert not losses
        assert json.loads(text) == record.value


def test_load_dataset_to_messages_and_inspect_over_both_databases(tmp_path, capsys):
    share = tmp_path / "share"
    build(UPGRADED, share / "a")
    build(FRESH, share / "b")
    ds = datasets.load_dataset("pchronicle", "auto", data_dir=str(share), split="train", cache_dir=str(tmp_path / "c"))
    assert sorted(ds["session"]) == sorted([OLD, NEW, *FRESH_SESSIONS])
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    by_session = dict(zip(ds["session"], msgs["messages"], strict=True))
    # counted by hand from the rows: the calls (1.x tool parts of the old session, 2.x tool items) and their results
    turn = ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    # the `system` row is sent the model as a system message where it stands (toLLMMessage): rendered there
    assert [m["role"] for m in by_session[OLD]] == [*turn, "system", "user", "assistant"]
    assert by_session[OLD][6]["content"].startswith("The available tools have changed.")
    assert (
        sum(m["content"].startswith("<system-reminder>") for s in msgs["messages"] for m in s if m["role"] == "user")
        == 1
    )
    assert [m["role"] for m in by_session[NEW]] == turn
    tool_messages = sum(m["role"] == "tool" for s in msgs["messages"] for m in s)
    assert tool_messages == 2 + 2 + 4  # bash, read (old); shell, read (new); shell, read, subagent, read (fresh)
    assert by_session[NEW][2]["content"] == "hi\n"
    assert main(["inspect", "--losses", str(share / "b" / "opencode.db")]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "5 document(s), 0 bad record(s)" in text
    assert "storyline: no loss" in text and "to_messages: no loss" in text and "opencode: no loss" in text


def test_a_tool_output_in_several_blocks_is_joined_and_the_blocks_kept():
    """Modelled on a real row (a capture of OpenCode 0.0.0-beta-19381: a `shell` call whose output is two text
    blocks, the command's and OpenCode's note of its exit code): the output is the blocks' text joined by a blank
    line, the blocks stay in `content` (residual); one plain block is the output alone (the rows above)."""
    data = {
        "model": {"id": "big-pickle", "providerID": "opencode", "variant": "default"},
        "content": [
            {
                "type": "tool",
                "id": "call_58f0f85c4ab04876a3c8f994",
                "name": "shell",
                "executed": False,
                "state": {
                    "status": "completed",
                    "input": {"command": 'printf "beta failure check\\n"; exit 7'},
                    "content": [
                        {"type": "text", "text": "beta failure check\n"},
                        {"type": "text", "text": "Command exited with code 7."},
                    ],
                    "metadata": {"status": "completed", "truncated": False, "exit": 7},
                },
            }
        ],
    }
    message = export_message({"id": "msg_1", "session_id": "ses_1", "type": "assistant"}, data)
    state = message["parts"][0]["state"]
    assert state["output"] == "beta failure check\n\n\nCommand exited with code 7."
    assert state["content"] == data["content"][0]["state"]["content"]
    assert message["info"] | {} == {
        "modelID": "big-pickle",
        "providerID": "opencode",
        "variant": "default",
        "id": "msg_1",
        "sessionID": "ses_1",
        "role": "assistant",
    }
    odd = export_message({"id": "m", "session_id": "s", "type": "assistant"}, {"model": {"id": "x", "effort": "hi"}})
    assert odd["info"]["model"] == {"id": "x", "effort": "hi"}  # a shape OpenCode's backfill did not make: kept


def test_a_session_in_both_storages_merges_by_message_id_and_orphans_are_named(tmp_path):
    """The decisions of docs "OpenCode 2": a 1.x message OpenCode 2 has no row for comes first; a `session_message`
    row with a `message` row's id is that message (the 1.x row, fuller, is read); `session_message` rows of no session
    are refused by name; a bad `data` refuses its session only."""
    path = build(UPGRADED, tmp_path)
    con = sqlite3.connect(path)
    con.execute("pragma foreign_keys = off")
    con.execute("delete from session_message where id = 'msg_11dc0b7410017kTOc8H1lLx2Ro'")  # not backfilled
    rows = [
        ("msg_orphan", "ses_gone", "user", 1, '{"text": "of a session no table has", "time": {"created": 1}}'),
        ("msg_bad", NEW, "user", 30, '["not an object"]'),
    ]
    con.executemany(
        "insert into session_message (id, session_id, type, seq, time_created, time_updated, data) "
        "values (?, ?, ?, ?, 1791500600000, 1791500600000, ?)",
        rows,
    )
    con.commit()
    con.close()
    got = records(path)
    assert (
        got[0].story["session"] == OLD
        and got[0].story["turns"][0]["msg"][0]["text"] == '"Please USE A TOOL to print hi"'
    )
    assert len(got[0].story["turns"]) == 7  # with the `system` context update
    assert f"session {NEW}: the session_message row 'msg_bad': its data is not a JSON object" in str(got[1].error)
    assert "session ses_gone: 1 message(s) in session_message but no row in session_v2 or session" in str(got[2].error)
    assert len(got) == 3


def test_a_data_key_the_row_columns_would_overwrite_is_kept():
    """OpenCode reads a row back as ``{...data, id, type}`` (``projector.ts``): a synthetic message's own ``sessionID``
    (``message.ts``: the session it speaks of) stays; a ``data`` key named ``id`` or ``role`` (OpenCode 2 writes none)
    is kept beside the row's value, never overwritten."""
    row = {"id": "msg_9", "session_id": "ses_parent", "type": "synthetic"}
    message = export_message(row, {"sessionID": "ses_child", "text": "done", "id": "other", "time": {"created": 1}})
    assert message["info"]["sessionID"] == "ses_child" and message["info"]["id"] == "msg_9"
    assert message["info"]["idInData"] == "other" and message["info"]["role"] == "synthetic"
    assert message["parts"] == [{"type": "text", "text": "done"}]  # what the model was sent (fields.CONTEXT_ROLES)
    user = export_message({"id": "m", "session_id": "s", "type": "user"}, {"text": "hi"})
    assert user == {"info": {"id": "m", "role": "user", "sessionID": "s"}, "parts": [{"type": "text", "text": "hi"}]}


def test_a_2_0_beta_database_keeps_its_sessions_in_session(tmp_path):
    """The 2.0 betas wrote `session_message` rows for sessions of the `session` table (anomalyco/opencode
    `session/sql.ts` of then: its foreign key names `session`; `message` and `part` still defined): the fresh 2.0.26
    database with its `session_v2` named so, beside empty 1.x tables, reads as the same sessions."""
    path = build(FRESH, tmp_path)
    expected = [r.story for r in records(path)]
    con = sqlite3.connect(path)
    con.executescript(
        "alter table session_v2 rename to session;"
        "create table message (id text primary key, session_id text, time_created integer, time_updated integer,"
        " data text);"
        "create table part (id text primary key, message_id text, session_id text, time_created integer,"
        " time_updated integer, data text);"
    )
    con.close()
    assert [r.story for r in records(path)] == expected


def test_a_message_backfilled_under_a_new_id_is_read_once(tmp_path):
    """anomalyco/opencode `session/message-backfill.ts` names a backfilled 1.x message
    `evt_legacy_backfill_m_<ordinal>_<hash of the 1.x id>` (2.0.26 kept the 1.x id, as the upgraded dump shows): the
    upgraded database with its four backfilled rows renamed so is read as before, each message once."""
    path = build(UPGRADED, tmp_path)
    before = [r.story for r in records(path)]
    con = sqlite3.connect(path)
    legacy = [r[0] for r in con.execute("select id from message order by time_created, id")]
    for ordinal, old_id in enumerate(legacy):
        text = json.dumps([V2_BACKFILL_VERSION, OLD, old_id, "message", ordinal], separators=(",", ":"))
        new_id = f"evt_legacy_backfill_m_{ordinal:08d}_{hashlib.sha256(text.encode()).hexdigest()[:24]}"
        assert con.execute("update session_message set id = ? where id = ?", (new_id, old_id)).rowcount == 1
    con.commit()
    con.close()
    after = [r.story for r in records(path)]
    assert [s["turns"] for s in after] == [s["turns"] for s in before]
