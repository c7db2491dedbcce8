"""The per-line rule of each format whose JSON Lines hold one record per line, standing alone: what one line
gives, knowing its place in the file. A part of a split file is read with it (``records.lines_tables``), so a
big file of such a format is read by many tasks and still gives the local reader's records.

The rule is the format's own ``read_line`` (the optional member of the format contract,
``docs/formats/README.md``), the function its JSON Lines loop calls for each line: storyline, chat, atif and
sharegpt have one. Formats without it are read whole, one task a file (openai-msg regroups rows by session
instead: ``plan``'s ``range`` parts).

``line_rule(module)`` is a function ``(value, raw, document_id, line, index) -> list[Record]`` for a line
already parsed (``base.parse_line``): line ``line`` of the file, its ``index``-th non-blank line (1-based, as
``records`` counts).

>>> from pchronicle_datasets.formats import chat, openai_msg, sharegpt
>>> rule = line_rule(chat)
>>> [rec.story["session"] for rec in rule([{"role": "user", "content": "hi"}], b"[...]", "c.jsonl", 7, 5)]
['c.jsonl#5']
>>> line_rule(sharegpt) is not None, line_rule(openai_msg) is None
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..formats import capability
from ..formats.base import Record

__all__ = ["LineRule", "line_rule"]

LineRule = Callable[[Any, bytes, "str | None", int, int], list[Record]]


def line_rule(module: Any) -> LineRule | None:
    """The per-line rule of a format (its module), or None when its big files are read whole."""
    reader = capability(module, "line_reader")
    if reader is None:
        return None
    read_line = reader.read_line

    def rule(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
        return read_line(value, raw, document_id, line, index - 1)  # read_line counts lines from 0

    return rule
