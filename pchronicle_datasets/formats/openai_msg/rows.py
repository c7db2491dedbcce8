"""The input shapes of RFC-0009 as one stream of rows: a top-level array of rows, the
``{"session_steps": [...], ...root fields}`` envelope, or JSON Lines of rows (pointers then use the line's
index as ``{r}``: a top-level array and JSON Lines are both normalised to ``/session_steps/{r}``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError
from ..base import Record, parse_file

__all__ = ["source_rows"]


def source_rows(
    data: bytes, document_id: str | None, scan: bool = True
) -> Iterator[tuple[int, Any, int | None, bytes] | Record]:
    """``(r, row, line, raw)`` for every row, or a Record carrying a file- or line-level error.

    The first item is always a dict of root fields (for the envelope; empty otherwise)."""
    try:
        is_whole, parsed = parse_file(data, document_id, scan)
    except FormatError as exc:
        yield {}
        yield Record(exc.line, data, error=exc)
        return
    if not is_whole:
        yield {}
        # {r} is the row's index among the non-blank lines (blank lines are not rows), so that export, which
        # writes no blank lines, gives back the same pointers; errors still name the physical line.
        for r, number, raw, row in parsed:
            yield Record(number, raw, error=row) if isinstance(row, FormatError) else (r, row, number, raw)
        return
    whole = parsed
    if isinstance(whole, list):
        yield {}
        for r, row in enumerate(whole):
            yield (r, row, None, b"")
    elif isinstance(whole, dict) and "session_steps" in whole:
        steps = whole["session_steps"]
        root = {k: v for k, v in whole.items() if k != "session_steps"}
        yield root
        if not isinstance(steps, list):
            yield Record(
                None,
                data,
                error=FormatError(
                    "session_steps must be an array of rows", pointer="/session_steps", document_id=document_id
                ),
            )
            return
        for r, row in enumerate(steps):
            yield (r, row, None, b"")
    elif isinstance(whole, dict) and "session_id" in whole:
        yield {}
        yield (0, whole, 1, data)  # JSON Lines holding a single row
    else:
        yield {}
        kind = "an object without session_steps" if isinstance(whole, dict) else type(whole).__name__
        yield Record(
            None,
            data,
            error=FormatError(
                f"expected an array of rows, a {{'session_steps': [...]}} envelope or JSON Lines of rows; got {kind}",
                document_id=document_id,
            ),
        )
