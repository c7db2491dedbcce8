"""The input shapes of RFC-0009 as one stream of rows: a top-level array of rows, the
``{"session_steps": [...], ...root fields}`` envelope, or JSON Lines of rows (pointers then use the line's
index as ``{r}``: a top-level array and JSON Lines are both normalised to ``/session_steps/{r}``).

JSON Lines are read one line at a time (``base.parse_source``); a file that is one JSON value (an array, an
envelope) is one document and is parsed whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from ...errors import FormatError
from ...jsonio import may_hold_big_int
from ..base import UNPARSED, Record, parse_source
from ..source import Source

__all__ = ["SourceRow", "source_rows"]


class SourceRow(NamedTuple):
    """One row as read: its index ``r``, value, 1-based physical line (None inside a whole-file value), its
    source bytes (empty inside a whole-file value), whether they may hold an integer beyond 64 bits, and the
    byte offset of its line in the stream (-1 when it is not a line of its own: a whole-file value); or, with
    ``error``, the Record of a line (or file) that gives no row."""

    r: int
    row: Any
    line: int | None
    raw: bytes
    big: bool
    offset: int = 0
    error: Record | None = None


def source_rows(src: Source, document_id: str | None, lazy: bool = False) -> Iterator[dict[str, Any] | SourceRow]:
    """Every row (``SourceRow``), or one carrying a file- or line-level error, in file order.

    The first item is always a dict of root fields (for the envelope; empty otherwise). ``lazy``: JSON Lines
    rows come unparsed (``row`` is ``base.UNPARSED``; ``base.parse_line`` parses one)."""
    try:
        is_whole, parsed = parse_source(src, document_id, lazy=lazy)
    except FormatError as exc:
        yield {}
        yield _bad(Record(exc.line, src.text, error=exc))
        return
    if not is_whole:
        yield {}
        # {r} is the row's index among the non-blank lines (blank lines are not rows), so that export, which
        # writes no blank lines, gives back the same pointers; errors still name the physical line.
        for r, number, offset, raw, row, big in parsed:
            if row is UNPARSED:
                yield SourceRow(r, row, number, raw, big, offset)
            elif isinstance(row, FormatError):
                yield SourceRow(r, None, number, raw, big, offset, Record(number, raw, error=row))
            else:
                yield SourceRow(r, row, number, raw, big, offset)
        return
    whole, data = parsed, src.text
    big = may_hold_big_int(data)  # one scan of the whole document instead of one per value
    if isinstance(whole, list):
        yield {}
        for r, row in enumerate(whole):
            yield SourceRow(r, row, None, b"", big, -1)
    elif isinstance(whole, dict) and "session_steps" in whole:
        steps = whole["session_steps"]
        root = {k: v for k, v in whole.items() if k != "session_steps"}
        yield root
        if not isinstance(steps, list):
            error = FormatError(
                "session_steps must be an array of rows", pointer="/session_steps", document_id=document_id
            )
            yield _bad(Record(None, data, error=error))
            return
        for r, row in enumerate(steps):
            yield SourceRow(r, row, None, b"", big, -1)
    elif isinstance(whole, dict) and "session_id" in whole:
        yield {}
        yield SourceRow(0, whole, 1, data, big, -1)  # JSON Lines holding a single row (-1: kept, not re-read)
    else:
        yield {}
        kind = "an object without session_steps" if isinstance(whole, dict) else type(whole).__name__
        error = FormatError(
            f"expected an array of rows, a {{'session_steps': [...]}} envelope or JSON Lines of rows; got {kind}",
            document_id=document_id,
        )
        yield _bad(Record(None, data, error=error))


def _bad(record: Record) -> SourceRow:
    return SourceRow(0, None, record.line, record.raw, False, -1, record)
