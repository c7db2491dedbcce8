"""The ``swe-agent`` format: SWE-agent's ``.traj`` files (``environment``, ``trajectory`` steps, ``history``
messages, ``info``, ``replay_config``). The mapping table, and how ``history`` and ``trajectory`` relate, is
docs/formats/swe-agent.md.

>>> traj = {"environment": "main", "info": {"exit_status": "submitted"},
...         "history": [{"role": "user", "content": "fix it"},
...                     {"role": "assistant", "content": "Let me look.", "thought": "Let me look.", "action": "ls"}],
...         "trajectory": [{"action": "ls", "observation": "a.py", "response": "Let me look.",
...                         "thought": "Let me look."}]}
>>> import orjson; story = decode(orjson.dumps(traj), "i1.traj")[0]
>>> turn = story["turns"][1]
>>> turn["msg"], turn["tool_calls"][0]["args"], turn["observation"]["results"][0]["content"]
('Let me look.', {'command': 'ls'}, 'a.py')
>>> story["task"]
{'env': {'name': 'main'}, 'result': {'status': 'submitted'}}
>>> orjson.loads(encode([story])) == traj
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import PchronicleError
from ..base import Record, documents, read_records
from .fields import NAME
from .reader import is_record, read_traj
from .writer import encode, trajectory

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
    "read_line",
    "sniff",
    "trajectory",
]

ALIASES: tuple[str, ...] = ("swe-agent-traj",)
KEYS = (
    "environment",
    "trajectory",
    "history",
    "info",
    "replay_config",
    "action",
    "observation",
    "response",
    "thought",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".traj"
OUTPUT = "file"
PER_DOCUMENT = True
ENCODE_IN_BATCHES = True


def sniff(sample: Any) -> bool:
    """An object whose ``trajectory`` holds SWE-agent steps, beside ``history`` or ``info``."""
    return is_record(sample)


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """One document per ``.traj`` object: the whole file, or each JSON Lines line."""
    return read_records(
        data, document_id, read_line, lambda value, text: [_record(value, text, document_id, None, document_id or NAME)]
    )


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The document of one JSON Lines line (its ``index``-th non-blank line).

    >>> read_line({"trajectory": [{"action": "ls"}]}, b"", "runs.jsonl", 4, 3)[0].story["session"]
    'runs.jsonl#4'
    """
    return [_record(value, raw, document_id, line, f"{document_id or NAME}#{index + 1}")]


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None, session: str) -> Record:
    try:
        return Record(line, raw, story=read_traj(value, document_id, line, session), value=value)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """All documents of a ``.traj`` file; raises the first error."""
    return documents(iter_records(data, document_id))
