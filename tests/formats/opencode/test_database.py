"""OpenCode's SQLite store read directly (tests/data/opencode/db/opencode.db: a real OpenCode 1.18.13 database,
WildChildForLife/lantern, provenance in tests/data/opencode/README.md), through every loader: hand counts from the
database's own rows against the rows and ``to_messages``, the two exports rebuilt from it by hand, the write-ahead log a
running OpenCode keeps (a real one, written here by SQLite), a foreign database and a damaged one."""

from __future__ import annotations

import gzip
import json
import logging
import shutil
import sqlite3
from pathlib import Path

import datasets
import pyarrow as pa
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError, NoConversationError
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import from_storyline, into_storyline, iter_records
from pchronicle_datasets.formats.database import opened
from pchronicle_datasets.formats.opencode.store import session_export
from pchronicle_datasets.loading.split import split_kind
from pchronicle_datasets.sidecars import sidecar_names

DATA = Path(__file__).resolve().parents[2] / "data" / "opencode"
DB = DATA / "db" / "opencode.db"
REBUILT = sorted((DATA / "lantern").glob("ses_*.json"))
# Counted by hand from the database (sqlite3: `select json_extract(data, '$.role'), count(*) from message group by 1`,
# the same over part's type; tests/data/opencode/README.md): 3 sessions, 7 messages (3 user, 4 assistant), 19 parts
# (5 text, 4 reasoning, 1 tool, 4 step-start, 4 step-finish, 1 patch), one call (write, completed) with its result.
SESSIONS = ["ses_03156b771ffeANj3CiDnYkqmmr", "ses_031559a74ffe4reBgr5U6MnTO4", "ses_031541bf9ffeMiy2LOFii47rch"]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def rows(query: str) -> list[tuple]:
    """The database's own rows, read by SQLite from a copy (the committed file is never opened for writing)."""
    with opened(DB.read_bytes(), DB.name) as con:
        return con.execute(query).fetchall()


def stories() -> list[dict]:
    return into_storyline("auto", DB.read_bytes(), document_id="opencode.db")


def test_hand_counts_match_the_documents():
    assert [r[0] for r in rows("select id from session order by time_created, id")] == SESSIONS
    roles = dict(rows("select json_extract(data, '$.role'), count(*) from message group by 1"))
    kinds = dict(rows("select json_extract(data, '$.type'), count(*) from part group by 1"))
    assert roles == {"user": 3, "assistant": 4}
    assert kinds == {"text": 5, "reasoning": 4, "tool": 1, "step-start": 4, "step-finish": 4, "patch": 1}
    got = stories()
    assert [s["session"] for s in got] == SESSIONS
    turns = [t for s in got for t in s["turns"]]  # every message holds a text, reasoning or tool part: one turn each
    assert [t["src"] for t in turns].count("user") == 3 and [t["src"] for t in turns].count("agent") == 4
    assert sum(len(t.get("tool_calls", [])) for t in turns) == 1
    assert [(c["fn"], c["response"]["status"]) for t in turns for c in t.get("tool_calls", [])] == [
        ("write", "completed")
    ]
    assert sum("result" in c for t in turns for c in t.get("tool_calls", [])) == 1
    assert sum(1 for t in turns if "reason" in t) == 4  # one reasoning part in each assistant message
    assert all(s["agent"] == {"id": "opencode", "name": "build", "ver": "1.18.13"} for s in got)
    assert all(s["origin"] == {"format": "opencode", "document_id": "opencode.db"} for s in got)


def test_the_exports_rebuilt_by_hand_are_the_database_documents():
    by_session = {s["session"]: s for s in stories()}
    for path in REBUILT:
        [rebuilt] = into_storyline("opencode", path.read_bytes(), document_id="opencode.db")
        assert by_session[rebuilt["session"]] == rebuilt, path.name
    with opened(DB.read_bytes(), DB.name) as con:
        con.row_factory = sqlite3.Row
        for path in REBUILT:
            row = dict(con.execute("select * from session where id = ?", (path.stem,)).fetchone())
            assert session_export(con, row) == json.loads(path.read_text(encoding="utf-8"))


def test_each_document_is_written_back_as_the_export_opencode_prints():
    with opened(DB.read_bytes(), DB.name) as con:
        con.row_factory = sqlite3.Row
        exports = [session_export(con, dict(r)) for r in con.execute("select * from session order by time_created")]
    for story, export in zip(stories(), exports, strict=True):
        with pc.collect_losses() as losses:
            text = from_storyline("opencode", [story])
        assert not losses
        assert json.loads(text) == export
        assert into_storyline("opencode", text, document_id="opencode.db") == [story]


