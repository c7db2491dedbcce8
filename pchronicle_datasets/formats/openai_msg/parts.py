"""Reading one part of a split capture: which lines the part must parse, and which it may pass over.

Part *k* of a file owns the sessions whose first row starts in its byte range (``reader.iter_records``'s
``byte_range``). It parses every line of its range; the other lines matter only through their
``session_id``: one before the range may start a session (which then is not the part's), one after it may be
a later row of a session the part owns. Most capture lines begin ``{"session_id": "…"``, and this project's
writer puts it among the last members; either way they name it once, so their session is read from
the bytes (``fast_session_id``) and the line is parsed only when the part needs its row — which makes the parts'
first passes, repeated in every part, cheap. (Before the second spelling was read, each part of a file this
project wrote parsed every line of it.)

That reading is exact for any line that is valid JSON: the id is the first key's when it is the line's only
``"session_id"`` (a second one — a duplicate key, a nested object, a key spelled with ``\\u`` escapes — makes
the fast path give up, and the line is parsed), or the last one's when that is a member of the root that no later
key overrides (of duplicate keys the last one wins, as in the parsed row). A line that is *not* valid JSON may
still look like a row: so a session that such a line seems to start before the range is confirmed by parsing
that line when the session shows up in the range (and, if it is broken, every earlier line that names the
session), before the part decides the session is not its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ...compression import MAGIC_SIZE, compression_of
from ..base import UNPARSED, Record, parse_line
from ..source import CHUNK, as_source
from .grouping import Grouping
from .rows import SourceRow
from .tables import nonempty_str

__all__ = ["Part", "fast_session_id", "reread_of"]

_FAST = re.compile(rb'\s*\{\s*"session_id"\s*:\s*"([^"\\]+)"')
_WS = rb"[ \t\r\n]*"
_AT = re.compile(rb'"session_id"' + _WS + rb":" + _WS + rb'"([^"\\]+)"')
_KEY = b'"session_id"'
_LETTER_ESCAPE = re.compile(rb"\\u00[2-7][0-9a-fA-F]")  # \u escapes of ASCII letters, digits, '"' and '_'

Reread = Callable[[int, int], bytes]


def fast_session_id(raw: bytes) -> str | None:
    """The ``session_id`` of a JSON Lines row read from its bytes, when it is its only session id, the first key
    or one whose object closes at the line's end, and no key can hide behind escapes; else None (parse the line
    to know).

    >>> fast_session_id(b'{"session_id": "s-1", "step_id": 2, "note": "a \\\\"session_id\\\\" aside"}')
    's-1'
    >>> fast_session_id(b'{"messages": [{"role": "user"}], "session_id": "s-1", "step_id": 2, "m": "{\\\\"a\\\\": 1}"}')
    's-1'
    >>> fast_session_id(b'{"step_id": 2, "session_id": "s-1", "usage": {"n": 1}}')
    's-1'
    >>> fast_session_id(b'{"step_id": 2, "session_id": "s-1", "usage": {"n": 1}') is None  # broken: parse it
    True
    >>> fast_session_id(b'{"meta": {"step_id": 2, "session_id": "s-1"}}') is None  # not the root's
    True
    """
    m = _FAST.match(raw)
    if m is None:
        return _last_member_id(raw)
    if raw.find(_KEY, m.end()) >= 0 or (b"\\u00" in raw and _LETTER_ESCAPE.search(raw)):
        return None  # a second one (a later duplicate key wins), or maybe one behind escapes
    try:
        return m.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _last_member_id(raw: bytes) -> str | None:
    """The id of the line's last ``"session_id"`` when it is a member of the root: the members from it to the
    end of the line, then one ``}``, are a whole JSON object (so the object holding it closes at the line's end,
    which in valid JSON makes it the root), in which it is still the id (no later key, escaped or not, is
    ``session_id`` again). Earlier ones do not matter: of duplicate keys the last one wins. (orjson decides at C
    speed; the line's other bytes are not scanned at all.)"""
    at = raw.rfind(_KEY)
    m = _AT.match(raw, at) if at >= 0 else None
    if m is None:
        return None
    try:
        members = orjson.loads(b"{" + raw[at:])
        sid = m.group(1).decode("utf-8")
    except (orjson.JSONDecodeError, UnicodeDecodeError):
        return None
    return sid if type(members) is dict and members["session_id"] == sid else None


def reread_of(data: Any) -> Reread | None:
    """How to read bytes of ``data`` again by offset while it is being read as a stream (uncompressed bytes, or
    an uncompressed file with a descriptor), or None."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        view = bytes(data)
        if compression_of(view[:MAGIC_SIZE]) is not None:
            return None  # offsets are in the decompressed stream, not in these bytes
        return lambda offset, length: view[offset : offset + length]
    try:
        fd = data.fileno()
        # Offsets count from where the stream starts: the file's position now, not its first byte (a file
        # handed over after its first lines were read; called before anything reads from it).
        base = data.tell()
    except (AttributeError, OSError, ValueError):
        return None
    if not hasattr(os, "pread") or compression_of(os.pread(fd, MAGIC_SIZE, base)) is not None:
        return None
    return lambda offset, length: os.pread(fd, length, base + offset)


class Part:
    """Pass 1 of one part: the rows it needs into ``groups`` (see the module's docstring)."""

    def __init__(self, groups: Grouping, document_id: str | None, start: int, end: int | None, reread: Reread):
        self.groups = groups
        self.document_id = document_id
        self.start, self.end = start, end
        self.reread = reread
        self.seen_before: dict[str, tuple[int, int, int]] = {}  # sid → (offset, length, line) of its first fast line

    def add(self, item: SourceRow) -> SourceRow | None:
        """The line as a parsed row when the part needs it (then the caller adds it, ``mine`` telling whether a
        session may start there), else None."""
        offset = max(item.offset, 0)  # a whole-file value (offset -1) starts at the file's start
        if offset < self.start:
            sid = fast_session_id(item.raw)
            if sid is None:
                return self._parsed(item)  # added as not the part's own (the caller knows it is before)
            self.seen_before.setdefault(sid, (offset, len(item.raw), item.line or 0))
            return None
        if self.end is not None and offset >= self.end:
            sid = fast_session_id(item.raw)
            if sid is not None and sid not in self.groups.sessions:
                return None  # not a session of this part: it started before, or it starts after the range
            return self._parsed(item)
        parsed = self._parsed(item)
        row = parsed.row
        if (
            parsed.error is None
            and isinstance(row, dict)
            and nonempty_str(sid := row.get("session_id"))
            and sid not in self.groups.sessions
            and sid not in self.groups.foreign
            and sid in self.seen_before
            and self._started_before(sid)
        ):
            self.groups.foreign.add(sid)
        return parsed

    def _parsed(self, item: SourceRow) -> SourceRow:
        if item.row is not UNPARSED:
            return item
        value, big = parse_line(item.raw, self.document_id, item.line)
        if isinstance(value, Exception):
            return item._replace(row=None, big=big, error=Record(item.line, item.raw, error=value))
        return item._replace(row=value, big=big)

    def _prefix(self) -> Iterator[bytes]:
        for offset in range(0, self.start, CHUNK):
            yield self.reread(offset, min(CHUNK, self.start - offset))

    def _valid_row_of(self, raw: bytes, sid: str) -> bool:
        value, _ = parse_line(raw, self.document_id, None)
        return isinstance(value, dict) and value.get("session_id") == sid

    def _started_before(self, sid: str) -> bool:
        """Whether a valid row of ``sid`` lies before the range (its first fast line, else any earlier line)."""
        offset, length, _ = self.seen_before.pop(sid)
        if self._valid_row_of(self.reread(offset, length), sid):
            return True
        # That line is broken: look at every line before the range (rare: a broken line that names a session
        # whose first valid row comes later).
        src = as_source(self._prefix())
        for _, _, raw in src.lines():
            if (fast_session_id(raw) == sid or fast_session_id(raw) is None) and self._valid_row_of(raw, sid):
                return True
        return False
