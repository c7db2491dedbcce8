"""Reading a capture file: its rows grouped by session, one Storyline document per session (``session``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError
from ...gc_pause import gc_paused
from ..base import Record, as_source, documents
from ..source import MAX_RECORD_SIZE, Source
from .grouping import BUDGET, Grouping
from .parts import Part, Reread, reread_of
from .rows import source_rows
from .session import Session
from .tables import nonempty_str

__all__ = ["SPLITTABLE", "build_group", "build_session", "decode", "group_of", "iter_records", "refused_row", "sniff"]

#: ``iter_records`` takes ``byte_range``: the builder may read one big JSON Lines file as several parts.
SPLITTABLE = True


def iter_records(
    data: Any,
    document_id: str | None = None,
    *,
    budget: int = BUDGET,
    byte_range: tuple[int, int | None] | None = None,
    max_record_size: int = MAX_RECORD_SIZE,
) -> Iterator[Record]:
    """One Record per session (in first-appearance order) or per unreadable line, in file order.

    A session that breaks a rule is one error record; the others still convert (skip policy). ``data`` is
    read as a stream (``base.as_source``); the rows are grouped in bounded memory (``grouping.Grouping``:
    at most ``budget`` bytes of rows held parsed, the rest spilled to a temporary file), so the first record
    comes once the whole file has been read: only then is every session complete.

    ``byte_range=(start, end)`` (``end`` None: the file's end) reads one part of a split file (``SPLITTABLE``):
    the records of the sessions whose first row, and of the bad lines that, start at a byte offset in
    ``[start, end)`` — the whole file is still read, for those sessions' later rows. The parts of a file, in
    order, give exactly the file's records. ``max_record_size``: the longest line kept (``source.Source``; a
    ``Source`` given as ``data`` keeps its own)."""
    # Bytes, or a file with a descriptor: spilled rows are read again from it (before the stream is read: a
    # file's offsets count from its position now).
    reread = reread_of(data)
    src = as_source(data, document_id, max_record_size)
    if src.is_blank():
        return  # an empty file holds no rows
    groups = Grouping(document_id, budget, reread)
    try:
        with gc_paused():  # plain JSON values: no cycles for the collector to find while the file is read
            root = _collect(src, document_id, groups, byte_range, reread if byte_range else None)
    except BaseException:
        groups.close()
        raise
    first = next(iter(groups.sessions), None)

    def build(sid: str, rows: list, scan: bool) -> dict[str, Any]:
        return build_session(sid, rows, document_id, root if sid == first else {}, scan)

    yield from groups.records(build)


def _collect(
    src: Source,
    document_id: str | None,
    groups: Grouping,
    byte_range: tuple[int, int | None] | None,
    reread: Reread | None,
) -> dict[str, Any]:
    """Pass 1: every row into its session, every bad line into the file's order; returns the root fields. A
    part of a split file whose bytes can be read again passes over the lines it does not need (``parts``)."""
    start, end = byte_range or (0, None)
    part = Part(groups, document_id, start, end, reread) if reread is not None else None
    items = source_rows(src, document_id, lazy=part is not None)
    root = next(items)
    for item in items:
        if part is not None and (item := part.add(item)) is None:
            continue
        at = max(item.offset, 0)  # a whole-file value (offset -1) starts at the file's start
        mine = byte_range is None or (start <= at and (end is None or at < end))
        if item.error is not None:
            if mine:
                groups.add_bad(item.error, parsed=False, offset=item.offset if item.raw else -1)
            continue
        refused = refused_row(item.r, item.row, item.line, item.raw, document_id)
        if refused is not None:
            if mine:
                groups.add_bad(refused, parsed=True, offset=item.offset if item.raw else -1)
        else:
            groups.add_row(item.r, item.row, item.line, item.raw, item.big, mine, item.offset if item.raw else -1)
    return root  # type: ignore[return-value]


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


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
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


# The regrouping capability (``base.Regrouping``): an engine that shuffles rows by session (Spark) builds the
# same documents as ``iter_records`` from the rows of each session.


def group_of(r: int, row: Any, line: int | None, raw: bytes, document_id: str | None) -> str | Record:
    """The session id of one parsed row (its group), or the bad record the reader makes of the row."""
    refused = refused_row(r, row, line, raw, document_id)
    return row["session_id"] if refused is None else refused


def build_group(sid: str, rows: list, document_id: str | None, scan: bool = True) -> dict[str, Any]:
    """``build_session`` of one session regrouped from JSON Lines rows: JSON Lines has no envelope, so no root
    fields (the first session gets ``{}`` as the others do)."""
    return build_session(sid, rows, document_id, {}, scan)
