"""The ``opencode`` format: an ``opencode export <sessionID>`` JSON file, one session, or OpenCode's SQLite store
``opencode.db`` (OpenCode 1.2 and later, and OpenCode 2's ``session_v2``/``session_message``), every session of it
(docs/formats/opencode.md).

``{"info": {id, parentID?, agent, title, tokens, …}, "messages": [{"info": {id, role, modelID, tokens, cost,
time, …}, "parts": [text | reasoning | tool | file | step-start | step-finish | patch | compaction | subtask …]}]}``.
One message is one turn: its text parts are the message, its reasoning parts the reason, its tool parts the calls
with their results. Every other part and key is residual at its pointer; the writer puts everything back.

Written from the schema (entireio/cli ``cmd/entire/cli/agent/opencode/AGENT.md``, OpenCode 1.18.30) and a real
1.18.13 database: no public export file is known. ``fields.py`` holds the tables, ``reader.py`` reads an export,
``store.py`` makes each session of a database the export OpenCode prints for it (``v2.py``: an OpenCode 2 message
row as an export message), ``writer.py`` writes an export.

>>> text = ('{"info": {"id": "ses_1", "agent": "build"}, "messages": [{"info": {"id": "msg_1", "role": "user"},'
...         ' "parts": [{"type": "text", "text": "hi"}]}]}')
>>> [story] = decode(text, "ses_1.json")
>>> story["session"], story["turns"][0]["msg"]
('ses_1', [{'type': 'text', 'text': 'hi'}])
>>> import json; json.loads(encode([story])) == json.loads(text)
True
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, PchronicleError
from ..base import Record, documents, read_records
from ..database import database_input, read_database
from .fields import DATABASE_TABLES, INDEX_FILES, NAME
from .reader import read_export
from .store import read_store
from .writer import encode

__all__ = [
    "ALIASES",
    "DATABASE_TABLES",
    "EXTENSION",
    "INDEX_FILES",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "sniff",
]

ALIASES: tuple[str, ...] = ()
EXTENSION = ".json"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".json"  # convert --per-document names each file {session}.json


def sniff(sample: Any) -> bool:
    """An export: ``info`` with a string ``id`` and ``messages`` whose elements are ``{info, parts}``.

    >>> sniff({"info": {"id": "ses_1"}, "messages": []}), sniff({"messages": [{"role": "user", "content": "hi"}]})
    (True, False)
    """
    if not (
        isinstance(sample, dict) and isinstance(sample.get("info"), dict) and isinstance(sample.get("messages"), list)
    ):
        return False
    if type(sample["info"].get("id")) is not str:
        return False
    return all(isinstance(m, dict) and "parts" in m and "info" in m and "role" not in m for m in sample["messages"][:8])


def iter_records(data: Any, document_id: str | None = None):
    """The document of an export file (one JSON object; JSON Lines of exports give one each), or of each session
    of an OpenCode database (``store.py``: its bytes, or the loaders' ``database.OpenDatabase``, read with its log)."""
    database, data = database_input(data, document_id)
    if database is not None:
        return read_database(database, document_id, read_store)

    def one(value: Any, raw: bytes, line: int | None) -> list[Record]:
        try:
            if not sniff(value):
                raise FormatError(
                    "an opencode export is an object with info (a string id) and messages of {info, parts}",
                    pointer="",
                    document_id=document_id,
                    line=line,
                )
            return [Record(line, raw, story=read_export(value, document_id), value=value)]
        except PchronicleError as exc:
            return [Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)]

    return read_records(
        data, document_id, lambda v, raw, d, line, i: one(v, raw, line), lambda v, text: one(v, text, None)
    )


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))
