"""The ``claude-code`` format: Claude Code's session logs (``~/.claude/projects/<project>/<session>.jsonl``,
versions 2.0 to 2.1.x), one document per file.

The conversation is the ``parentUuid`` chain to the file's last message (a rewind's abandoned branch stays
residual); each response is one turn however many lines its blocks took, with its usage counted once; tool
results carry their call's name (linked by ``tool_use_id``) and ``is_error``; hook reminders (``isMeta``) and
compaction summaries (``isCompactSummary``) are context turns (``copied: true``); a message the user typed
mid-turn (an ``attachment`` of type ``queued_command``) is a user turn; every other record
(progress, snapshots, system records, summaries…) is kept whole as residual and counted. A subagent file
(``<session>/subagents/agent-<id>.jsonl`` with its ``.meta.json`` sidecar, or an older flat ``agent-<id>.jsonl``)
is a document of its own, linked by ``/parent`` to the session and the call that started it; the session lists
it in ``/children``. docs/formats/claude-code.md is the mapping table.

>>> text = (b'{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\\n'
...         b'{"type":"assistant","uuid":"a","parentUuid":"u","sessionId":"s","message":{"id":"m","role":"assistant",'
...         b'"content":[{"type":"text","text":"hello"}]}}\\n')
>>> [story["session"] for story in decode(text, "s.jsonl")]
['s']
>>> import json
>>> [json.loads(x) for x in encode(decode(text, "s.jsonl")).splitlines()] == [json.loads(x) for x in text.splitlines()]
True
>>> sniff({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}), sniff({"type": "session"})
(True, False)
>>> sidecar_of("p/s/subagents/agent-ab12.jsonl"), sidecar_of("p/s.jsonl")
('p/s/subagents/agent-ab12.meta.json', None)
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import split_objects
from ..base import Record, documents, open_file
from .fields import INDEX_FILES, NAME, SIDECAR_SUFFIX, SUBAGENT_PREFIX
from .reader import parse_sidecar, read_session
from .writer import encode, session_lines

__all__ = [
    "ALIASES",
    "EXTENSION",
    "INDEX_FILES",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "SIDECAR",
    "decode",
    "encode",
    "iter_records",
    "session_lines",
    "sidecar_of",
    "sniff",
]

ALIASES: tuple[str, ...] = ("claude",)
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one session file per document, as Claude Code lays them out
SIDECAR = True  # iter_records takes sidecar= (the bytes of sidecar_of(document_id)), see sidecars.py

_MESSAGE_KEYS = ("uuid", "sessionId", "message")


def sniff(sample: Any) -> bool:
    """Whether a parsed record is a Claude Code session record: a ``user``/``assistant`` record (``uuid``,
    ``sessionId`` and a ``message`` object), a ``system`` or ``progress`` record (``uuid``, ``sessionId``), a
    ``file-history-snapshot`` (``messageId``, ``snapshot``), a ``summary`` (``leafUuid``) or a
    ``queue-operation`` (``operation``, ``sessionId``)."""
    if not isinstance(sample, dict):
        return False
    kind = sample.get("type")
    if kind in ("user", "assistant"):
        return all(k in sample for k in _MESSAGE_KEYS) and _anthropic_message(sample["message"])
    if kind in ("system", "progress"):
        # Qwen Code's records share these keys; its system records carry a systemPayload, never Claude Code's
        return isinstance(sample.get("uuid"), str) and "sessionId" in sample and "systemPayload" not in sample
    if kind == "file-history-snapshot":
        return "messageId" in sample and isinstance(sample.get("snapshot"), dict)
    if kind == "summary":
        return "leafUuid" in sample and "summary" in sample
    if kind == "queue-operation":
        return "operation" in sample and "sessionId" in sample
    return False


def _anthropic_message(message: Any) -> bool:
    """A message object that is not a Gemini ``Content`` (``parts`` and no ``content``: Qwen Code's records, which
    share Claude Code's ``uuid``/``sessionId``/``type`` keys)."""
    return isinstance(message, dict) and not ("parts" in message and "content" not in message)


def sidecar_of(name: str) -> str | None:
    """The sidecar that informs the file ``name``: ``agent-<id>.meta.json`` beside a subagent's
    ``agent-<id>.jsonl`` (Claude Code 2.1.x), else None."""
    folder, base = posixpath.split(name)
    if not (base.startswith(SUBAGENT_PREFIX) and base.endswith(".jsonl")):
        return None
    return posixpath.join(folder, base[: -len(".jsonl")] + SIDECAR_SUFFIX)


def iter_records(data: Any, document_id: str | None = None, *, sidecar: bytes | None = None) -> Iterator[Record]:
    """One record per line that is not JSON (its error), then the file's document (or the error that refused
    it); ``sidecar``: the bytes of the file's ``.meta.json``, when there is one."""
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    if whole:
        items = [(0, 1, src.text, parsed)]
    else:
        items = ((index, line, raw, value) for index, line, raw, value in parsed)
    lines: list[tuple[int, int, Any]] = []
    raws: list[bytes] = []
    extra = 0  # records read from a line that holds several: every later index is a record's, not a line's
    for index, line, raw, value in items:
        glued = split_objects(raw, document_id=document_id, line=line) if isinstance(value, FormatError) else None
        if glued is not None:
            # A record Claude Code appended to a line that had lost its newline (a summary or a snapshot after
            # the last message): each is read on its own, and the writer gives each its own line.
            lines += [(index + extra + k, line, piece) for k, piece in enumerate(glued)]
            raws.append(raw)
            extra += len(glued) - 1
            continue
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        lines.append((index + extra, line, value))
        raws.append(raw)
    if not lines:
        return
    try:
        story = read_session(lines, document_id, parse_sidecar(sidecar, sidecar_of(document_id or "")))
    except PchronicleError as exc:
        yield Record(None, b"\n".join(raws), error=exc.with_context(document_id=document_id))
        return
    yield Record(None, b"", story=story)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """The document of a session file; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
