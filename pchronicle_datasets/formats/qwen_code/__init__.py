"""The ``qwen-code`` format: Qwen Code's session files (``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``).

A session file is one Storyline document: the conversation is the ``parentUuid`` chain from the file's last
record (as the CLI resumes it), its assistant messages' ``functionCall`` parts calls whose results the
``tool_result`` records give; system records and records off the chain are kept whole as residual, so the
same-source writer gives the file back. The mapping table is docs/formats/qwen-code.md (``fields.py`` holds it
as data).

>>> import json
>>> text = (
...     '{"uuid": "a", "parentUuid": null, "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z", "type": "user",'
...     ' "cwd": "/w", "version": "0.21.6", "message": {"role": "user", "parts": [{"text": "hi"}]}}\\n'
...     '{"uuid": "b", "parentUuid": "a", "sessionId": "s1", "timestamp": "2026-01-01T00:00:01Z", "type": "assistant",'
...     ' "cwd": "/w", "version": "0.21.6", "model": "qwen3",'
...     ' "message": {"role": "model", "parts": [{"text": "hello"}]}}\\n')
>>> [story] = decode(text, "chats/s1.jsonl")
>>> [(t["src"], t["msg"]) for t in story["turns"]], story["agent"]["ver"]
([('user', 'hi'), ('agent', 'hello')], '0.21.6')
>>> [json.loads(x) for x in encode([story]).splitlines()] == [json.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from typing import Any

from ..base import documents
from .fields import INDEX_FILES, NAME
from .reader import is_record, iter_records
from .writer import encode

__all__ = [
    "ALIASES",
    "DOCUMENT_SUFFIX",
    "EXTENSION",
    "INDEX_FILES",
    "KEYS",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "sniff",
]

ALIASES: tuple[str, ...] = ("qwen",)
KEYS = ("uuid", "parentUuid", "sessionId", "timestamp", "type", "message", "parts", "systemPayload", "toolCallResult")
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one session per file: several documents are written with convert --per-document
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl, as Qwen Code does


def sniff(sample: Any) -> bool:
    """Whether a parsed record is a Qwen Code chat record (``reader.is_record``).

    >>> sniff({"uuid": "u", "sessionId": "s", "type": "system", "subtype": "ui_telemetry", "systemPayload": {}})
    True
    >>> sniff({"uuid": "u", "sessionId": "s", "type": "system", "subtype": "turn_duration"})  # Claude Code
    False
    """
    return is_record(sample)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """The document of a Qwen Code session file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
