"""The ``mini-swe-agent`` format: mini-SWE-agent's trajectories (``{"info", "messages", "trajectory_format":
"mini-swe-agent-1.1"}``). The mapping table is docs/formats/mini-swe-agent.md.

>>> traj = {"info": {"exit_status": "Submitted", "model_stats": {"api_calls": 1}},
...         "messages": [{"role": "user", "content": "fix it"},
...                      {"role": "assistant", "content": "```bash\\nls\\n```",
...                       "extra": {"actions": [{"command": "ls"}]}}],
...         "trajectory_format": "mini-swe-agent-1.1"}
>>> import orjson; story = decode(orjson.dumps(traj), "i1.traj.json")[0]
>>> story["turns"][1]["tool_calls"]
[{'tcid': 'action-1-0', 'fn': 'bash', 'args': {'command': 'ls'}}]
>>> story["task"], story["final_metrics"]
({'result': {'status': 'Submitted'}}, {'api_calls': 1})
>>> orjson.loads(encode([story])) == traj
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import PchronicleError
from ..base import Record, documents, read_records
from .fields import NAME
from .reader import is_record, read_trajectory
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

ALIASES: tuple[str, ...] = ("mini-swe",)
KEYS = (
    "info",
    "messages",
    "trajectory_format",
    "role",
    "content",
    "extra",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".traj.json"
OUTPUT = "file"
PER_DOCUMENT = True
ENCODE_IN_BATCHES = True


def sniff(sample: Any) -> bool:
    """An object with a ``messages`` array and a ``trajectory_format`` that starts with ``mini-swe-agent``."""
    return is_record(sample)


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """One document per trajectory object: the whole file, or each JSON Lines line."""
    return read_records(
        data, document_id, read_line, lambda value, text: [_record(value, text, document_id, None, document_id or NAME)]
    )


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The document of one JSON Lines line (its ``index``-th non-blank line).

    >>> value = {"messages": [], "trajectory_format": "mini-swe-agent-1"}
    >>> read_line(value, b"", "runs.jsonl", 4, 3)[0].story["session"]
    'runs.jsonl#4'
    """
    return [_record(value, raw, document_id, line, f"{document_id or NAME}#{index + 1}")]


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None, session: str) -> Record:
    try:
        return Record(line, raw, story=read_trajectory(value, document_id, line, session), value=value)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """All documents of a mini-SWE-agent trajectory file; raises the first error."""
    return documents(iter_records(data, document_id))
