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

from ...linking import place_results, shown_call_ids
from ...losses import report_loss
from ...pointer import unescape
from ..residual import source_fields
from .fields import HINTS, NAME, TEXT_PART

__all__ = ["encode", "rollout_lines"]


def _content(msg: Any, role: str) -> Any:
    if isinstance(msg, str):
        return [{"type": TEXT_PART.get(role, "input_text"), "text": msg}]
    return msg


def _put(line: Any, tokens: list[str], value: Any) -> None:
    node = line
    for token in tokens[:-1]:
        node = node[token] if isinstance(node, dict) else node[int(token)]
    node[tokens[-1]] = value


def _args_text(args: Any) -> Any:
    return args if isinstance(args, str) or args is None else orjson.dumps(args).decode()


def _same_source(story: dict[str, Any], hints: dict[str, Any]) -> list[Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    by_line: dict[int, list[tuple[list[str], Any]]] = {}
    for pointer, value in fields.items():
        tokens = [unescape(t) for t in pointer.split("/")[1:]]
        by_line.setdefault(int(tokens[0]), []).append((tokens[1:], value))
    turns = story["turns"]
    shown = shown_call_ids(story)
    agent = story["agent"]
    wrapper = hints.get("layout") == "wrapper"
    seen: set[int] = set()
    lines: list[Any] = []
    for i, step in enumerate(hints["lines"]):
        kept = by_line.get(i, [])
        whole = [v for tokens, v in kept if not tokens]
        if step[0] == "k":
            lines.append(whole[0])
            continue
        first = False
        if step[0] in ("m", "a", "c", "o", "u", "x", "y"):
            first = step[1] not in seen
            seen.add(step[1])
        turn = turns[step[1]] if len(step) > 1 and isinstance(step[1], int) else None
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
        elif step[0] == "m":
            item = {"type": "message", "role": turn["src"]}
            if step[2]:
                item["content"] = _content(turn["msg"], turn["src"])
        elif step[0] == "a" and step[2] == "msg":
            item = {"type": "message", "role": "assistant"}
            if step[3]:
                item["content"] = _content(turn["msg"], "assistant")
            if isinstance(turn.get("extra"), dict) and "phase" in turn["extra"]:
                item["phase"] = turn["extra"]["phase"]
        elif step[0] == "a":
            item = {"type": "reasoning", "summary": [{"type": "summary_text", "text": turn.get("reason", "")}]}
        elif step[0] == "c":
            call = turn["tool_calls"][step[2]]
            item = {"type": step[3]}
            if step[4]:
                item[step[4]] = shown.get(call["tcid"], call["tcid"])
            if step[5]:
                item[step[5]] = _args_text(call["args"]) if step[5] == "arguments" else call["args"]
            if step[6]:
                item["name"] = call["fn"]
        elif step[0] == "o":
            call = turn["tool_calls"][step[2]]
            item = {"type": step[3], "call_id": shown.get(call["tcid"], call["tcid"]), "output": call.get("result")}
        elif step[0] == "u":
            result = turn["observation"]["results"][0]
            item = {"type": step[2]}
            if "source_call_id" in result:
                item["call_id"] = result["source_call_id"]
            if step[3]:
                item["output"] = result.get("content")
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
        lines.append(line)
    return lines


def _synthesized(story: dict[str, Any]) -> list[Any]:
    """A wrapper rollout for a document of another format: its messages, reasoning, calls and results."""
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
            if turn["msg"] not in ("", None):
                items.append({"type": "message", "role": "assistant", "content": _content(turn["msg"], "assistant")})
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
            items.append({"type": "message", "role": role, "content": _content(turn["msg"], role)})
        for cid, _name, content in placed.get(t, []):
            output = content if isinstance(content, str) else orjson.dumps(content).decode()
            items.append({"type": "function_call_output", "call_id": cid, "output": output})
        for _k, content in loose.get(t, []):
            text = content if isinstance(content, str) else orjson.dumps(content).decode()
            items.append({"type": "message", "role": "user", "content": _content(text, "user")})
        for key in ("metrics", "observation", "extra", "env", "prompt", "finished_at", "latency_ms", "ttft_ms"):
            if key in turn and key != "observation":
                report_loss(f"not in codex: /turns/*/{key}", pointer=f"/turns/{t}/{key}")
        for item in items:
            line: dict[str, Any] = {"type": "response_item", "payload": item}
            if "ts" in turn:
                line["timestamp"] = turn["ts"]
            lines.append(line)
    return lines


def rollout_lines(story: dict[str, Any]) -> list[Any]:
    """The rollout lines (parsed values) of one document."""
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    own = (story.get("origin") or {}).get("format") == NAME
    if own and isinstance(hints, dict) and hints.get("version") == 1 and isinstance(hints.get("lines"), list):
        return _same_source(story, hints)
    return _synthesized(story)


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The rollout text of the documents, one after the other (one file per document: ``--per-document``)."""
    out = []
    for story in stories:
        for line in rollout_lines(story):
            out.append(orjson.dumps(line).decode() + "\n")
    return "".join(out)
