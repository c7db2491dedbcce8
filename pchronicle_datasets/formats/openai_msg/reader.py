"""Reading a capture file: its rows grouped by session, one Storyline document per session (``session``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ...gc_pause import gc_paused
from ...jsonio import may_hold_big_int
from ..base import Record, as_bytes, documents
from .rows import source_rows
from .session import Session
from .tables import nonempty_str

__all__ = ["build_session", "decode", "iter_records", "refused_row", "sniff"]


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """One Record per session (in first-appearance order) or per unreadable line, in file order.

    A session that breaks a rule is one error record; the others still convert (skip policy)."""
    with gc_paused():  # the whole file is decoded before the first record is handed out
        records = file_records(data, document_id)
    yield from records


def file_records(data: str | bytes, document_id: str | None) -> list[Record]:
    data = as_bytes(data, document_id)
    if not data or data.isspace():
        return []  # an empty file holds no rows
    sessions: dict[str, list[tuple[int, dict, int | None, bytes]]] = {}
    records: list[Record] = []
    scan = may_hold_big_int(data)  # one scan of the whole file instead of one per line and value
    items = source_rows(data, document_id, scan)
    root = next(items)
    for item in items:
        refused = item if isinstance(item, Record) else refused_row(*item, document_id)
        if refused is not None:
            records.append(refused)
        else:
            r, row, line, raw = item  # type: ignore[misc]
            sessions.setdefault(row["session_id"], []).append((r, row, line, raw))
    first = True
    for sid, rows in sessions.items():
        raw = b"\n".join(x[3] for x in rows if x[3])
        try:
            story = build_session(sid, rows, document_id, root if first else {}, scan)
        except PchronicleError as exc:
            records.append(Record(rows[0][2], raw, error=exc, value=[x[1] for x in rows]))
        else:
            records.append(Record(rows[0][2], raw, story=story, value=[x[1] for x in rows]))
        first = False
    # File order (a session stands at its first row), so "the first bad record" is the first in the file.
    records.sort(key=lambda rec: rec.line if rec.line is not None else 0)
    return records


def build_session(sid: str, rows: list, document_id: str | None, root: dict, scan: bool = True) -> dict[str, Any]:
    """One session's document from its rows ``(r, row, line, raw)`` in file order (``root``: the envelope's root
    fields, for the file's first session); raises the ``FormatError`` that refuses the session. The Spark path
    calls this after regrouping rows by session."""
    return Session(sid, rows, document_id, root, scan).build()


def refused_row(r: int, row: Any, line: int | None, raw: bytes, document_id: str | None) -> Record | None:
    """The error record of a row that cannot join a session (not an object, no usable ``session_id``)."""
    base = f"/session_steps/{r}"
    if not isinstance(row, dict):
        reason, pointer = f"a row is a JSON object, got {type(row).__name__}", base
    else:
        sid = row.get("session_id")
        if nonempty_str(sid):
            return None
        what = "missing" if "session_id" not in row else ("empty" if sid == "" else f"a {type(sid).__name__}")
        reason, pointer = f"session_id must be a non-empty string, got {what}", f"{base}/session_id"
    error = FormatError(reason, pointer=pointer, document_id=document_id, line=line)
    return Record(line, raw, value=row, error=error)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All Storyline documents of a capture file (one per session); raises the first error."""
    return documents(iter_records(data, document_id))


def sniff(sample: Any) -> bool:
    """Rows of this format carry ``session_id`` and ``step_id`` (RFC-0009's required keys); the envelope has
    ``session_steps``; a top-level array holds rows."""
    if isinstance(sample, dict) and isinstance(sample.get("session_steps"), list):
        return True
    if isinstance(sample, list) and sample:
        sample = sample[0]
    return isinstance(sample, dict) and "session_id" in sample and "step_id" in sample
