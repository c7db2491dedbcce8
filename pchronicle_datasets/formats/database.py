"""SQLite databases that harnesses keep their sessions in: one file, many sessions (OpenCode 1.2 and later keeps
``~/.local/share/opencode/opencode.db``; Goose ``~/.local/share/goose/sessions/sessions.db``).

A format whose harness writes one declares ``DATABASE_TABLES`` (the tables that name its databases, for detection;
``base.Database``) and its ``iter_records`` reads a database's bytes through ``read_database``: the bytes are
written to a temporary file (``sqlite3`` opens files, not bytes, on every supported Python) with the write-ahead
log beside it when one is given (the changes a running harness has not yet folded into the file), and the format's
own function gives one ``Record`` per session from the open connection. Nothing is written to the user's file: the
copy is opened ``query_only``.

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
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import FormatError
from .source import as_source

__all__ = ["SQLITE_MAGIC", "is_database", "opened", "read_database", "table_names"]

#: The first 16 bytes of every SQLite 3 database file (sqlite.org/fileformat.html, "The Database Header").
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_database(head: bytes) -> bool:
    """Whether bytes that start a file are a SQLite database's."""
    return bytes(head[:16]) == SQLITE_MAGIC


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
    """The records ``records(connection, document_id)`` gives for a database given as a reader's input (bytes,
    a file object, a ``Source``…; held whole, within ``max_record_size``)."""
    raw = as_source(data, document_id).read_all()
    with opened(raw, document_id, wal) as con:
        yield from records(con, document_id)


def _refused(exc: Exception, document_id: str | None) -> FormatError:
    return FormatError(
        f"the SQLite database cannot be read ({exc}): give the harness's database file as it wrote it "
        "(with its -wal file beside it if there is one)",
        document_id=document_id,
    )
