"""Storyline documents → Claude Code session lines.

A document read from a session file is written back line for line (the same source): each line from its
residual, the envelope keys its hint's ``e`` mask names (``/meta/claude-code/shared``) and, for a message record,
its ``message`` rebuilt by the shared message model from the turns (``write_message``). Any other document is
written as the lines Claude Code would have written for it: a ``user`` record per user turn, an ``assistant``
record per agent turn (thinking, text and ``tool_use`` blocks) and a ``user`` record of ``tool_result`` blocks
after it; what has no place there is counted (``not in claude-code``) and other formats' residual rides in a
``_storyline`` envelope on the first line.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "ls?"},
...     {"id": 2, "src": "agent", "msg": "", "tool_calls": [{"tcid": "t1", "fn": "Bash", "args": {"command": "ls"}}],
...      "observation": {"results": [{"source_call_id": "t1", "content": "a.txt"}]}}]}
>>> [line["type"] for line in session_lines(story)]
['user', 'assistant', 'user']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ...linking import place_results
from ...losses import report_loss
from ..messages import write_message
from ..messages.model import rebuild
from ..residual import ENVELOPE_KEY, envelope, other_sources, source_fields
from .fields import ENVELOPE_KEYS, HINTS, NAME

__all__ = ["encode", "session_lines"]

_WRITTEN_ROOT = {
    "schema_version",
    "origin",
    "session",
    "agent",
    "turns",
    "meta",
    "unknown_fields",
    "unknown_key_counts",
}
_WRITTEN_TURN = {"id", "src", "msg", "reason", "tool_calls", "observation", "ts", "model"}


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The session lines of every document, one JSON value per line."""
    out = []
    for story in stories:
        for line in session_lines(story):
            out.append(orjson.dumps(line).decode() + "\n")
    return "".join(out)


def session_lines(story: dict[str, Any]) -> Iterator[Any]:
    """The lines of one document: its source lines when it was read from a session file, else new ones."""
    hints = (story.get("meta") or {}).get(HINTS) if isinstance(story.get("meta"), dict) else None
    own = source_fields(story, NAME)
    if isinstance(hints, dict) and isinstance(hints.get("lines"), list) and own is not None:
        try:
            lines = list(_same_source(story, hints, own.get("fields") or {}))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            lines = None  # hints edited by hand or by another tool: the document's own fields decide instead
        if lines is not None:
            yield from lines
            return
    yield from _synthesized(story)


def _same_source(story: dict[str, Any], hints: dict[str, Any], fields: dict[str, Any]) -> Iterator[Any]:
    by_line: dict[int, list[tuple[str, Any]]] = {}
    whole: dict[int, Any] = {}
    for pointer, value in fields.items():
        head, _, rest = pointer[1:].partition("/")
        if not head.isdigit():
            continue
        if rest:
            by_line.setdefault(int(head), []).append(("/" + rest, value))
        else:
            whole[int(head)] = value
    shared = hints.get("shared") or {}
    carried = envelope(other_sources(story, NAME))
    gaps = set(hints.get("gaps") or ())
    indices = (i for i in range(len(hints["lines"]) + len(gaps)) if i not in gaps)
    for i, entry in zip(indices, hints["lines"], strict=False):
        base: dict[str, Any] = {}
        mask = entry.get("e", 0)
        for b, key in enumerate(ENVELOPE_KEYS):
            if mask >> b & 1:
                base[key] = shared[key]
        if i in whole:  # a record kept whole (less its envelope keys), or a line that is no object
            line = {**base, **whole[i]} if isinstance(whole[i], dict) else whole[i]
            if carried is not None and isinstance(line, dict):
                line[ENVELOPE_KEY] = carried
                carried = None
            yield line
            continue
        if "m" in entry:
            base["message"] = write_message(story, entry["m"])
        if "q" in entry:  # a message typed mid-turn: its attachment's prompt (the other keys are residual)
            base["attachment"] = write_message(story, entry["q"])
        line = rebuild(base, by_line.get(i, []))
        if carried is not None and isinstance(line, dict):
            line[ENVELOPE_KEY] = carried
        carried = None
        yield line


def _synthesized(story: dict[str, Any]) -> Iterator[dict[str, Any]]:
    session = story["session"]
    for key in story:
        if key not in _WRITTEN_ROOT:
            report_loss(f"not in claude-code: /{key}", pointer=f"/{key}")
    models = any("model" in turn for turn in story["turns"])
    for key in story["agent"]:
        # A line holds no agent but its message's model (a turn's): the reader names the agent itself.
        if key != "id" and not (key == "model" and models):
            report_loss(f"not in claude-code: /agent/{key}", pointer=f"/agent/{key}")
    placed, loose = place_results(story)
    previous: str | None = None
    carried = envelope(other_sources(story, None))
    first = True

    def record(kind: str, uid: str, message: dict[str, Any], ts: Any, **more: Any) -> dict[str, Any]:
        nonlocal previous, first
        line: dict[str, Any] = {"type": kind, "uuid": uid, "parentUuid": previous, "sessionId": session}
        if isinstance(ts, str):
            line["timestamp"] = ts
        line.update(more)
        line["message"] = message
        if first and carried is not None:
            line[ENVELOPE_KEY] = carried
        first = False
        previous = uid
        return line

    for t, turn in enumerate(story["turns"]):
        ptr = f"/turns/{t}"
        for key in turn:
            if key not in _WRITTEN_TURN or (key == "ts" and not isinstance(turn["ts"], str)):
                report_loss(f"not in claude-code: /turns/*/{key}", pointer=f"{ptr}/{key}")  # a line's time is text
        uid = f"{session}-{turn['id']}"
        if turn["src"] == "agent":
            blocks: list[dict[str, Any]] = []
            if isinstance(turn.get("reason"), str) and turn["reason"]:
                blocks.append({"type": "thinking", "thinking": turn["reason"]})
            text = _text(turn["msg"], f"{ptr}/msg")
            if text:
                blocks.append({"type": "text", "text": text})
            for call in turn.get("tool_calls") or ():
                blocks.append({"type": "tool_use", "id": call["tcid"], "name": call["fn"], "input": call["args"]})
            message: dict[str, Any] = {"role": "assistant", "type": "message", "content": blocks}
            if isinstance(turn.get("model"), str):
                message["model"] = turn["model"]
            yield record("assistant", uid, message, turn.get("ts"))
        else:
            if turn["src"] != "user":
                report_loss("source_renamed", pointer=f"{ptr}/src")
            meta = {"isMeta": True} if turn["src"] != "user" else {}
            msg = turn["msg"] if isinstance(turn["msg"], (str, list)) else _text(turn["msg"], f"{ptr}/msg")
            yield record("user", uid, {"role": "user", "content": msg}, turn.get("ts"), **meta)
        results = [
            {"type": "tool_result", "tool_use_id": cid, "content": _result(content)}
            for cid, _, content in placed.get(t, [])
        ]
        results += [{"type": "text", "text": _text(content, f"{ptr}/observation")} for _, content in loose.get(t, [])]
        if results:
            yield record("user", f"{uid}-results", {"role": "user", "content": results}, None)


def _text(value: Any, pointer: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in value):
        return "".join(p["text"] for p in value)
    if value is None:
        return ""
    report_loss("content_flattened", pointer=pointer)
    return orjson.dumps(value).decode()


def _result(content: Any) -> Any:
    if isinstance(content, str) or (isinstance(content, list) and all(isinstance(b, dict) for b in content)):
        return content
    return "" if content is None else orjson.dumps(content).decode()
