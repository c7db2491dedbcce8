"""The ``kimi-cli`` format: the session contexts of Kimi CLI (MoonshotAI/kimi-cli, the Python CLI,
``~/.kimi/sessions/<md5 of the work dir>/<session id>/context.jsonl``).

A context file is one Storyline document: its kosong messages are the turns (``tool`` messages the results of the
calls they name), ``_system_prompt`` a system turn, ``_checkpoint`` and ``_usage`` kept whole as residual, so the
same-source writer gives the file back. ``wire.jsonl`` beside it, the UI's replay of the same conversation, is
left out of a folder's documents and named (``INDEX_FILES``). The mapping table is docs/formats/kimi-cli.md
(``fields.py`` holds it as data).

>>> import json
>>> ls = {"type": "function", "id": "Shell:0", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}
>>> think = {"type": "think", "think": "ls will do", "encrypted": None}
>>> text = "".join(json.dumps(r) + "\\n" for r in [
...     {"role": "_system_prompt", "content": "You are Kimi."}, {"role": "_checkpoint", "id": 0},
...     {"role": "user", "content": "list files"}, {"role": "assistant", "content": [think], "tool_calls": [ls]},
...     {"role": "_usage", "token_count": 2210}, {"role": "tool", "content": "a.py", "tool_call_id": "Shell:0"}])
>>> [story] = decode(text, "0a1b/s1/context.jsonl")
>>> [(t["src"], t["msg"], t.get("reason")) for t in story["turns"]]
[('system', 'You are Kimi.', None), ('user', 'list files', None), ('agent', None, 'ls will do')]
>>> story["session"], story["turns"][2]["tool_calls"][0]["args"]
('s1', {'command': 'ls'})
>>> [json.loads(x) for x in encode([story]).splitlines()] == [json.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from typing import Any

from ..base import documents
from .fields import INDEX_FILES, NAME
from .reader import is_marker, iter_records
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

ALIASES: tuple[str, ...] = ("kimi",)
KEYS = ("role", "content", "tool_calls", "tool_call_id", "token_count", "id")
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one session per file: several documents are written with convert --per-document
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl (Kimi's layout before 2026)


def sniff(sample: Any) -> bool:
    """Whether a parsed record is one of a Kimi CLI context's bookkeeping records (``reader.is_marker``): its
    messages alone are plain chat messages, so detection decides on the first ``_system_prompt``,
    ``_checkpoint`` or ``_usage`` line among the first records.

    >>> sniff({"role": "_system_prompt", "content": "You are Kimi."}), sniff({"role": "_usage", "token_count": 9})
    (True, True)
    >>> sniff({"role": "user", "content": "hi"})
    False
    """
    return is_marker(sample)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """The document of a Kimi CLI context file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
