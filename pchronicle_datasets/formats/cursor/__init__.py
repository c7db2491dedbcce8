"""The ``cursor`` format: Cursor agent transcripts, ``~/.cursor/projects/<repo>/agent-transcripts/<id>.jsonl``
(the CLI's flat layout; the IDE's ``<id>/<id>.jsonl``), one conversation per file (docs/formats/cursor.md).

Each line is ``{"role": "user" | "assistant", "message": {"content": [text | tool_use{name, input}]}}``: one turn.
Transcripts hold no tool results, no call ids and no timestamps: calls get derived ids (``cursor-{line}-{k}``) and
stay without results (counted by ``tool_stats``, never invented). A user text wrapped as
``[<timestamp>…</timestamp>\\n]<user_query>\\n…\\n</user_query>`` is the query inside (the user's words); the
wrapper is kept for the writer, which wraps it again.

Written from the schema (entireio/cli ``cmd/entire/cli/agent/cursor/AGENT.md``): no public transcript is known.
``fields.py`` holds the tables, ``reader.py`` reads a transcript, ``writer.py`` writes one.

>>> import json
>>> lines = [{"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\\nls\\n</user_query>"}]}},
...          {"role": "assistant", "message": {"content": [{"type": "tool_use", "name": "Shell", "input": {}}]}}]
>>> text = "".join(json.dumps(line) + "\\n" for line in lines)
>>> [story] = decode(text, "agent-transcripts/c1.jsonl")
>>> story["session"], story["turns"][0]["msg"], story["turns"][1]["tool_calls"][0]["tcid"]
('c1', [{'type': 'text', 'text': 'ls'}], 'cursor-1-0')
>>> [json.loads(line) for line in encode([story]).splitlines()] == lines
True
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, PchronicleError
from ..base import Record, documents, open_file
from .fields import NAME, ROLES
from .reader import Transcript, parent_of_path
from .writer import encode

__all__ = [
    "ALIASES",
    "EXTENSION",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "parent_of_path",
    "sniff",
]

ALIASES: tuple[str, ...] = ()
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl


def sniff(sample: Any) -> bool:
    """A transcript line: exactly ``role`` (user/assistant) and ``message`` holding a ``content`` list.

    >>> sniff({"role": "user", "message": {"content": [{"type": "text", "text": "hi"}]}})
    True
    >>> sniff({"role": "user", "content": "hi"})
    False
    """
    return (
        isinstance(sample, dict)
        and sample.keys() == {"role", "message"}
        and sample["role"] in ROLES
        and isinstance(sample["message"], dict)
        and isinstance(sample["message"].get("content"), list)
    )


def iter_records(data: Any, document_id: str | None = None):
    """The document of a transcript (a line that is not JSON is its own error record; the others still read)."""
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    transcript = Transcript(document_id)
    items = [(0, None, src.text, parsed)] if whole else parsed
    first, raws = None, []
    for index, line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        first = line if first is None else first
        raws.append(raw)
        transcript.line(index, value)
    try:
        story = transcript.finish((index + 1) if raws else 0)
    except PchronicleError as exc:
        yield Record(first, b"\n".join(raws), error=exc.with_context(document_id=document_id, line=first))
        return
    yield Record(first, b"\n".join(raws), story=story)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))
