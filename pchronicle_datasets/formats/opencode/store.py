"""OpenCode's SQLite store (``opencode.db``, OpenCode 1.2 and later) → one export per session, read by the export
reader: the database gives exactly the JSON ``opencode export <id>`` prints for each session, so the mapping lives
once (``reader.py``; docs/formats/opencode.md, "The database").

How OpenCode's export builds it (packages/opencode/src/cli/cmd/export.ts, session/): ``info`` is the ``session`` row
(``Session.fromRow``: the tables of ``fields.py``); ``messages`` are the session's ``message`` rows in
``(time_created, id)`` order, each ``{info: {...data, id, sessionID}, parts}``, and ``parts`` the message's ``part``
rows in ``id`` order, each ``{...data, id, sessionID, messageID}``; a row's ``data`` is the JSON OpenCode wrote.
Sessions come in ``(time_created, id)`` order; a child session (a subagent's, ``parent_id``) is a document of its own,
linked to its parent as an export is (``/parent``, and the ``task`` call's ``metadata.sessionId`` → ``/children``).

Nothing else of the database is read (``project``, ``todo``, ``event``, ``permission``, ``session_share``,
credentials…): docs/formats/opencode.md says what each holds and why it is not conversation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from ...errors import FormatError, PchronicleError
from ...jsonio import loads
from ..base import Record
from ..database import table_names
from .fields import (
    DATABASE_TABLES,
    SESSION_COLUMNS,
    SESSION_JSON_COLUMNS,
    SESSION_TOTALS,
    SHARE_URL,
    SUMMARY_COLUMNS,
    SUMMARY_DIFFS,
    TIME_COLUMNS,
    V2_MESSAGES,
    V2_SESSIONS,
)
from .reader import read_export

__all__ = ["read_store", "session_export"]

_KNOWN = {*SESSION_COLUMNS, *SESSION_JSON_COLUMNS, *SUMMARY_COLUMNS, SUMMARY_DIFFS, SHARE_URL, *TIME_COLUMNS}
_KNOWN |= set(SESSION_TOTALS)


def _rows(con: sqlite3.Connection, query: str, *args: Any) -> list[dict[str, Any]]:
    cursor = con.execute(query, args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def _value(value: Any, where: str) -> Any:
    """A column's value as JSON holds it: a BLOB has no JSON form (OpenCode writes none)."""
    if isinstance(value, bytes):
        raise FormatError(f"{where} holds binary data (a BLOB), which OpenCode does not write there")
    return value


def _json(value: Any, where: str) -> Any:
    """A JSON text column, parsed."""
    if not isinstance(value, str):
        raise FormatError(f"{where} is not JSON text (got {type(value).__name__})")
    try:
        return loads(value)
    except FormatError as exc:
        raise FormatError(f"{where} is not JSON: {exc.reason}") from None


def _data(row: dict[str, Any], table: str) -> dict[str, Any]:
    data = _json(row.get("data"), f"the {table} row {row.get('id')!r}: its data")
    if not isinstance(data, dict):
        raise FormatError(f"the {table} row {row.get('id')!r}: its data is not a JSON object")
    return data


def session_info(row: dict[str, Any]) -> dict[str, Any]:
    """The export's ``info`` of a ``session`` row (``Session.fromRow``)."""
    sid = row.get("id")
    info: dict[str, Any] = {}
    for column, key in SESSION_COLUMNS.items():
        if row.get(column) is not None:
            info[key] = _value(row[column], f"session {sid}: its {column}")
    for column, key in SESSION_JSON_COLUMNS.items():
        if row.get(column) is not None:
            info[key] = _json(row[column], f"session {sid}: its {column}")
    if any(row.get(c) is not None for c in SUMMARY_COLUMNS):
        summary = {key: _value(row.get(c), f"session {sid}: its {c}") or 0 for c, key in SUMMARY_COLUMNS.items()}
        if row.get(SUMMARY_DIFFS) is not None:
            summary["diffs"] = _json(row[SUMMARY_DIFFS], f"session {sid}: its {SUMMARY_DIFFS}")
        info["summary"] = summary
    if row.get(SHARE_URL):
        info["share"] = {"url": _value(row[SHARE_URL], f"session {sid}: its {SHARE_URL}")}
    info["time"] = {
        key: _value(row[c], f"session {sid}: its {c}") for c, key in TIME_COLUMNS.items() if row.get(c) is not None
    }
    for column, value in row.items():  # a later OpenCode's column: kept (the export reader keeps it residual)
        if column not in _KNOWN and value is not None and column not in info:
            info[column] = _value(value, f"session {sid}: its {column}")
    return info


def session_export(con: sqlite3.Connection, row: dict[str, Any]) -> dict[str, Any]:
    """The export ``opencode export <id>`` prints for the session ``row`` (module docs)."""
    messages = []
    for message in _rows(con, "select * from message where session_id = ? order by time_created, id", row.get("id")):
        info = {**_data(message, "message"), "id": message["id"], "sessionID": message["session_id"]}
        parts = [
            {**_data(part, "part"), "id": part["id"], "sessionID": part["session_id"], "messageID": part["message_id"]}
            for part in _rows(con, "select * from part where message_id = ? order by id", message["id"])
        ]
        messages.append({"info": info, "parts": parts})
    return {"info": session_info(row), "messages": messages}


