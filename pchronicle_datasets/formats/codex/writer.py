"""Storyline documents → Codex rollout lines: a document read from Codex back as its file (the line plan in
``/meta/codex`` and the residual), any other document as a wrapper rollout synthesized from its turns.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}]}
>>> [line["type"] for line in rollout_lines(story)]
['session_meta', 'response_item']
"""

from __future__ import annotations

from typing import Any

import orjson

from ...linking import place_results
from ...losses import report_loss
from ...pointer import unescape
from ..layout import report_unwritten
from ..messages import write_message
from ..residual import source_fields
from .fields import EXEC_CALLS, EXEC_COMPLETED, EXEC_FIRST, EXEC_NOTICE, HINTS, NAME, TEXT_PART

__all__ = ["WRITTEN", "encode", "rollout_lines"]

#: What a rollout synthesized from another format's document holds of it (``layout.report_unwritten`` counts every
#: other value as ``not in codex: <pointer>``): the session id, start time and CLI version, and each turn's
#: messages, reasoning, calls and results, stamped with the turn's time (a turn's id is its place).
WRITTEN = {
    "": ("session", "started_at", "turns"),
    "agent": ("ver",),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation", "ts"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("source_call_id", "content"),
}


def _content(msg: Any, role: str) -> Any:
    if isinstance(msg, str):
        return [{"type": TEXT_PART.get(role, "input_text"), "text": msg}]
    return msg


def _parts(msg: Any, role: str, pointer: str) -> list[dict[str, Any]]:
    """A document's ``msg`` as Responses content parts, for a rollout synthesized from another format: text
    parts (any part with a string ``text``) as the role's text part, images as ``input_image``; anything else
    is written as its JSON text (counted: ``text in codex``)."""
    if isinstance(msg, str):
        return _content(msg, role)
    part_type = TEXT_PART.get(role, "input_text")
    out: list[dict[str, Any]] = []
    for k, part in enumerate(msg if isinstance(msg, list) else [msg]):
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append({"type": part_type, "text": part["text"]})
        elif isinstance(part, dict) and part.get("type") == "input_image":
            out.append(part)
        else:
            report_loss("text in codex: /turns/*/msg", pointer=f"{pointer}/{k}" if isinstance(msg, list) else pointer)
            out.append({"type": part_type, "text": part if isinstance(part, str) else orjson.dumps(part).decode()})
    return out


def _put(line: Any, tokens: list[str], value: Any) -> None:
    node = line
    for token in tokens[:-1]:
        node = node[token] if isinstance(node, dict) else node[int(token)]
    if isinstance(node, list):  # a part kept whole in its place (the message model leaves None there)
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


def _args_text(args: Any) -> Any:
    return args if isinstance(args, str) or args is None else orjson.dumps(args).decode()


def _same_source(story: dict[str, Any], hints: dict[str, Any]) -> list[Any]:
    by_line = _residual_by_line(story)
    turns = story["turns"]
    agent = story["agent"]
    wrapper = hints.get("layout") == "wrapper"
    lines: list[Any] = []
    for i, step in enumerate(hints["lines"]):
        kept = by_line.get(i, [])
        whole = [v for tokens, v in kept if not tokens]
        if step[0] == "k":
            lines.append(whole[0])
            continue
        first = step[0] in ("x", "y")
        turn = turns[step[1]] if first else None
        item: dict[str, Any] = {}
        if step[0] in ("s", "h"):
            item = {
                k: v
                for k, v in (
                    ("id", story.get("session")),
                    ("timestamp", story.get("started_at")),
                    ("cli_version", agent.get("ver")),
                    ("originator", agent.get("name")),
                )
                if v is not None
            }
        elif step[0] == "r":
            item = write_message(story, step[1])
            turn = turns[step[2]] if step[2] is not None else None
            first = turn is not None
        elif step[0] == "x":
            item = {}
            if step[2]:
                item["message"] = turn["msg"]
            if "replacement_history" in turn["extra"]:
                item["replacement_history"] = turn["extra"]["replacement_history"]
        elif step[0] == "y":
            item = {"type": "compaction"}
        if wrapper:
            kind = {"s": "session_meta", "x": "compacted"}.get(step[0], "response_item")
            line: Any = {"type": kind, "payload": item}
            if first and turn is not None and "ts" in turn:
                line["timestamp"] = turn["ts"]
        else:
            line = item  # pre-wrapper: the bare item (its lines carry no timestamp)
        for tokens, value in kept:
            if tokens:
                _put(line, tokens, value)
        lines.append(_ordered(line) if wrapper else line)
    return lines


def _exec_lines(story: dict[str, Any], hints: dict[str, Any]) -> list[Any]:
    """The lines of a document read from ``codex exec --json`` output (``exec_stream.py``): each line rebuilt from
    the turn its plan names (``["t"]`` the thread, ``["i", t, type]`` a reasoning, message or notice item,
    ``["c", t, type, c]`` a call item) and its residual, or kept whole (``["k"]``)."""
    by_line = _residual_by_line(story)
    turns = story["turns"]
    out: list[Any] = []
    for i, step in enumerate(hints["lines"]):
        kept = by_line.get(i, [])
        if step[0] == "k":
            out.append(next(v for tokens, v in kept if not tokens))
            continue
        line: dict[str, Any]
        if step[0] == "t":
            line = {"type": EXEC_FIRST[0], EXEC_FIRST[1]: story["session"]}
        else:
            turn, kind = turns[step[1]], step[2]
            item: dict[str, Any] = {"type": kind}
            if step[0] == "c":
                item.update(_exec_call(turn, turn["tool_calls"][step[3]], kind))
            elif kind == "reasoning":
                item["text"] = turn.get("reason")
            else:
                item["message" if kind == EXEC_NOTICE else "text"] = turn["msg"]
            line = {"type": EXEC_COMPLETED, "item": item}
        for tokens, value in kept:
            _put(line, tokens, value)
        out.append(line)
    return out


