"""The ``codex`` format: the session rollouts of OpenAI's Codex CLI and Desktop
(``~/.codex/sessions/**/rollout-*.jsonl``, also ``.jsonl.zst``),
wrapper (``{timestamp, type, payload}``) and pre-wrapper layouts.

One file is one session: one Storyline document. The mapping table is docs/formats/codex.md (``fields.py`` holds
it as data); the same-source writer gives each file back as equal JSON lines.

>>> text = (b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1"}}\\n'
...         b'{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message",'
...         b'"role":"developer","content":[{"type":"input_text","text":"be brief"}]}}\\n')
>>> [(t["src"], t["msg"]) for t in decode(text, "rollout.jsonl")[0]["turns"]]
[('developer', 'be brief')]
>>> import orjson
>>> back = encode(decode(text, "rollout.jsonl"))
>>> [orjson.loads(x) for x in back.splitlines()] == [orjson.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ..base import Record, as_source, documents, parse_file
from .fields import NAME, WRAPPER_TYPES
from .reader import layout_of, parent_thread, read_rollout
from .writer import encode, rollout_lines

__all__ = [
    "ALIASES",
    "EXTENSION",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "link",
    "parent_of",
    "rollout_lines",
    "sniff",
]

ALIASES: tuple[str, ...] = ("codex-rollout",)
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one rollout file per session


def sniff(sample: Any) -> bool:
    """Whether a parsed line is a Codex rollout's: a wrapper line ``{type, payload}`` of one of the rollout line
    types with a ``timestamp``, or the pre-wrapper header ``{id, timestamp, instructions[, git]}``.

    >>> sniff({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}), sniff({"type": "message"})
    (True, False)
    """
    layout = layout_of(sample)
    if layout == "wrapper":
        return "timestamp" in sample and sample["type"] in WRAPPER_TYPES
    return layout == "bare"


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The document of a rollout file (a line that is not JSON is an error record of its own, and the rest is
    still read); a file that gives no document is one error record naming the line and pointer."""
    src = as_source(data, document_id)
    if src.is_blank():
        return
    try:
        whole, parsed = parse_file(src, document_id)
    except FormatError as exc:
        yield Record(exc.line, src.text, error=exc)
        return
    items = [(1, src.text, parsed)] if whole else ((line, raw, value) for _, line, raw, value in parsed)
    values: list[Any] = []
    numbers: list[int] = []
    raws: list[bytes] = []
    for line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        values.append(value)
        numbers.append(line)
        raws.append(raw)
    if not values:
        return
    try:
        story = read_rollout(values, document_id, numbers)
    except PchronicleError as exc:
        yield Record(numbers[0], b"\n".join(raws), error=exc.with_context(document_id=document_id))
        return
    yield Record(numbers[0], b"", story=story, value=None)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """The Storyline document of a rollout file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))


def parent_of(first: Any) -> tuple[str, str] | None:
    """``(session, parent session)`` of a rollout whose first line (``session_meta``) names a parent thread:
    what ``session_links`` needs to give the parent its ``/children`` when both files are loaded.

    >>> parent_of({"timestamp": "t", "type": "session_meta", "payload": {"id": "c", "parent_thread_id": "p"}})
    ('c', 'p')
    """
    payload = first.get("payload") if isinstance(first, dict) and first.get("type") == "session_meta" else None
    parent = parent_thread(payload)
    session = payload.get("id") if isinstance(payload, dict) else None
    return (session, parent) if isinstance(session, str) and session and parent else None


def link(stories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add ``/children`` to every document whose session a loaded document names as its ``/parent/psid``
    (subagent rollouts carry ``parent_thread_id``; the parent's file does not name them). In place; returns
    ``stories``.

    >>> docs = [{"session": "p", "turns": []}, {"session": "c", "parent": {"psid": "p"}, "turns": []}]
    >>> link(docs)[0]["children"]
    ['c']
    """
    by_session = {s.get("session"): s for s in stories}
    for story in stories:
        parent = by_session.get((story.get("parent") or {}).get("psid"))
        if parent is not None and parent is not story:
            children = parent.setdefault("children", [])
            if story["session"] not in children:
                children.append(story["session"])
    return stories
