"""The format registry and the hub API: every conversion goes through Storyline (RFC-0001, "Hub-only").

Each format module has the same verbs: ``decode(data, document_id) -> list[dict]`` (validated Storyline
documents), ``encode(stories) -> str`` and ``sniff(head: bytes) -> bool``. Format modules take bytes or
text, never paths: I/O belongs to the callers (the CLI, the datasets builder).

>>> doc = '{"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}'
>>> [s["session"] for s in into_storyline("storyline", doc)]
['s']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from . import openai_msg as _openai_msg
from . import sharegpt as _sharegpt
from . import storyline as _storyline

__all__ = ["convert", "format_names", "from_storyline", "get_format", "into_storyline"]

# name → module; aliases map to the canonical name. Adding a format is one module and one line here.
_FORMATS: dict[str, ModuleType] = {m.NAME: m for m in (_storyline, _openai_msg, _sharegpt)}
_ALIASES: dict[str, str] = {alias: m.NAME for m in _FORMATS.values() for alias in m.ALIASES}


def format_names() -> list[str]:
    """Canonical format names and aliases, sorted."""
    return sorted({*_FORMATS, *_ALIASES})


def get_format(name: str) -> ModuleType:
    """The module of format ``name`` (or alias); ``ValueError`` listing the known names otherwise."""
    canonical = _ALIASES.get(name, name)
    module = _FORMATS.get(canonical) if isinstance(canonical, str) else None
    if module is None:
        raise ValueError(f"unknown format {name!r}; known formats: {', '.join(format_names())}")
    return module


def into_storyline(fmt: str, data: str | bytes, *, document_id: str | None = None) -> list[dict[str, Any]]:
    """Decode ``data`` (the whole text or bytes of one source file) into valid Storyline documents.

    ``document_id`` names the source (usually its relative path) in errors and in ``/origin``.
    Raises ``FormatError`` or ``StorylineError`` with the pointer of the first problem.
    """
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"into_storyline takes the file's text or bytes, got {type(data).__name__}")
    return get_format(fmt).decode(data, document_id)


def from_storyline(fmt: str, stories: Mapping[str, Any] | Iterable[Mapping[str, Any]], **options: Any) -> str:
    """Encode one Storyline document or several into format ``fmt``'s text (``options``: the format's own)."""
    if isinstance(stories, Mapping):
        stories = [stories]
    return get_format(fmt).encode(list(stories), **options)


def convert(src: str, dst: str, data: str | bytes, *, document_id: str | None = None) -> str:
    """``from_storyline(dst, into_storyline(src, data))``: never a shortcut between two outer formats."""
    encoder = get_format(dst)  # fail on an unknown target before decoding anything
    return encoder.encode(into_storyline(src, data, document_id=document_id))
