"""Storyline documents → a Kimi Code journal (``wire.jsonl``): a document read from one exactly as it was (its
residual and pointer map, line by line), any other as a fresh journal whose ``context.*`` records Kimi Code folds
back into the same messages (``loopEventFold.ts``), with every value a journal cannot hold counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...linking import place_results, shown_call_ids
from ...losses import for_document, report_loss
from ..layout import report_unwritten, source_records
from ..moments import ms_of
from ..residual import ENVELOPE_KEY, envelope, other_sources
from .fields import (
    APPEND_MESSAGE,
    CONTENT_PART,
    LOOP_EVENT,
    NAME,
    PROTOCOL_VERSION,
    STEP_BEGIN,
    STEP_END,
    TEXT,
    THINK,
    TOOL_CALL,
    TOOL_RESULT,
    USER_ORIGIN,
    WRITTEN,
)
from .reader import INVERSE

__all__ = ["encode", "journal_records"]


def journal_records(story: dict[str, Any]) -> list[Any]:
    """The records (lines) of one document's journal."""
    records = source_records(story, NAME, INVERSE)  # None: another format's document, or one edited since
    return _fresh(story) if records is None else records


def _parts(msg: Any, t: int) -> list[Any]:
    """A turn's ``msg`` as kosong content parts: a string one text part, typed parts as they are (text parts as
    ``{"type": "text", "text"}``); any other value as its JSON text (counted)."""
    if msg is None:
        return []
    if isinstance(msg, str):
        return [{"type": TEXT, "text": msg}]
    if isinstance(msg, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in msg):
        return [{"type": TEXT, "text": p["text"]} if p["type"] == TEXT and "text" in p else p for p in msg]
    report_loss(f"not in {NAME}: /turns/*/msg (not text or typed parts)", pointer=f"/turns/{t}/msg")
    return [{"type": TEXT, "text": orjson.dumps(msg).decode()}]


def _output(content: Any, t: int) -> Any:
    if isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content)
    ):
        return content
    report_loss(f"not in {NAME}: a result that is not text (written as its JSON)", pointer=f"/turns/{t}")
    return orjson.dumps(content).decode()


def _fresh(story: dict[str, Any]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [{"type": "metadata", "protocol_version": PROTOCOL_VERSION}]
    placed, loose = place_results(story)
    shown = shown_call_ids(story)
    starts: list[int] = []  # the first record of each turn
    for t, turn in enumerate(story["turns"]):
        starts.append(len(records))
        src, msg = turn["src"], turn["msg"]
        if src == "system" and isinstance(msg, str):
            records.append({"type": "config.update", "systemPrompt": msg})
            continue
        if src != "agent":
            if src != "user":
                report_loss(f"not in {NAME}: /turns/*/src {src} (written as user)", pointer=f"/turns/{t}/src")
            message: dict[str, Any] = {"role": "user", "content": _parts(msg, t), "toolCalls": []}
            if not turn.get("copied"):
                message["origin"] = {"kind": USER_ORIGIN}
            else:
                message["origin"] = {"kind": "injection", "variant": "copied"}
            records.append({"type": APPEND_MESSAGE, "message": message})
            for key in ("reason", "tool_calls"):
                if turn.get(key):
                    report_loss(f"not in {NAME}: /turns/*/{key} (not of an agent turn)", pointer=f"/turns/{t}/{key}")
            continue
        step = f"step-{t}"

        def event(body: dict[str, Any], step: str = step) -> None:
            if body["type"] in (CONTENT_PART, TOOL_CALL):  # what the fold files under the open step
                body = {**body, "stepUuid": step}
            records.append({"type": LOOP_EVENT, "event": body})

        event({"type": STEP_BEGIN, "uuid": step})
        if isinstance(turn.get("reason"), str):
            event({"type": CONTENT_PART, "part": {"type": THINK, "think": turn["reason"]}})
        for part in _parts(msg, t):
            event({"type": CONTENT_PART, "part": part})
        for c in turn.get("tool_calls") or []:
            event(
                {"type": TOOL_CALL, "toolCallId": shown.get(c["tcid"], c["tcid"]), "name": c["fn"], "args": c["args"]}
            )
        for tcid, _fn, content in placed.get(t, ()):
            result: dict[str, Any] = {"output": _output(content, t)}
            event({"type": TOOL_RESULT, "toolCallId": shown.get(tcid, tcid), "result": result})
        for o, _lost in loose.get(t, ()):
            report_loss(f"not in {NAME}: a result that answers no call", pointer=f"/turns/{t}/observation/results/{o}")
        event({"type": STEP_END, "uuid": step})
    _errors(story, records, shown)
    _times(story, records, starts)
    report_unwritten(story, NAME, WRITTEN)
    env = envelope(other_sources(story, NAME))
    if env is not None:
        records[0][ENVELOPE_KEY] = env  # Kimi Code ignores keys it does not know; the reader takes it back
    return records


def _times(story: dict[str, Any], records: list[dict[str, Any]], starts: list[int]) -> None:
    """Each turn's ``ts`` as the ``time`` (ms since the epoch, ``moments.ms_of``) of the records written for it; a
    ``ts`` that is no time is counted."""
    ends = [*starts[1:], len(records)]
    for t, (turn, start, end) in enumerate(zip(story["turns"], starts, ends, strict=True)):
        if "ts" not in turn:
            continue
        when = ms_of(turn["ts"])
        if when is None:
            report_loss(f"not in {NAME}: /turns/*/ts (not a time)", pointer=f"/turns/{t}/ts")
            continue
        for rec in records[start:end]:
            rec["time"] = when


def _errors(story: dict[str, Any], records: list[dict[str, Any]], shown: dict[str, str]) -> None:
    """A result's ``is_error`` as its ``isError`` (``place_results`` gives the content only)."""
    failed = {
        shown.get(r.get("source_call_id"), r.get("source_call_id"))
        for turn in story["turns"]
        for r in (turn.get("observation") or {}).get("results") or []
        if isinstance(r, dict) and r.get("is_error") is True
    }
    for rec in records:
        ev = rec.get("event")
        if isinstance(ev, dict) and ev.get("type") == TOOL_RESULT and ev["toolCallId"] in failed:
            ev["result"]["isError"] = True


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The journal (JSON Lines of records) of one document ("" for none)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Kimi Code journal holds one agent of one session, not {len(stories)}: write one file per document "
            "(convert --per-document)",
            pointer="",
        )
    story = stories[0]
    with for_document(story.get("session")):
        return "".join(orjson.dumps(rec).decode() + "\n" for rec in journal_records(story))
