"""Residuals, the ``_storyline`` envelope and the finishing of a document: the rules every reader and writer
shares, written once.

A reader keeps every source value it does not map under its source JSON Pointer (RFC-0001 ``unknown_fields``);
it also takes back the residual of *other* formats that one of our writers carried in a version-1 envelope::

    "_storyline": {"version": 1, "unknown_fields": {"sources": {"<format>": {"source_document_id": …, "fields": {…}}}}}

The envelope is taken only when it is exactly that shape (and holds no residual of the reading format itself,
which the reader regenerates): anything else under ``_storyline`` is an ordinary source value, kept as
residual under its pointer like any other — never dropped, never half-read.

>>> kept = Residual("sharegpt", "a.jsonl")
>>> kept.take_envelope({"version": 1, "unknown_fields": {"sources": {}}, "junk": 5})
False
>>> kept.take_envelope({"version": 1, "unknown_fields": {"sources": {"x": {"source_document_id": "", "fields": {}}}}})
True
>>> sorted(kept.unknown_fields()["sources"])
['sharegpt', 'x']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..jsonio import try_loads
from ..schema import compute_unknown_key_counts, validate

__all__ = [
    "ENVELOPE_KEY",
    "Residual",
    "envelope",
    "origin",
    "other_sources",
    "read_envelope",
    "read_extended_envelope",
    "residual_tools",
    "source_fields",
]

ENVELOPE_KEY = "_storyline"
ENVELOPE_VERSION = 1


def origin(fmt: str, document_id: str | None) -> dict[str, str]:
    """``/origin`` of a document read from ``fmt`` (the file's name when known)."""
    return {"format": fmt, **({"document_id": document_id} if document_id else {})}


def _source_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"source_document_id", "fields"}
        and type(entry["source_document_id"]) is str
        and isinstance(entry["fields"], dict)
    )


def read_envelope(value: Any, reader: str) -> dict[str, Any] | None:
    """The sources of a version-1 envelope, or None when ``value`` is not exactly one (then it is an ordinary
    source value). An envelope holding the reader's own format is not ours to take: that residual is the
    reader's to regenerate, so such a value stays residual as a whole."""
    members = read_extended_envelope(value, reader, ())
    return None if members is None or "unknown_fields" not in members else members["unknown_fields"]["sources"]


def read_extended_envelope(value: Any, reader: str, extensions: tuple[str, ...]) -> dict[str, Any] | None:
    """A version-1 envelope that a writer extended with members of its own (``extensions``; then
    ``unknown_fields`` is optional too): its members, or None when ``value`` is not exactly one. The common
    members follow ``read_envelope``'s rules; the writer's own reader checks its extensions.

    >>> read_extended_envelope({"version": 1, "fields": {"/x": 1}}, "atif", ("fields", "absent"))
    {'version': 1, 'fields': {'/x': 1}}
    """
    allowed = {"version", "unknown_fields", *extensions}
    required = {"version"} if extensions else {"version", "unknown_fields"}
    if not (isinstance(value, dict) and required <= set(value) <= allowed):
        return None
    version = value["version"]
    if type(version) is not int or version != ENVELOPE_VERSION:
        return None  # ``True == 1 == 1.0`` in Python: only the integer 1 is the version
    if "unknown_fields" in value:
        uf = value["unknown_fields"]
        if not (isinstance(uf, dict) and set(uf) == {"sources"} and isinstance(uf["sources"], dict)):
            return None
        sources = uf["sources"]
        if reader in sources or not all(isinstance(k, str) and k and _source_entry(v) for k, v in sources.items()):
            return None
    return value


def envelope(sources: Mapping[str, Any]) -> dict[str, Any] | None:
    """The version-1 envelope carrying ``sources`` (other formats' residual), or None when there is none."""
    if not sources:
        return None
    return {"version": ENVELOPE_VERSION, "unknown_fields": {"sources": dict(sources)}}


def other_sources(story: Mapping[str, Any], writer: str | None) -> dict[str, Any]:
    """The residual of every format except ``writer``'s (of every format when ``writer`` is None), for the
    writer's envelope."""
    sources = (story.get("unknown_fields") or {}).get("sources") or {}
    return {k: v for k, v in sources.items() if k != writer}