def _exec_call(turn: dict[str, Any], call: dict[str, Any], kind: str) -> dict[str, Any]:
    """The mapped keys of a call item (``fields.EXEC_CALLS``): its id, name, arguments and result."""
    fn_key, args_keys, result_key = EXEC_CALLS[kind]
    item: dict[str, Any] = {"id": call["tcid"]}
    if fn_key:
        item[fn_key] = call["fn"]
    if args_keys == ("arguments",):
        item["arguments"] = call["args"]
    elif isinstance(call["args"], dict):
        item.update(call["args"])
    for res in (turn.get("observation") or {}).get("results") or ():
        if result_key and res.get("source_call_id") == call["tcid"]:
            item[result_key] = res.get("content")
    return item


def _residual_by_line(story: dict[str, Any]) -> dict[int, list[tuple[list[str], Any]]]:
    """The document's own residual by source line: ``{i: [(tokens under /i, value)]}``."""
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    by_line: dict[int, list[tuple[list[str], Any]]] = {}
    for pointer, value in fields.items():
        tokens = [unescape(t) for t in pointer.split("/")[1:]]
        by_line.setdefault(int(tokens[0]), []).append((tokens[1:], value))
    return by_line


def _ordered(line: Any) -> Any:
    """A wrapper line's keys in the order Codex writes them (``timestamp``, ``type``, ``payload``, the rest), so a
    rollout read and written back is the same bytes where the source is Codex's own serialisation."""
    if not isinstance(line, dict):
        return line
    head = {k: line[k] for k in ("timestamp", "type", "payload") if k in line}
    return {**head, **{k: v for k, v in line.items() if k not in head}}


def _synthesized(story: dict[str, Any]) -> list[Any]:
    """A wrapper rollout for a document of another format: its messages, reasoning, calls and results."""
    report_unwritten(story, NAME, WRITTEN)
    meta = {"id": story["session"]}
    if isinstance(story.get("started_at"), str):
        meta["timestamp"] = story["started_at"]
    if story["agent"].get("ver"):
        meta["cli_version"] = story["agent"]["ver"]
    lines: list[Any] = [{"type": "session_meta", "payload": meta}]
    placed, loose = place_results(story)
    for t, turn in enumerate(story["turns"]):
        items: list[dict[str, Any]] = []
        src = turn["src"]
        if src == "agent":
            if isinstance(turn.get("reason"), str) and turn["reason"]:
                items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": turn["reason"]}]})
            if turn["msg"] not in ("", None, []):
                content = _parts(turn["msg"], "assistant", f"/turns/{t}/msg")
                items.append({"type": "message", "role": "assistant", "content": content})
            for call in turn.get("tool_calls") or []:
                items.append(
                    {
                        "type": "function_call",
                        "name": call["fn"],
                        "arguments": _args_text(call["args"]),
                        "call_id": call["tcid"],
                    }
                )
        else:
            role = src if src in ("user", "developer", "system") else "user"
            if role != src:
                report_loss("not in codex: /turns/*/src", pointer=f"/turns/{t}/src")
            items.append({"type": "message", "role": role, "content": _parts(turn["msg"], role, f"/turns/{t}/msg")})
        for cid, _name, content in placed.get(t, []):
            output = content if isinstance(content, str) else orjson.dumps(content).decode()
            items.append({"type": "function_call_output", "call_id": cid, "output": output})
        for _k, content in loose.get(t, []):
            text = content if isinstance(content, str) else orjson.dumps(content).decode()
            items.append({"type": "message", "role": "user", "content": _content(text, "user")})
        if "ts" in turn and not isinstance(turn["ts"], str):
            report_loss(f"not in {NAME}: /turns/*/ts", pointer=f"/turns/{t}/ts")  # a line's timestamp is text
        for item in items:
            line: dict[str, Any] = {"type": "response_item", "payload": item}
            if isinstance(turn.get("ts"), str):
                line["timestamp"] = turn["ts"]
            lines.append(line)
    return lines


def rollout_lines(story: dict[str, Any]) -> list[Any]:
    """The rollout lines (parsed values) of one document."""
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    own = (story.get("origin") or {}).get("format") == NAME
    if own and isinstance(hints, dict) and hints.get("version") == 1 and isinstance(hints.get("lines"), list):
        return _exec_lines(story, hints) if hints.get("layout") == "exec" else _same_source(story, hints)
    return _synthesized(story)


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The rollout text of the documents, one after the other (one file per document: ``--per-document``). The
    reader splits a text at each ``session_meta`` of another session, so a document whose session repeats the
    one before it is written with ``#{n}`` after its id (counted: ``session_renamed``)."""
    out = []
    previous: Any = None
    for n, story in enumerate(stories):
        lines = rollout_lines(story)
        first = lines[0] if lines and isinstance(lines[0], dict) else {}
        meta, key = (first.get("payload"), "id") if first.get("type") == "session_meta" else (first, EXEC_FIRST[1])
        if isinstance(meta, dict) and first.get("type") in ("session_meta", EXEC_FIRST[0]) and key in meta:
            if meta[key] == previous:
                meta[key] = f"{meta[key]}#{n}"
                report_loss("session_renamed", pointer="/session")
            previous = meta[key]
        out.extend(orjson.dumps(line).decode() + "\n" for line in lines)
    return "".join(out)
