"""A small format written outside the package, registered at run time: the example of
``docs/formats/README.md`` and the proof (``tests/formats/test_registration.py``) that the format contract is
complete — every entry point works with a format it has never heard of.

The ``pairs`` format: JSON Lines of ``{"id": "...", "pairs": [["user", "hi"], ["agent", "hello"]], ...}``.
Every other key is residual; the same-source writer gives each record back as equal JSON.
"""

from __future__ import annotations

from typing import Any

from pchronicle_datasets import FormatError, PchronicleError
from pchronicle_datasets.formats.base import Record, as_source, documents, parse_file
from pchronicle_datasets.formats.residual import Residual, origin, source_fields

NAME = "pairs"
ALIASES = ("pair-lines",)
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = False
SOURCES = {"user": "user", "agent": "agent"}


def sniff(sample: Any) -> bool:
    return isinstance(sample, dict) and isinstance(sample.get("pairs"), list)


def _story(value: Any, document_id: str | None, line: int | None) -> dict[str, Any]:
    if not (isinstance(value, dict) and isinstance(value.get("pairs"), list)):
        raise FormatError("a record is an object with a pairs array", document_id=document_id, line=line)
    kept = Residual(NAME, document_id)
    turns = []
    for i, pair in enumerate(value["pairs"]):
        if not (isinstance(pair, list) and len(pair) == 2 and pair[0] in SOURCES):
            raise FormatError("a pair is [user|agent, text]", pointer=f"/pairs/{i}", document_id=document_id, line=line)
        turns.append({"id": i + 1, "src": SOURCES[pair[0]], "msg": pair[1]})
    for key, v in value.items():
        if key not in ("id", "pairs"):
            kept.keep(f"/{key}", v)
    story = {
        "schema_version": "storyline/v1",
        "origin": origin(NAME, document_id),
        "session": value.get("id") or f"{document_id}#{line}",
        "agent": {"id": NAME},
        "turns": turns,
    }
    return kept.finish(story)


def iter_records(data: str | bytes, document_id: str | None = None):
    src = as_source(data, document_id)  # text, bytes, a binary file, byte chunks: read as a stream
    whole, parsed = parse_file(src, document_id)
    items = [(None, src.text, parsed)] if whole else ((line, raw, value) for _, line, raw, value in parsed)
    for line, raw, value in items:
        try:
            if isinstance(value, FormatError):
                raise value
            yield Record(line, raw, story=_story(value, document_id, line), value=value)
        except PchronicleError as exc:
            yield Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    import orjson

    lines = []
    for story in stories:
        record: dict[str, Any] = {"id": story["session"], "pairs": [[t["src"], t["msg"]] for t in story["turns"]]}
        for pointer, value in ((source_fields(story, NAME) or {}).get("fields") or {}).items():
            record[pointer[1:]] = value
        lines.append(orjson.dumps(record).decode() + "\n")
    return "".join(lines)
