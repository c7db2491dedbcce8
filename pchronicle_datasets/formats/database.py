"""SQLite databases that harnesses keep their sessions in: one file, many sessions (OpenCode 1.2 and later keeps
``~/.local/share/opencode/opencode.db``; Goose ``~/.local/share/goose/sessions/sessions.db``).

A format whose harness writes one declares ``DATABASE_TABLES`` (the tables that name its databases, for detection;
``base.Database``: one set, or a tuple of sets when the harness changed its storage, any one of which names them)
and its ``iter_records`` reads a database's bytes through ``read_database``: the bytes are
written to a temporary file (``sqlite3`` opens files, not bytes, on every supported Python) with the write-ahead
log beside it when one is given (the changes a running harness has not yet folded into the file), and the format's
own function gives one ``Record`` per session from the open connection. Nothing is written to the user's file: the
copy is opened ``query_only``.

The loaders (``formats.iter_records``: the builder, ``read_batches``, the CLI, Spark) recognise a database by its first
16 bytes, read it whole (within ``max_record_size``: never in lines or byte ranges), open it once with the
write-ahead log found beside it (``sidecars``: ``opencode.db-wal`` beside ``opencode.db``), name its format from its
tables, and hand that format's reader the open database (``OpenDatabase``), which ``database_input`` and
``read_database`` take as they take bytes: the file is copied and opened once, and every reader reads the log with
it. A reader called on the bytes alone (``pc.into_storyline("opencode", data)``) reads the database as it is.

>>> import sqlite3, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "t.db")
>>> con = sqlite3.connect(path); _ = con.execute("create table session (id text)"); con.commit(); con.close()
>>> data = open(path, "rb").read()
>>> is_database(data[:16]), is_database(b'{"a": 1}')
(True, False)
>>> with opened(data, "t.db") as con:
...     sorted(table_names(con))
['session']
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import FormatError
from .source import Source, as_source, file_chunks

__all__ = [
    "SQLITE_MAGIC",
    "OpenDatabase",
    "database_input",
    "is_database",
    "names_database",
    "opened",
    "read_database",
    "table_names",
    "table_sets",
]

#: The first 16 bytes of every SQLite 3 database file (sqlite.org/fileformat.html, "The Database Header").
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_database(head: bytes) -> bool:
    """Whether bytes that start a file are a SQLite database's."""
    return bytes(head[:16]) == SQLITE_MAGIC


class OpenDatabase:
    """A database the loaders opened (``opened``, with its write-ahead log), handed to its format's reader: the
    connection lives while the loader's ``with`` block does, which outlasts the reader's records."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection


def database_input(data: Any, document_id: str | None = None) -> tuple[bytes | None, Any]:
    """``(the database, None)`` when a reader's input ``data`` is a SQLite database (its bytes, or an
    ``OpenDatabase``), else ``(None, data)`` to read as it would have been (a file object's first bytes put back in
    front).

    >>> database_input(SQLITE_MAGIC + b"rest")[0][:6], database_input(b'{"a": 1}')
    (b'SQLite', (None, b'{"a": 1}'))
    """
    if isinstance(data, OpenDatabase):
        return data, None
    if isinstance(data, (bytes, bytearray, memoryview)):
        return (bytes(data), None) if is_database(data[:16]) else (None, data)
    if isinstance(data, Source):
        return (data.read_all(), None) if is_database(data.head(16)) else (None, data)
    if hasattr(data, "read"):
        head = data.read(16)
        if is_database(head):
            return head + data.read(), None
        return None, itertools.chain([head], file_chunks(data))
    return None, data


def table_sets(spec: frozenset[str] | tuple[frozenset[str], ...]) -> tuple[frozenset[str], ...]:
    """A format's ``DATABASE_TABLES`` as the sets of tables each of which names its databases (OpenCode 1.x's
    ``session``/``message``/``part``, OpenCode 2's ``session_v2``/``session_message``).

    >>> table_sets(frozenset({"a"})), table_sets((frozenset({"a"}), frozenset({"b"})))
    ((frozenset({'a'}),), (frozenset({'a'}), frozenset({'b'})))
    """
    return spec if isinstance(spec, tuple) else (spec,)


def names_database(spec: frozenset[str] | tuple[frozenset[str], ...], tables: frozenset[str]) -> bool:
    """Whether a database with ``tables`` has all the tables of one of the sets ``spec`` declares."""
    return any(tables >= one for one in table_sets(spec))


def table_names(con: sqlite3.Connection) -> frozenset[str]:
    """The tables of an open database."""
    return frozenset(row[0] for row in con.execute("select name from sqlite_master where type = 'table'"))


@contextlib.contextmanager
def opened(data: bytes, document_id: str | None, wal: bytes | None = None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a copy of the database ``data`` (and its write-ahead log ``wal``), removed when
    the block ends. A file that is not a database, or a damaged one, is a ``FormatError`` naming it."""
    with tempfile.TemporaryDirectory(prefix="pchronicle-db-") as tmp:
        path = os.path.join(tmp, "copy.db")
        with open(path, "wb") as f:
            f.write(data)
        if wal:
            with open(path + "-wal", "wb") as f:
                f.write(wal)
        try:
            con = sqlite3.connect(path)
        except sqlite3.Error as exc:  # pragma: no cover - connect opens lazily; kept for odd builds
            raise _refused(exc, document_id) from None
        try:
            con.execute("pragma query_only = 1")
            table_names(con)  # reads the header and the schema: a damaged file fails here, not in a reader
            yield con
        except sqlite3.DatabaseError as exc:
            raise _refused(exc, document_id) from None
        finally:
            con.close()


def read_database(
    data: Any,
    document_id: str | None,
    records: Callable[[sqlite3.Connection, str | None], Iterator[Any]],
    wal: bytes | None = None,
) -> Iterator[Any]:
    """The records ``records(connection, document_id)`` gives for a database given as a reader's input: an
    ``OpenDatabase`` (the loaders'), or its bytes (a file object, a ``Source``…; held whole, within
    ``max_record_size``) with ``wal``, its write-ahead log."""
    if isinstance(data, OpenDatabase):
        yield from records(data.connection, document_id)
        return
    raw = data if isinstance(data, bytes) else as_source(data, document_id).read_all()
    with opened(raw, document_id, wal) as con:
        yield from records(con, document_id)


def _refused(exc: Exception, document_id: str | None) -> FormatError:
    return FormatError(
        f"the SQLite database cannot be read ({exc}): give the harness's database file as it wrote it "
        "(with its -wal file beside it if there is one)",
        document_id=document_id,
    )
