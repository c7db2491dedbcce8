"""Which big files may be read in parts, and how: one rule for every engine (the builder's ``num_proc``
shards, Spark's tasks).

A file may be split only when it is uncompressed JSON Lines (never a SQLite database, whatever its bytes look
like), known from its first lines (``base.starts_json_lines``: a file that is one JSON value has no such lines),
and of a format that can read a part: ``"range"`` for a format whose reader reads byte ranges and regroups rows
(``splittable``: openai-msg, its rows grouped by session), ``"lines"`` for one whose lines stand alone
(``line_reader``: storyline, chat, atif, sharegpt). How big a file must be is each engine's choice
(``builder.SPLIT_MIN``, Spark's ``split_size``); which files, and how, is this module's.

The format is the one the local reader would use, found by detection on the file's first records. With a
named format, the detected one must be that format, else the file is read whole: the whole-file reader's
error for the first record then says which format the file looks like (``formats._diagnosed``), which a part
cannot know, and a split file's rows are exactly the whole file's rows. (The builder used to split a named
format without detecting it; that lost the hint, and split files detection cannot even recognise.)

>>> split_kind(b'{"session_id": "s", "step_id": 1}\\n{"session_id": "s", "step_id": 2}\\n', "auto")
('range', 'openai-msg')
>>> split_kind(b'{"session_id": "s", "step_id": 1}\\n{"session_id": "s", "step_id": 2}\\n', "chat") is None
True
>>> split_kind(b'[{"session_id": "s", "step_id": 1}]\\n', "openai-msg") is None
True
"""

from __future__ import annotations

from typing import Literal

from ..compression import compression_of
from ..formats import DETECT_RECORDS, capability, detect, get_format
from ..formats.base import as_bytes, starts_json_lines
from ..formats.database import is_database
from ..formats.source import is_blank_line

__all__ = ["HEAD", "SplitKind", "split_kind"]

#: The first bytes of a file read to decide: enough for the first records of big-lined files (ATIF
#: trajectories, long conversations).
HEAD = 1 << 20

SplitKind = Literal["range", "lines"]


def split_kind(head: bytes, fmt: str) -> tuple[SplitKind, str] | None:
    """How a big file whose first bytes are ``head`` may be split, read as format ``fmt`` (a name or
    ``"auto"``): ``(kind, format name)``, or None when it is read whole (see the module docs)."""
    if compression_of(head) is not None:
        return None  # compressed data cannot be entered in the middle
    if is_database(head):
        return None  # a SQLite database is one file of pages, read whole (formats.database)
    lines = [raw for raw in as_bytes(head).split(b"\n")[:-1] if not is_blank_line(raw)]  # complete lines only
    if not starts_json_lines(lines):
        return None
    try:
        module = detect(b"\n".join(lines[:DETECT_RECORDS]))
        # Detection decides on the first record some format claims, which lies in the head: what the local
        # reader's detection decides too.
        if fmt != "auto" and module is not get_format(fmt):
            return None
    except ValueError:  # FormatError too: not recognised, or ambiguous; the whole-file reader reports it
        return None
    if capability(module, "splittable") is not None:
        return "range", module.NAME
    return ("lines", module.NAME) if capability(module, "line_reader") is not None else None
