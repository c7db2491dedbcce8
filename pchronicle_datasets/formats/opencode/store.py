"""OpenCode's SQLite store (``opencode.db``: OpenCode 1.2 and later, OpenCode 2 too) → one export per session, read by
the export reader: the database gives exactly the JSON ``opencode export <id>`` prints for each 1.x session, and the
same shape for each 2.x one, so the mapping lives once (``reader.py``; docs/formats/opencode.md, "The database" and
"OpenCode 2").

How OpenCode's export builds it (packages/opencode/src/cli/cmd/export.ts, session/): ``info`` is the ``session`` row
(``Session.fromRow``: the tables of ``fields.py``); ``messages`` are the session's ``message`` rows in
``(time_created, id)`` order, each ``{info: {...data, id, sessionID}, parts}``, and ``parts`` the message's ``part``
rows in ``id`` order, each ``{...data, id, sessionID, messageID}``; a row's ``data`` is the JSON OpenCode wrote.
OpenCode 2 keeps its sessions in ``session_v2`` and one ``session_message`` row per message (``v2.py`` maps a row to
an export message); an upgraded database holds both, each session read once (``_sessions``, ``_messages``).
Sessions come in ``(time_created, id)`` order; a child session (a subagent's, ``parent_id``) is a document of its own,
linked to its parent as an export is (``/parent``, and the ``task``/``subagent`` call's metadata → ``/children``).

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
from ..database import names_database, table_names
from .fields import (
    DATABASE_TABLES,
    SESSION_COLUMNS,
    SESSION_JSON_COLUMNS,
    SESSION_TOTALS,
    SHARE_URL,
    SUMMARY_COLUMNS,
    SUMMARY_DIFFS,
    TIME_COLUMNS,
    V1_TABLES,
    V2_MESSAGES,
    V2_SESSIONS,
)
from .reader import read_export
from .v2 import backfilled_from, export_message

__all__ = ["read_store", "session_export"]

#: the 1.x tables of a session's messages and their parts
V1_MESSAGE_TABLES = frozenset({"message", "part"})
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


def _v1_messages(con: sqlite3.Connection, tables: frozenset[str], sid: Any) -> list[tuple[Any, dict[str, Any]]]:
    """The session's 1.x messages (``message`` and ``part`` rows), as ``opencode export`` prints them, each with its
    row's ``time_created``."""
    if not tables >= V1_MESSAGE_TABLES:
        return []
    messages = []
    for message in _rows(con, "select * from message where session_id = ? order by time_created, id", sid):
        info = {**_data(message, "message"), "id": message["id"], "sessionID": message["session_id"]}
        parts = [
            {**_data(part, "part"), "id": part["id"], "sessionID": part["session_id"], "messageID": part["message_id"]}
            for part in _rows(con, "select * from part where message_id = ? order by id", message["id"])
        ]
        messages.append((message.get("time_created"), {"info": info, "parts": parts}))
    return messages


def _before(a: Any, b: Any) -> bool:
    """Whether a row created at ``a`` comes before one created at ``b`` (a time that is not a number: not before)."""
    return type(a) in (int, float) and type(b) in (int, float) and a < b


def _messages(con: sqlite3.Connection, tables: frozenset[str], sid: Any) -> list[dict[str, Any]]:
    """The session's messages from both storages (docs, "OpenCode 2"): OpenCode 2's rows in ``seq`` order, each given
    as its 1.x message when it is one's backfill (2.0.26 keeps the 1.x id, a later backfill names it by a hash of it:
    ``v2.backfilled_from``; the backfill drops what its schema has no place for, so the 1.x row is the fuller one) and
    else mapped from its ``data`` (``v2.py``); a 1.x
    message OpenCode 2 has no row for goes in by its time (before the first 2.x row created after it)."""
    v1 = _v1_messages(con, tables, sid)
    if V2_MESSAGES not in tables:
        return [m for _, m in v1]
    rows = _rows(con, f"select * from {V2_MESSAGES} where session_id = ? order by seq, id", sid)
    by_id = {m["info"]["id"]: (created, m) for created, m in v1}
    same = {row["id"]: row["id"] if row["id"] in by_id else backfilled_from(row["id"], sid, by_id) for row in rows}
    pending = [(created, m) for created, m in v1 if m["info"]["id"] not in same.values()]
    out: list[dict[str, Any]] = []
    for row in rows:
        created, message = by_id.get(same[row["id"]]) or (row.get("time_created"), None)
        while pending and _before(pending[0][0], created):
            out.append(pending.pop(0)[1])
        out.append(message or export_message(row, _data(row, V2_MESSAGES)))
    return out + [m for _, m in pending]


