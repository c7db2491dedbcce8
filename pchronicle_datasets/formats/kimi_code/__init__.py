"""The ``kimi-code`` format: the journals of Kimi Code (MoonshotAI/kimi-code, the successor of Kimi CLI,
``~/.kimi-code/sessions/<work dir>/<session>/agents/<agent>/wire.jsonl``).

A journal is one Storyline document: its ``context.append_message`` records and the loop events of each model
step are the turns (a ``tool.result`` the result of the call it names), every other record (the UI's, usage,
requests) kept whole as residual, so the same-source writer gives the file back. Files beside the journals that
hold no conversation are left out of a folder's documents and named (``INDEX_FILES``). The mapping table is
docs/formats/kimi-code.md (``fields.py`` holds it as data).

>>> import json
>>> ev = lambda **e: {"type": "context.append_loop_event", "event": e}
>>> text = "".join(json.dumps(r) + "\\n" for r in [
...     {"type": "metadata", "protocol_version": "1.4"}, {"type": "config.update", "systemPrompt": "You are Kimi."},
...     {"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", "text": "ls"}],
...      "toolCalls": [], "origin": {"kind": "user"}}},
...     ev(type="step.begin", uuid="s1"), ev(type="content.part", stepUuid="s1", part={"type": "think", "think": "ok"}),
...     ev(type="tool.call", stepUuid="s1", toolCallId="Bash_0", name="Bash", args={"command": "ls"}),
...     ev(type="tool.result", toolCallId="Bash_0", result={"output": "a.py"})])
>>> [story] = decode(text, "wd_p_1/session_1/agents/main/wire.jsonl")
>>> [(t["src"], t["msg"], t.get("reason")) for t in story["turns"]]
[('system', 'You are Kimi.', None), ('user', 'ls', None), ('agent', None, 'ok')]
>>> story["session"], story["turns"][2]["observation"]["results"][0]["content"]
('session_1', 'a.py')
>>> [json.loads(x) for x in encode([story]).splitlines()] == [json.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from typing import Any

from ..base import documents
from .fields import INDEX_FILES, NAME, state_of
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
    "SIDECAR",
    "decode",
    "encode",
    "iter_records",
    "sidecar_of",
    "sniff",
]

ALIASES: tuple[str, ...] = ("kimi-code-wire",)
KEYS = ("type", "message", "event", "time", "agentId")
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True  # one agent of one session per file: several documents are written with convert --per-document
DOCUMENT_SUFFIX = ".jsonl"
SIDECAR = True  # iter_records takes sidecar= (the session's state.json, beside another agent's journal): sidecars.py


def sidecar_of(name: str) -> str | None:
    """The sidecar that informs the journal ``name``: its session's ``state.json`` (which agent started it), for
    another agent's than ``main``; else None.

    >>> sidecar_of("wd_p/session_1/agents/agent-0/wire.jsonl"), sidecar_of("wd_p/session_1/agents/main/wire.jsonl")
    ('wd_p/session_1/state.json', None)
    """
    return state_of(name)


def sniff(sample: Any) -> bool:
    """Whether a parsed record is one only a Kimi Code journal holds (``reader.is_marker``): its first line, a
    ``metadata`` record with a ``protocol_version``, is also the first line of Kimi CLI's ``wire.jsonl``, so
    detection decides on the first ``context.*`` record or ``turn.prompt`` among the first records.

    >>> sniff({"type": "turn.prompt", "input": [{"type": "text", "text": "hi"}]})
    True
    >>> sniff({"type": "metadata", "protocol_version": "1.4"})
    False
    """
    return is_marker(sample)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """The document of a Kimi Code journal; raises the first error (file, line, pointer)."""
    return documents(iter_records(data, document_id))
