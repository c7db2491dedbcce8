"""Storyline documents → Cline task histories: a document read from Cline back as its messages (the export hint
of each message in ``/meta/cline`` and the residual), any other document as the history Cline would store in
native tool-calling mode (``tool_use`` blocks answered by ``tool_result`` blocks).

Each document is one JSON array on one line (a file of one document is a history Cline reads; several are JSON
Lines of histories, which the reader takes one per line).

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi", "ts": "2026-04-24T23:26:13.494Z"}]}
>>> history(story)
[{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}], 'ts': 1777073173494}]
"""

from __future__ import annotations

from typing import Any

import orjson

from ...linking import place_results, shown_call_ids
from ...losses import report_loss
from ...pointer import unescape
from ..layout import report_unwritten
from ..messages import write_message
from ..moments import ms_of
from ..residual import ENVELOPE_KEY, envelope, other_sources, source_fields
from .fields import COST, HINTS, MESSAGES, METRICS, MODEL_INFO, NAME, SYSTEM_PROMPT, TOKENS, TS
from .reader import HINTS_VERSION

__all__ = ["WRITTEN", "encode", "history"]

#: What a history written for another format's document holds of it (``layout.report_unwritten`` counts every
#: other value as ``not in cline: <pointer>``): each turn's text, thinking, calls and results, its time, model and
#: metrics (those ``metrics.tokens`` and ``metrics.cost`` hold, the rest counted below); a Cline history names no
#: session (its folder does) and holds no tool definitions (they are in the system prompt, not stored).
WRITTEN = {
    "": ("turns", "unknown_fields"),
    "agent": ("id", "name", "model"),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation", "ts", "model", "metrics"),
    "call": ("tcid", "fn", "args"),
    "result": ("source_call_id", "content"),
}
_METRIC_KEYS = {name: key for key, name in TOKENS.items()}


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    if isinstance(node, list):
        i = int(tokens[-1])
        while len(node) <= i:
            node.append(None)
        node[i] = value
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], hints: dict[str, Any]) -> Any:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    session = hints.get("layout") == "session"  # an SDK session object, else a task's message array
    top: dict[str, Any] = {}
    system: list[tuple[list[str], Any]] = []
    kept: dict[int, list[tuple[list[str], Any]]] = {}
    for pointer, value in fields.items():
        tokens = [unescape(t) for t in pointer.split("/")[1:]]
        if session and tokens[0] == SYSTEM_PROMPT and len(tokens) > 1:
            system.append((tokens[1:], value))  # a leftover inside the system prompt's blocks
            continue
        if session and tokens[0] != MESSAGES:
            top[tokens[0]] = value  # version, updated_at, agent, sessionId, … (whole values)
            continue
        tokens = tokens[1:] if session else tokens
        kept.setdefault(int(tokens[0]), []).append((tokens[1:], value))
    messages: list[Any] = []
    for i, hint in enumerate(hints["messages"]):
        message = write_message(story, hint)
        for tokens, value in kept.get(i, ()):
            _put(message, tokens, value)
        messages.append(message)
    carried = envelope(other_sources(story, NAME))
    if not session:
        if carried is not None and messages:
            messages[0][ENVELOPE_KEY] = carried
        return messages
    out = {**top, MESSAGES: messages}
    if isinstance(hints.get("system"), dict):
        out[SYSTEM_PROMPT] = write_message(story, hints["system"])
        for tokens, value in system:
            _put(out[SYSTEM_PROMPT], tokens, value)
    if carried is not None:
        out[ENVELOPE_KEY] = carried
    return out


def _text_blocks(msg: Any, t: int) -> list[Any]:
    """A turn's ``msg`` as content blocks: a string as a text block, a list of blocks as it is."""
    if isinstance(msg, str):
        return [{"type": "text", "text": msg}] if msg else []
    if msg is None:
        return []
    if isinstance(msg, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in msg):
        return list(msg)
    report_loss(f"text in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")
    return [{"type": "text", "text": orjson.dumps(msg).decode()}]