def session_export(
    con: sqlite3.Connection,
    row: dict[str, Any],
    legacy: dict[str, Any] | None = None,
    tables: frozenset[str] | None = None,
) -> dict[str, Any]:
    """The export ``opencode export <id>`` prints for the session ``row`` (module docs); ``legacy``, the 1.x ``session``
    row of a session ``row`` (of ``session_v2``) also has, fills the info keys the newer row leaves empty; ``tables``:
    the database's (``read_store`` reads them once for all its sessions)."""
    info = session_info(row)
    if legacy is not None:
        info = {**session_info(legacy), **info}
    tables = table_names(con) if tables is None else tables
    return {"info": info, "messages": _messages(con, tables, row.get("id"))}


def _order(row: dict[str, Any]) -> tuple:
    created = row.get("time_created")
    return (created if type(created) in (int, float) else 0, str(row.get("id")))


def _sessions(con: sqlite3.Connection, tables: frozenset[str]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Every session once, as (its row, the 1.x row it also has or None), in ``(time_created, id)`` order: a session
    in both ``session_v2`` and ``session`` is OpenCode 2's (the 1.x row stopped at the upgrade)."""
    legacy = _rows(con, "select * from session") if "session" in tables else []
    current = _rows(con, f"select * from {V2_SESSIONS}") if V2_SESSIONS in tables else []
    old = {row.get("id"): row for row in legacy}
    newer = {row.get("id") for row in current}
    pairs = [(row, old.get(row.get("id"))) for row in current]
    pairs += [(row, None) for row in legacy if row.get("id") not in newer]
    return sorted(pairs, key=lambda pair: _order(pair[0]))


def read_store(con: sqlite3.Connection, document_id: str | None) -> Iterator[Record]:
    """One record per session of an open OpenCode database, 1.x or 2.x or both: its document, or the error that
    refused it (that session only); a database without OpenCode's tables is one error record."""
    tables = table_names(con)
    if not (names_database(DATABASE_TABLES, tables) or (V2_MESSAGES in tables and "session" in tables)):
        missing = ", ".join(sorted(V1_TABLES - tables))
        found = ", ".join(sorted(tables)[:12]) or "none"
        yield Record(
            None,
            b"",
            error=FormatError(
                f"not an OpenCode database: it has no table {missing}, nor OpenCode 2's {V2_SESSIONS} and "
                f"{V2_MESSAGES} (its tables: {found})",
                document_id=document_id,
            ),
        )
        return
    try:
        sessions = _sessions(con, tables)
    except sqlite3.Error as exc:
        yield Record(None, b"", error=_unreadable(exc, "session", document_id))
        return
    for row, legacy in sessions:
        export: Any = None
        try:
            export = session_export(con, row, legacy, tables)
            yield Record(None, orjson.dumps(export), story=read_export(export, document_id), value=export)
        except sqlite3.Error as exc:
            yield Record(None, b"", error=_unreadable(exc, f"session {row.get('id')}", document_id))
        except PchronicleError as exc:
            reason = exc.reason if str(row.get("id")) in exc.reason else f"session {row.get('id')}: {exc.reason}"
            error = type(exc)(reason, pointer=exc.pointer, document_id=document_id)
            yield Record(None, orjson.dumps(export) if export is not None else b"", error=error, value=export)
    yield from _orphans(con, tables, {row.get("id") for row, _ in sessions}, document_id)


def _orphans(
    con: sqlite3.Connection, tables: frozenset[str], read: set[Any], document_id: str | None
) -> Iterator[Record]:
    """A refusal naming each session that has ``session_message`` rows but no session row in either table (a
    session OpenCode deleted leaves none: its rows go with it), so that no message is left out unsaid."""
    if V2_MESSAGES not in tables:
        return
    try:
        counts = con.execute(f"select session_id, count(*) from {V2_MESSAGES} group by session_id").fetchall()
    except sqlite3.Error as exc:
        yield Record(None, b"", error=_unreadable(exc, V2_MESSAGES, document_id))
        return
    for sid, count in counts:
        if sid not in read:
            yield Record(
                None,
                b"",
                error=FormatError(
                    f"session {sid}: {count} message(s) in {V2_MESSAGES} but no row in {V2_SESSIONS} or session, "
                    "so no session to read them as: not read",
                    document_id=document_id,
                ),
            )


def _unreadable(exc: sqlite3.Error, what: str, document_id: str | None) -> FormatError:
    return FormatError(
        f"the OpenCode database's {what} cannot be read ({exc}): is it an OpenCode 1.2 or later opencode.db?",
        document_id=document_id,
    )
