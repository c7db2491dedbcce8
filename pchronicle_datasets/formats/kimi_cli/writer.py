"""Storyline documents → Kimi CLI ``context.jsonl``: a document read from one exactly as it was (its residual and
pointer map, line by line), any other as a fresh context ``Context.restore`` reads, with every value a context
cannot hold counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...linking import place_results, shown_call_ids
from ...losses import for_document, report_loss
from ..layout import report_unwritten, source_records
from ..residual import ENVELOPE_KEY, envelope, other_sources
from .fields import CHECKPOINT, NAME, SRC_ROLE, SYSTEM_PROMPT, TEXT, THINK, TOOL, WRITTEN
from .reader import INVERSE

__all__ = ["context_records", "encode"]


def context_records(story: dict[str, Any]) -> list[Any]:
    """The records (lines) of one document's context file."""
    records = source_records(story, NAME, INVERSE)  # None: another format's document, or one edited since
    return _fresh(story) if records is None else records


def _content(msg: Any, t: int) -> Any:
    """A turn's ``msg`` as kosong content: a string as it is, text parts as ``{"type": "text", "text"}``, other
    typed parts (images) as they are; any other value as its JSON text (counted)."""
    if msg is None:
        return []
    if isinstance(msg, str):
        return msg
    if isinstance(msg, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in msg):
        return [{"type": TEXT, "text": p["text"]} if p["type"] == TEXT and "text" in p else p for p in msg]
    report_loss(f"not in {NAME}: /turns/*/msg (not text or typed parts)", pointer=f"/turns/{t}/msg")
    return orjson.dumps(msg).decode()


def _output(content: Any, t: int) -> Any:
    """A result's content as a ``tool`` message's: text or typed parts as they are, any other value (an object
    another harness returned) as its JSON text (counted)."""
    if isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content)
    ):
        return content
    report_loss(f"not in {NAME}: a result that is not text (written as its JSON)", pointer=f"/turns/{t}")
    return orjson.dumps(content).decode()


def _assistant_content(turn: dict[str, Any], t: int) -> Any:
    """kosong's serialisation: one text part alone is a string; with reasoning, a part list, ``think`` first."""
    content = _content(turn["msg"], t)
    if not isinstance(turn.get("reason"), str):
        return content
    parts = [{"type": THINK, "think": turn["reason"], "encrypted": None}]
    if isinstance(content, str):
        parts.append({"type": TEXT, "text": content})
    else:
        parts.extend(content)
    return parts


def _fresh(story: dict[str, Any]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    placed, loose = place_results(story)  # the one linking rule: each result after its call's turn
    shown = shown_call_ids(story)
    checkpoints = 0
    for t, turn in enumerate(story["turns"]):
        src = turn["src"]
        msg = turn["msg"]
        if src == "system" and not records and isinstance(msg, str):
            records.append({"role": SYSTEM_PROMPT, "content": msg})
            continue
        if src not in SRC_ROLE:
            report_loss(f"not in {NAME}: /turns/*/src {src} (written as user)", pointer=f"/turns/{t}/src")
        role = SRC_ROLE.get(src, "user")
        if role == "user" and not turn.get("copied"):
            # Kimi CLI marks a checkpoint before each user input (the points /undo goes back to)
            records.append({"role": CHECKPOINT, "id": checkpoints})
            checkpoints += 1
        if role == "assistant":
            rec: dict[str, Any] = {"role": role, "content": _assistant_content(turn, t)}
            calls = turn.get("tool_calls") or []
            if calls:
                rec["tool_calls"] = [
                    {
                        "type": "function",
                        "id": shown.get(c["tcid"], c["tcid"]),
                        "function": {"name": c["fn"], "arguments": _arguments(c["args"])},
                    }
                    for c in calls
                ]
        else:
            rec = {"role": role, "content": _content(msg, t)}
            if isinstance(turn.get("reason"), str):
                report_loss(f"not in {NAME}: /turns/*/reason (not of an assistant)", pointer=f"/turns/{t}/reason")
            if turn.get("tool_calls"):
                report_loss(
                    f"not in {NAME}: /turns/*/tool_calls (not of an assistant)", pointer=f"/turns/{t}/tool_calls"
                )
        records.append(rec)
        for tcid, _fn, content in placed.get(t, ()):
            records.append({"role": TOOL, "content": _output(content, t), "tool_call_id": shown.get(tcid, tcid)})
        for o, _content_lost in loose.get(t, ()):
            report_loss(f"not in {NAME}: a result that answers no call", pointer=f"/turns/{t}/observation/results/{o}")
    report_unwritten(story, NAME, WRITTEN)
    env = envelope(other_sources(story, NAME))
    if env is not None and records:
        records[0][ENVELOPE_KEY] = env  # kosong ignores keys it does not know; the reader takes it back
    return records


def _arguments(args: Any) -> str:
    return args if isinstance(args, str) else orjson.dumps(args).decode()


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The context file (JSON Lines of messages and records) of one document ("" for none)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Kimi CLI context file holds one session, not {len(stories)}: write one file per document "
            "(convert --per-document)",
            pointer="",
        )
    story = stories[0]
    with for_document(story.get("session")):
        return "".join(orjson.dumps(rec).decode() + "\n" for rec in context_records(story))
