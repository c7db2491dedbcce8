"""One Cursor transcript (its parsed lines) → one Storyline document (the table in docs/formats/cursor.md).

``Transcript`` takes the lines one at a time (``line(i, value)``, ``i`` the 0-based index among the non-blank
lines); each is a turn or stays residual, whole, at ``/{i}``; ``finish(lines)`` gives the document, its
``/meta/cursor`` the plan the writer follows (the turns' lines, each turn's part kinds, the query wrappers).

>>> transcript = Transcript("agent-transcripts/c1.jsonl")
>>> transcript.line(0, {"role": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}})
>>> story = transcript.finish(1)
>>> story["session"], story["turns"][0]["src"], story["meta"]["cursor"]["kinds"]
('c1', 'agent', {'0': 't'})
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from ...errors import FormatError
from ...pointer import escape
from ..base import INTERRUPTED
from ..residual import Residual, origin
from .fields import (
    ABORTED_ERROR,
    ABORTED_STATUS,
    API_ERROR_COUNT,
    CALL_ID,
    CONTEXT_KIND,
    CONTEXT_TAGS,
    ERROR_STATUS,
    NAME,
    REDACTED,
    ROLES,
    SUBAGENT_REL,
    SUBAGENTS_DIR,
    TEXT_KEYS,
    TOOL_KEYS,
    TURN_ENDED,
    WRAPPED,
)

__all__ = ["Transcript", "parent_of_path"]


def _session_of(document_id: str | None) -> str:
    stem = PurePosixPath((document_id or "").replace("\\", "/")).name.split(".", 1)[0]
    return stem or NAME


def parent_of_path(document_id: str | None) -> tuple[str, str] | None:
    """``(session, parent session)`` of a subagent's transcript, from where it lies
    (``<parent id>/subagents/<id>.jsonl``), else None.

    >>> parent_of_path("agent-transcripts/p1/subagents/c1.jsonl"), parent_of_path("agent-transcripts/p1/p1.jsonl")
    (('c1', 'p1'), None)
    """
    parts = PurePosixPath((document_id or "").replace("\\", "/")).parts
    if len(parts) < 3 or parts[-2] != SUBAGENTS_DIR or parts[-3] in ("", "/", ".", ".."):
        return None
    return _session_of(document_id), parts[-3]


def _aborted(value: Any) -> bool:
    """A ``turn_ended`` line of a turn the user stopped (``fields.TURN_ENDED``)."""
    if not (isinstance(value, dict) and value.get("type") == TURN_ENDED):
        return False
    status = value.get("status")
    return status == ABORTED_STATUS or (status == ERROR_STATUS and value.get("error") == ABORTED_ERROR)


def _failed(value: Any) -> bool:
    """A ``turn_ended`` line of a turn Cursor ended in error, not the user (``fields.API_ERROR_COUNT``)."""
    if not (isinstance(value, dict) and value.get("type") == TURN_ENDED):
        return False
    return value.get("status") == ERROR_STATUS and not _aborted(value)


def _context_tag(turn: dict[str, Any]) -> str | None:
    """The tag name of a user line Cursor wrote itself (``fields.CONTEXT_TAGS``), or None."""
    text = "".join(p["text"] for p in turn["msg"]).lstrip()
    if "<user_query>" in text:
        return None
    return next((tag[1:-1] for tag in CONTEXT_TAGS if text.startswith(tag)), None)


def _take_line(
    i: int, value: Any, story: dict[str, Any], kept: Residual, wrapped: dict[str, list[str]], kinds: dict[str, str]
) -> bool:
    """Line ``i`` as a turn (False: the line stays residual, whole)."""
    ptr = f"/{i}"
    if not (
        isinstance(value, dict)
        and isinstance(value.get("role"), str)  # a list or object role is unhashable: not looked up
        and value["role"] in ROLES
        and isinstance(value.get("message"), dict)
        and isinstance(value["message"].get("content"), list)
    ):
        kept.keep(ptr, value)
        return False
    turn: dict[str, Any] = {"id": len(story["turns"]) + 1, "src": ROLES[value["role"]], "msg": []}
    calls = []
    order = ""
    for k, part in enumerate(value["message"]["content"]):
        pptr = f"{ptr}/message/content/{k}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and type(part.get("text")) is str:
            text = part["text"]
            match = (WRAPPED if value["role"] == "user" else REDACTED).match(text)
            if match:
                wrapped[f"{i}/{k}"] = [match.group(1), match.group(3)]
                text = match.group(2)
            turn["msg"].append({"type": "text", "text": text})
            used, order = TEXT_KEYS, order + "t"
        elif kind == "tool_use" and type(part.get("name")) is str and part["name"] and "input" in part:
            calls.append({"tcid": CALL_ID.format(index=i, part=k), "fn": part["name"], "args": part["input"]})
            used, order = TOOL_KEYS, order + "c"
        else:
            kept.keep(pptr, part)
            continue
        for key, v in part.items():
            if key not in used:
                kept.keep(f"{pptr}/{escape(key)}", v)
    if calls:
        turn["tool_calls"] = calls
    tag = _context_tag(turn) if turn["src"] == "user" and not any(key.startswith(f"{i}/") for key in wrapped) else None
    if tag is not None:  # Cursor's own text (a tool catalog…), not the user's words: derived, never written
        turn.update(copied=True, kind=CONTEXT_KIND, extra={NAME: {"context": tag}})
    kinds[str(i)] = order
    for key, v in value["message"].items():
        if key != "content":
            kept.keep(f"{ptr}/message/{escape(key)}", v)
    for key, v in value.items():
        if key not in ("role", "message"):
            kept.keep(f"{ptr}/{escape(key)}", v)
    story["turns"].append(turn)
    return True


class Transcript:
    """The reading of one transcript, a line at a time (its document: ``finish``)."""

    def __init__(self, document_id: str | None) -> None:
        self.document_id = document_id
        self.kept = Residual(NAME, document_id)
        self.story: dict[str, Any] = {
            "schema_version": "storyline/v1",
            "origin": origin(NAME, document_id),
            "session": _session_of(document_id),
            "agent": {"id": NAME},
            "turns": [],
        }
        self.layout: list[int] = []
        self.wrapped: dict[str, list[str]] = {}
        self.kinds: dict[str, str] = {}
        self.interrupted = 0
        self.api_errors = 0  # turns Cursor ended in error (not the user's stop)
        self.open = False  # a conversation line since the last turn_ended
        parent = parent_of_path(document_id)
        if parent is not None:
            self.story["parent"] = {"psid": parent[1], "rel": SUBAGENT_REL}

    def line(self, index: int, value: Any) -> None:
        if _take_line(index, value, self.story, self.kept, self.wrapped, self.kinds):
            self.layout.append(index)
            self.open = True
        elif isinstance(value, dict) and value.get("type") == TURN_ENDED:
            self.interrupted += _aborted(value) and self.open
            self.api_errors += _failed(value) and self.open
            self.open = False

    def finish(self, lines: int) -> dict[str, Any]:
        """The document (``lines``: how many lines the file has, for the writer); ``PchronicleError`` when no
        line was a turn or the document is not valid Storyline."""
        story = self.story
        story["meta"] = {NAME: {"version": 1, "lines": lines, "turns": self.layout, "kinds": self.kinds}}
        if self.wrapped:
            story["meta"][NAME]["wrapped"] = self.wrapped
        if self.interrupted:
            story["meta"][NAME][INTERRUPTED] = self.interrupted
        if self.api_errors:
            story["meta"][NAME]["counts"] = {API_ERROR_COUNT: self.api_errors}
        if not self.layout:  # nothing but residual: not a transcript
            raise FormatError(
                "a Cursor transcript is JSON Lines of {role, message: {content: [...]}}; no line of this file is one",
                pointer="",
                document_id=self.document_id,
            )
        return self.kept.finish(story)
