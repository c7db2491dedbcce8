"""Subagent links across the files of one load: a child session's file names its parent (a Codex rollout's
``session_meta.parent_thread_id``), so the parent document learns its ``/children`` only from the other files.

A format that can tell a file's (session, parent session) from its first record has ``parent_of(first_record)``,
one that tells it from the file's place has ``parent_of_path(path)`` (Cursor: ``<parent>/subagents/<id>.jsonl``);
``parent_links`` reads the first line of each file of a load (decompressed, bounded) and gives
``{parent session: [child sessions]}``; ``with_children`` adds them to the parents' documents as they are read.
A child loaded alone keeps its ``/parent`` (its reader sets it); a parent loaded alone lists no children.

>>> links = {"p": ["c1"]}
>>> from pchronicle_datasets.formats.base import Record
>>> [r.story["children"] for r in with_children([Record(1, b"", story={"session": "p"})], links)]
[['c1']]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from .compression import iter_decompressed
from .errors import PchronicleError
from .formats import detect, get_format
from .formats.base import Record, as_bytes
from .formats.database import is_database

__all__ = ["first_line", "parent_links", "with_children"]

#: The most of a file's decompressed start read to find its first line (a session_meta with its instructions).
FIRST_LINE_LIMIT = 8 << 20


def first_line(path: str) -> bytes | None:
    """The first non-blank line of a local file (decompressed), or None when it has none within the limit."""
    buf = b""
    with open(path, "rb") as f:
        try:
            for chunk in iter_decompressed(iter(lambda: f.read(1 << 16), b"")):
                buf += chunk
                stripped = as_bytes(buf).lstrip()
                if b"\n" in stripped:
                    return stripped.split(b"\n", 1)[0]
                if len(buf) > FIRST_LINE_LIMIT:
                    return None
        except PchronicleError:
            return None
    stripped = as_bytes(buf).strip()
    return stripped or None


def parent_links(paths: Iterable[str], fmt: str) -> dict[str, list[str]]:
    """``{parent session: [child sessions]}`` of the local files among ``paths`` whose format (``fmt``, or the
    one detected for each file under ``"auto"``) has ``parent_of``."""
    try:
        fixed = None if fmt == "auto" else get_format(fmt)
    except ValueError:
        return {}
    if fixed is not None and not (hasattr(fixed, "parent_of") or hasattr(fixed, "parent_of_path")):
        return {}
    links: dict[str, list[str]] = {}
    for path in paths:
        if "://" in path or "::" in path or not os.path.isfile(path):
            continue
        line = first_line(path)
        if line is None or is_database(line):  # a database's sessions name their parents themselves
            continue
        try:
            module = fixed or detect(line)
            value = orjson.loads(line)
        except (ValueError, orjson.JSONDecodeError):
            continue
        parent_of = getattr(module, "parent_of", None)
        pair = parent_of(value) if parent_of is not None else None
        by_path = getattr(module, "parent_of_path", None)  # a child known by where it lies (Cursor's subagents/)
        if pair is None and by_path is not None:
            pair = by_path(path)
        if pair is not None and pair[0] not in links.setdefault(pair[1], []):
            links[pair[1]].append(pair[0])
    return links


def with_children(records: Iterable[Record], links: dict[str, list[str]]) -> Iterator[Record]:
    """The records, each document whose session has children in ``links`` with them in ``/children``."""
    for rec in records:
        story: Any = rec.story
        if links and story is not None and story.get("session") in links:
            children = story.setdefault("children", [])
            children.extend(c for c in links[story["session"]] if c not in children)
        yield rec
