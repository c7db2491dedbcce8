"""The format registry and the hub API: every conversion goes through Storyline (RFC-0001, "Hub-only").

Each format module has the same verbs: ``decode(data, document_id) -> list[dict]`` (validated Storyline
documents), ``encode(stories) -> str`` and ``sniff(head: bytes) -> bool``. Format modules take bytes or
text, never paths: I/O belongs to the callers (the CLI, the datasets builder).

>>> doc = '{"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}'
>>> [s["session"] for s in into_storyline("storyline", doc)]
['s']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any

from ..compression import decompress
from ..errors import FormatError
from . import atif as _atif
from . import openai_msg as _openai_msg
from . import sharegpt as _sharegpt
from . import storyline as _storyline
from .base import Record, as_bytes, documents, parse_file

__all__ = ["convert", "detect", "format_names", "from_storyline", "get_format", "into_storyline", "iter_records"]

# name → module; aliases map to the canonical name. Adding a format is one module and one line here.
_FORMATS: dict[str, ModuleType] = {m.NAME: m for m in (_storyline, _openai_msg, _sharegpt, _atif)}
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


def detect(head: bytes, document_id: str | None = None) -> ModuleType:
    """The format of a file from its first (decompressed) bytes; ``FormatError`` listing what was tried
    when no format or more than one claims it.

    Formats that detect from parsed structure (they also have ``sniff_bytes``) are asked first, with the
    head's first record; when one claims the file, the byte sniffers of the others are not asked (an ATIF
    trajectory has the ``session_id`` and ``step_id`` keys openai-msg's byte sniffer looks for)."""
    sample = _first_record(head)
    structural = [m for m in _FORMATS.values() if hasattr(m, "sniff_bytes")]
    matches = [m for m in structural if (m.sniff(sample) if sample is not _NOTHING else m.sniff_bytes(head))]
    if not matches:
        matches = [m for m in _FORMATS.values() if m not in structural and m.sniff(head)]
    if len(matches) == 1:
        return matches[0]
    tried = ", ".join(sorted(_FORMATS))
    if not matches:
        raise FormatError(f"the format of this file is not recognised (tried {tried})", document_id=document_id)
    names = ", ".join(sorted(m.NAME for m in matches))
    raise FormatError(
        f"the format of this file is ambiguous: it looks like {names} (tried {tried}); name the format instead of auto",
        document_id=document_id,
    )


_NOTHING = object()


def _first_record(head: bytes) -> Any:
    """The parsed value of the head (the whole file when it is short) or of its first JSON Lines line
    that parses; ``_NOTHING`` when neither parses (a long pretty-printed file cut at 64 KiB)."""
    try:
        whole, parsed = parse_file(head, None, scan=False)
    except FormatError:
        return _NOTHING
    if whole:
        return parsed
    for _, _, _, value in parsed:
        if not isinstance(value, FormatError):
            return value
    return _NOTHING


def iter_records(fmt: str, data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """Every record of one source file, each with its document or the error that refused it, in file order.

    ``data`` may be gzip (several members too), zstd or bzip2 compressed; a truncated gzip stream gives the
    records of its complete members, then one error record. ``fmt`` may be ``"auto"``: the format is
    detected from the content (``detect``)."""
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"a reader takes the file's text or bytes, got {type(data).__name__}")
    try:
        raw = as_bytes(data, document_id)
    except FormatError as exc:
        yield Record(None, b"", error=exc)
        return
    text, tail_error = decompress(raw, document_id)
    if text and not text.isspace():
        try:
            module = detect(as_bytes(text[:65536]), document_id) if fmt == "auto" else get_format(fmt)
        except FormatError as exc:
            yield Record(None, text, error=exc)
            return
        yield from module.iter_records(text, document_id)
    if tail_error is not None:
        yield Record(None, b"", error=tail_error)


def into_storyline(fmt: str, data: str | bytes, *, document_id: str | None = None) -> list[dict[str, Any]]:
    """Decode ``data`` (the whole text or bytes of one source file) into valid Storyline documents.

    ``document_id`` names the source (usually its relative path) in errors and in ``/origin``; ``data``
    may be compressed (gzip, zstd, bzip2); ``fmt`` may be ``"auto"``. Raises ``FormatError`` or
    ``StorylineError`` with the pointer of the first problem.
    """
    if fmt != "auto":
        get_format(fmt)  # an unknown name fails before any data is read
    return documents(iter_records(fmt, data, document_id))


def from_storyline(fmt: str, stories: Mapping[str, Any] | Iterable[Mapping[str, Any]], **options: Any) -> str:
    """Encode one Storyline document or several into format ``fmt``'s text (``options``: the format's own)."""
    if isinstance(stories, Mapping):
        stories = [stories]
    return get_format(fmt).encode(list(stories), **options)


def convert(src: str, dst: str, data: str | bytes, *, document_id: str | None = None) -> str:
    """``from_storyline(dst, into_storyline(src, data))``: never a shortcut between two outer formats."""
    encoder = get_format(dst)  # fail on an unknown target before decoding anything
    return encoder.encode(into_storyline(src, data, document_id=document_id))
