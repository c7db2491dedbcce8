"""The lines that start in a byte range of a file: how a split file's parts are cut (Hadoop's rule for text).

A part ``[start, end)`` holds the lines that *start* in it: a line that crosses ``end`` belongs to the part it
starts in, so the parts of a file, in order, hold each of its lines exactly once.

>>> import io
>>> f = io.BytesIO(b'{"a": 1}\\n{"b": 2}\\n{"c": 3}\\n')
>>> line_start(f, 3), read_lines(f, 3, 20)
(9, (9, b'{"b": 2}\\n{"c": 3}\\n'))
>>> byte_range(f, 27, 0, 2), byte_range(f, 27, 1, 2)
((0, 18), (18, None))
>>> count_lines(b'{"a": 1}\\n\\n  \\n{"b": 2}\\n')
(4, 2)
"""

from __future__ import annotations

import re
from typing import Any, BinaryIO

__all__ = ["BLOCK", "byte_range", "count_lines", "line_start", "read_lines"]

BLOCK = 1 << 16  # bytes read at a time while looking for a line's end


def line_start(f: BinaryIO | Any, pos: int) -> int:
    """The offset of the first line that starts at or after ``pos`` (a line starts at ``pos`` only when the
    byte before it ends a line); the file's end when none does. ``f`` is seekable."""
    if pos <= 0:
        return 0
    f.seek(pos - 1)
    while True:
        chunk = f.read(BLOCK)
        if not chunk:
            return f.tell()
        nl = chunk.find(b"\n")
        if nl != -1:
            return f.tell() - len(chunk) + nl + 1


def read_lines(f: BinaryIO | Any, start: int, end: int, limit: int | None = None) -> tuple[int, bytes]:
    """``(offset, bytes)`` of the lines that start in ``[start, end)``, with their newlines: the offset of the
    first of them, and their bytes (the last line finished past ``end`` when it crosses it). ``limit``: the
    longest line the caller keeps (``max_record_size``): a last line longer than it is read no further than
    ``limit + 1`` bytes, so the caller sees it is too long without it being held whole (its line count is the
    same: it still ends the data)."""
    begin = line_start(f, start)
    if begin >= end:
        return begin, b""
    f.seek(begin)
    data = f.read(end - begin)
    last = len(data) - data.rfind(b"\n") - 1  # bytes of the unfinished last line so far
    while data and not data.endswith(b"\n"):  # finish the last line, which may run past `end`
        if limit is not None and last > limit:
            break  # too long to keep: the caller refuses it
        block = f.read(BLOCK)
        if not block:
            break
        cut = block.find(b"\n")
        data += block if cut == -1 else block[: cut + 1]
        last += len(block)
        if cut != -1:
            break
    return begin, data


def byte_range(f: BinaryIO | Any, size: int, k: int, n: int) -> tuple[int, int | None]:
    """Part ``k`` of ``n`` of a file of ``size`` bytes as a line-aligned ``(start, end)``: from the first line
    that starts at or after ``k/n`` of its size to the first that starts at or after ``(k+1)/n`` (``end`` None:
    the file's end, for the last part)."""
    return line_start(f, size * k // n), (None if k == n - 1 else line_start(f, size * (k + 1) // n))


# Where a blank line (``source.is_blank_line``) may start: after a newline followed by whitespace or another
# newline. JSON Lines written by programs have none, so most counts are two scans at memory speed.
_MAYBE_BLANK = re.compile(rb"\n(?=[\n \t\r\x0b\x0c])")
_BLANK = re.compile(rb"[ \t\r\x0b\x0c]*(?:\n|\Z)")


def count_lines(data: bytes) -> tuple[int, int]:
    """``(physical lines, non-blank lines)`` in the bytes of a part, without splitting them into lines.

    >>> count_lines(b' \\n{"a": 1}\\n{"b": 2}\\n\\t')
    (4, 2)
    """
    if not data:
        return 0, 0
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    starts = [m.end() for m in _MAYBE_BLANK.finditer(data)]
    if data[:1].isspace():
        starts.insert(0, 0)
    return lines, lines - sum(1 for start in starts if _BLANK.match(data, start))
