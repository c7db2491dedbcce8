"""A capture file's rows grouped by session in bounded memory (the design and its worst case:
``docs/builder.md``, "One big capture").

RFC-0009 groups a file's rows by ``session_id``, and a session's rows may be spread over the whole file,
interleaved with other sessions. So a session is complete only at the end of its file. Two passes:

1. **Collect** (``add_row`` / ``add_bad``): every line is parsed once, in file order. A session's rows stay
   in memory, parsed, while all the rows held stay under ``budget`` bytes of source text. Past it, the
   sessions that started first are *spilled*: their rows' source bytes are appended to a temporary file
   (deleted when the reader is done), only their places are kept (row index, line, offset, length), and the
   later rows of a spilled session go straight to the file. A source that can be read again by offset
   (``reread``: bytes, a local file) needs no such file: a spilled row's place is where it already is.
   Bad lines (not JSON, or rows no session can take) count against the same budget, with what their error
   objects cost (``BAD_COST``: a bad line's record, error and value take about a kilobyte however short the
   line), and past it they are written whole — their place in the file's order, line, error and bytes (or
   offset) — to a log read back in order, so nothing is kept in memory for them: a file of millions of bad
   lines costs disk, not memory.
2. **Build** (``records``): in file order — each session at its first row, each bad line at its line, as the
   whole-file reader sorted them — a spilled session's rows are read back and parsed again, the session is
   built, its record handed out and its rows let go.

Memory is then the budget, one session being built, and the places of the spilled rows (about 100 bytes a
row); disk is the spilled bytes (none for a re-readable source) and the spilled bad lines. Each row held counts
``ROW_COST`` bytes beyond its text (its parsed value and tuple), so a file of many tiny rows spills too. A file
under the budget is parsed once.

>>> g = Grouping("cap.jsonl", budget=10)
>>> g.add_row(0, {"session_id": "a", "step_id": 1}, 1, b'{"session_id":"a","step_id":1}', False)
>>> g.add_row(1, {"session_id": "b", "step_id": 1}, 2, b'{"session_id":"b","step_id":1}', False)
>>> g.spilled_sessions, [rec.line for rec in g.records(lambda sid, rows, scan: {"session": sid})]
(2, [1, 2])
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

import orjson

from ...errors import PchronicleError
from ...gc_pause import gc_paused
from ...jsonio import loads
from ..base import Record

__all__ = ["BUDGET", "Grouping"]

BUDGET = 128 << 20  # bytes of rows held parsed in memory (source text and ROW_COST) before spilling to disk
#: What a held row costs beyond its source text: its parsed value, tuple and offset (a tiny heartbeat row of
#: 34 bytes takes several hundred parsed), so that many tiny rows reach the budget too.
ROW_COST = 400
#: Past the budget, rows are spilled down to ``budget - budget // SPILL_STEP`` (``_spill``).
SPILL_STEP = 8
#: What a held bad line costs beyond its text: its Record, its error (message, pointer) and its parsed value
#: (measured: 3,000,000 lines of ``{}`` took 3.6 GB when every one was held).
BAD_COST = 1200
_HEADER = struct.Struct("<qqqqI?")  # a logged bad line: seq, line (-1: none), offset (-1: bytes follow), length, meta

Row = tuple[int, Any, "int | None", bytes]  # (r, row, line, raw), what build_session takes


class _Session:
    __slots__ = ("big", "line", "offsets", "places", "rows", "seq", "sid", "size")

    def __init__(self, sid: str, line: int | None, seq: int = 0) -> None:
        self.sid = sid
        self.seq = seq  # its place among the file's records (sessions and bad lines), in file order
        self.line = line  # its first row's line: where its record stands in the file's order
        self.rows: list[Row] | None = []  # None once spilled
        self.offsets: list[int] = []  # the held rows' byte offsets in the source (re-readable sources)
        self.places: list[tuple[int, int | None, int, int]] = []  # spilled rows: (r, line, offset, length)
        self.size = 0  # source bytes of the rows held in memory
        self.big = False  # some row may hold an integer beyond 64 bits


class _Bad:
    __slots__ = ("line", "offset", "parsed", "record", "seq")

    def __init__(self, record: Record, parsed: bool, seq: int = 0, offset: int = -1) -> None:
        self.record = record
        self.parsed = parsed  # the line is JSON (refused as a row): its value is parsed again when read back
        self.line = record.line
        self.seq = seq  # its place among the file's records
        self.offset = offset  # its bytes' offset in a re-readable source (-1: none)


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
        self.order: list[_Session] = []  # the sessions, in the order of their first rows
        self.bad: list[_Bad] = []  # the bad lines held in memory (those before them are in the log)
        self.seq = 0  # records (sessions and bad lines) so far: the next one's place in the file's order
        self.held = 0  # bytes held in memory (source text, ROW_COST a row, BAD_COST a bad line)
        self.spilled_sessions = 0
        self.logged_bad = 0  # bad lines written to the log
        self._bad_held = 0  # the part of held that is bad lines
        self._resident: dict[int, _Session] = {}  # what may still be spilled, oldest first
        self._file: IO[bytes] | None = None
        self._end = 0  # bytes written to the spill file
        self._log: IO[bytes] | None = None  # the spilled bad lines, in file order
        self._types: dict[str, type] = {}  # the error types of the logged bad lines, by name

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
            s = self.sessions[sid] = _Session(sid, line, self.seq)
            self.seq += 1
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
        cost = len(raw) + ROW_COST if raw else 0  # rows of a whole-file value: the file is in memory anyway
        s.size += cost
        self.held += cost
        if self.held > self.budget:
            self._spill()

    def add_bad(self, record: Record, parsed: bool, offset: int = -1) -> None:
        """A line that is not a usable row (not JSON: ``parsed`` False; JSON refused as a row: True)."""
        self.bad.append(_Bad(record, parsed, self.seq, offset))
        self.seq += 1
        if record.line is not None:  # a line of its own (a whole-file value's rows are in memory anyway)
            cost = BAD_COST + len(record.raw)  # held until logged (then only its offset, when re-readable)
            self._bad_held += cost
            self.held += cost
            if self.held > self.budget:
                self._spill()

    def _spill(self) -> None:
        # The bad lines first (their records are the most memory for the fewest bytes), then the sessions,
        # oldest first, down to seven eighths of the budget (SPILL_STEP). Every spilled row is read and parsed
        # again in pass 2: spilling little more than the excess keeps a file just past the budget (each part of
        # a 263 MB capture read by two workers) from reading half its rows twice.
        if self._bad_held and not any(b.line is None for b in self.bad):
            self._log_bad()
        keep = self.budget - self.budget // SPILL_STEP
        for key in list(self._resident):
            if self.held <= keep:
                break
            entry = self._resident.pop(key)
            assert entry.rows is not None
            entry.places = [
                (r, line, *self._write(raw, offset))
                for (r, _, line, raw), offset in zip(entry.rows, entry.offsets, strict=True)
            ]
            entry.offsets = []
            entry.rows = None
            self.held -= entry.size
            self.spilled_sessions += 1

    def _log_bad(self) -> None:
        """Write the bad lines held to the log, in order, and let them go."""
        if self._log is None:
            self._log = tempfile.TemporaryFile(prefix="pchronicle-bad-")  # noqa: SIM115 - closed by close()
        for bad in self.bad:
            rec, err = bad.record, bad.record.error
            assert err is not None
            self._types.setdefault(type(err).__name__, type(err))
            meta = orjson.dumps([type(err).__name__, err.reason, err.pointer, err.document_id])
            keep = self.reread is not None and bad.offset >= 0  # its bytes are in the source: only where
            raw = b"" if keep else rec.raw
            length = len(rec.raw) if keep else len(raw)
            line = -1 if rec.line is None else rec.line
            header = _HEADER.pack(bad.seq, line, bad.offset if keep else -1, length, len(meta), bad.parsed)
            self._log.write(header + meta + raw)
        self.logged_bad += len(self.bad)
        self.bad = []
        self.held -= self._bad_held
        self._bad_held = 0

    def _logged(self) -> Iterator[tuple[int, Record]]:
        """The bad lines of the log, in order, each rebuilt as it was added (its value parsed again)."""
        if self._log is None:
            return
        self._log.flush()
        self._log.seek(0)
        read = self._log.read
        for _ in range(self.logged_bad):
            seq, line, offset, length, size, parsed = _HEADER.unpack(read(_HEADER.size))
            kind, reason, pointer, document_id = orjson.loads(read(size))
            raw = self._read_source(offset, length) if offset >= 0 else read(length)
            number = None if line < 0 else line
            error = self._types[kind](reason, pointer=pointer, document_id=document_id, line=number)
            # A row refused by its keys parsed with the big-integer check before (one beyond 64 bits is a line
            # that is not JSON, parsed False): the same bytes need no scan again.
            value = loads(raw, document_id=self.document_id, line=number, scan=False) if parsed and raw else None
            yield seq, Record(number, raw, error=error, value=value)

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
        ``PchronicleError`` that refuses it). The spill files are closed at the end (or when the caller stops)."""
        if self._file is not None:
            self._file.flush()
        self._resident.clear()
        entries: Iterator[_Session | Record]
        if any(b.line is None for b in self.bad) or any(s.line is None for s in self.order):
            # Rows inside a whole-file value have no line: refused rows first, then the sessions, as the
            # whole-file reader's stable sort by line (None as 0) gave them (all in memory: nothing was logged).
            everything: list[_Session | _Bad] = [*self.bad, *self.order]
            everything.sort(key=lambda e: e.line or 0)
            entries = (e.record if isinstance(e, _Bad) else e for e in everything)
        else:
            entries = self._in_order(self.bad)
        self.bad = []
        try:
            for entry in entries:
                if isinstance(entry, Record):
                    yield entry
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

    def _in_order(self, held: list[_Bad]) -> Iterator[_Session | Record]:
        """The sessions and the bad lines (logged, then ``held``) merged by their places in the file's order;
        each session let go once handed out."""
        bad = iter(self._bad_in_order(held))
        sessions, self.order = self.order, []
        nxt = next(bad, None)
        for i, s in enumerate(sessions):
            sessions[i] = None  # type: ignore[call-overload]
            while nxt is not None and nxt[0] < s.seq:
                yield nxt[1]
                nxt = next(bad, None)
            yield s
        while nxt is not None:
            yield nxt[1]
            nxt = next(bad, None)

    def _bad_in_order(self, held: list[_Bad]) -> Iterator[tuple[int, Record]]:
        yield from self._logged()
        for b in held:
            yield b.seq, b.record

    def _read_source(self, offset: int, length: int) -> bytes:
        assert self.reread is not None
        return self.reread(offset, length)

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

    def close(self) -> None:
        """Delete the spill files (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._log is not None:
            self._log.close()
            self._log = None
