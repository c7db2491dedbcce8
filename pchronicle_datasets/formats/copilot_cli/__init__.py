"""The ``copilot-cli`` format: GitHub Copilot CLI's ``~/.copilot/session-state/<sessionId>/events.jsonl``, one
session per file (docs/formats/copilot-cli.md).

Each line is an event ``{type, data, id, timestamp, parentId}``. ``system.message``, ``user.message`` and
``assistant.message`` events are turns (an assistant message's ``toolRequests`` its calls),
``tool.execution_complete`` gives a call its result, ``session.start`` the session, ``session.shutdown`` the
session's ``modelMetrics``; every other event and key is residual at its pointer (``/{i}``: the ``i``-th non-blank
line), and the writer puts every line back.

Written from the schema (entireio/cli ``cmd/entire/cli/agent/copilotcli/AGENT.md``, yoavf/ai-sessions' Copilot
fixture), checked on real Copilot CLI 1.0.78 files (tests/data/copilot_cli/README.md). ``fields.py`` holds the
event types and keys, ``reader.py`` reads the events of a file, ``writer.py`` writes them.

>>> text = ('{"type": "session.start", "data": {"sessionId": "s1", "copilotVersion": "0.0.420"}, "id": "e1", '
...         '"timestamp": "2026-02-25T10:00:00.000Z", "parentId": null}\\n'
...         '{"type": "user.message", "data": {"content": "hi"}, "id": "e2", "timestamp": "2026-02-25T10:00:01.000Z",'
...         ' "parentId": "e1"}\\n')
>>> [story] = decode(text, "events.jsonl")
>>> story["session"], story["agent"]["ver"], story["turns"][0]["msg"]
('s1', '0.0.420', 'hi')
>>> import json; [json.loads(x) for x in encode([story]).splitlines()] == [json.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, PchronicleError
from ..base import Record, documents, open_file
from .fields import EVENT_KEYS, FAMILIES, NAME
from .reader import Session, subagent_documents
from .writer import encode

__all__ = ["ALIASES", "EXTENSION", "NAME", "OUTPUT", "PER_DOCUMENT", "decode", "encode", "iter_records", "sniff"]

ALIASES: tuple[str, ...] = ()
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl


def sniff(sample: Any) -> bool:
    """A Copilot CLI event: an object of exactly ``type`` (dotted: ``session.start``), ``data``, ``id``,
    ``timestamp`` and ``parentId`` (some may be missing), whose type starts with a Copilot event family.

    >>> sniff({"type": "session.start", "data": {"sessionId": "s"}, "id": "e1", "timestamp": "t", "parentId": None})
    True
    >>> sniff({"type": "user", "message": {"role": "user", "content": "hi"}})  # Claude Code
    False
    """
    return (
        isinstance(sample, dict)
        and {"type", "data"} <= sample.keys() <= EVENT_KEYS
        and type(sample["type"]) is str
        and sample["type"].split(".", 1)[0] in FAMILIES
        and "." in sample["type"]
        and isinstance(sample["data"], dict)
    )


def iter_records(data: Any, document_id: str | None = None):
    """The document of an events file (one line that is not JSON: its own error record; the others still read)."""
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    session = Session(document_id)
    items = [(0, None, src.text, parsed)] if whole else parsed
    first, raws = None, []
    for index, line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        first = line if first is None else first
        raws.append(raw)
        session.event(index, value)
    try:
        story = session.finish()
        children = subagent_documents(session, story)  # each subagent's events, a linked document of its own
    except PchronicleError as exc:
        yield Record(first, b"\n".join(raws), error=exc.with_context(document_id=document_id, line=first))
        return
    yield Record(first, b"\n".join(raws), story=story)
    for child in children:
        yield Record(first, b"", story=child)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))
