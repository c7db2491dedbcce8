"""The ``goose`` format: Goose's sessions (block/goose), from its SQLite store
``~/.local/share/goose/sessions/sessions.db`` and from ``goose session export --format json`` (docs/formats/goose.md).

One session is one document. The export is the ``Session`` object with its ``conversation`` of messages
(``{id, role, created, content: [text | image | thinking | toolRequest | toolResponse | …], metadata}``); the
database reader (``sessions_db``) assembles that same shape from the rows of ``sessions`` and ``messages``, and
``reader`` maps it. ``fields.py`` holds the tables, ``writer.py`` writes an export back.

>>> text = ('{"id": "20260805_1", "working_dir": "/w", "extension_data": {}, "conversation": ['
...         '{"role": "user", "created": 1785964761, "content": [{"type": "text", "text": "hi"}]}]}')
>>> [story] = decode(text, "20260805_1.json")
>>> story["session"], story["turns"][0]["msg"], story["task"]["env"]["state"]["cwd"]
('20260805_1', [{'type': 'text', 'text': 'hi'}], '/w')
>>> import json; json.loads(encode([story])) == json.loads(text)
True
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from ...errors import FormatError, PchronicleError
from ..base import Record, documents, read_records
from ..database import database_input, read_database
from . import legacy
from .fields import DATABASE_TABLES, INDEX_FILES, NAME
from .reader import read_session
from .sessions_db import sessions
from .writer import encode

__all__ = [
    "ALIASES",
    "DATABASE_TABLES",
    "DOCUMENT_SUFFIX",
    "EXTENSION",
    "INDEX_FILES",
    "KEYS",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "sniff",
]

ALIASES: tuple[str, ...] = ("goose-session",)
KEYS = ("id", "working_dir", "extension_data", "conversation", "role", "content", "created")
EXTENSION = ".json"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".json"  # convert --per-document names each file {session}.json


def sniff(sample: Any) -> bool:
    """An export: a string ``id`` and ``working_dir``, ``extension_data``, and a ``conversation`` list of messages
    (objects with ``role`` and a ``content`` list); or the metadata line of a session file from before the
    database (``legacy.is_metadata``).

    >>> sniff({"id": "s", "working_dir": "/w", "extension_data": {}, "conversation": []})
    True
    >>> sniff({"id": "s", "messages": [{"role": "user", "content": "hi"}]})
    False
    >>> sniff({"working_dir": "/w", "description": "Say hi", "schedule_id": None, "message_count": 2})
    True
    """
    if legacy.is_metadata(sample):
        return True
    if not (
        isinstance(sample, dict)
        and type(sample.get("id")) is str
        and type(sample.get("working_dir")) is str
        and "extension_data" in sample
        and isinstance(sample.get("conversation"), list)
    ):
        return False
    return all(
        isinstance(m, dict) and "role" in m and isinstance(m.get("content"), list) for m in sample["conversation"][:8]
    )


def _one(value: Any, raw: bytes, document_id: str | None, line: int | None) -> Record:
    try:
        if not sniff(value):
            raise FormatError(
                "a goose export is an object with a string id and working_dir, extension_data and a conversation "
                "of messages {role, content: [...]}",
                pointer="",
            )
        return Record(line, raw, story=read_session(value, document_id), value=value)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def _database_records(con: Any, document_id: str | None) -> Iterator[Record]:
    """One record per session of a Goose database: its document, or its refusal naming the session."""
    try:
        for value in sessions(con):
            try:
                yield Record(None, b"", story=read_session(value, document_id), value=value)
            except PchronicleError as exc:
                where = f"session {value.get('id')!r}: {exc.reason}"
                err = type(exc)(where, pointer=exc.pointer, document_id=document_id)
                yield Record(None, orjson.dumps(value, default=str), error=err, value=value)
    except PchronicleError as exc:
        yield Record(None, b"", error=exc.with_context(document_id=document_id))
    except sqlite3.Error as exc:  # a table Goose never wrote in that shape: one bad record, not a crash
        yield Record(
            None, b"", error=FormatError(f"the Goose database cannot be read ({exc})", document_id=document_id)
        )


def _session_file(lines: list[tuple[int | None, bytes, Any]], document_id: str | None) -> Record:
    """The one record of a session file from before the database (``legacy``): its document, or the error that
    refused it, named at its first line."""
    first = lines[0][0]
    raw = b"\n".join(r for _, r, _ in lines)
    try:
        shape, hints = legacy.session([v for _, _, v in lines], document_id)
        return Record(first, raw, story=read_session(shape, document_id, hints), value=shape)
    except PchronicleError as exc:
        return Record(first, raw, error=exc.with_context(document_id=document_id, line=first))


def iter_records(data: Any, document_id: str | None = None, wal: bytes | None = None) -> Iterator[Record]:
    """The documents of an export (one JSON object; JSON Lines of exports give one each), of a session file from
    before the database (JSON Lines whose first line is its metadata or a message: one document), or of a Goose
    database (its bytes start with the SQLite magic: one per session; ``wal``, its write-ahead log)."""
    database, data = database_input(data, document_id)
    if database is not None:  # the loaders' open database (its log read with it), or a database's bytes
        yield from read_database(database, document_id, _database_records, wal)
        return
    # the file's first line decides: a session file's lines are gathered into one document (a line that is not
    # JSON is an error record of its own; the rest still make the session, as Goose's own reader skips it)
    lines: list[tuple[int | None, bytes, Any]] = []
    kind: list[bool] = []

    def each(value: Any, raw: bytes, line: int | None) -> list[Record]:
        if not kind:
            kind.append(legacy.starts(value))
        if kind[0]:
            lines.append((line, raw, value))
            return []
        return [_one(value, raw, document_id, line)]

    yield from read_records(
        data,
        document_id,
        lambda v, raw, d, line, i: each(v, raw, line),
        lambda v, text: each(v, text, None),
    )
    if lines:
        yield _session_file(lines, document_id)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))
