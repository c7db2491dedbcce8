"""The ``openhands`` format: the OpenHands event stream (a JSON array of ``action`` and ``observation``
events linked by ``cause``). The mapping table is docs/formats/openhands.md.

>>> stream = [{"id": 0, "source": "user", "action": "message", "args": {"content": "list files"}},
...           {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls", "thought": "Let me look."}},
...           {"id": 2, "source": "agent", "observation": "run", "cause": 1, "content": "a.py"}]
>>> import orjson; story = decode(orjson.dumps(stream), "t.json")[0]
>>> [(t["src"], t["msg"]) for t in story["turns"]]
[('user', 'list files'), ('agent', 'Let me look.')]
>>> story["turns"][1]["tool_calls"]
[{'tcid': 'event-1', 'fn': 'run', 'args': {'command': 'ls'}}]
>>> story["turns"][1]["observation"]
{'results': [{'content': 'a.py', 'source_call_id': 'event-1'}]}
>>> orjson.loads(encode([story])) == stream
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import PchronicleError
from ..base import Record, documents, read_records
from .fields import NAME
from .reader import is_record, is_stream, read_stream
from .writer import encode, events

__all__ = [
    "ALIASES",
    "ENCODE_IN_BATCHES",
    "EXTENSION",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "events",
    "iter_records",
    "read_line",
    "sniff",
]

ALIASES: tuple[str, ...] = ("openhands-events",)
KEYS = (
    "id",
    "source",
    "action",
    "observation",
    "args",
    "cause",
    "content",
    "tool_call_metadata",
    "message",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".json"
OUTPUT = "file"
PER_DOCUMENT = True
ENCODE_IN_BATCHES = True


def sniff(sample: Any) -> bool:
    """A non-empty array whose first element is an event (integer ``id``, string ``source``, string ``action``
    or ``observation``), or an evaluation record: an object whose ``history`` is such an array."""
    return is_stream(sample) or is_record(sample)


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """One document per event array or evaluation record: the whole file, or each JSON Lines line."""
    return read_records(
        data, document_id, read_line, lambda value, text: [_record(value, text, document_id, None, document_id or NAME)]
    )


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The document of one JSON Lines line (its ``index``-th non-blank line).

    >>> read_line([], b"", "runs.jsonl", 4, 3)[0].story["session"]
    'runs.jsonl#4'
    """
    return [_record(value, raw, document_id, line, f"{document_id or NAME}#{index + 1}")]


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None, session: str) -> Record:
    try:
        return Record(line, raw, story=read_stream(value, document_id, line, session), value=value)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """All documents of an OpenHands event file; raises the first error."""
    return documents(iter_records(data, document_id))