def _stamp(message: dict[str, Any], turn: dict[str, Any], t: int, agent_model: Any = None) -> None:
    """Cline's keys of a message: its time, its model (the turn's, else the document's ``/agent/model``: Cline
    stamps every answer with the model that gave it) and its token counts; what they cannot hold is counted."""
    if "ts" in turn:
        ms = ms_of(turn["ts"])
        if ms is None:
            report_loss(f"not in {NAME}: /turns/*/ts", pointer=f"/turns/{t}/ts")
        else:
            message[TS] = ms
    if isinstance(turn.get("model"), str) and message["role"] == "assistant":
        message[MODEL_INFO] = {"modelId": turn["model"]}
    elif "model" not in turn and isinstance(agent_model, str) and message["role"] == "assistant":
        message[MODEL_INFO] = {"modelId": agent_model}
    elif "model" in turn:
        report_loss(f"not in {NAME}: /turns/*/model", pointer=f"/turns/{t}/model")
    metrics = turn.get("metrics")
    if isinstance(metrics, dict):
        tokens = {_METRIC_KEYS[k]: v for k, v in metrics.items() if k in _METRIC_KEYS}
        out: dict[str, Any] = {"tokens": tokens} if tokens else {}
        if COST[1] in metrics:
            out[COST[0]] = metrics[COST[1]]
        for key in metrics:
            if key not in _METRIC_KEYS and key != COST[1]:
                report_loss(f"not in {NAME}: /turns/*/metrics/{key}", pointer=f"/turns/{t}/metrics/{key}")
        if out:
            message[METRICS] = out
    elif metrics is not None:
        report_loss(f"not in {NAME}: /turns/*/metrics", pointer=f"/turns/{t}/metrics")


def _synthesized(story: dict[str, Any]) -> list[Any]:
    """The history Cline would store for a document of another format (native tool calls)."""
    report_unwritten(story, NAME, WRITTEN)  # /session among them: a task's folder names it, not its history
    placed, loose = place_results(story)
    shown = shown_call_ids(story)
    agent_model = (story.get("agent") or {}).get("model")
    out: list[Any] = []
    for t, turn in enumerate(story["turns"]):
        if turn["src"] == "agent":
            content: list[Any] = []
            if isinstance(turn.get("reason"), str) and turn["reason"]:
                content.append({"type": "thinking", "thinking": turn["reason"]})
            content.extend(_text_blocks(turn["msg"], t))
            for call in turn.get("tool_calls") or ():
                cid = shown.get(call["tcid"], call["tcid"])
                content.append({"type": "tool_use", "id": cid, "name": call["fn"], "input": call["args"]})
            message: dict[str, Any] = {"role": "assistant", "content": content}
        else:
            if turn["src"] != "user":
                report_loss("source_renamed", pointer=f"/turns/{t}/src")  # Cline stores user and assistant only
            message = {"role": "user", "content": _text_blocks(turn["msg"], t)}
        _stamp(message, turn, t, agent_model)
        out.append(message)
        blocks: list[Any] = [
            {"type": "tool_result", "tool_use_id": shown.get(cid, cid), "content": content_}
            for cid, _name, content_ in placed.get(t, [])
        ]
        blocks += [b for _k, content_ in loose.get(t, []) for b in _text_blocks(content_, t)]
        if blocks:
            results: dict[str, Any] = {"role": "user", "content": blocks}
            if TS in message:  # Storyline keeps no time of a result: the call's turn's, as Cline stamps each message
                results[TS] = message[TS]
            out.append(results)
    carried = envelope(other_sources(story, NAME))
    if carried is not None and out:
        out[0][ENVELOPE_KEY] = carried
    return out


def history(story: dict[str, Any]) -> Any:
    """The Cline history (parsed value) of one document: a task's message array, or an SDK session object for a
    document read from one."""
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    own = (story.get("origin") or {}).get("format") == NAME
    same = isinstance(hints, dict) and hints.get("version") == HINTS_VERSION and isinstance(hints.get("messages"), list)
    if own and same:
        return _same_source(story, hints)
    return _synthesized(story)


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One JSON array per document, one per line (one document: a history file Cline reads)."""
    return "".join(orjson.dumps(history(story)).decode() + "\n" for story in stories)
