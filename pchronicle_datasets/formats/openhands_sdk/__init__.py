"""The ``openhands-sdk`` format: the events of the OpenHands agent SDK (V1: current OpenHands CLI, GUI and SDK;
pydantic models told apart by ``kind``), as JSON Lines, a JSON array or an evaluation record's ``history``. The
mapping table is docs/formats/openhands-sdk.md.

>>> lines = [{"kind": "MessageEvent", "id": "m1", "source": "user",
...           "llm_message": {"role": "user", "content": [{"type": "text", "text": "list files"}]}},
...          {"kind": "ActionEvent", "id": "a1", "source": "agent", "thought": [{"type": "text", "text": "Looking."}],
...           "tool_name": "terminal", "tool_call_id": "c1", "llm_response_id": "r1",
...           "tool_call": {"id": "c1", "name": "terminal", "arguments": '{"command": "ls"}'}},
...          {"kind": "ObservationEvent", "id": "o1", "source": "environment", "tool_name": "terminal",
...           "tool_call_id": "c1", "action_id": "a1", "observation": {"content": [{"type": "text", "text": "a.py"}]}}]
>>> import orjson; text = b"".join(orjson.dumps(e) + b"\\n" for e in lines)
>>> story = decode(text, "conversation.jsonl")[0]
>>> [(t["src"], t["msg"]) for t in story["turns"]]
[('user', 'list files'), ('agent', 'Looking.')]
>>> story["turns"][1]["tool_calls"]
[{'tcid': 'c1', 'fn': 'terminal', 'args': {'command': 'ls'}}]
>>> story["turns"][1]["observation"]
{'results': [{'content': 'a.py', 'source_call_id': 'c1'}]}
>>> [orjson.loads(x) for x in encode([story]).splitlines()] == lines  # equal JSON, one event a line
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ..base import Record, documents, open_file
from .fields import HISTORY, MEMBER, NAME
from .reader import (
    folder_error,
    is_base_state,
    is_event,
    is_event_file,
    is_record,
    is_stream,
    read_stream,
)
from .writer import encode, events

__all__ = [
    "ALIASES",
    "EXTENSION",
    "KEYS",
    "MEMBERS",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "events",
    "iter_records",
    "member_of",
    "sniff",
]

ALIASES: tuple[str, ...] = ("openhands-v1", "openhands-agent-sdk")
KEYS = (
    "kind",
    "id",
    "source",
    "timestamp",
    "llm_message",
    "tool_call",
    "tool_call_id",
    "tool_name",
    "action_id",
    "llm_response_id",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".jsonl"
MEMBERS = True  # a conversation folder's base_state.json and events/event-*.json are one document (sidecars.py)
OUTPUT = "file"
PER_DOCUMENT = True


def sniff(sample: Any) -> bool:
    """An SDK event (``kind`` an event class, string ``id`` and ``source``), a non-empty array starting with one,
    an evaluation record whose ``history`` is such an array, or a conversation's ``base_state.json`` (read to say
    how to read its folder).

    >>> sniff({"kind": "PauseEvent", "id": "e1", "source": "user"}), sniff({"kind": "PauseEvent", "id": 1})
    (True, False)
    """
    return is_event(sample) or is_stream(sample) or is_record(sample) or is_base_state(sample)


def member_of(name: str) -> str | None:
    """The conversation folder (the document's id) of a file of one (``base_state.json``, ``events/event-<idx>-<id>
    .json``), else None; ``.`` when the folder is the one read (``data_dir`` a conversation folder).

    >>> member_of("conversations/4f1e/events/event-00002-0a1b2c3d-aaaa.json"), member_of("base_state.json")
    ('conversations/4f1e', '.')
    """
    found = MEMBER.match(name)
    return None if found is None else found["folder"] or "."


def iter_records(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The documents of a file: JSON Lines of events are one (each line an event, in order), a JSON array of
    events one, an evaluation record one (one per line in JSON Lines, as an array of events on a line is). A
    persisted conversation's event file read alone (``events/event-*.json``) is an error record naming the folder
    and how to read it; a ``base_state.json`` without events, a conversation that holds none."""
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    session = document_id or NAME
    if whole:
        if is_event_file(document_id):
            yield Record(None, src.text, error=folder_error(document_id, "an event file"), value=parsed)
        elif isinstance(parsed, dict) and not is_record(parsed):
            yield _record([parsed], src.text, document_id, None, session, [1])  # one event: a one-line file
        else:
            yield _record(parsed, src.text, document_id, None, session)
        return
    values: list[Any] = []
    numbers: list[int] = []
    raws: list[bytes] = []
    for index, line, raw, value in parsed:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
        elif isinstance(value, list) or (isinstance(value, dict) and isinstance(value.get(HISTORY), list)):
            yield _record(value, raw, document_id, line, f"{session}#{index + 1}")
        elif isinstance(value, dict) and (isinstance(value.get("kind"), str) or (not values and is_base_state(value))):
            values.append(value)
            numbers.append(line)
            raws.append(raw)
        else:
            error = FormatError(
                "an OpenHands SDK event is an object with a kind (its event class)", document_id=document_id, line=line
            )
            yield Record(line, raw, error=error, value=value)
    if values:
        yield _record(values, b"\n".join(raws), document_id, numbers[0], session, numbers)


def _record(
    value: Any, raw: bytes, document_id: str | None, line: int | None, session: str, numbers: list[int] | None = None
) -> Record:
    try:
        return Record(line, raw, story=read_stream(value, document_id, line, session, numbers), value=value)
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)


def decode(data: Any, document_id: str | None = None) -> list[dict[str, Any]]:
    """All documents of an OpenHands SDK event file; raises the first error."""
    return documents(iter_records(data, document_id))