@pytest.fixture
def share(tmp_path: Path) -> Path:
    """``~/.local/share/opencode`` as OpenCode leaves it: the database, its credentials, the packages it installs for
    its language servers, a file of the store OpenCode used before 1.2, and a shared-memory index (``-shm``) that is
    never read."""
    root = tmp_path / "opencode"
    (root / "storage" / "session" / "global").mkdir(parents=True)
    (root / "bin" / "node_modules" / "typescript").mkdir(parents=True)
    (root / "bin" / "package.json").write_text('{"dependencies": {"typescript": "5.9.2"}}')
    (root / "bin" / "node_modules" / "typescript" / "package.json").write_text('{"name": "typescript"}')
    shutil.copy(DB, root / "opencode.db")
    (root / "auth.json").write_text('{"anthropic": {"type": "api", "key": "not-a-real-key"}}')
    (root / "storage" / "session" / "global" / "ses_old.json").write_text('{"id": "ses_old"}')
    (root / "opencode.db-shm").write_bytes(b"\x00" * 32768)
    return root


@pytest.mark.parametrize("fmt", ["auto", "opencode"])
@pytest.mark.parametrize("kwargs", [{}, {"num_proc": 2}, {"streaming": True}], ids=["one", "workers", "stream"])
def test_load_dataset_reads_the_folder_one_row_per_session(share, tmp_path, caplog, fmt, kwargs):
    with caplog.at_level(logging.WARNING):
        ds = datasets.load_dataset(
            "pchronicle", fmt, data_dir=str(share), split="train", cache_dir=str(tmp_path / "c"), **kwargs
        )
    got = list(ds)
    assert [r["session"] for r in got] == SESSIONS
    assert [pc.row_to_story(r) for r in got] == stories()
    assert "left out 4 files that hold no session: auth.json (the provider credentials OpenCode keeps" in caplog.text
    if not kwargs:
        msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
        assert [[m["role"] for m in r["messages"]] for r in msgs] == [
            ["user", "assistant"],
            ["user", "assistant"],
            ["user", "assistant", "tool", "assistant"],
        ]
        assert msgs[2]["messages"][2]["content"] == "Wrote file successfully."


