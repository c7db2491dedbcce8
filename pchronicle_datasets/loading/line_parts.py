"""One part of a big JSON Lines file whose lines stand alone (``loading.split``'s kind ``"lines"``: storyline,
chat, atif, sharegpt), read with the records the whole file gives for those lines.

The builder's workers read such a file in parts (``builder._split_big_files``), each the lines that start in
its byte range (``ranges.byte_range``). A line's records depend on its place in the file — its physical line
(errors name it) and its place among the non-blank lines (a ShareGPT or chat record is named
``{file}#{index}``) — so a part first counts the lines before it (``count_before``: the bytes read once, at C
speed, in bounded memory), then streams its own lines through the same ``Source`` the whole-file reader uses
(limits, blank lines, ``max_record_size``), each parsed as that reader parses it and given to the format's
``read_line``.

>>> import io
>>> from pchronicle_datasets.formats import chat
>>> data = b'[{"role": "user", "content": "a"}]\\n\\n[{"role": "user", "content": "b"}]\\n'
>>> count_before(io.BytesIO(data), 36)
(2, 1)
>>> [(r.line, r.story["session"]) for r in part_records(io.BytesIO(data), "c.jsonl", chat, (36, None))]
[(3, 'c.jsonl#2')]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from ..errors import FormatError
from ..formats import capability
from ..formats.base import Record, parse_line
from ..formats.source import BOM, CHUNK, MAX_RECORD_SIZE, Source, file_chunks, is_blank_line, record_too_large
from .ranges import count_lines

__all__ = ["count_before", "line_records", "line_value", "part_records"]


def count_before(f: BinaryIO | Any, start: int) -> tuple[int, int]:
    """``(physical lines, non-blank lines)`` before ``start``, a line start of the seekable file ``f``, as the
    whole-file reader counts them (a leading byte-order mark dropped). Memory holds one chunk: a line longer
    than a chunk is followed by whether it has a non-blank byte so far, not kept."""
    f.seek(0)
    lines = rows = pos = 0
    partial: bool | None = None  # None: at a line start; else whether the line begun so far is not blank
    while pos < start:
        first = pos == 0
        chunk = f.read(min(max(CHUNK, len(BOM)) if first else CHUNK, start - pos))
        if not chunk:
            break
        pos = f.tell()
        if first:
            chunk = chunk.removeprefix(BOM)
        if partial is not None:  # the chunk goes on with a line begun before it
            nl = chunk.find(b"\n")
            partial = partial or not is_blank_line(chunk if nl == -1 else chunk[:nl])
            if nl == -1:
                continue
            lines, rows, partial = lines + 1, rows + partial, None
            chunk = chunk[nl + 1 :]
        cut = chunk.rfind(b"\n") + 1
        counted = count_lines(chunk[:cut])  # complete lines only: count_lines sees each one whole
        lines, rows = lines + counted[0], rows + counted[1]
        if cut < len(chunk):
            partial = not is_blank_line(chunk[cut:])
    return lines, rows


def part_records(
    f: BinaryIO | Any,
    document_id: str | None,
    module: Any,
    byte_range: tuple[int, int | None],
    *,
    max_record_size: int = MAX_RECORD_SIZE,
) -> Iterator[Record]:
    """The records of the lines that start in ``byte_range`` (line starts, ``ranges.byte_range``; end None: the
    file's end) of the seekable plain file ``f``, read by ``module``'s ``read_line``: the whole file's records
    for those lines, in order."""
    start, end = byte_range
    lines, index = count_before(f, start) if start else (0, 0)
    # From the newline before the part (an empty first line, which is blank: no record, no index), so that
    # the part's first line is read as any line inside a file is (a byte-order mark is dropped only at a
    # stream's start).
    begin = start - 1 if start else 0
    f.seek(begin)
    shift = lines - 1 if start else 0
    src = Source(file_chunks(_Window(f, None if end is None else end - begin)), document_id, max_record_size)
    numbered = ((number + shift, offset, raw) for number, offset, raw in src.lines())
    for _offset, _k, record in line_records(numbered, document_id, module, index, max_record_size):
        yield record


def line_records(
    lines: Iterable[tuple[int, int, bytes]], document_id: str | None, module: Any, index: int, max_record_size: int
) -> Iterator[tuple[int, int, Record]]:
    """``(offset, k, record)``: the ``k``-th record of each non-blank line ``(number, offset, raw)``, the first of
    them the file's ``index``-th non-blank line (0-based): the line parsed as the whole-file reader parses it
    (``line_value``), then given to ``module``'s ``read_line`` (a bad line is its own error record). Every engine
    reads a part of a file of standalone lines with it (the builder's workers, Spark's tasks)."""
    read_line = capability(module, "line_reader").read_line
    for number, offset, raw in lines:
        value, _ = line_value(raw, document_id, number, max_record_size)
        if isinstance(value, FormatError):
            records = [Record(number, b"" if len(raw) > max_record_size else raw, error=value)]
        else:
            # A line may give several records (an ATIF trajectory and its subagents).
            records = read_line(value, raw, document_id, number, index)
        for k, record in enumerate(records):
            yield offset, k, record
        index += 1


def line_value(raw: bytes, document_id: str | None, line: int, limit: int) -> tuple[Any, bool]:
    """``base.parse_line`` of a line of a part, or the refusal of a line longer than ``limit`` (``max_record_size``;
    a reader of byte ranges may have stopped reading it there, so its length is not known): the whole-file
    reader's ``RecordTooLargeError`` for the same line."""
    if len(raw) > limit:
        return record_too_large(None, limit, document_id, line), False
    return parse_line(raw, document_id, line)


class _Window:
    """The next ``size`` bytes of a file (all of it when None), as a file object ``file_chunks`` reads."""

    def __init__(self, f: BinaryIO | Any, size: int | None) -> None:
        self.f, self.left = f, size

    def read(self, n: int) -> bytes:
        if self.left is None:
            return self.f.read(n)
        data = self.f.read(min(n, self.left))
        self.left -= len(data)
        return data
