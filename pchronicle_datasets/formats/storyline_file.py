"""The ``storyline`` format: a file holding one Storyline document, or JSON Lines of documents.

Files are conventionally named ``storyline.json`` or ``{session}.storyline.json``. Documents are kept
exactly as given (decoding only validates them); ``encode`` writes one compact document per line, which
is itself a valid single-document file when there is one document.

>>> text = encode([{"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}])
>>> text
'{"schema_version":"storyline/v1","session":"s","agent":{"id":"a"},"turns":[]}\\n'
>>> decode(text, "s.storyline.json")[0]["session"]
's'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import FormatError, PchronicleError
from ..jsonio import dumps, json_type
from ..schema import SCHEMA_VERSION, validate
from .base import Record, documents, read_records

NAME = "storyline"
ALIASES: tuple[str, ...] = ()
KEYS = (
    "schema_version",
    "session",
    "agent",
    "turns",
    "origin",
    "src",
    "msg",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # RFC-0001's file convention: {session}.storyline.json, one document each
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): the CLI writes a batch at a time


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """Every record of a storyline file, each with its document or its error, in file order.

    A file whose whole text is one JSON value is a single document; otherwise it is JSON Lines (see
    ``base.json_lines``; blank lines are skipped). A file that is neither is one error for the whole file.
    """
    return read_records(
        data,
        document_id,
        read_line,
        lambda value, text: (_record(value, text, document_id, None),),
    )


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The records of line ``line`` of a JSON Lines file, its ``index``-th non-blank line (0-based), already
    parsed (``value``; ``raw`` its bytes): what the file's reading loop gives for it, so a part of a split file
    is read line by line with the same result (``spark``: the Data Source's line parts).

    >>> [rec.error.line for rec in read_line([], b"[]", "f.jsonl", 7, 5)]
    [7]
    """
    return [_record(value, raw, document_id, line)]


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None) -> Record:
    if not isinstance(value, dict):
        error = FormatError(
            f"expected a Storyline document (a JSON object), got {json_type(value)}; a storyline file holds one "
            "document or JSON Lines of documents",
            document_id=document_id,
            line=line,
        )
        return Record(line, raw, error=error, value=value)
    try:
        validate(value, document_id=document_id, parsed=True)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)
    return Record(line, raw, story=value, value=value)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All documents of a storyline file; raises the first error (with its file, line and pointer)."""
    return documents(iter_records(data, document_id))


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """JSON Lines, one compact document per line; each document is validated first."""
    if options:
        raise TypeError(f"the {NAME} writer takes no options, got {sorted(options)}")
    out = []
    for story in stories:
        validate(story)
        out.append(dumps(story))
        out.append(b"\n")
    return b"".join(out).decode("utf-8")


def sniff(sample: Any) -> bool:
    """A Storyline document carries its fixed ``schema_version``."""
    return isinstance(sample, dict) and sample.get("schema_version") == SCHEMA_VERSION