def test_read_batches_and_the_cli(share, tmp_path, capsys):
    table = pa.Table.from_batches(pc.read_batches(share), schema=pc.STORYLINE_FEATURES.arrow_schema)
    assert table.column("session").to_pylist() == SESSIONS
    out = tmp_path / "oc"
    assert main(["convert", str(share / "opencode.db"), "--to", "opencode", "--per-document", "-o", str(out)]) == 0
    for path in REBUILT:  # the export of each session, as OpenCode prints it (rebuilt by hand from the same rows)
        assert json.loads((out / path.name).read_text()) == json.loads(path.read_text())
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{s}.json" for s in SESSIONS)
    assert main(["validate", str(share)]) == 0
    assert "3 valid document(s), 0 problem(s)" in capsys.readouterr().err
    assert main(["inspect", "--json", str(share / "opencode.db")]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 3


def with_logged_session(source: Path, folder: Path) -> None:
    """``folder`` given the database and the write-ahead log of a running OpenCode: SQLite itself writes a session
    into the log of a copy of ``source`` (WAL mode, no checkpoint), and both files are copied while the connection
    still holds the log open (closing it would fold the log into the file)."""
    work = folder.parent / "running"
    work.mkdir()
    shutil.copy(source, work / "opencode.db")
    con = sqlite3.connect(work / "opencode.db")
    try:
        assert con.execute("pragma journal_mode=wal").fetchone() == ("wal",)
        con.execute("pragma wal_autocheckpoint=0")
        con.execute(
            "insert into session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "values ('ses_inthelog', 'global', 'late-owl', '/work', 'In the log only', '1.18.13', 1785879000000, "
            "1785879000001)"
        )
        data = {"role": "user", "time": {"created": 1785879000002}, "agent": "build"}
        con.execute(
            "insert into message (id, session_id, time_created, time_updated, data) values (?, ?, ?, ?, ?)",
            ("msg_inthelog", "ses_inthelog", 1785879000002, 1785879000002, json.dumps(data)),
        )
        con.execute(
            "insert into part (id, message_id, session_id, time_created, time_updated, data) values (?, ?, ?, ?, ?, ?)",
            (
                "prt_inthelog",
                "msg_inthelog",
                "ses_inthelog",
                1785879000003,
                1785879000003,
                '{"type": "text", "text": "hi"}',
            ),
        )
        con.commit()
        folder.mkdir()
        shutil.copy(work / "opencode.db", folder / "opencode.db")
        shutil.copy(work / "opencode.db-wal", folder / "opencode.db-wal")
    finally:
        con.close()


def test_the_write_ahead_log_beside_the_database_is_read_with_it(tmp_path, capsys):
    folder = tmp_path / "share"
    with_logged_session(DB, folder)
    assert (folder / "opencode.db-wal").stat().st_size > 0
    alone = into_storyline("opencode", (folder / "opencode.db").read_bytes())
    assert [s["session"] for s in alone] == SESSIONS  # the file alone: not yet folded in
    ds = datasets.load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "c"))
    assert ds["session"] == [*SESSIONS, "ses_inthelog"]
    assert pc.row_to_story(ds[3])["turns"][0]["msg"] == [{"type": "text", "text": "hi"}]
    table = pa.Table.from_batches(pc.read_batches(folder / "opencode.db"), schema=pc.STORYLINE_FEATURES.arrow_schema)
    assert table.num_rows == 4
    assert main(["inspect", "--json", str(folder / "opencode.db")]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 4
    assert sidecar_names("share/opencode.db") == ["share/opencode.db-wal"]


def test_a_load_from_the_cache_sees_sessions_added_to_the_log(tmp_path):
    """A running OpenCode writes to the log, not the database, until it checkpoints: the database's time stays the
    same, so the log's size and time are part of what the prepared cache is known by (``loading/folder.py``)."""
    logged = tmp_path / "logged"
    with_logged_session(DB, logged)
    folder = tmp_path / "share"
    folder.mkdir()
    shutil.copy2(logged / "opencode.db", folder / "opencode.db")
    cache = str(tmp_path / "c")
    assert (
        datasets.load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=cache).num_rows == 3
    )
    named = {"data_files": str(folder / "opencode.db"), "split": "train", "cache_dir": cache}
    assert datasets.load_dataset("pchronicle", "auto", **named).num_rows == 3
    shutil.copy2(logged / "opencode.db-wal", folder / "opencode.db-wal")  # the database file itself is unchanged
    assert (
        datasets.load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=cache).num_rows == 4
    )
    assert datasets.load_dataset("pchronicle", "auto", **named).num_rows == 4


def test_a_database_no_format_reads_is_left_out_of_a_folder_and_named(share, tmp_path, caplog):
    con = sqlite3.connect(share / "places.db")
    con.execute("create table moz_places (id integer, url text)")
    con.commit()
    con.close()
    with caplog.at_level(logging.WARNING):
        ds = datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(share), split="train", cache_dir=str(tmp_path / "c")
        )
    assert ds.num_rows == 3
    assert "places.db (a SQLite database (tables moz_places) that holds no sessions any format reads" in caplog.text
    with pytest.raises(NoConversationError, match=r"tables moz_places.*name its format with --from") as alone:
        into_storyline("auto", (share / "places.db").read_bytes(), document_id="places.db")
    assert alone.value.document_id == "places.db"
    with pytest.raises(NoConversationError, match=r"which claude-code does not read .*read it with --from opencode"):
        into_storyline("claude-code", DB.read_bytes(), document_id="opencode.db")
    with pytest.raises(FormatError, match="not an OpenCode database: it has no table message, part, session"):
        into_storyline("opencode", (share / "places.db").read_bytes(), document_id="places.db")


def test_a_damaged_database_is_refused_with_its_file_named(share, tmp_path):
    data = DB.read_bytes()
    (share / "broken.db").write_bytes(data[:100] + b"\x00" * 4000 + data[5000:20000])
    with pytest.raises(datasets.exceptions.DatasetGenerationError) as got:
        datasets.load_dataset("pchronicle", "auto", data_dir=str(share), split="train", cache_dir=str(tmp_path / "c"))
    assert "the SQLite database cannot be read" in str(got.value.__cause__ or got.value)
    assert "broken.db" in str(got.value.__cause__ or got.value)
    [rec] = iter_records("auto", (share / "broken.db").read_bytes(), "broken.db")
    assert isinstance(rec.error, FormatError) and rec.error.document_id == "broken.db" and rec.raw == b""


