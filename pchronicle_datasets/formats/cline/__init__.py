"""The ``cline`` format (alias ``cline-task``): Cline's task histories, ``<globalStorage>/tasks/<task id>/
api_conversation_history.json`` (the VS Code extension ``saoudrizwan.claude-dev``), and the sessions of Cline's SDK
(``~/.cline/data/sessions/<id>/<id>.messages.json``: its CLI, and the extension since 2026-05). Roo Code's and Kilo
Code's task folders (forks of Cline: ``rooveterinaryinc.roo-cline/tasks``, ``kilocode.kilo-code/tasks``) are read
too, with what they write differently held in ``fields.py`` (docs/formats/cline.md, "Roo Code and Kilo Code").

One history is one document: a JSON array of Anthropic messages with Cline's keys (``ts``, ``modelInfo``,
``metrics``). The mapping table is docs/formats/cline.md (``fields.py`` holds it as data); the same-source writer
gives each history back as equal JSON. The files Cline keeps beside it (``ui_messages.json``,
``task_metadata.json``, ``context_history.json``) hold no conversation of their own: a folder's listing leaves them
out and says so (``INDEX_FILES``).

>>> text = ('[{"role": "user", "content": [{"type": "text", "text": "hi"}], "ts": 1777073170000},'
...         ' {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "ts": 1777073171000,'
...         ' "modelInfo": {"modelId": "m", "providerId": "p", "mode": "act"}}]')
>>> [(t["src"], t["msg"]) for t in decode(text, "api_conversation_history.json")[0]["turns"]]
[('user', 'hi'), ('agent', 'hello')]
>>> import orjson
>>> orjson.loads(encode(decode(text, "api_conversation_history.json"))) == orjson.loads(text)
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import PchronicleError
from ..base import Record, documents, read_records
from .fields import INDEX_FILES, NAME
from .reader import is_manifest, is_reasoning_item, is_session, read_history, stamped
from .writer import encode, history

__all__ = [
    "ALIASES",
    "ENCODE_IN_BATCHES",
    "EXTENSION",
    "INDEX_FILES",
    "KEYS",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "history",
    "iter_records",
    "sniff",
]

ALIASES: tuple[str, ...] = ("cline-task",)
KEYS = ("role", "content", "ts", "modelInfo", "metrics")  # detection names the closest format by these
EXTENSION = ".json"
OUTPUT = "file"
PER_DOCUMENT = True  # one history per task
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): one line per document


def sniff(sample: Any) -> bool:
    """Whether a parsed file (or line) is a Cline history: a non-empty array of messages (objects with a string
    ``role``) each stamped with the integer ``ts`` Cline adds (a bare message array without it is the ``chat``
    format's, whose sniffer leaves exactly these to this one), among them the reasoning items of their own some Roo
    Code builds wrote (``is_reasoning_item``); the reader refuses a role Cline does not write. Or a
    session of Cline's SDK (``{version, sessionId, updated_at, messages}``), or the manifest beside it (read as
    no conversation, so a folder's load leaves it out and names it).

    >>> sniff([{"role": "user", "content": "hi", "ts": 1777073170000}]), sniff([{"role": "user", "content": "hi"}])
    (True, False)
    """
    if isinstance(sample, dict):
        return is_session(sample) or is_manifest(sample)
    # Roo Code's builds of 2025-11-12 to -14 kept OpenAI's encrypted reasoning as items of their own among them
    return (
        isinstance(sample, list)
        and any(stamped(m) for m in sample)
        and all(stamped(m) or is_reasoning_item(m) for m in sample)
    )


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The document of a history file (JSON Lines of histories: one per line), each as it is read; a history
    the reader refuses is one error record naming the pointer."""

    def one(value: Any, raw: bytes, line: int | None, index: int) -> Record:
        try:
            story = read_history(value, document_id, line)
            if index:  # the histories after the first of a JSON Lines file
                story["session"] = f"{story['session']}#{index + 1}"
            return Record(line, b"", story=story)
        except PchronicleError as exc:
            return Record(line, raw, error=exc.with_context(document_id=document_id, line=line))

    def whole(value: Any, text: bytes) -> Iterator[Record]:
        yield one(value, text, None, 0)

    def each(value: Any, raw: bytes, doc: str | None, line: int, index: int) -> Iterator[Record]:
        yield one(value, raw, line, index)

    return read_records(data, document_id, each, whole)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """The Storyline documents of a history file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
