"""Storyline documents → Pi session lines: a document read from Pi back as its file (the line plan in
``/meta/pi`` and the residual), any other document as a v3 session synthesized from its turns.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}]}
>>> [line["type"] for line in session_lines(story)]
['session', 'message']
"""

from __future__ import annotations

from typing import Any

import orjson

from ...linking import place_results, shown_call_ids
from ...losses import report_loss
from ...pointer import unescape
from ..layout import report_unwritten
from ..residual import source_fields
from .fields import CUSTOM_MESSAGE, HINTS, NAME

#: What a session synthesized from another format's document holds of it (``layout.report_unwritten`` counts every
#: other value as ``not in pi: <pointer>``): the session id and start time, and each turn's messages, thinking,
#: calls and results, stamped with the turn's time (a turn's id is its place).
WRITTEN = {
    "": ("session", "started_at", "turns"),
    "agent": (),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation", "ts"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("source_call_id", "content"),
}

__all__ = ["WRITTEN", "encode", "session_lines"]


def _content(msg: Any, form: str | None = "l") -> Any:
    """A message's content as its source held it (``form``: ``"s"`` a string, ``"l"`` a list of blocks)."""
    return [{"type": "text", "text": msg}] if isinstance(msg, str) and form == "l" else msg


def _put(line: Any, tokens: list[str], value: Any) -> None:
    node = line
    for token in tokens[:-1]:
        node = node[token] if isinstance(node, dict) else node[int(token)]
    if isinstance(node, list):
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


def _blocks(turn: dict[str, Any], layout: list[str]) -> list[Any]:
    """A user message's blocks back in order: texts from ``msg``, images from ``extra.media``, kept blocks as
    placeholders the residual fills."""
    msg = turn["msg"]
    texts = [msg] if isinstance(msg, str) else [b.get("text") for b in msg] if isinstance(msg, list) else []
    media = (turn.get("extra") or {}).get("media") or []
    out: list[Any] = []
    nt = nm = 0
    for kind in layout:
        if kind == "t":
            out.append({"type": "text", "text": texts[nt]})
            nt += 1
        elif kind == "m":
            out.append(media[nm])
            nm += 1
        else:
            out.append(None)
    return out


