"""The goose format on written inputs: each decision of docs/formats/goose.md where Goose's source is silent, each
part kind the real database lacks (images, legacy results, repeated call ids, responses that answer no call,
messages the reader cannot read), the database's refusals, and the writer for other formats' documents."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import FormatError, NoConversationError
from pchronicle_datasets.formats import detect, from_storyline, into_storyline, iter_records

SCHEMA = """
create table schema_version (version integer primary key, applied_at timestamp default current_timestamp);
create table sessions (id text primary key, name text not null default '', description text not null default '',
    user_set_name boolean default false, session_type text not null default 'user', working_dir text not null,
    created_at timestamp default current_timestamp, updated_at timestamp default current_timestamp,
    extension_data text default '{}', total_tokens integer, recipe_json text, model_config_json text,
    parent_session_id text);
create table messages (id integer primary key autoincrement, message_id text, session_id text not null,
    role text not null, content_json text not null, created_timestamp integer not null,
    timestamp timestamp default current_timestamp, tokens integer, metadata_json text);
"""


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def request(cid: str, name: str = "shell", args: dict | None = None) -> dict:
    value = {"name": name, "arguments": args if args is not None else {"command": "ls"}}
    return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": value}}


def response(cid: str, out: str = "a.py", is_error: bool | None = False) -> dict:
    value: dict = {"content": [text(out)]}
    if is_error is not None:
        value["isError"] = is_error
    return {"type": "toolResponse", "id": cid, "toolResult": {"status": "success", "value": value}}


def message(role: str, content: list, created: int = 1785964761, **more) -> dict:
    return {"id": f"msg_{created}", "role": role, "created": created, "content": content, **more}


def export(conversation: list, **more) -> dict:
    return {
        "id": "20260805_1",
        "working_dir": "/work",
        "name": "a session",
        "user_set_name": False,
        "session_type": "user",
        "created_at": "2026-08-05T21:19:21Z",
        "updated_at": "2026-08-05T21:21:52Z",
        "extension_data": {},
        "conversation": conversation,
        "message_count": len(conversation),
        **more,
    }


def roundtrip(value: dict) -> dict:
    """The document of an export, after checking that the writer gives the export back and its reading again."""
    raw = json.dumps(value)
    [story] = into_storyline("goose", raw, document_id="s.json")
    with pc.collect_losses() as losses:
        out = from_storyline("goose", [story])
    assert not losses
    assert json.loads(out) == value
    assert into_storyline("goose", out, document_id="s.json") == [story]
    return story


def test_an_export_is_detected_and_no_other_shape_is_taken():
    raw = json.dumps(export([message("user", [text("hi")])])).encode()
    assert detect(raw).NAME == "goose"
    for other in (
        {"id": "s", "messages": [{"role": "user", "content": "hi"}]},
        {"info": {"id": "ses_1"}, "messages": []},
        {"id": "s", "working_dir": "/w", "extension_data": {}, "conversation": [{"role": "user", "content": "hi"}]},
    ):
        assert not pc.formats.get_format("goose").sniff(other)


def test_thinking_parts_interleaved_with_text_are_one_reason_cut_back_by_length():
    parts = [
        {"type": "thinking", "thinking": "Let me", "signature": ""},
        text("Looking."),
        {"type": "thinking", "thinking": " look", "signature": "sig-1"},
        request("c1"),
    ]
    story = roundtrip(export([message("user", [text("go")]), message("assistant", parts, 1785964800)]))
    turn = story["turns"][1]
    assert turn["reason"] == "Let me look" and turn["msg"] == [text("Looking.")]
    assert story["unknown_fields"]["sources"]["goose"]["fields"]["/conversation/1/content/2/signature"] == "sig-1"


def test_usage_and_inference_metadata():
    meta = {
        "userVisible": True,
        "agentVisible": True,
        "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12, "elapsedMs": 900, "cacheReadTokens": 4},
        "inference": {"provider": "openai", "requestedModel": "gpt-x", "resolvedModel": "gpt-x-2026"},
    }
    story = roundtrip(export([message("user", [text("hi")]), message("assistant", [text("yo")], metadata=meta)]))
    turn = story["turns"][1]
    assert turn["metrics"] == {"prompt_tokens": 10, "completion_tokens": 2, "extra": {"total_tokens": 12}}
    assert (turn["latency_ms"], turn["model"]) == (900, "gpt-x-2026")
    fields = story["unknown_fields"]["sources"]["goose"]["fields"]
    assert fields["/conversation/1/metadata/usage/cacheReadTokens"] == 4
    assert fields["/conversation/1/metadata/agentVisible"] is True


def test_images_legacy_results_and_results_of_several_blocks():
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    legacy = {"type": "toolResponse", "id": "c2", "toolResult": {"status": "success", "value": [text("x"), text("y")]}}
    shot = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "annotations": {"priority": 0.5}}
    mixed = response("c3")
    mixed["toolResult"]["value"]["content"] = [text("see"), shot]
    story = roundtrip(
        export(
            [
                message("user", [text("what is this?"), image]),
                message("assistant", [request("c1"), request("c2"), request("c3")], 1785964800),
                message("user", [response("c1", is_error=None), legacy, mixed], 1785964801),
            ]
        )
    )
    assert story["turns"][0]["msg"] == [text("what is this?"), image]
    c1, c2, c3 = story["turns"][1]["tool_calls"]
    assert c1["result"] == "a.py" and "response" not in c1
    assert c2["result"] == [text("x"), text("y")] and "response" not in c2
    assert c3["result"] == [text("see"), shot] and c3["response"] == {"status": "success"}
    assert len(story["turns"]) == 2  # the message of results only makes no turn


def test_a_result_block_for_the_users_eyes_only_is_not_the_models_result():
    """Goose's developer shell answers with its output twice: for the model (``audience: ["assistant"]``) and for the
    user (``audience: ["user"]``, priority 0); goose sends the model only blocks with no audience or with
    ``assistant`` in it. The user's copy stays in its place (written back), out of the result: before, the
    training example showed the output twice."""
    for_model = {**text("a.py\n"), "annotations": {"audience": ["assistant"]}}
    for_user = {**text("a.py\n"), "annotations": {"audience": ["user"], "priority": 0.0}}
    shell = response("c1")
    shell["toolResult"]["value"]["content"] = [for_model, for_user]
    user_first = response("c2")
    user_first["toolResult"]["value"]["content"] = [for_user, text("b.py"), text("c.py")]
    legacy = {"type": "toolResponse", "id": "c3", "toolResult": {"status": "success", "value": [for_user]}}
    story = roundtrip(
        export(
            [
                message("user", [text("list the files")]),
                message("assistant", [request("c1"), request("c2"), request("c3")], 1785964800),
                message("user", [shell, user_first, legacy], 1785964801),
                message("assistant", [text("a.py")], 1785964802),
            ]
        )
    )
    c1, c2, c3 = story["turns"][1]["tool_calls"]
    assert c1["result"] == "a.py\n" and c2["result"] == [text("b.py"), text("c.py")] and c3["result"] == []
    out = pc.to_messages(story)["messages"]
    assert [m["content"] for m in out if m["role"] == "tool"] == ["a.py\n", "b.pyc.py", ""]


def test_a_repeated_call_id_is_renamed_and_each_response_answers_the_latest_call():
    story = roundtrip(
        export(
            [
                message("user", [text("go")]),
                message("assistant", [request("call_0")], 1785964800),
                message("user", [response("call_0", "first")], 1785964801),
                message("assistant", [request("call_0", "read")], 1785964802),
                message("user", [response("call_0", "second")], 1785964803),
            ]
        )
    )
    calls = [c for t in story["turns"] for c in t.get("tool_calls", [])]
    assert [(c["tcid"], c["fn"], c["result"]) for c in calls] == [
        ("call_0", "shell", "first"),
        ("call_0#2", "read", "second"),
    ]
    assert story["meta"]["source_call_ids"] == {"call_0#2": "call_0"}


def test_parts_and_messages_the_reader_cannot_read_stay_in_their_place():
    bad_call = {"type": "toolRequest", "id": "c9", "toolCall": {"status": "error", "error": "could not parse"}}
    note = {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "compacting"}
    story = roundtrip(
        export(
            [
                message("user", [text("go")]),
                message("assistant", [text("trying"), bad_call], 1785964800),
                message("user", [response("c9", "Error: could not parse")], 1785964801),  # answers no call
                message("assistant", [note], 1785964802),
                message("system", [text("?")], 1785964803),
                message("user", [response("nobody")], 1785964804),
                message("assistant", [text("done")], 1785964805),
            ]
        )
    )
    assert [t["msg"] for t in story["turns"]] == [[text("go")], [text("trying")], [text("done")]]
    assert story["meta"]["goose"]["layout"][2:6] == [None, None, None, None]
    fields = story["unknown_fields"]["sources"]["goose"]["fields"]
    assert fields["/conversation/1/content/1"] == bad_call
    assert fields["/conversation/3"]["content"] == [note]


def test_a_session_whose_messages_are_all_unreadable_is_refused_and_an_empty_one_is_no_conversation():
    with pytest.raises(FormatError, match="no message this reader can read") as exc:
        into_storyline("goose", json.dumps(export([message("system", [text("?")])])), document_id="s.json")
    assert exc.value.pointer == "/conversation"
    with pytest.raises(NoConversationError):
        into_storyline("goose", json.dumps(export([])), document_id="s.json")


def test_another_formats_document_is_written_as_an_export_goose_reads(tmp_path):
    chat = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "a.py"},
        {"role": "assistant", "content": "a.py"},
    ]
    [story] = into_storyline("chat", json.dumps(chat), document_id="c.json")
    with pc.collect_losses() as losses:
        out = from_storyline("goose", [story])
    assert losses  # the system turn, at least, has no place in a goose export
    [back] = into_storyline("auto", out, document_id="c.goose.json")
    assert [t["src"] for t in back["turns"]] == ["user", "user", "agent", "agent"]
    [call] = back["turns"][2]["tool_calls"]
    assert (call["fn"], call["result"]) == ("ls", "a.py")


# ------------------------------------------------------------------------------------------ databases


def database(path: Path, sessions: list[tuple], messages: list[tuple], extra: str = "") -> bytes:
    con = sqlite3.connect(path)
    con.executescript(SCHEMA + extra)
    con.executemany("insert into sessions (id, working_dir, name, model_config_json) values (?, ?, ?, ?)", sessions)
    con.executemany(
        "insert into messages (message_id, session_id, role, content_json, created_timestamp, timestamp) "
        "values (?, ?, ?, ?, ?, ?)",
        messages,
    )
    con.commit()
    con.close()
    return path.read_bytes()


def test_a_database_gives_each_session_and_refuses_an_empty_one_on_its_own(tmp_path):
    hi = json.dumps([text("hi")])
    data = database(
        tmp_path / "sessions.db",
        [("20260805_1", "/w", "one", '{"model_name": "m"'), ("20260805_2", "/w", "empty", None)],
        [("msg_1", "20260805_1", "user", hi, 1785964761, "2026-08-05 21:19:21")],
    )
    records = list(iter_records("goose", data, "sessions.db"))
    assert [r.story is not None for r in records] == [True, False]
    story = records[0].story
    # model_config_json that is not JSON stays as its text, under the column's name
    assert "model" not in story["agent"]
    assert story["unknown_fields"]["sources"]["goose"]["fields"]["/model_config_json"] == '{"model_name": "m"'
    assert isinstance(records[1].error, NoConversationError)
    assert "session '20260805_2'" in str(records[1].error) and "sessions.db" in str(records[1].error)


def test_a_database_that_is_not_gooses_is_refused_naming_the_column(tmp_path):
    con = sqlite3.connect(tmp_path / "x.db")
    con.executescript(
        "create table sessions (id text); create table messages (id integer); create table schema_version (v);"
    )
    con.close()
    [record] = iter_records("goose", (tmp_path / "x.db").read_bytes(), "x.db")
    assert "the table sessions has no column working_dir" in str(record.error)
    con = sqlite3.connect(tmp_path / "opencode.db")
    con.executescript("create table session (id text); create table message (id text); create table part (id text);")
    con.close()
    [record] = iter_records("goose", (tmp_path / "opencode.db").read_bytes(), "opencode.db")
    assert "it has no table sessions" in str(record.error) and "opencode.db" in str(record.error)


def test_a_database_with_its_write_ahead_log(tmp_path):
    path = tmp_path / "sessions.db"
    database(path, [("20260805_1", "/w", "one", None)], [])
    con = sqlite3.connect(path)
    con.execute("pragma journal_mode = wal")
    con.execute("pragma wal_autocheckpoint = 0")
    con.execute(
        "insert into messages (session_id, role, content_json, created_timestamp) values (?, ?, ?, ?)",
        ("20260805_1", "user", json.dumps([text("only in the log")]), 1785964761),
    )
    con.commit()
    main, wal = path.read_bytes(), (tmp_path / "sessions.db-wal").read_bytes()
    con.close()
    [without] = iter_records("goose", main, "sessions.db")
    assert isinstance(without.error, NoConversationError)
    goose = pc.formats.get_format("goose")  # the reader takes the log beside the file (the loaders pair them)
    [story] = [r.story for r in goose.iter_records(main, "sessions.db", wal=wal)]
    assert story["turns"][0]["msg"] == [text("only in the log")]


def test_the_loaders_give_a_database_its_write_ahead_log(tmp_path):
    # What every loader does with a database and the -wal beside it (formats.iter_records with sidecar=, as the
    # builder, the CLI and Spark call it): the reader read the database's bytes without its log.
    path = tmp_path / "sessions.db"
    database(path, [("20260805_1", "/w", "one", None)], [])
    con = sqlite3.connect(path)
    con.execute("pragma journal_mode = wal")
    con.execute("pragma wal_autocheckpoint = 0")
    con.execute(
        "insert into messages (session_id, role, content_json, created_timestamp) values (?, ?, ?, ?)",
        ("20260805_1", "user", json.dumps([text("only in the log")]), 1785964761),
    )
    con.commit()
    main, wal = path.read_bytes(), (tmp_path / "sessions.db-wal").read_bytes()
    con.close()
    for fmt in ("auto", "goose"):
        [record] = pc.formats.iter_records(fmt, main, "sessions.db", sidecar=wal)
        assert record.error is None and record.story["turns"][0]["msg"] == [text("only in the log")]
