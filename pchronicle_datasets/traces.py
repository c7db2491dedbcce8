"""Storyline documents as the Hub's Session Trace Simple Format (STS), the JSON Lines its trace viewer shows.

One file per document: a header ``{"type": "session", "harness", "id", "name"}``, then one
``{"type": "message", "message": {...}}`` per message (docs/formats/sts.md is the field table). STS is
write-only here: it has no place for metrics, extra, residual and most of Storyline, so reading it back
could not give the documents again; what a write leaves out is counted and logged, never dropped silently.

>>> story = {"schema_version": "storyline/v1", "session": "s1", "agent": {"id": "bot"}, "turns": [
...     {"id": 1, "src": "user", "msg": "time?"},
...     {"id": 2, "src": "agent", "msg": "", "tool_calls": [{"tcid": "t1", "fn": "now", "args": {}}],
...      "observation": {"results": [{"source_call_id": "t1", "content": "15:00"}]}}]}
>>> lines = session_lines(story)
>>> lines[0]
{'type': 'session', 'harness': 'bot', 'id': 's1', 'name': 'time?'}
>>> [(m["message"]["role"], m["message"]["content"]) for m in lines[1:]]
[('user', 'time?'), ('assistant', ''), ('tool', '15:00')]
>>> lines[2]["message"]["toolCalls"], lines[3]["message"]["toolCallId"]
([{'id': 't1', 'function': {'name': 'now', 'arguments': '{}'}}], 't1')
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from .jsonio import dumps, dumps_text
from .losses import report_loss
from .paths import document_file_names, safe_path
from .schema import validate

__all__ = ["EXTENSION", "encode_session", "is_failed", "session_lines", "write_traces"]


EXTENSION = ".jsonl"
ROLES = {"system": "system", "user": "user", "agent": "assistant"}
TITLE_LENGTH = 80
# What STS holds of a document; every other present field is counted as left out.
_ROOT_HELD = frozenset(("schema_version", "session", "agent", "turns", "trajectory", "parent"))
_AGENT_HELD = frozenset(("id", "model"))
_TURN_HELD = frozenset(("id", "src", "msg", "ts", "model", "reason", "tool_calls", "observation"))
_CALL_HELD = frozenset(("tcid", "fn", "args", "result"))
_FAILED_STATUS = frozenset(("failed", "failure", "error", "errored", "timeout", "timed_out", "cancelled"))


def is_failed(story: Mapping[str, Any]) -> bool:
    """Whether a document records a failed trajectory: ``/task/result`` says ``completed: false``,
    ``correct: false``, a failing ``status`` or a non-empty ``error``. Without a result it counts as
    completed (nothing says otherwise).

    >>> is_failed({"task": {"result": {"completed": False}}}), is_failed({"turns": []})
    (True, False)
    """
    result = (story.get("task") or {}).get("result") or {}
    if not isinstance(result, Mapping):
        return False
    status = result.get("status")
    return (
        result.get("completed") is False
        or result.get("correct") is False
        or (isinstance(status, str) and status.lower() in _FAILED_STATUS)
        or result.get("error") not in (None, "", {}, [])
    )


def _text(value: Any, lost: collections.Counter, where: str) -> str:
    """STS ``content`` is text: strings stay, text parts are joined, other JSON is written as JSON text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(p, Mapping) and "type" in p for p in value):
        texts = [p["text"] for p in value if p.get("type") == "text" and isinstance(p.get("text"), str)]
        if len(texts) < len(value):
            lost[f"{where} non-text parts"] += len(value) - len(texts)
        return "\n".join(texts)
    return dumps_text(value)