def read_store(con: sqlite3.Connection, document_id: str | None) -> Iterator[Record]:
    """One record per session of an open OpenCode database: its document, or the error that refused it (that
    session only); a database without OpenCode's tables is one error record."""
    tables = table_names(con)
    if not tables >= DATABASE_TABLES:
        missing = ", ".join(sorted(DATABASE_TABLES - tables))
        found = ", ".join(sorted(tables)[:12]) or "none"
        v2 = f"; an OpenCode 2 database ({V2_SESSIONS}), whose storage is not read yet" if V2_SESSIONS in tables else ""
        yield Record(
            None,
            b"",
            error=FormatError(
                f"not an OpenCode database: it has no table {missing} (its tables: {found}){v2}",
                document_id=document_id,
            ),
        )
        return
    try:
        sessions = _rows(con, "select * from session order by time_created, id")
    except sqlite3.Error as exc:
        yield Record(None, b"", error=_unreadable(exc, "session", document_id))
        return
    v2 = _v2_messages(con, tables)
    for row in sessions:
        export: Any = None
        try:
            export = session_export(con, row)
            elsewhere = _only_in_v2(con, v2, row.get("id"), {m["info"]["id"] for m in export["messages"]})
            if elsewhere:  # all its messages, or its later ones (an upgrade), are only in OpenCode 2's storage
                raise _v2_refusal(row.get("id"), elsewhere, len(export["messages"]))
            yield Record(None, orjson.dumps(export), story=read_export(export, document_id), value=export)
        except sqlite3.Error as exc:
            yield Record(None, b"", error=_unreadable(exc, f"session {row.get('id')}", document_id))
        except PchronicleError as exc:
            reason = exc.reason if str(row.get("id")) in exc.reason else f"session {row.get('id')}: {exc.reason}"
            error = type(exc)(reason, pointer=exc.pointer, document_id=document_id)
            yield Record(None, orjson.dumps(export) if export is not None else b"", error=error, value=export)

    yield from _v2_sessions(con, tables, {row.get("id") for row in sessions}, v2, document_id)


def _v2_messages(con: sqlite3.Connection, tables: frozenset[str]) -> dict[Any, int]:
    """Session id → how many ``session_message`` rows (OpenCode 2's storage) it has; {} without the table."""
    if V2_MESSAGES not in tables:
        return {}
    try:
        return dict(con.execute(f"select session_id, count(*) from {V2_MESSAGES} group by session_id").fetchall())
    except sqlite3.Error:
        return {}  # a table of another shape: nothing known to be there


def _only_in_v2(con: sqlite3.Connection, v2: dict[Any, int], sid: Any, read: set[Any]) -> int:
    """How many of the session's ``session_message`` rows no ``message`` row of it has the id of: a message OpenCode 2
    wrote there alone (when it writes the same message to both tables, with one id, nothing is missing)."""
    if not v2.get(sid):
        return 0
    ids = [r[0] for r in con.execute(f"select id from {V2_MESSAGES} where session_id = ?", (sid,))]
    return sum(i not in read for i in ids)


def _v2_refusal(sid: Any, count: int, read: int) -> FormatError:
    """A session some of whose messages are in OpenCode 2's storage: read without them it would be cut short."""
    return FormatError(
        f"session {sid}: {count} message(s) in {V2_MESSAGES} (beside {read} in message), OpenCode 2's storage, "
        "which this reader does not read yet: not read"
    )


def _v2_sessions(
    con: sqlite3.Connection, tables: frozenset[str], read: set[Any], v2: dict[Any, int], document_id: str | None
) -> Iterator[Record]:
    """A refusal for each session only OpenCode 2's ``session_v2`` table holds (an upgraded database: the 1.x
    tables read above stopped at the upgrade), named, so that no session is left out unsaid."""
    if V2_SESSIONS not in tables:
        return
    try:
        ids = [r[0] for r in con.execute(f"select id from {V2_SESSIONS} order by time_created, id")]
    except sqlite3.Error as exc:
        yield Record(None, b"", error=_unreadable(exc, V2_SESSIONS, document_id))
        return
    for sid in ids:
        if sid not in read:
            yield Record(
                None,
                b"",
                error=FormatError(
                    f"session {sid}: it is in {V2_SESSIONS} with {v2.get(sid, 0)} message(s) in {V2_MESSAGES}, "
                    "OpenCode 2's storage, which this reader does not read yet: not read",
                    document_id=document_id,
                ),
            )


def _unreadable(exc: sqlite3.Error, what: str, document_id: str | None) -> FormatError:
    return FormatError(
        f"the OpenCode database's {what} cannot be read ({exc}): is it an OpenCode 1.2 or later opencode.db?",
        document_id=document_id,
    )