def _assistant(turn: dict[str, Any], layout: list[str] | None, shown: dict[str, str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if layout is not None:
        msg = turn["msg"]
        texts = [msg] if isinstance(msg, str) else [b.get("text") for b in msg] if isinstance(msg, list) else []
        calls = turn.get("tool_calls") or []
        content: list[Any] = []
        nt = nc = 0
        for kind in layout:
            if kind == "t":
                content.append({"type": "text", "text": texts[nt] if nt < len(texts) else ""})
                nt += 1
            elif kind == "h":
                content.append({"type": "thinking", "thinking": turn.get("reason", "")})
            elif kind.startswith("c"):
                call = calls[nc]
                nc += 1
                block: dict[str, Any] = {"type": "toolCall", "id": shown.get(call["tcid"], call["tcid"])}
                if "n" in kind:
                    block["name"] = call["fn"]
                if "a" in kind:
                    block["arguments"] = call["args"]
                content.append(block)
            else:
                content.append(None)  # a block kept whole as residual
        message["content"] = content
    if "model" in turn:
        message["model"] = turn["model"]
    return message


def _custom(turn: dict[str, Any], form: str | None) -> dict[str, Any]:
    """The ``content`` and ``customType`` of an extension's message (a ``custom`` message or entry)."""
    out: dict[str, Any] = {}
    if form:
        out["content"] = _content(turn["msg"], form)
    if isinstance(turn.get("extra"), dict) and "custom_type" in turn["extra"]:
        out["customType"] = turn["extra"]["custom_type"]
    return out


def _same_source(story: dict[str, Any], hints: dict[str, Any]) -> list[Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    by_line: dict[int, list[tuple[list[str], Any]]] = {}
    for pointer, value in fields.items():
        tokens = [unescape(t) for t in pointer.split("/")[1:]]
        by_line.setdefault(int(tokens[0]), []).append((tokens[1:], value))
    turns = story["turns"]
    shown = shown_call_ids(story)
    lines: list[Any] = []
    for i, step in enumerate(hints["lines"]):
        kept = by_line.get(i, [])
        if step[0] == "k":
            lines.append(next(v for tokens, v in kept if not tokens))
            continue
        line: dict[str, Any]
        if step[0] == "h":
            line = {"type": "session", "id": story["session"]}
            if "started_at" in story:
                line["timestamp"] = story["started_at"]
        else:
            turn = turns[step[1]]
            message: dict[str, Any] | None = None
            if step[0] == "s":
                line = {"type": step[2], "summary": turn["msg"], **turn["extra"][step[2]]}
            elif step[0] == "m":  # a custom_message entry: the custom message's keys on the entry itself
                line = {"type": CUSTOM_MESSAGE, **_custom(turn, step[2])}
            elif step[0] == "u":
                message = {"role": "user"}
                if len(step) > 3 and step[3] is not None:
                    message["content"] = _blocks(turn, step[3])
                elif step[2]:
                    message["content"] = _content(turn["msg"], step[2])
            elif step[0] == "a":
                message = _assistant(turn, step[2], shown)
            elif step[0] == "r":
                call = turn["tool_calls"][step[2]]
                message = {
                    "role": "toolResult",
                    "toolCallId": shown.get(call["tcid"], call["tcid"]),
                    "content": _content(call.get("result"), step[3]),
                }
            elif step[0] == "o":
                result = turn["observation"]["results"][0]
                message = {"role": "toolResult"}
                if "source_call_id" in result:
                    message["toolCallId"] = result["source_call_id"]
                if step[2]:
                    message["content"] = _content(result.get("content"), step[2])
            elif step[0] == "b":
                message = {"role": "bashExecution", **turn["extra"]["bash_execution"]}
            elif step[0] == "c":
                message = {"role": step[2], **_custom(turn, step[3])}
            if message is not None:
                line = {"type": "message", "message": message}
            if "ts" in turn and step[0] != "r":
                line["timestamp"] = turn["ts"]
        for tokens, value in kept:
            if tokens:
                _put(line, tokens, value)
        lines.append(line)
    return lines


def _synthesized(story: dict[str, Any]) -> list[Any]:
    """A v3 session for a document of another format: its user, assistant and tool result messages."""
    report_unwritten(story, NAME, WRITTEN)
    header: dict[str, Any] = {"type": "session", "version": 3, "id": story["session"]}
    header["timestamp"] = story.get("started_at") if isinstance(story.get("started_at"), str) else ""
    lines: list[Any] = [header]
    placed, loose = place_results(story)

    def entry(turn: dict[str, Any], message: dict[str, Any]) -> None:
        line: dict[str, Any] = {"type": "message", "message": message}
        if isinstance(turn.get("ts"), str):
            line["timestamp"] = turn["ts"]
        lines.append(line)

    for t, turn in enumerate(story["turns"]):
        if "ts" in turn and not isinstance(turn["ts"], str):
            report_loss(f"not in {NAME}: /turns/*/ts", pointer=f"/turns/{t}/ts")  # an entry's timestamp is text
        if turn["src"] == "agent":
            content: list[Any] = []
            if isinstance(turn.get("reason"), str) and turn["reason"]:
                content.append({"type": "thinking", "thinking": turn["reason"]})
            if turn["msg"] not in ("", None):
                content.extend(_content(turn["msg"]) if isinstance(turn["msg"], str) else turn["msg"])
            for call in turn.get("tool_calls") or []:
                content.append({"type": "toolCall", "id": call["tcid"], "name": call["fn"], "arguments": call["args"]})
            entry(turn, {"role": "assistant", "content": content})
        else:
            if turn["src"] != "user":
                report_loss("not in pi: /turns/*/src", pointer=f"/turns/{t}/src")
            entry(
                turn,
                {"role": "user", "content": _content(turn["msg"]) if not isinstance(turn["msg"], str) else turn["msg"]},
            )
        for cid, name, content_ in placed.get(t, []):
            text = content_ if isinstance(content_, (str, list)) else orjson.dumps(content_).decode()
            entry(
                turn,
                {
                    "role": "toolResult",
                    "toolCallId": cid,
                    "toolName": name,
                    "content": _content(text),
                    "isError": False,
                },
            )
        for _k, content_ in loose.get(t, []):
            text = content_ if isinstance(content_, str) else orjson.dumps(content_).decode()
            entry(turn, {"role": "user", "content": text})
    return lines


def session_lines(story: dict[str, Any]) -> list[Any]:
    """The session lines (parsed values) of one document."""
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    own = (story.get("origin") or {}).get("format") == NAME
    if own and isinstance(hints, dict) and hints.get("version") == 1 and isinstance(hints.get("lines"), list):
        return _same_source(story, hints)
    return _synthesized(story)


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The session text of the documents, one after the other (one file per document: ``--per-document``)."""
    return "".join(orjson.dumps(line).decode() + "\n" for story in stories for line in session_lines(story))
