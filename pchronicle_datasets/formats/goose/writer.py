"""Storyline documents → a Goose session export (``goose session export --format json``): a document read from
Goose back as its export (the part layout in ``/meta/goose`` and the residual), any other document as a fresh
export synthesized from its turns.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "agent", "msg": "hi", "ts": 1785964864}]}
>>> import json; json.loads(encode([story]))["conversation"]
[{'role': 'assistant', 'content': [{'type': 'text', 'text': 'hi'}], 'created': 1785964864}]
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

import orjson

from ...errors import FormatError
from ...linking import SOURCE_CALL_IDS, observation_results
from ...losses import report_loss
from ...pointer import parse
from ..layout import report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import (
    LEGACY_HINTS,
    LEGACY_LIST,
    MODEL_CONFIG,
    MODEL_NAME,
    NAME,
    NEVER_RAN,
    NOTES_FROM,
    RESIDUAL,
    ROLE_OF,
    USAGE,
)
from .reader import makes_turn

__all__ = ["WRITTEN", "encode"]

#: What an export synthesized from another format's document holds of it (``layout.report_unwritten`` counts every
#: other value as ``not in goose: <pointer>``): the session id, its working folder, name, start and model, and each
#: turn as a message with its text, reasoning, time, calls and their results.
WRITTEN = {
    "": ("session", "notes", "started_at", "parent", "turns", "unknown_fields"),
    "agent": ("model",),
    "task": ("/task/env/state/cwd",),
    "turn": ("id", "src", "msg", "reason", "ts", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args", "result", "response"),
    "result": ("source_call_id", "content"),
}


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
    if isinstance(node, list):
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


def _blocks(result: Any) -> list[Any]:
    """A call's result as Goose's content blocks (a text: one text block)."""
    if isinstance(result, list):
        return copy.deepcopy(result)
    if isinstance(result, str):
        return [{"type": "text", "text": result}]
    return [{"type": "text", "text": orjson.dumps(result).decode()}]


def _session_keys(story: dict[str, Any]) -> dict[str, Any]:
    """The session's mapped keys, from the document."""
    out: dict[str, Any] = {"id": story["session"]}
    cwd = (((story.get("task") or {}).get("env") or {}).get("state") or {}).get("cwd")
    if isinstance(cwd, str):
        out["working_dir"] = cwd
    if isinstance(story.get("notes"), str):
        out["name"] = story["notes"]
    if isinstance(story.get("started_at"), str):
        out["created_at"] = story["started_at"]
    if "parent" in story:
        out["parent_session_id"] = story["parent"]["psid"]
    if isinstance(story["agent"].get("model"), str):
        out[MODEL_CONFIG] = {MODEL_NAME: story["agent"]["model"]}
    return out


def _usage(turn: dict[str, Any]) -> dict[str, Any]:
    metrics = turn.get("metrics") if isinstance(turn.get("metrics"), dict) else {}
    usage: dict[str, Any] = {}
    for key, (where, name) in USAGE.items():
        if where == "turn":
            holder = turn
        elif where == "extra":
            holder = metrics.get("extra") if isinstance(metrics.get("extra"), dict) else {}
        else:
            holder = metrics
        if name in holder:
            usage[key] = holder[name]
    return usage


def _response(call: dict[str, Any], shown: dict[str, str], form: str, hidden: list[int] = ()) -> dict[str, Any]:
    """A call's ``toolResponse`` part; ``hidden``: the indexes of the blocks the model was not sent, left empty
    here for the residual to fill (reader ``_content``)."""
    part: dict[str, Any] = {"type": "toolResponse", "id": shown.get(call["tcid"], call["tcid"])}
    blocks = _blocks(call.get("result"))
    for b in hidden:
        blocks.insert(b, None)
    if form == NEVER_RAN:
        part["toolResult"] = {"status": "error", "error": call["result"]["error"]}
    elif form == LEGACY_LIST:
        part["toolResult"] = {"status": "success", "value": blocks}
    else:
        value: dict[str, Any] = {"content": blocks}
        if "response" in call:
            value["isError"] = call["response"].get("status") == "error"
        part["toolResult"] = {"status": "success", "value": value}
    return part