def test_a_database_is_read_whole_never_split_and_within_max_record_size():
    head = DB.read_bytes()[: 1 << 20]
    assert split_kind(head, "auto") is None and split_kind(head, "opencode") is None
    [rec] = iter_records("auto", DB.read_bytes(), "opencode.db", max_record_size=1 << 16)
    assert "max_record_size" in str(rec.error) and "opencode.db" in str(rec.error)
    compressed = gzip.compress(DB.read_bytes())  # a database kept compressed reads as the file
    assert [r.story["session"] for r in iter_records("auto", compressed, "opencode.db.gz")] == SESSIONS


def test_a_bad_row_refuses_its_session_only_and_an_empty_session_is_left_out(tmp_path, caplog):
    folder = tmp_path / "share"
    folder.mkdir()
    shutil.copy(DB, folder / "opencode.db")
    con = sqlite3.connect(folder / "opencode.db")
    con.execute("update message set data = '[1]' where id = 'msg_fceaa6602001B2FFryUj66zJ0w'")  # of SESSIONS[1]
    con.execute(
        "insert into session (id, project_id, slug, directory, title, version, time_created, time_updated) "
        "values ('ses_empty', 'global', 'quiet-fox', '/work', 'Started and left', '1.18.13', 1785879100000, "
        "1785879100000)"
    )
    con.commit()
    con.close()
    records = list(iter_records("auto", (folder / "opencode.db").read_bytes(), "opencode.db"))
    assert [r.story["session"] for r in records if r.story] == [SESSIONS[0], SESSIONS[2]]
    bad, empty = (r.error for r in records if r.error)
    assert str(bad).startswith(
        f"(root): session {SESSIONS[1]}: the message row 'msg_fceaa6602001B2FFryUj66zJ0w': its data is not a JSON "
        "object"
    )
    assert isinstance(empty, NoConversationError) and "ses_empty" in str(empty)
    with caplog.at_level(logging.WARNING):
        ds = datasets.load_dataset(
            "pchronicle",
            "auto",
            data_dir=str(folder),
            split="train",
            on_bad_records="skip",
            cache_dir=str(tmp_path / "c"),
        )
    assert ds["session"] == [SESSIONS[0], SESSIONS[2]]
    assert "1 bad record" in caplog.text and "left out 1 file that holds no conversation: opencode.db" in caplog.text


def test_a_subagent_session_in_a_database_is_linked_as_two_exports_are(tmp_path):
    """The real database has no child session: the two exports written from the schema (a parent whose ``task`` call
    names its child, and the child with ``info.parentID``) are put into a copy of it as OpenCode's rows, and read back
    with the same turns, ``/parent`` and ``/children`` as the exports give."""
    exports = [json.loads(p.read_text()) for p in sorted(DATA.glob("ses_*.json"))]
    path = tmp_path / "opencode.db"
    shutil.copy(DB, path)
    con = sqlite3.connect(path)
    for export in exports:
        info = export["info"]
        con.execute(
            "insert into session (id, project_id, parent_id, slug, directory, title, version, agent, time_created, "
            "time_updated) values (?, ?, ?, 'a-slug', ?, ?, ?, ?, ?, ?)",
            (info["id"], info["projectID"], info.get("parentID"), info["directory"], info["title"], info["version"],
             info["agent"], info["time"]["created"], info["time"]["updated"]),
        )  # fmt: skip
        for m, message in enumerate(export["messages"]):
            data = {k: v for k, v in message["info"].items() if k not in ("id", "sessionID")}
            mid = message["info"]["id"]
            con.execute(
                "insert into message (id, session_id, time_created, time_updated, data) values (?, ?, ?, ?, ?)",
                (mid, info["id"], info["time"]["created"] + m, 0, json.dumps(data)),
            )
            for p, part in enumerate(message["parts"]):
                data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                con.execute(
                    "insert into part (id, message_id, session_id, time_created, time_updated, data) "
                    "values (?, ?, ?, 0, 0, ?)",
                    (f"prt_{mid}_{p:03d}", mid, info["id"], json.dumps(data)),  # ids in the export's part order
                )
    con.commit()
    con.close()
    read = {s["session"]: s for s in into_storyline("auto", path.read_bytes(), document_id="opencode.db")}
    assert list(read) == [*(e["info"]["id"] for e in exports), *SESSIONS]  # by time_created: theirs are older
    for export in exports:
        [alone] = into_storyline("opencode", json.dumps(export), document_id="x.json")
        got = read[alone["session"]]
        assert got["turns"] == alone["turns"]
        assert (got.get("parent"), got.get("children")) == (alone.get("parent"), alone.get("children"))
    parent, child = (read[e["info"]["id"]] for e in exports)
    assert parent["children"] == [child["session"]] and child["parent"] == {
        "psid": parent["session"],
        "rel": "subagent",
    }


