"""Goose's session files before its database (``~/.local/share/goose/sessions/<id>.jsonl``: a metadata line, then
one message per line; docs/formats/goose.md, "Before the database") → the JSON shape of a session: the metadata's
keys, ``id`` the file's name as Goose's own import names it (``legacy::list_sessions``: the file stem), and
``conversation`` the messages. Only assembly: the JSON reader maps the shape (one home for the mapping); the
messages are the database's own (``Message``, the same serde).

>>> shape, hints = session([{"working_dir": "/w", "description": "Say hi", "message_count": 1},
...     {"role": "user", "created": 1749923359, "content": [{"type": "text", "text": "hi"}]}],
...     "s/20250614_171009.jsonl")
>>> shape["id"], shape["description"], len(shape["conversation"]), hints
('20250614_171009', 'Say hi', 1, {'header': True, 'named': True})
"""

from __future__ import annotations

import posixpath
from typing import Any

from ...errors import FormatError
from .fields import LEGACY_METADATA, LEGACY_REQUIRED, LEGACY_SUFFIX

__all__ = ["is_message", "is_metadata", "session", "starts"]


def is_metadata(value: Any) -> bool:
    """A metadata line: ``description`` (text) and ``message_count`` (an integer), which Goose's deserializer
    requires, and one more of its keys; not an export (no ``conversation``) nor a message (no ``role``).

    >>> is_metadata({"description": "", "message_count": 0, "working_dir": "/w"})
    True
    >>> is_metadata({"description": "", "message_count": 0}), is_metadata({"description": "x", "message_count": True})
    (False, False)
    """
    return (
        isinstance(value, dict)
        and type(value.get(LEGACY_REQUIRED[0])) is str
        and type(value.get(LEGACY_REQUIRED[1])) is int
        and any(key in value for key in LEGACY_METADATA)
        and "conversation" not in value
        and "role" not in value
    )


def is_message(value: Any) -> bool:
    """A message line (``{id?, role, created, content: [...], metadata?}``), which Goose also reads first when a
    file has no metadata line.

    >>> is_message({"role": "user", "created": 1, "content": []}), is_message({"role": "user", "content": "hi"})
    (True, False)
    """
    return (
        isinstance(value, dict)
        and type(value.get("role")) is str
        and isinstance(value.get("content"), list)
        and "conversation" not in value
    )


def starts(value: Any) -> bool:
    """Whether the first line of a file starts such a session (its metadata, or a first message)."""
    return is_metadata(value) or is_message(value)


def session(values: list[Any], document_id: str | None) -> tuple[dict[str, Any], dict[str, bool]]:
    """``(shape, hints)`` of a file's parsed lines: the shape the JSON reader maps, and ``fields.LEGACY_HINTS``
    for the writer. The id is the file's name without ``.jsonl`` unless the metadata names one."""
    header = bool(values) and is_metadata(values[0])
    shape: dict[str, Any] = dict(values[0]) if header else {}
    named = "id" not in shape
    if named:
        name = posixpath.basename((document_id or "").replace("\\", "/"))
        stem = name.split(LEGACY_SUFFIX)[0] if LEGACY_SUFFIX in name else name
        if not stem:
            raise FormatError(
                "a Goose session file from before its database is named by its file (its id): no file name was given",
                pointer="",
            )
        shape["id"] = stem
    shape["conversation"] = list(values[1:] if header else values)
    return shape, {"header": header, "named": named}
