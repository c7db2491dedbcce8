"""The per-line rule of each format whose JSON Lines hold one record per line, standing alone: what one line
gives, knowing its place in the file. A part of a split file is read with it (``records.lines_tables``), so a
big file of such a format is read by many tasks and still gives the local reader's records.

Line ``n`` of a file (its ``index``-th non-blank line, 1-based) gives, in the local reader, the records of the
format's JSON Lines loop for that line; ``line_rule(module)`` is a function ``(value, raw, document_id, line,
index) -> list[Record]`` giving the same, for a line already parsed (``base.parse_line``):

- **storyline**, **atif**: a one-line file reads as that line of a JSON Lines file does, but for the line
  number (a one-line file has none): the format's own ``iter_records`` on the line, its records given the line;
- **chat**: a record without an id is named by its place (``{file}#{index}``), which a one-line file cannot
  know: ``chat.reader.read_conversation`` takes that name;
- **sharegpt** names every record by its place too, and its public API cannot be told it: a big ShareGPT file
  is read whole (one task), as are formats without a rule here (openai-msg regroups rows by session instead:
  ``plan``'s ``range`` parts).

These rules restate, for Spark, what each format's JSON Lines loop does with a line (the chat one restates
its name for a record without an id); the equality tests of ``tests/test_spark.py`` pin them against the
local loader for every format listed. Their right home is the format contract (``docs/formats/README.md``):
a per-line function beside ``SPLITTABLE``, which each reader's own loop would call; this table then becomes a
lookup of it, and ShareGPT gains one too.

>>> from pchronicle_datasets.formats import chat, sharegpt
>>> rule = line_rule(chat)
>>> [rec.story["session"] for rec in rule([{"role": "user", "content": "hi"}], b"[...]", "c.jsonl", 7, 5)]
['c.jsonl#5']
>>> line_rule(sharegpt) is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import PchronicleError
from ..formats import atif, chat, storyline_file
from ..formats.base import Record
from ..formats.chat.reader import read_conversation

__all__ = ["LineRule", "line_rule"]

LineRule = Callable[[Any, bytes, "str | None", int, int], list[Record]]


def _relined(rec: Record, raw: bytes, document_id: str | None, line: int) -> Record:
    """A record of a one-line file, as line ``line`` of a JSON Lines file gives it."""
    error = rec.error.with_context(document_id=document_id, line=line) if rec.error is not None else None
    return Record(line, raw, story=rec.story, error=error, value=rec.value)


def _one_line_file(module: Any) -> LineRule:
    def rule(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
        return [_relined(rec, raw, document_id, line) for rec in module.iter_records(raw, document_id)]

    return rule


def _conversation(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    try:
        story = read_conversation(value, document_id=document_id, session=f"{document_id or chat.NAME}#{index}")
    except PchronicleError as exc:
        return [Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)]
    return [Record(line, raw, story=story, value=value)]


_RULES: dict[Any, LineRule] = {  # format module → its rule
    storyline_file: _one_line_file(storyline_file),
    atif: _one_line_file(atif),
    chat: _conversation,
}


def line_rule(module: Any) -> LineRule | None:
    """The per-line rule of a format (its module), or None when its big files are read whole."""
    return _RULES.get(module)
