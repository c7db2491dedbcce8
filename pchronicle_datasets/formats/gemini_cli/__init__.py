"""The ``gemini-cli`` format: Gemini CLI's session files (``~/.gemini/tmp/<project>/chats/``).

A JSONL session (``session-*.jsonl``; a subagent's ``chats/<parentSessionId>/<sessionId>.jsonl``) or a legacy
single-JSON session (``session-*.json``) is one Storyline document: the conversation as the CLI's own loader
replays it (last record of an id wins, ``$set`` and ``$rewindTo`` applied), with every record it set aside kept
as residual, so the same-source writer gives the file back. The mapping table is docs/formats/gemini-cli.md
(``fields.py`` holds it as data).

>>> import json
>>> text = (
...     '{"sessionId": "s1", "projectHash": "ab", "startTime": "2026-01-01T00:00:00.000Z", "kind": "main"}\\n'
...     '{"id": "m1", "timestamp": "2026-01-01T00:00:01.000Z", "type": "user", "content": [{"text": "hi"}]}\\n'
...     '{"id": "m2", "timestamp": "2026-01-01T00:00:02.000Z", "type": "gemini", "content": "hello"}\\n')
>>> [story] = decode(text, "chats/session-2026-01-01T00-00-s1.jsonl")
>>> [(t["src"], t["msg"]) for t in story["turns"]]
[('user', [{'type': 'text', 'text': 'hi'}]), ('agent', 'hello')]
>>> encode([story]).splitlines() == [json.dumps(json.loads(line), separators=(",", ":")) for line in text.splitlines()]
True
"""

from __future__ import annotations

from typing import Any

from ..base import documents
from .fields import INDEX_FILES, NAME
from .reader import is_metadata, iter_records
from .writer import encode

__all__ = [
    "ALIASES",
    "EXTENSION",
    "INDEX_FILES",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "sniff",
]

ALIASES: tuple[str, ...] = ()
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one session per file: several documents are written with convert --per-document
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl


def sniff(sample: Any) -> bool:
    """Whether a parsed record is a Gemini CLI session's metadata record (string ``sessionId`` and
    ``projectHash``, the CLI's own test) or a legacy session (the same, with ``messages``).

    >>> sniff({"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"})
    True
    >>> sniff({"sessionId": "s", "type": "user", "message": {"role": "user", "content": "hi"}})  # Claude Code
    False
    """
    return is_metadata(sample)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """The document of a Gemini CLI session file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