def _same_source(story: dict[str, Any], layout: list) -> dict[str, Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    shown = (story.get("meta") or {}).get(SOURCE_CALL_IDS) or {}
    out = _session_keys(story)
    if ((story.get("meta") or {}).get(NAME) or {}).get(NOTES_FROM) is not None:
        out.pop("name", None)  # /notes is a copy of the description, which the residual gives back
    out["conversation"] = [None] * len(layout)
    calls = {c["tcid"]: c for t in story["turns"] for c in t.get("tool_calls") or ()}
    turns = iter(story["turns"])
    for m, kinds in enumerate(layout):
        if kinds is None:
            continue  # residual, whole
        message: dict[str, Any] = {}
        turn: dict[str, Any] = {}
        if any(makes_turn(k) for k in kinds):
            turn = next(turns)
            message["role"] = ROLE_OF.get(turn["src"], "user")
            if "ts" in turn:
                message["created"] = turn["ts"]
            usage = _usage(turn)
            if usage:
                message["metadata"] = {"usage": usage}
        msg = iter(turn.get("msg") or ())
        reason, at = turn.get("reason", ""), 0
        own_calls = iter(turn.get("tool_calls") or ())
        content: list[Any] = []
        for kind in kinds:
            if kind == "text":
                content.append({"type": "text", "text": next(msg)["text"]})
            elif kind == "image":
                content.append(copy.deepcopy(next(msg)))
            elif kind == "toolRequest":
                call = next(own_calls)
                value = {"name": call["fn"], "arguments": copy.deepcopy(call["args"])}
                tid = shown.get(call["tcid"], call["tcid"])
                content.append({"type": "toolRequest", "id": tid, "toolCall": {"status": "success", "value": value}})
            elif kind == RESIDUAL:
                content.append(None)
            elif kind[0] == "thinking":  # cut back into the parts it was streamed as
                content.append({"type": "thinking", "thinking": reason[at : at + kind[1]], "signature": ""})
                at += kind[1]
            else:
                content.append(_response(calls[kind[1]], shown, kind[2], kind[3] if len(kind) > 3 else ()))
        message["content"] = content
        out["conversation"][m] = message
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        _put(out, parse(pointer), copy.deepcopy(value))
    return out


def _seconds(ts: Any) -> int | None:
    """A turn's time as Goose's whole epoch seconds, when it is one exactly."""
    if type(ts) is int:
        return ts
    if type(ts) is float and ts.is_integer():
        return int(ts)
    if isinstance(ts, str):
        try:
            when = datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
        return int(when) if when.is_integer() else None
    return None


def _synthesized(story: dict[str, Any]) -> dict[str, Any]:
    report_unwritten(story, NAME, WRITTEN)
    out = _session_keys(story)
    out.setdefault("working_dir", "")
    out.setdefault("name", "")
    out["extension_data"] = {}
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        out["_storyline"] = carried
    results = {
        r["source_call_id"]: r.get("content")
        for t in story["turns"]
        for r in observation_results(t)
        if isinstance(r, dict) and isinstance(r.get("source_call_id"), str)
    }
    known = {c["tcid"] for t in story["turns"] for c in t.get("tool_calls") or ()}
    conversation: list[dict[str, Any]] = []
    for t, turn in enumerate(story["turns"]):
        answers = [r for r in observation_results(turn) if isinstance(r, dict)]
        msg = turn["msg"]
        if turn["src"] == "tool" and not msg and answers and all(r.get("source_call_id") in known for r in answers):
            continue  # a turn of results only: each is written after its call
        if turn["src"] not in ROLE_OF:
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
        parts: list[dict[str, Any]] = []
        if isinstance(turn.get("reason"), str):
            parts.append({"type": "thinking", "thinking": turn["reason"], "signature": ""})
        if isinstance(msg, str):
            parts.append({"type": "text", "text": msg})
        elif isinstance(msg, list):
            for p in msg:
                if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str):
                    parts.append({"type": "text", "text": p["text"]})
                elif isinstance(p, dict) and p.get("type") == "image":
                    parts.append(copy.deepcopy(p))
                else:
                    report_loss(f"not in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")
        elif msg is not None:
            report_loss(f"not in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")
        responses = []
        for call in turn.get("tool_calls") or ():
            value = {"name": call["fn"], "arguments": copy.deepcopy(call["args"])}
            parts.append({"type": "toolRequest", "id": call["tcid"], "toolCall": {"status": "success", "value": value}})
            result = call["result"] if "result" in call else results.get(call["tcid"])
            if result is not None or "result" in call:
                failed = (call.get("response") or {}).get("status") == "error"
                responses.append(
                    {
                        "type": "toolResponse",
                        "id": call["tcid"],
                        "toolResult": {"status": "success", "value": {"content": _blocks(result), "isError": failed}},
                    }
                )
        message: dict[str, Any] = {"role": ROLE_OF.get(turn["src"], "user"), "content": parts}
        if "ts" in turn:
            created = _seconds(turn["ts"])
            if created is None:
                report_loss(f"not in {NAME}: /turns/*/ts", pointer=f"/turns/{t}/ts")
            else:
                message["created"] = created
        conversation.append(message)
        if responses:
            conversation.append({"role": "user", "content": responses, **_created(message)})
    out["conversation"] = conversation
    out["message_count"] = len(conversation)
    return out


def _created(message: dict[str, Any]) -> dict[str, Any]:
    return {"created": message["created"]} if "created" in message else {}


def _session_file(value: dict[str, Any], jsonl: dict[str, Any]) -> str:
    """A session read from a file before the database (``legacy.py``), given back as that file: its metadata line
    (the session's keys but the id its name gave and the conversation), then one line per message."""
    if jsonl.get("named"):
        value.pop("id", None)
    conversation = value.pop("conversation")
    lines = [value, *conversation] if jsonl.get("header") else conversation
    return "".join(orjson.dumps(line).decode() + "\n" for line in lines)


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The export of one document ("" for none); several are refused (one file per session)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(f"a goose export holds one session, not {len(stories)}: convert --per-document", pointer="")
    story = stories[0]
    meta = story.get("meta") if isinstance(story.get("meta"), dict) else {}
    layout = (meta.get(NAME) or {}).get("layout")
    same = (story.get("origin") or {}).get("format") == NAME and isinstance(layout, list)
    if same and sum(kinds is not None and any(makes_turn(k) for k in kinds) for kinds in layout) == len(story["turns"]):
        value = _same_source(story, layout)
        jsonl = meta[NAME].get(LEGACY_HINTS)
        if isinstance(jsonl, dict):
            return _session_file(value, jsonl)
    else:
        value = _synthesized(story)
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n"
