"""A capture file's rows grouped by session in bounded memory (the design and its worst case:
``docs/builder.md``, "One big capture").

RFC-0009 groups a file's rows by ``session_id``, and a session's rows may be spread over the whole file,
interleaved with other sessions. So a session is complete only at the end of its file. Two passes:

1. **Collect** (``add_row`` / ``add_bad``): every line is parsed once, in file order. A session's rows stay
   in memory, parsed, while all the rows held stay under ``budget`` bytes of source text. Past it, the
   sessions that started first are *spilled*: their rows' source bytes are appended to a temporary file
   (deleted when the reader is done), only their places are kept (row index, line, offset, length), and the
   later rows of a spilled session go straight to the file. Bad lines are held (or spilled) the same way.
   A source that can be read again by offset (``reread``: bytes, a local file) needs no such file: a spilled
   row's place is where it already is.
2. **Build** (``records``): in file order — each session at its first row, each bad line at its line, as the
   whole-file reader sorted them — a spilled session's rows are read back and parsed again, the session is
   built, its record handed out and its rows let go.

Memory is then the budget, one session being built, and the places of the spilled rows (about 100 bytes a
row); disk is the spilled bytes (none for a re-readable source). A file under the budget is parsed once.

>>> g = Grouping("cap.jsonl", budget=10)
>>> g.add_row(0, {"session_id": "a", "step_id": 1}, 1, b'{"session_id":"a","step_id":1}', False)
>>> g.add_row(1, {"session_id": "b", "step_id": 1}, 2, b'{"session_id":"b","step_id":1}', False)
>>> g.spilled_sessions, [rec.line for rec in g.records(lambda sid, rows, scan: {"session": sid})]
(2, [1, 2])
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

from ...errors import PchronicleError
from ...gc_pause import gc_paused
from ...jsonio import loads
from ..base import Record

__all__ = ["BUDGET", "Grouping"]

BUDGET = 128 << 20  # source bytes of rows held parsed in memory before sessions are spilled to disk

Row = tuple[int, Any, "int | None", bytes]  # (r, row, line, raw), what build_session takes


class _Session:
    __slots__ = ("big", "line", "offsets", "places", "rows", "sid", "size")

    def __init__(self, sid: str, line: int | None) -> None:
        self.sid = sid
        self.line = line  # its first row's line: where its record stands in the file's order
        self.rows: list[Row] | None = []  # None once spilled
        self.offsets: list[int] = []  # the held rows' byte offsets in the source (re-readable sources)
        self.places: list[tuple[int, int | None, int, int]] = []  # spilled rows: (r, line, offset, length)
        self.size = 0  # source bytes of the rows held in memory
        self.big = False  # some row may hold an integer beyond 64 bits


class _Bad:
    __slots__ = ("line", "offset", "parsed", "place", "record")

    def __init__(self, record: Record, parsed: bool) -> None:
        self.record: Record | None = record
        self.place: tuple[int, int] | None = None  # (offset, length) in the spill file, once spilled
        self.parsed = parsed  # the line is JSON (refused as a row): its value is parsed again when read back
        self.line = record.line


class Grouping:
    """The rows of one file, by session, in file order; see the module's docstring."""

    def __init__(self, document_id: str | None, budget: int = BUDGET, reread: Any = None) -> None:
        self.document_id = document_id
        self.budget = budget
        # reread(offset, length): the source's bytes again (bytes in memory, a local file). Then spilling writes
        # nothing: a spilled row's place is where it is in the source.
        self.reread = reread
        self.sessions: dict[str, _Session] = {}
        self.foreign: set[str] = set()  # sessions another part of a split file owns
        self.order: list[_Session | _Bad] = []
        self.held = 0  # source bytes held in memory
        self.spilled_sessions = 0
        self._resident: dict[int, _Session | _Bad] = {}  # what may still be spilled, oldest first
        self._file: IO[bytes] | None = None
        self._end = 0  # bytes written to the spill file

    # ---------------------------------------------------------------- pass 1

    def add_row(
        self, r: int, row: dict[str, Any], line: int | None, raw: bytes, big: bool, mine: bool = True, offset: int = -1
    ) -> None:
        """A row with a usable ``session_id``, in file order. ``mine``: whether a session starting at this row is
        this reader's (a part of a split file owns the sessions that start in its byte range)."""
        sid = row["session_id"]
        s = self.sessions.get(sid)
        if s is None:
            if not mine:
                self.foreign.add(sid)
                return
            if sid in self.foreign:
                return
            s = self.sessions[sid] = _Session(sid, line)
            self.order.append(s)
            if raw and (self.reread is None or offset >= 0):
                # Rows of a whole-file value have no bytes of their own: they stay (the file is in memory).
                self._resident[id(s)] = s
        s.big = s.big or big
        if s.rows is None:
            s.places.append((r, line, *self._write(raw, offset)))
            return
        s.rows.append((r, row, line, raw))
        s.offsets.append(offset)
        s.size += len(raw)
        self.held += len(raw)
        if self.held > self.budget:
            self._spill()

    def add_bad(self, record: Record, parsed: bool, offset: int = -1) -> None:
        """A line that is not a usable row (not JSON: ``parsed`` False; JSON refused as a row: True)."""
        bad = _Bad(record, parsed)
        bad.offset = offset
        self.order.append(bad)
        if record.raw and (self.reread is None or offset >= 0):
            self._resident[id(bad)] = bad
            self.held += len(record.raw)
            if self.held > self.budget:
                self._spill()

    def _spill(self) -> None:
        # Oldest first, down to half the budget, so that spilling happens in a few large steps.
        for key in list(self._resident):
            if self.held <= self.budget // 2:
                break
            entry = self._resident.pop(key)
            if isinstance(entry, _Session):
                assert entry.rows is not None
                entry.places = [
                    (r, line, *self._write(raw, offset))
                    for (r, _, line, raw), offset in zip(entry.rows, entry.offsets, strict=True)
                ]
                entry.offsets = []
                entry.rows = None
                self.held -= entry.size
                self.spilled_sessions += 1
            else:
                assert entry.record is not None
                raw = entry.record.raw
                entry.place = self._write(raw, entry.offset)
                # The error is kept (it is small); the bytes and the parsed value come back from the file.
                entry.record = Record(entry.record.line, b"", error=entry.record.error)
                self.held -= len(raw)

    def _write(self, raw: bytes, offset: int) -> tuple[int, int]:
        if self.reread is not None and offset >= 0:
            return offset, len(raw)  # already on disk (or in memory): nothing to write
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="pchronicle-spill-")  # noqa: SIM115 - closed by close()
        self._file.write(raw)
        start, self._end = self._end, self._end + len(raw)
        return start, len(raw)

    # ---------------------------------------------------------------- pass 2

    def records(self, build: Callable[[str, list[Row], bool], dict[str, Any]]) -> Iterator[Record]:
        """Every record in file order; ``build(sid, rows, scan)`` makes a session's document (or raises the
        ``PchronicleError`` that refuses it). The spill file is closed at the end (or when the caller stops)."""
        if self._file is not None:
            self._file.flush()
        self._resident.clear()
        if any(entry.line is None for entry in self.order):
            # Rows inside a whole-file value have no line: refused rows first, then the sessions, as the
            # whole-file reader's stable sort by line (None as 0) gave them.
            bad = [e for e in self.order if isinstance(e, _Bad)]
            self.order = sorted(bad + [e for e in self.order if isinstance(e, _Session)], key=lambda e: e.line or 0)
        try:
            for i, entry in enumerate(self.order):
                self.order[i] = None  # type: ignore[call-overload]  # let each entry go once handed out
                if isinstance(entry, _Bad):
                    yield self._bad_record(entry)
                    continue
                del self.sessions[entry.sid]
                rows = entry.rows if entry.rows is not None else self._read_rows(entry)
                raw = b"\n".join(x[3] for x in rows if x[3])
                values = [x[1] for x in rows]
                try:
                    with gc_paused():
                        story = build(entry.sid, rows, entry.big)
                except PchronicleError as exc:
                    yield Record(entry.line, raw, error=exc, value=values)
                else:
                    yield Record(entry.line, raw, story=story, value=values)
        finally:
            self.close()

    def _read(self, offset: int, length: int) -> bytes:
        if self.reread is not None:
            return self.reread(offset, length)
        assert self._file is not None
        if hasattr(os, "pread"):
            return os.pread(self._file.fileno(), length, offset)
        self._file.seek(offset)  # pragma: no cover - Windows
        return self._file.read(length)

    def _read_rows(self, s: _Session) -> list[Row]:
        rows = []
        with gc_paused():
            for r, line, offset, length in s.places:
                raw = self._read(offset, length)
                # Parsed before without error: the same bytes parse the same way again.
                rows.append((r, loads(raw, document_id=self.document_id, line=line, scan=s.big), line, raw))
        return rows

    def _bad_record(self, bad: _Bad) -> Record:
        rec = bad.record
        assert rec is not None
        if bad.place is None:
            return rec
        raw = self._read(*bad.place)
        value = loads(raw, document_id=self.document_id, line=rec.line) if bad.parsed else None
        return Record(rec.line, raw, error=rec.error, value=value)

    def close(self) -> None:
        """Delete the spill file (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
