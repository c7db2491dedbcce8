"""The ``role-text`` format: records whose ``trajectory`` is a list of ``{"role": "system" | "user" | "ai",
"text": …}`` turns (Nebius' SWE-agent trajectory sets, exported from Parquet to JSON Lines). The mapping table
is docs/formats/role-text.md.

>>> line = ('{"instance_id": "i1", "target": true,'
...         ' "trajectory": [{"role": "user", "text": "fix"}, {"role": "ai", "text": "ok"}]}')
>>> story = decode(line, "t.jsonl")[0]
>>> story["session"], [(t["src"], t["msg"]) for t in story["turns"]], story["task"]
('i1', [('user', 'fix'), ('agent', 'ok')], {'result': {'correct': True}})
>>> import orjson; orjson.loads(encode([story])) == orjson.loads(line)
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import PchronicleError
from ..base import Record, documents, read_records
from .fields import NAME
from .reader import is_record, read_record
from .writer import encode

__all__ = [
    "ALIASES",
    "ENCODE_IN_BATCHES",
    "EXTENSION",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "read_line",
    "sniff",
]

ALIASES: tuple[str, ...] = ("nebius",)
KEYS = (
    "trajectory",
    "role",
    "text",
    "instance_id",
    "model_name",
    "target",
    "exit_status",
    "generated_patch",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = False
ENCODE_IN_BATCHES = True


def sniff(sample: Any) -> bool:
    """A record (or an array whose first element is one) whose ``trajectory`` starts with a ``role``/``text``
    entry."""
    if isinstance(sample, list) and sample:
        sample = sample[0]
    return is_record(sample)


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """One document per record: a JSON Lines line, an element of a JSON array of records, or the whole file."""
    return read_records(data, document_id, read_line, lambda value, text: _whole(value, text, document_id))


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The record of one JSON Lines line (its ``index``-th non-blank line) as the reading loop gives it.

    >>> [r.story["session"] for r in read_line({"trajectory": [{"role": "ai", "text": "x"}]}, b"", "f", 3, 2)]
    ['f#3']
    """
    return [_record(value, raw, document_id, line, f"{document_id or NAME}#{index + 1}", "")]


def _whole(value: Any, text: bytes, document_id: str | None) -> Iterator[Record]:
    if isinstance(value, list) and value and is_record(value[0]):
        for n, item in enumerate(value):
            yield _record(item, text, document_id, None, f"{document_id or NAME}#{n + 1}", f"/{n}")
    else:
        yield _record(value, text, document_id, None, document_id or NAME, "")


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None, session: str, at: str) -> Record:
    try:
        return Record(line, raw, story=read_record(value, document_id, line, session, at), value=value)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """All documents of a role/text file; raises the first error."""
    return documents(iter_records(data, document_id))
