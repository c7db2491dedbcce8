"""The ``atif`` format: Harbor's Agent Trajectory Interchange Format (``schema_version`` ``ATIF-v1.x``).

A file holds one trajectory (``trajectory.json``), or JSON Lines of trajectories (what the writer writes
for several top-level documents). Each trajectory becomes one Storyline document, and each embedded
``subagent_trajectories`` entry one more, linked by ``/children`` and ``/parent``; the writer embeds them
again. The mapping table is docs/formats/atif.md (``fields.py`` holds it as data).

>>> text = '{"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": []}'
>>> [s["session"] for s in decode(text, "trajectory.json")]
['s']
>>> sniff({"schema_version": "ATIF-v1.8", "steps": []}), sniff({"schema_version": "storyline/v1", "turns": []})
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError
from ..base import Record, documents, read_records
from .fields import BARE, NAME, SCHEMA
from .reader import read_trajectory
from .writer import encode, trajectories, trajectory

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
    "trajectories",
    "trajectory",
]

ALIASES: tuple[str, ...] = ("harbor",)
KEYS = (
    "schema_version",
    "session_id",
    "agent",
    "steps",
    "final_metrics",
    "step_id",
    "source",
    "message",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".json"
OUTPUT = "file"
PER_DOCUMENT = False
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): the CLI writes a batch at a time


def sniff(sample: Any) -> bool:
    """Whether the parsed first record is an ATIF trajectory: an object whose ``schema_version`` is
    ``ATIF-v1.N`` and which has ``steps`` — or whose ``schema_version`` is a bare ``1.N`` (as some harnesses
    write it) with a ``steps`` array and an ``agent`` with a ``name``.

    >>> sniff({"schema_version": "1.4", "agent": {"name": "a"}, "steps": []})
    True
    >>> sniff({"schema_version": "1.4", "steps": []})  # a bare number and steps alone are not enough
    False
    """
    if not (
        isinstance(sample, dict)
        and isinstance(sample.get("schema_version"), str)
        and SCHEMA.fullmatch(sample["schema_version"]) is not None
        and "steps" in sample
    ):
        return False
    # A bare "1.N" says less than "ATIF-v1.N": the rest must be ATIF's structure (steps, an agent with a name).
    agent = sample.get("agent")
    return BARE.fullmatch(sample["schema_version"]) is None or (
        isinstance(sample["steps"], list) and isinstance(agent, dict) and isinstance(agent.get("name"), str)
    )


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """Every document of an ATIF file, in file order (a trajectory's own, then its subagents'); a
    trajectory that gives none is one error record (its line, its ATIF pointer)."""
    return read_records(
        data,
        document_id,
        read_line,
        lambda value, text: _records(value, text, document_id, None),
    )


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The records of line ``line`` of a JSON Lines file, its ``index``-th non-blank line (0-based), already
    parsed (``value``; ``raw`` its bytes): what the file's reading loop gives for it, so a part of a split file
    is read line by line with the same result (``spark``: the Data Source's line parts).

    >>> [rec.line for rec in read_line({}, b"{}", "f.jsonl", 7, 5)]
    [7]
    """
    return list(_records(value, raw, document_id, line))


def _records(value: Any, raw: bytes, document_id: str | None, line: int | None) -> Iterator[Record]:
    try:
        stories = read_trajectory(value, document_id=document_id, line=line)
    except FormatError as exc:
        yield Record(line, raw, error=exc, value=value)
        return
    for story in stories:
        yield Record(line, raw, story=story, value=value)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All Storyline documents of an ATIF file; raises the first error (file, line, ATIF pointer)."""
    return documents(iter_records(data, document_id))
