"""Storyline documents → a Cursor transcript: a document read from Cursor back as its file (the plan in
``/meta/cursor`` and the residual, the query wrappers put back), any other document from its turns, every value a
transcript cannot hold (tool results, reasoning, other formats' residual) counted.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}]}
>>> encode([story])
'{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}\\n'
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...linking import place_results
from ...losses import report_loss
from ...pointer import parse
from ..layout import report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import NAME, ROLE_OF

__all__ = ["WRITTEN", "encode"]


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
    if isinstance(node, list):
        index = int(tokens[-1])
        node.insert(index, value)
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], hints: dict[str, Any]) -> list[Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    kinds = hints.get("kinds") or {}
    lines: list[Any] = [None] * int(hints.get("lines") or 0)
    for i, turn in zip(hints["turns"], story["turns"], strict=True):
        texts = iter(turn["msg"] if isinstance(turn["msg"], list) else [{"text": turn["msg"]}])
        calls = iter(turn.get("tool_calls") or ())
        content: list[Any] = []
        for kind in kinds.get(str(i), ""):
            if kind == "t":
                part = next(texts, {})
                content.append({"type": "text", "text": part.get("text", "") if isinstance(part, dict) else part})
            else:
                call = next(calls)
                content.append({"type": "tool_use", "name": call["fn"], "input": call["args"]})
        lines[i] = {"role": ROLE_OF.get(turn["src"], "user"), "message": {"content": content}}
    # the residual in its place, shallow first: whole lines, then whole parts (inserted at their index), then keys
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        tokens = parse(pointer)
        if len(tokens) == 1:
            lines[int(tokens[0])] = value
        else:
            _put(lines[int(tokens[0])], tokens[1:], value)
    for key, (head, tail) in (hints.get("wrapped") or {}).items():
        i, k = (int(x) for x in key.split("/"))
        part = lines[i]["message"]["content"][k]
        part["text"] = head + part["text"] + tail
    return [line for line in lines if line is not None]


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The transcript of one document ("" for none); several are refused (one file per conversation)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Cursor transcript holds one conversation, not {len(stories)}: convert --per-document", pointer=""
        )
    story = stories[0]
    meta = story.get("meta") if isinstance(story.get("meta"), dict) else {}
    hints = meta.get(NAME)
    if (
        (story.get("origin") or {}).get("format") == NAME
        and isinstance(hints, dict)
        and isinstance(hints.get("turns"), list)
        and len(hints["turns"]) == len(story["turns"])
    ):
        lines = _same_source(story, hints)
    else:
        lines = _synthesized(story)
    return "".join(orjson.dumps(line).decode() + "\n" for line in lines)


#: What a transcript synthesized from another format's document holds of it (``layout.report_unwritten`` counts
#: every other value as ``not in cursor: <pointer>``): each user or agent turn's text and its calls' names and
#: arguments (a turn's id is its place; the session is the file's name, ``convert --per-document``). Reasoning,
#: results and other formats' residual are counted by ``_synthesized`` itself, each with a kind of its own.
WRITTEN = {
    "": ("session", "turns", "unknown_fields"),
    "agent": (),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation"),
    "call": ("fn", "args", "result"),
    "result": ("source_call_id", "content"),
}


def _synthesized(story: dict[str, Any]) -> list[Any]:
    report_unwritten(story, NAME, WRITTEN)
    placed, _ = place_results(story)
    lines: list[Any] = []
    for t, turn in enumerate(story["turns"]):
        if turn["src"] not in ROLE_OF:
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
            continue
        msg = turn["msg"]
        texts = (
            [msg]
            if isinstance(msg, str)
            else [p.get("text") for p in msg if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if isinstance(msg, list)
            else []
        )
        if msg is not None and (not isinstance(msg, (str, list)) or len(texts) < len(msg)):
            # JSON, or content parts that are not text (an image…): a transcript's text parts hold only text
            report_loss(f"not in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")
        content: list[Any] = [{"type": "text", "text": x} for x in texts]
        content += [{"type": "tool_use", "name": c["fn"], "input": c["args"]} for c in turn.get("tool_calls") or ()]
        if placed.get(t):
            report_loss(f"not in {NAME}: tool results", pointer=f"/turns/{t}/tool_calls", count=len(placed[t]))
        if isinstance(turn.get("reason"), str) and turn["reason"]:
            report_loss(f"not in {NAME}: /turns/*/reason", pointer=f"/turns/{t}/reason")
        lines.append({"role": ROLE_OF[turn["src"]], "message": {"content": content}})
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        report_loss(f"not in {NAME}: other formats' residual", pointer="/unknown_fields")
    return lines
