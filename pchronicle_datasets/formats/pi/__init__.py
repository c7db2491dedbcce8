"""The ``pi`` format: the session files of the Pi coding agent (``~/.pi/agent/sessions/--<path>--/*.jsonl``),
versions 1 (linear), 2 (a tree by ``id``/``parentId``) and 3.

One file is one session: one Storyline document. The mapping table is docs/formats/pi.md (``fields.py`` holds
it as data); the same-source writer gives each file back as equal JSON lines.

>>> text = (b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}\\n'
...         b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
...         b'"message":{"role":"user","content":"hi"}}\\n')
>>> [(t["src"], t["msg"]) for t in decode(text, "s.jsonl")[0]["turns"]]
[('user', 'hi')]
>>> import orjson
>>> back = encode(decode(text, "s.jsonl"))
>>> [orjson.loads(x) for x in back.splitlines()] == [orjson.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ..base import Record, documents, open_file
from .fields import INDEX_FILES, NAME, ROLES
from .reader import is_header, read_session
from .writer import encode, session_lines

__all__ = [
    "ALIASES",
    "ENCODE_IN_BATCHES",
    "EXTENSION",
    "INDEX_FILES",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "session_lines",
    "sniff",
]

ALIASES: tuple[str, ...] = ("pi-session",)
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one session file per session
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): the reader splits at each session header


def sniff(sample: Any) -> bool:
    """Whether a parsed line is a Pi session's: the header ``{type: "session", id, timestamp}``, or a ``message``
    entry ``{type: "message", timestamp, message: {role}}`` whose role is one of Pi's.

    >>> sniff({"type": "session", "id": "x", "timestamp": "t"}), sniff({"type": "session"})
    (True, False)
    """
    if is_header(sample):
        return True
    message = sample.get("message") if isinstance(sample, dict) and sample.get("type") == "message" else None
    return (
        isinstance(message, dict)
        and message.get("role") in ROLES
        and isinstance(sample.get("timestamp"), str)
        and set(sample) <= {"type", "id", "parentId", "timestamp", "message"}
    )


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The documents of a Pi session file, one per session header, each as soon as its lines are read (a line
    that is not JSON is an error record of its own, and the rest is still read); a session that gives no
    document is one error record naming the line and pointer."""
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    items = [(1, src.text, parsed)] if whole else ((line, raw, value) for _, line, raw, value in parsed)
    values: list[Any] = []
    numbers: list[int] = []
    raws: list[bytes] = []
    for line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        if is_header(value) and values:  # several sessions one after the other (what encode writes for several)
            yield _record(values, numbers, raws, document_id)
            values, numbers, raws = [], [], []
        values.append(value)
        numbers.append(line)
        raws.append(raw)
    if values:
        yield _record(values, numbers, raws, document_id)


def _record(values: list[Any], numbers: list[int], raws: list[bytes], document_id: str | None) -> Record:
    try:
        return Record(numbers[0], b"", story=read_session(values, document_id, numbers))
    except PchronicleError as exc:
        return Record(numbers[0], b"\n".join(raws), error=exc.with_context(document_id=document_id))


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """The Storyline document of a Pi session file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