def source_fields(story: Mapping[str, Any], fmt: str) -> dict[str, Any] | None:
    """``fmt``'s residual entry of a document (``{"source_document_id", "fields"}``), or None."""
    return ((story.get("unknown_fields") or {}).get("sources") or {}).get(fmt)


def residual_tools(story: Mapping[str, Any]) -> int:
    """How many ``tools`` values a document keeps as residual (pointers ending in ``/tools``): tool definitions
    outside ``/agent/tools``, such as a gateway row whose ``tools`` differ from the session's (``inspect``).

    >>> residual_tools({"unknown_fields": {"sources": {"openai-msg": {"source_document_id": "c.jsonl", "fields": {
    ...     "/session_steps/3/tools": [{"type": "function"}], "/session_steps/3/vendor": 1}}}}})
    1
    """
    sources = (story.get("unknown_fields") or {}).get("sources") or {}
    return sum(
        pointer.rsplit("/", 1)[-1] == "tools" and _holds_definitions(value)
        for source in sources.values()
        if isinstance(source, dict)
        for pointer, value in (source.get("fields") or {}).items()
    )


def _holds_definitions(value: Any) -> bool:
    """Whether a residual ``tools`` value holds a definition: not an empty list, nor a JSON string of one
    (``"[]"``, as exports write no tools), nor null.

    >>> _holds_definitions("[]"), _holds_definitions([]), _holds_definitions(None), _holds_definitions([{}])
    (False, False, False, True)
    """
    if type(value) is str:
        ok, parsed = try_loads(value)
        if not ok:
            return bool(value.strip())  # text: not a definition Storyline could read, but something kept
        value = parsed
    return value not in (None, [], {}, "")


class Residual:
    """What one reader keeps of one source document: its own residual and the other formats' it carried."""

    def __init__(self, fmt: str, document_id: str | None) -> None:
        self.fmt = fmt
        self.document_id = document_id
        self.fields: dict[str, Any] = {}
        self.carried: dict[str, Any] = {}

    def keep(self, pointer: str, value: Any) -> None:
        """Keep a source value the mapping does not use, under its source pointer."""
        self.fields[pointer] = value

    def take_envelope(self, value: Any) -> bool:
        """Carry the sources of a ``_storyline`` envelope (True), or leave ``value`` to the caller (False),
        which then keeps it as residual like any other value."""
        sources = read_envelope(value, self.fmt)
        if sources is None:
            return False
        self.carried.update(sources)
        return True

    def carry(self, sources: Mapping[str, Any]) -> None:
        """Carry other formats' residual that the caller took from an extended envelope."""
        self.carried.update(sources)

    def unknown_fields(self, *, always: bool = True) -> dict[str, Any] | None:
        """``/unknown_fields``: the carried sources, then this format's own entry. With ``always=False`` an empty
        own entry is left out, and None is returned when nothing is kept at all (a format whose documents say
        residual only when there is some, as ATIF's Storyline readings do)."""
        sources = dict(self.carried)
        if always or self.fields:
            sources[self.fmt] = {"source_document_id": self.document_id or "", "fields": self.fields}
        return {"sources": sources} if sources or always else None

    def finish(self, story: dict[str, Any], *, always: bool = True) -> dict[str, Any]:
        """Add ``unknown_fields`` and ``unknown_key_counts`` to a document built by a reader and validate it
        (``StorylineError`` when the mapping let through a value Storyline cannot hold: the caller says which
        source record it was). ``always``: see ``unknown_fields``."""
        uf = self.unknown_fields(always=always)
        counts = None
        if uf is not None:
            story["unknown_fields"] = uf
            counts = compute_unknown_key_counts(uf)
            if "unknown_key_counts" in story:  # where the reader put it: validated with the rest
                story["unknown_key_counts"], counts = counts, None
        # The counts are added after validation, which would compute them again from the same fields (a
        # residual-heavy read spent 5% of its time on the pointers' second normalisation).
        validate(story, document_id=self.document_id, parsed=True)
        if counts is not None:
            story["unknown_key_counts"] = counts
        return story
