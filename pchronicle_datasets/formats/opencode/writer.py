"""Storyline documents → an OpenCode export: a document read from OpenCode back as its file (the part layout in
``/meta/opencode`` and the residual), any other document as a fresh export synthesized from its turns.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "agent", "msg": "hi"}]}
>>> import json; json.loads(encode([story]))["messages"][0]
{'info': {'role': 'assistant'}, 'parts': [{'type': 'text', 'text': 'hi'}]}
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...linking import SOURCE_CALL_IDS
from ...losses import report_loss
from ...pointer import parse
from ..layout import report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import NAME, ROLE_OF

__all__ = ["WRITTEN", "encode"]

#: What an export synthesized from another format's document holds of it (``layout.report_unwritten`` counts every
#: other value as ``not in opencode: <pointer>``): the session id, its agent's name and version, title and parent
#: session, and each turn as a message (a turn's id is its place, read again in order) with its text, reasoning,
#: model, calls and their results.
WRITTEN = {
    "": ("session", "notes", "parent", "turns", "unknown_fields"),
    "agent": ("name", "ver"),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "model", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("source_call_id", "content"),
}


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for k, token in enumerate(tokens[:-1]):
        if isinstance(node, list):
            node = node[int(token)]
        else:
            node = node.setdefault(token, [] if tokens[k + 1].isdigit() and token == "parts" else {})
    if isinstance(node, list):
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], layout: list) -> dict[str, Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    out: dict[str, Any] = {"info": {"id": story["session"]}, "messages": [None] * len(layout)}
    shown = (story.get("meta") or {}).get(SOURCE_CALL_IDS) or {}
    turns = iter(story["turns"])
    for m, kinds in enumerate(layout):
        if kinds is None:
            continue
        turn = next(turns)
        info: dict[str, Any] = {"role": ROLE_OF.get(turn["src"], "user")}
        if "ts" in turn:
            info["time"] = {"created": round(turn["ts"] * 1000)}
        if "model" in turn:
            info["modelID"] = turn["model"]
        metrics = turn.get("metrics")
        if isinstance(metrics, dict) and "prompt_tokens" in metrics:
            extra = metrics.get("extra") or {}
            info["tokens"] = {
                **({"total": extra["total"]} if "total" in extra else {}),
                "input": metrics["prompt_tokens"],
                "output": metrics.get("completion_tokens"),
                "reasoning": extra.get("reasoning"),
                "cache": {"read": metrics.get("cached_tokens"), "write": extra.get("cache_write")},
            }
            if "cost_usd" in metrics:
                info["cost"] = metrics["cost_usd"]
        texts = (
            iter(p.get("text") for p in turn["msg"] if isinstance(p, dict))
            if isinstance(turn["msg"], list)
            else iter(())
        )
        calls = iter(turn.get("tool_calls") or ())
        parts: list[Any] = []
        for kind in kinds:
            if kind == "text":
                parts.append({"type": "text", "text": next(texts, "")})
            elif kind == "reasoning":
                parts.append({"type": "reasoning", "text": turn.get("reason", "")})
            elif kind == "tool":
                call = next(calls)
                state: dict[str, Any] = {"status": (call.get("response") or {}).get("status"), "input": call["args"]}
                if "result" in call:
                    if state["status"] == "error" and isinstance(call["result"], dict):
                        state["error"] = call["result"].get("error")
                    else:
                        state["output"] = call["result"]
                parts.append(
                    {
                        "type": "tool",
                        "callID": shown.get(call["tcid"], call["tcid"]),
                        "tool": call["fn"],
                        "state": state,
                    }
                )
            else:
                parts.append(None)
        out["messages"][m] = {"info": info, "parts": parts}
    if story.get("agent", {}).get("name") is not None:
        out["info"]["agent"] = story["agent"]["name"]
    if "notes" in story:
        out["info"]["title"] = story["notes"]
    if "ver" in story["agent"]:
        out["info"]["version"] = story["agent"]["ver"]
    if "parent" in story:
        out["info"]["parentID"] = story["parent"]["psid"]
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        _put(out, parse(pointer), value)
    return out


def _synthesized(story: dict[str, Any]) -> dict[str, Any]:
    report_unwritten(story, NAME, WRITTEN)
    info: dict[str, Any] = {"id": story["session"]}
    if isinstance(story["agent"].get("name"), str):
        info["agent"] = story["agent"]["name"]
    if isinstance(story.get("notes"), str):
        info["title"] = story["notes"]
    if isinstance(story["agent"].get("ver"), str):
        info["version"] = story["agent"]["ver"]
    if "parent" in story:
        info["parentID"] = story["parent"]["psid"]
    out: dict[str, Any] = {"info": info, "messages": []}
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        out["_storyline"] = carried
    results = {}
    for turn in story["turns"]:
        for res in (
            (turn.get("observation") or {}).get("results") or [] if isinstance(turn.get("observation"), dict) else []
        ):
            if isinstance(res, dict) and isinstance(res.get("source_call_id"), str):
                results[res["source_call_id"]] = res.get("content")
    for t, turn in enumerate(story["turns"]):
        if turn["src"] not in ROLE_OF:
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
        msg = turn["msg"]
        texts = (
            [msg]
            if isinstance(msg, str)
            else [p["text"] for p in msg if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if isinstance(msg, list)
            else []
        )
        if msg is not None and (not isinstance(msg, (str, list)) or len(texts) < len(msg)):
            # JSON, or content parts that are not text (an image…): an export's text parts hold only text
            report_loss(f"not in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")
        parts: list[dict[str, Any]] = [{"type": "text", "text": x} for x in texts]
        if isinstance(turn.get("reason"), str):
            parts.insert(0, {"type": "reasoning", "text": turn["reason"]})
        for call in turn.get("tool_calls") or ():
            state: dict[str, Any] = {"status": "completed", "input": call["args"]}
            result = call["result"] if "result" in call else results.get(call["tcid"])
            if result is not None:
                state["output"] = result
            parts.append({"type": "tool", "callID": call["tcid"], "tool": call["fn"], "state": state})
        minfo: dict[str, Any] = {"role": ROLE_OF.get(turn["src"], "user")}
        if isinstance(turn.get("model"), str):
            minfo["modelID"] = turn["model"]
        out["messages"].append({"info": minfo, "parts": parts})
    return out


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The export of one document ("" for none); several are refused (one file per session)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"an opencode export holds one session, not {len(stories)}: convert --per-document", pointer=""
        )
    story = stories[0]
    layout = ((story.get("meta") or {}).get(NAME) or {}).get("layout") if isinstance(story.get("meta"), dict) else None
    same = (story.get("origin") or {}).get("format") == NAME and isinstance(layout, list)
    if same and sum(k is not None for k in layout) == len(story["turns"]):
        value = _same_source(story, layout)
    else:
        value = _synthesized(story)
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n"