def _millis(ts: Any) -> int | None:
    """Epoch milliseconds of a Storyline time (RFC 3339 string or epoch seconds)."""
    if isinstance(ts, bool):
        return None
    if isinstance(ts, (int, float)):
        return int(Decimal(str(ts)) * 1000)
    if isinstance(ts, str):
        try:
            when = datetime.fromisoformat(ts.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
        return int(Decimal(str(when.timestamp())) * 1000)
    return None


def _title(story: Mapping[str, Any]) -> str | None:
    for turn in story["turns"]:
        if turn["src"] == "user" and not turn.get("copied"):
            text = _text(turn["msg"], collections.Counter(), "")
            line = text.strip().split("\n", 1)[0]
            if line:
                return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"
    return story.get("notes") if isinstance(story.get("notes"), str) else None


def _count_left_out(story: Mapping[str, Any], lost: collections.Counter) -> None:
    for key in story:
        if key not in _ROOT_HELD:
            lost[f"/{key}"] += 1
    for key in story["agent"]:
        if key not in _AGENT_HELD:
            lost[f"/agent/{key}"] += 1
    for turn in story["turns"]:
        for key in turn:
            if key not in _TURN_HELD:
                lost[f"/turns/*/{key}"] += 1
        for call in turn.get("tool_calls") or ():
            for key in call:
                if key not in _CALL_HELD:
                    lost[f"/turns/*/tool_calls/*/{key}"] += 1


def session_lines(
    story: Mapping[str, Any], *, harness: str | None = None, lost: collections.Counter | None = None
) -> list[dict[str, Any]]:
    """The STS lines (as JSON values) of one document; ``harness`` defaults to ``/agent/id``. What STS
    cannot hold is added to ``lost`` (Storyline pointer pattern → count) when given."""
    validate(story)
    lost = collections.Counter() if lost is None else lost
    _count_left_out(story, lost)
    sid = story["session"]
    if "parent" in story and "trajectory" in story:
        sid = f"{sid}/{story['trajectory']}"  # a subagent may share its parent's session: keep ids unique
    header: dict[str, Any] = {"type": "session", "harness": harness or story["agent"]["id"], "id": sid}
    title = _title(story)
    if title:
        header["name"] = title
    lines = [header]
    agent_model = story["agent"].get("model")
    for turn in story["turns"]:
        msg: dict[str, Any] = {"role": ROLES.get(turn["src"], "user")}
        if turn["src"] not in ROLES:
            lost["/turns/*/src (not system, user or agent: written as user)"] += 1
        msg["content"] = _text(turn["msg"], lost, "/turns/*/msg")
        if isinstance(turn.get("reason"), str) and turn["reason"]:
            msg["reasoningContent"] = turn["reason"]
        calls = turn.get("tool_calls") or []
        if calls:
            msg["toolCalls"] = [
                {
                    "id": c["tcid"],
                    "function": {
                        "name": c["fn"],
                        "arguments": c["args"] if isinstance(c["args"], str) else dumps_text(c["args"]),
                    },
                }
                for c in calls
            ]
        ms = _millis(turn.get("ts"))
        if ms is not None:
            msg["timestamp"] = ms
        model = turn.get("model") or (agent_model if msg["role"] == "assistant" else None)
        if model:
            msg["model"] = model
        lines.append({"type": "message", "message": msg})
        lines += _tool_messages(turn, calls, lost)
    return lines


def _tool_messages(turn: Mapping[str, Any], calls: list, lost: collections.Counter) -> list[dict[str, Any]]:
    out = []
    answered = set()
    obs = turn.get("observation")
    results = obs.get("results") if isinstance(obs, Mapping) else None
    if obs is not None and not isinstance(results, list):
        lost["/turns/*/observation (not {results: [...]})"] += 1
    for result in results if isinstance(results, list) else ():
        if not isinstance(result, Mapping):
            lost["/turns/*/observation/results/* (not an object)"] += 1
            continue
        msg: dict[str, Any] = {"role": "tool", "content": _text(result.get("content"), lost, "/turns/*/observation")}
        scid = result.get("source_call_id")
        if isinstance(scid, str) and scid:
            msg["toolCallId"] = scid
            answered.add(scid)
        for key in result:
            if key not in ("content", "source_call_id"):
                lost[f"/turns/*/observation/results/*/{key}"] += 1
        out.append({"type": "message", "message": msg})
    for call in calls:
        if "result" in call and call["tcid"] not in answered:
            content = _text(call["result"], lost, "/turns/*/tool_calls/*/result")
            out.append({"type": "message", "message": {"role": "tool", "content": content, "toolCallId": call["tcid"]}})
    return out


def encode_session(story: Mapping[str, Any], *, harness: str | None = None) -> str:
    """One document as the text of one STS file."""
    lost: collections.Counter = collections.Counter()
    text = "".join(dumps(line).decode("utf-8") + "\n" for line in session_lines(story, harness=harness, lost=lost))
    _warn(lost, 1)
    return text


def _warn(lost: collections.Counter, n: int) -> None:
    """Report what STS could not hold, one loss kind per Storyline field (``n``: the documents written)."""
    for pointer, count in sorted(lost.items()):
        report_loss(f"not in sts: {pointer}", pointer=pointer, count=count, detail=f"in {n} document(s)")


def write_traces(
    stories: Iterable[Mapping[str, Any]], folder: str | Path, *, harness: str | None = None, split_failed: bool = True
) -> tuple[dict[str, list[Path]], collections.Counter]:
    """Write one STS file per document under ``folder``: ``completed/`` and ``failed/`` (``is_failed``),
    or all in ``folder`` when ``split_failed=False``. Returns the files per group and what was left out."""
    stories = list(stories)
    names = document_file_names(
        [f"{s['session']}.{s['trajectory']}" if "parent" in s and "trajectory" in s else s["session"] for s in stories],
        suffix=EXTENSION,
    )
    lost: collections.Counter = collections.Counter()
    written: dict[str, list[Path]] = {}
    for story, name in zip(stories, names, strict=True):
        group = ("failed" if is_failed(story) else "completed") if split_failed else ""
        target = safe_path(Path(folder) / group if group else Path(folder), name)
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = session_lines(story, harness=harness, lost=lost)
        target.write_bytes(b"".join(dumps(line) + b"\n" for line in lines))
        written.setdefault(group, []).append(target)
    _warn(lost, len(stories))
    return written, lost
