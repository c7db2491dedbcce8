"""Storyline documents → a Copilot CLI events file: a document read from Copilot CLI back as its file (the event
layout in ``/meta/copilot-cli`` and the residual), any other document as a fresh session synthesized from its turns.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}]}
>>> import json; [json.loads(line)["type"] for line in encode([story]).splitlines()]
['session.start', 'user.message']
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...linking import SOURCE_CALL_IDS, place_results
from ...losses import report_loss
from ...pointer import parse
from ..layout import report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import ASSISTANT, COMPACTION, COMPLETE, NAME, SHUTDOWN, START, SUMMARY_KEY, SYSTEM, USER

EVENTS = {"system": SYSTEM, "user": USER, "agent": ASSISTANT}  # a turn source's message event

__all__ = ["WRITTEN", "encode"]

#: What a session synthesized from another format's document holds of it (``layout.report_unwritten`` counts every
#: other value as ``not in copilot-cli: <pointer>``): the session id, start time and version, and each user or
#: agent turn as a message event (a turn's id is its place, read again in order) with its calls and their results.
WRITTEN = {
    "": ("session", "started_at", "turns", "unknown_fields"),
    "agent": ("ver",),
    "task": (),
    "turn": ("id", "src", "msg", "ts", "reason", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("source_call_id", "content"),
}


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for k, token in enumerate(tokens[:-1]):
        if isinstance(node, list):
            node = node[int(token)]
        else:
            node = node.setdefault(token, [] if token == "toolRequests" and tokens[k + 1].isdigit() else {})
    if isinstance(node, list):
        index = int(tokens[-1])
        while len(node) <= index:
            node.append(None)
        node[index] = value
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], layout: list) -> list[Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    shown = (story.get("meta") or {}).get(SOURCE_CALL_IDS) or {}
    by_tcid = {c["tcid"]: c for t in story["turns"] for c in t.get("tool_calls") or ()}
    turns = iter(story["turns"])
    lines: list[Any] = []
    for entry in layout:
        if entry == "start":
            data: dict[str, Any] = {"sessionId": story["session"]}
            if "ver" in story["agent"]:
                data["copilotVersion"] = story["agent"]["ver"]
            if "started_at" in story:
                data["startTime"] = story["started_at"]
            lines.append({"type": START, "data": data})
        elif entry == "turn":
            turn = next(turns)
            ev: dict[str, Any] = {"type": EVENTS[turn["src"]], "data": {"content": turn["msg"]}}
            if "ts" in turn:
                ev["timestamp"] = turn["ts"]
            if "model" in turn:
                ev["data"]["model"] = turn["model"]
            if "reason" in turn:
                ev["data"]["reasoningText"] = turn["reason"]
            if "completion_tokens" in (turn.get("metrics") or {}):
                ev["data"]["outputTokens"] = turn["metrics"]["completion_tokens"]
            if "tool_calls" in turn:
                ev["data"]["toolRequests"] = [
                    {"toolCallId": shown.get(c["tcid"], c["tcid"]), "name": c["fn"], "arguments": c["args"]}
                    for c in turn["tool_calls"]
                ]
            lines.append(ev)
        elif entry == "compaction":  # the summary's context turn
            turn = next(turns)
            ev = {"type": COMPACTION, "data": {SUMMARY_KEY: turn["msg"]}}
            if "ts" in turn:
                ev["timestamp"] = turn["ts"]
            lines.append(ev)
        elif isinstance(entry, list):
            call = by_tcid[entry[1]]
            data = {"toolCallId": shown.get(call["tcid"], call["tcid"])}
            status = (call.get("response") or {}).get("status")
            if status is not None:
                data["success"] = status == "success"
            result = call.get("result")
            if status == "error" and isinstance(result, dict):
                result = result.get("error")
            if entry[0] == "error":  # a failure's completion: ``error{message}``, no ``result``
                data["error"] = {"message": result}
            else:
                data["result"] = {"content": result}
            lines.append({"type": COMPLETE, "data": data})
        elif entry == "shutdown":
            lines.append({"type": SHUTDOWN, "data": {"modelMetrics": story.get("final_metrics")}})
        else:
            lines.append(None)
    # the residual in its place; a list of toolRequests rebuilt above makes room for its residual requests
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        tokens = parse(pointer)
        i = int(tokens[0])
        if len(tokens) == 1:
            lines[i] = value
            continue
        node = lines[i]
        if tokens[1:4] == ["data", "toolRequests"] and len(tokens) == 4:
            node["data"]["toolRequests"].insert(int(tokens[3]), value)
            continue
        _put(node, tokens[1:], value)
    return [line for line in lines if line is not None]


def _synthesized(story: dict[str, Any]) -> list[Any]:
    report_unwritten(story, NAME, WRITTEN)
    data: dict[str, Any] = {"sessionId": story["session"]}
    if isinstance(story["agent"].get("ver"), str):
        data["copilotVersion"] = story["agent"]["ver"]
    if "started_at" in story:
        data["startTime"] = story["started_at"]
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        data["_storyline"] = carried
    lines: list[Any] = [{"type": START, "data": data}]
    placed, _ = place_results(story)
    for t, turn in enumerate(story["turns"]):
        if turn["src"] not in EVENTS:
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
            continue
        msg = turn["msg"] if isinstance(turn["msg"], str) else orjson.dumps(turn["msg"]).decode()
        if not isinstance(turn["msg"], str):
            report_loss(f"text in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")  # its JSON written as the text
        ev: dict[str, Any] = {"type": EVENTS[turn["src"]], "data": {"content": msg}}
        if turn["src"] == "system":
            ev["data"]["role"] = "system"  # as Copilot CLI writes its system prompt
        if "ts" in turn:
            ev["timestamp"] = turn["ts"]
        if turn["src"] == "agent":
            if isinstance(turn.get("reason"), str):
                ev["data"]["reasoningText"] = turn["reason"]
            ev["data"]["toolRequests"] = [
                {"toolCallId": c["tcid"], "name": c["fn"], "arguments": c["args"]} for c in turn.get("tool_calls") or ()
            ]
        lines.append(ev)
        for cid, _, content in placed.get(t, ()):
            lines.append(
                {"type": COMPLETE, "data": {"toolCallId": cid, "success": True, "result": {"content": content}}}
            )
    return lines


def _subagent_view(story: dict[str, Any]) -> bool:
    """A document the reader made of a subagent's events (``/meta/copilot-cli/subagent``)."""
    meta = story.get("meta") if isinstance(story.get("meta"), dict) else {}
    hints = meta.get(NAME)
    return (story.get("origin") or {}).get("format") == NAME and isinstance(hints, dict) and "subagent" in hints


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The events file of one document ("" for none); several are refused (one file per session), but for the
    subagent documents read from the file of a main document also given (its events hold theirs)."""
    if not stories:
        return ""
    # a subagent's document read from the same file as its main one is a view of events the main document holds
    # (its residual): written with the main file, nothing of it is lost
    sessions = {s.get("session") for s in stories}
    stories = [s for s in stories if not (_subagent_view(s) and (s.get("parent") or {}).get("psid") in sessions)]
    if len(stories) > 1:
        raise FormatError(
            f"a Copilot CLI events file holds one session, not {len(stories)}: convert --per-document", pointer=""
        )
    story = stories[0]
    meta = story.get("meta") if isinstance(story.get("meta"), dict) else {}
    layout = (meta.get(NAME) or {}).get("layout")
    turns = sum(entry in ("turn", "compaction") for entry in layout) if isinstance(layout, list) else -1
    if (story.get("origin") or {}).get("format") == NAME and turns == len(story["turns"]):
        lines = _same_source(story, layout)
    else:
        lines = _synthesized(story)
    return "".join(orjson.dumps(line).decode() + "\n" for line in lines)