def test_opencode_2s_sessions_beside_the_real_1x_ones_are_read_each_once(tmp_path):
    """docs/formats/opencode.md, "OpenCode 2": a copy of the real 1.18.13 database given what an upgrade to OpenCode 2
    adds (its ``session_v2`` table, with the columns of anomalyco/opencode's schema the reader needs, and rows in the
    real database's own ``session_message`` table): a session only ``session_v2`` holds is read, a 1.x session
    continued in 2.x is read with its later message (after its 1.x ones), a ``session_message`` row repeating a
    ``message`` row's id is that message, read once; before (main at 641fdcb), the first two were refused by name."""
    path = tmp_path / "opencode.db"
    shutil.copy(DB, path)
    con = sqlite3.connect(path)
    con.execute("create table session_v2 (id text primary key, slug text, directory text, time_created integer)")
    con.execute("insert into session_v2 values ('ses_v2only', 'calm-owl', '/work', 1785879200000)")
    con.execute(f"insert into session_v2 values ('{SESSIONS[0]}', 'x', '/work', 1785879000000)")  # moved over
    rows = [
        ("msg_v2a", "ses_v2only", "user", 1, '{"text": "after the upgrade"}'),
        ("msg_v2b", "ses_v2only", "assistant", 2, '{"content": [{"type": "text", "text": "ok"}]}'),
        ("msg_v2c", SESSIONS[0], "user", 9, '{"text": "the same session, continued in 2.0"}'),
        # the same message in both tables, with one id (OpenCode 2's backfill): read once, from `message`
        ("msg_fceaa6602001B2FFryUj66zJ0w", SESSIONS[1], "user", 1, '{"text": "as in message"}'),
    ]
    con.execute("pragma foreign_keys = off")
    con.executemany(
        "insert into session_message (id, session_id, type, seq, time_created, time_updated, data) "
        "values (?, ?, ?, ?, 1785879300000, 1785879300000, ?)",
        rows,
    )
    con.commit()
    con.close()
    before = {s["session"]: s for s in stories()}
    got = list(iter_records("auto", path.read_bytes(), "opencode.db"))
    assert [r.error for r in got] == [None] * 4
    read = {r.story["session"]: r.story for r in got}
    assert sorted(read) == sorted([*SESSIONS, "ses_v2only"])  # each once (in time_created order, session_v2's first)
    continued = read[SESSIONS[0]]["turns"]
    assert continued[:-1] == before[SESSIONS[0]]["turns"]
    assert continued[-1]["msg"] == [{"type": "text", "text": "the same session, continued in 2.0"}]
    assert read[SESSIONS[1]]["turns"] == before[SESSIONS[1]]["turns"]
    assert [t["msg"] for t in read["ses_v2only"]["turns"]] == [
        [{"type": "text", "text": "after the upgrade"}],
        [{"type": "text", "text": "ok"}],
    ]
    ds = datasets.load_dataset("pchronicle", "auto", data_files=str(path), split="train", cache_dir=str(tmp_path / "c"))
    assert ds.num_rows == 4

    con = sqlite3.connect(path)  # a database of OpenCode 2 alone: its two tables name it
    con.executescript("drop table part; drop table message; drop table session;")
    con.close()
    first, alone, orphan = iter_records("auto", path.read_bytes(), "opencode.db")
    assert (first.story["session"], alone.story["session"]) == (SESSIONS[0], "ses_v2only")
    assert f"session {SESSIONS[1]}: 1 message(s) in session_message but no row in session_v2 or session" in str(
        orphan.error
    )  # its session row was in the 1.x table dropped here: the message is named, not left out
    con = sqlite3.connect(path)
    con.executescript("drop table session_v2;")
    con.close()
    [record] = iter_records("opencode", path.read_bytes(), "opencode.db")
    assert "not an OpenCode database: it has no table message, part, session, nor OpenCode 2's" in str(record.error)
