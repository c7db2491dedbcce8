"""The ``codex`` format: the session rollouts of OpenAI's Codex CLI and Desktop
(``~/.codex/sessions/**/rollout-*.jsonl``, also ``.jsonl.zst``),
wrapper (``{timestamp, type, payload}``) and pre-wrapper layouts, and the event stream of ``codex exec --json``.

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
from ..base import Record, documents, open_file
from .fields import EXEC_FIRST, NAME
from .reader import layout_of, parent_thread, read_rollout
from .writer import encode, rollout_lines

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
    "link",
    "parent_of",
    "rollout_lines",
    "sniff",
]

ALIASES: tuple[str, ...] = ("codex-rollout",)
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one rollout file per session
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): the reader splits at each session_meta


def sniff(sample: Any) -> bool:
    """Whether a parsed line is a Codex rollout's: a ``session_meta`` line ``{type, payload}``, another wrapper
    line type with a ``timestamp`` too, the pre-wrapper header ``{id, timestamp, instructions[, git]}``, or the
    ``thread.started`` line that opens ``codex exec --json`` output.

    >>> sniff({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}), sniff({"type": "message"})
    (True, False)
    """
    layout = layout_of(sample)
    if layout == "wrapper":
        return sample["type"] == "session_meta" or "timestamp" in sample
    return layout in ("bare", "exec")


def _starts_session(value: Any, current: Any) -> Any:
    """The id of the session a line starts when it is a ``session_meta`` (or pre-wrapper header) of a session
    other than ``current``'s, else None: a file holding several rollouts one after the other (what ``encode``
    writes for several documents) gives one document each; a resumed rollout's repeated meta does not split."""
    layout = layout_of(value)
    if layout == "bare":
        return value.get("id") or True
    if layout == "exec":  # codex exec --json output: a resumed thread prints its thread.started again
        return value[EXEC_FIRST[1]] if value[EXEC_FIRST[1]] != current else None
    if isinstance(value, dict) and value.get("type") == "session_meta" and isinstance(value.get("payload"), dict):
        sid = value["payload"].get("id")
        return sid if sid != current else None
    return None


def _ancestors(value: Any) -> set[Any]:
    """The sessions a ``session_meta`` line says its history comes from: ``forked_from_id`` and the parent
    thread (a subagent forked with its parent's context)."""
    payload = value.get("payload") if isinstance(value, dict) else None
    if not isinstance(payload, dict):
        return set()
    return {x for x in (payload.get("forked_from_id"), parent_thread(payload)) if isinstance(x, str) and x}


def _opens_item(value: Any) -> bool:
    """A line that is part of a conversation (an item or a compaction), not the session's header or events."""
    return isinstance(value, dict) and value.get("type") in ("response_item", "compacted")


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The documents of a rollout file, one per session it holds, each as soon as its lines are read (a line
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
    current: Any = None
    # A forked rollout (a fork, or a subagent given its parent's context) replays the history it came from right
    # after its own session_meta, that history's session_meta first (codex-rs: "Use the FIRST SessionMeta
    # encountered in the file as the canonical thread id … Keep all items intact"): such a meta, of a session the
    # first one names, before any item, is part of the same session, not the start of another rollout.
    ancestors: set[Any] = set()
    replaying = False
    for line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        start = _starts_session(value, current)
        if start is not None and replaying and start in ancestors:
            ancestors |= _ancestors(value)
            start = None
        if start is not None:
            if values:
                yield _record(values, numbers, raws, document_id)
                values, numbers, raws = [], [], []
            current = start
            ancestors, replaying = _ancestors(value), True
        elif _opens_item(value):
            replaying = False
        values.append(value)
        numbers.append(line)
        raws.append(raw)
    if values:
        yield _record(values, numbers, raws, document_id)


def _record(values: list[Any], numbers: list[int], raws: list[bytes], document_id: str | None) -> Record:
    try:
        return Record(numbers[0], b"", story=read_rollout(values, document_id, numbers))
    except PchronicleError as exc:
        return Record(numbers[0], b"\n".join(raws), error=exc.with_context(document_id=document_id))


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
