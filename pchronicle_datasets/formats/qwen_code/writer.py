"""Storyline documents → Qwen Code session files: a document read from one exactly as it was (its residual and
pointer map, line by line), any other as a fresh session with every value a session cannot hold counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...linking import place_results, shown_call_ids
from ...losses import for_document, report_loss
from ..layout import report_unwritten, source_records
from ..residual import ENVELOPE_KEY, envelope, other_sources
from .fields import GIT_BRANCH, METRIC_OF, NAME, OUTPUT_KEY, TOOL_RESULT, TYPE_OF, WRITTEN
from .reader import INVERSE

__all__ = ["encode", "session_records"]


def session_records(story: dict[str, Any]) -> list[Any]:
    """The records (lines) of one document's session file."""
    records = source_records(story, NAME, INVERSE)  # None: another format's document, or one edited since
    return _fresh(story) if records is None else records


def _fresh(story: dict[str, Any]) -> list[dict[str, Any]]:
    session = story["session"]
    state = ((story.get("task") or {}).get("env") or {}).get("state") or {}
    shared: dict[str, Any] = {"sessionId": session}
    if isinstance(state.get("cwd"), str):
        shared["cwd"] = state["cwd"]
    if isinstance(state.get(GIT_BRANCH[0]), str):
        shared[GIT_BRANCH[0]] = state[GIT_BRANCH[0]]
    for key in state:
        if key not in ("cwd", GIT_BRANCH[0]):
            report_loss(f"not in {NAME}: /task/env/state/{key}", pointer=f"/task/env/state/{key}")
    if isinstance((story.get("agent") or {}).get("ver"), str):
        shared["version"] = story["agent"]["ver"]
    default_ts = story.get("started_at") or ""
    records: list[dict[str, Any]] = []
    marks: dict[int, list[bool]] = {}
    placed, loose = place_results(story, marks)  # the one linking rule: each result after its call's turn
    shown = shown_call_ids(story)

    def add(rec: dict[str, Any], ts: Any) -> None:
        uuid = f"{session}-{len(records) + 1}"
        parent = records[-1]["uuid"] if records else None
        records.append({"uuid": uuid, "parentUuid": parent, **shared, "timestamp": ts or default_ts, **rec})

    for t, turn in enumerate(story["turns"]):
        src = turn["src"]
        if src not in TYPE_OF:
            report_loss(f"not in {NAME}: /turns/*/src {src} (written as user)", pointer=f"/turns/{t}/src")
        rtype, role = TYPE_OF.get(src, TYPE_OF["user"])
        parts: list[dict[str, Any]] = []
        if isinstance(turn.get("reason"), str):
            parts.append({"text": turn["reason"], "thought": True})
        msg = turn["msg"]
        if isinstance(msg, str):
            parts.append({"text": msg})
        elif isinstance(msg, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in msg):
            parts.extend({"text": p["text"]} for p in msg)
        elif msg is not None:
            report_loss(f"not in {NAME}: /turns/*/msg (not text)", pointer=f"/turns/{t}/msg")
            parts.append({"text": orjson.dumps(msg).decode()})
        calls = turn.get("tool_calls") or []
        parts.extend(
            {"functionCall": {"id": shown.get(c["tcid"], c["tcid"]), "name": c["fn"], "args": c["args"]}} for c in calls
        )
        rec: dict[str, Any] = {"type": rtype, "message": {"role": role, "parts": parts}}
        if isinstance(turn.get("model"), str):
            rec["model"] = turn["model"]
        usage = _usage(turn.get("metrics"), t)
        if usage:
            rec["usageMetadata"] = usage
        add(rec, turn.get("ts"))
        statuses = {c["tcid"]: (c.get("response") or {}).get("status") for c in calls}
        for (tcid, fn, content), failed in zip(placed.get(t, ()), marks.get(t, ()), strict=True):
            cid = shown.get(tcid, tcid)
            out = content if isinstance(content, dict) else {OUTPUT_KEY: content}
            fr = {"functionResponse": {"id": cid, "name": fn, "response": out}}
            res: dict[str, Any] = {"type": TOOL_RESULT, "message": {"role": "user", "parts": [fr]}}
            status = statuses.get(tcid)
            if isinstance(status, str) or failed:
                res["toolCallResult"] = {"callId": cid, "status": status if isinstance(status, str) else "error"}
            add(res, turn.get("ts"))
        for o, _content in loose.get(t, ()):
            report_loss(f"not in {NAME}: a result that answers no call", pointer=f"/turns/{t}/observation/results/{o}")
    report_unwritten(story, NAME, WRITTEN)
    env = envelope(other_sources(story, NAME))
    if env is not None and records:
        records[0][ENVELOPE_KEY] = env
    return records


def _usage(metrics: Any, t: int) -> dict[str, Any]:
    if not isinstance(metrics, dict):
        if metrics is not None:
            report_loss(f"not in {NAME}: /turns/*/metrics", pointer=f"/turns/{t}/metrics")
        return {}
    usage: dict[str, Any] = {}
    for key, value in metrics.items():
        if key in METRIC_OF and type(value) is int:
            usage[METRIC_OF[key]] = value
        elif key == "extra" and isinstance(value, dict):
            for name, count in value.items():
                if type(count) is int:
                    usage[name] = count
                else:
                    report_loss(f"not in {NAME}: /turns/*/metrics/extra", pointer=f"/turns/{t}/metrics/extra/{name}")
        else:
            report_loss(f"not in {NAME}: /turns/*/metrics/{key}", pointer=f"/turns/{t}/metrics/{key}")
    return usage


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The session file (JSON Lines of chat records) of one document ("" for none)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Qwen Code session file holds one session, not {len(stories)}: write one file per document "
            "(convert --per-document)",
            pointer="",
        )
    story = stories[0]
    with for_document(story.get("session")):
        return "".join(orjson.dumps(rec).decode() + "\n" for rec in session_records(story))
