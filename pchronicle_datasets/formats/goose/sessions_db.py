"""Goose's SQLite store (``~/.local/share/goose/sessions/sessions.db``) → the JSON shape of its sessions: each row
of ``sessions`` with its ``messages`` rows assembled into what ``goose session export --format json`` prints
(docs/formats/goose.md, "The database"). Only assembly: the JSON reader maps the shape (one home for the mapping).

>>> import sqlite3
>>> con = sqlite3.connect(":memory:")
>>> _ = con.executescript(
...     "create table schema_version (version integer);"
...     "create table sessions (id text, name text, description text, working_dir text, created_at timestamp,"
...     " extension_data text, user_set_name boolean, model_config_json text);"
...     "create table messages (id integer primary key, session_id text, role text, content_json text,"
...     " created_timestamp integer, timestamp timestamp, tokens integer, metadata_json text);"
...     "insert into sessions values ('20260805_1', 'n', '', '/w', '2026-08-05 21:19:21', '{}', 0, null);"
...     "insert into messages values (1, '20260805_1', 'user', '[{\\"type\\": \\"text\\", \\"text\\": \\"hi\\"}]',"
...     " 1785964761, '2026-08-05 21:19:21', null, null);")
>>> [session] = sessions(con)
>>> session["created_at"], session["user_set_name"], session["conversation"], session["message_count"]
('2026-08-05T21:19:21Z', False, [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}], \
'created': 1785964761, 'timestamp': '2026-08-05T21:19:21Z'}], 1)
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from ...errors import FormatError
from .fields import (
    LEDGER_DROPPED,
    LEDGER_KEY,
    LEGACY_NAME,
    MESSAGE_COLUMNS,
    MESSAGE_JSON_COLUMNS,
    MESSAGE_OPTIONAL,
    MESSAGE_TIME_COLUMNS,
    REQUIRED_COLUMNS,
    SESSION_BOOL_COLUMNS,
    SESSION_JSON_COLUMNS,
    SESSION_TIME_COLUMNS,
)

__all__ = ["check_schema", "sessions"]

#: SQLite's ``CURRENT_TIMESTAMP`` text (UTC), optionally with fractions of a second.
_SQLITE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)")


def _time(value: Any) -> Any:
    """SQLite's UTC text as RFC 3339, as serde prints Goose's ``DateTime<Utc>``; any other value as it is."""
    if type(value) is str and (m := _SQLITE_TIME.fullmatch(value)):
        return f"{m[1]}T{m[2]}Z"
    return value


def _json(value: Any) -> tuple[bool, Any]:
    """``(True, parsed)`` for JSON text, else ``(False, value)``: text Goose could not read is kept as text."""
    if type(value) is not str:
        return False, value
    try:
        return True, orjson.loads(value)
    except orjson.JSONDecodeError:
        return False, value


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in con.execute(f"pragma table_info({table})")]


def check_schema(con: sqlite3.Connection) -> None:
    """A ``FormatError`` naming the table and column when the database lacks one this reader needs."""
    for table, needed in REQUIRED_COLUMNS.items():
        have = set(_columns(con, table))
        if not have:
            raise FormatError(f"not a Goose sessions database: it has no table {table}", pointer="")
        for column in needed:
            if column not in have:
                raise FormatError(
                    f"not a Goose sessions database: the table {table} has no column {column}", pointer=""
                )


def _session(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column, value in row.items():
        if column in SESSION_JSON_COLUMNS:
            parsed, value = _json(value)
            out[SESSION_JSON_COLUMNS[column] if parsed or value is None else column] = value
        elif column in SESSION_BOOL_COLUMNS and value in (0, 1):
            out[column] = bool(value)
        elif column in SESSION_TIME_COLUMNS:
            out[column] = _time(value)
        elif column == LEGACY_NAME and value == "":
            continue  # the column's default, superseded by name
        else:
            out[column] = value
    return out


def _message(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column, value in row.items():
        if column in MESSAGE_COLUMNS:
            if value is not None or column != "message_id":
                out[MESSAGE_COLUMNS[column]] = value
        elif column in MESSAGE_JSON_COLUMNS:
            if value is not None:  # no metadata: Goose reads its default
                out[MESSAGE_JSON_COLUMNS[column]] = _json(value)[1]
        elif column in MESSAGE_TIME_COLUMNS:
            out[column] = _time(value)
        elif column in MESSAGE_OPTIONAL:
            if value is not None:
                out[column] = value
        elif column not in ("id", "session_id"):  # the row order and the session: given by the shape
            out[column] = value
    return out


def _rows(con: sqlite3.Connection, sql: str, *args: Any) -> Iterator[dict[str, Any]]:
    cur = con.execute(sql, args)
    names = [d[0] for d in cur.description]
    for values in cur:
        yield dict(zip(names, values, strict=True))


def sessions(con: sqlite3.Connection) -> Iterator[dict[str, Any]]:
    """Each session of an open Goose database as its export's JSON shape, by ``created_at`` then ``id``; the
    database's ``usage_ledger`` rows of the session (when the table exists) under ``usage_ledger``."""
    check_schema(con)
    ledger = bool(
        con.execute("select 1 from sqlite_master where type = 'table' and name = ?", (LEDGER_KEY,)).fetchone()
    )
    for row in _rows(con, "select * from sessions order by created_at, id"):
        session = _session(row)
        # Goose's own order (get_conversation sorts by timestamp; ties stay in row order)
        messages = [
            _message(m)
            for m in _rows(con, "select * from messages where session_id = ? order by timestamp, id", row["id"])
        ]
        session["conversation"] = messages
        session["message_count"] = len(messages)
        if ledger:
            rows = _rows(con, f"select * from {LEDGER_KEY} where session_id = ? order by id", row["id"])
            session[LEDGER_KEY] = [{k: v for k, v in r.items() if k not in LEDGER_DROPPED} for r in rows]
        yield session
