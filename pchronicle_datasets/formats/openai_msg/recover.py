"""The same-source writer: rows rebuilt from a document read from openai-msg, its residual and its export hints
(``hints``), equal to the source rows within RFC-0009's fidelity boundary."""

from __future__ import annotations

import itertools
from typing import Any

from ...jsonio import dumps
from ...pointer import parse
from ..residual import ENVELOPE_KEY, envelope, other_sources
from .messages import call_message, project
from .tables import (
    ENV_SOURCES,
    ENV_STATE_METRICS,
    NAME,
    ROW_METRICS,
    RUN_KEYS,
    TOOLS_KEY,
    TURN_ENV_SOURCES,
    first_more_id,
    message_role,
    request_id,
    response_id,
)

__all__ = ["Recover"]


def set_at(obj: Any, tokens: list[str], value: Any) -> None:
    """Set ``value`` at ``tokens`` inside rows being rebuilt, creating objects on the way."""
    for token in tokens[:-1]:
        nxt = obj[int(token)] if isinstance(obj, list) else obj.get(token)
        if nxt is None:
            nxt = {}
            if isinstance(obj, list):
                obj[int(token)] = nxt
            else:
                obj[token] = nxt
        obj = nxt
    last = tokens[-1]
    if isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


def get_at(obj: Any, tokens: list[str]) -> tuple[bool, Any, Any]:
    """``(found, parent, value)`` at ``tokens``."""
    parent = None
    for token in tokens:
        parent = obj
        if isinstance(obj, dict) and token in obj:
            obj = obj[token]
        elif isinstance(obj, list) and token.isdigit() and int(token) < len(obj):
            obj = obj[int(token)]
        else:
            return False, None, None
    return True, parent, obj


class Recover:
    """Same-source export: rows rebuilt from Storyline semantics, residual and the export hints."""

    def __init__(self, story: dict, source: dict, hints: dict) -> None:
        self.story = story
        self.fields = source.get("fields") or {}
        self.rows_hints = hints["rows"]
        self.turns = {t["id"]: t for t in story["turns"]}
        self.context = len(self.rows_hints[0].get("ctx", ())) if self.rows_hints else 0
        # The turns of the messages RFC-0009 leaves out (the reader's ``MORE``) have the ids after every derived
        # one, in row order then message order.
        last_step = max((h["step_id"] for h in self.rows_hints), default=0)
        self.more_ids = itertools.count(first_more_id(self.context, last_step))
        # Tool messages without an id are results of the turn they follow, after that turn's own (RFC-0009)
        # results: how many of each turn's results have been written back.
        self.written = {response_id(self.context, h["step_id"]): len(h.get("tools", ())) for h in self.rows_hints}
        task_env = (story.get("task") or {}).get("env") or {}
        self.task_env = task_env if isinstance(task_env, dict) else {}
        self.carried = envelope(other_sources(story, NAME))
        self.held: list[dict] = []  # every message of the rows written so far: what an echo repeats

    def rows(self) -> tuple[list[tuple[int, dict]], dict]:
        by_row: dict[int, list[tuple[list[str], Any]]] = {}
        root: dict[str, Any] = {}
        for pointer, value in self.fields.items():
            tokens = parse(pointer)
            if len(tokens) >= 2 and tokens[0] == "session_steps" and tokens[1].isdigit():
                by_row.setdefault(int(tokens[1]), []).append((tokens[2:], value))
            elif len(tokens) == 1:
                root[tokens[0]] = value
        out = []
        history: list[dict] = []
        for hint in self.rows_hints:
            row, history = self._row(hint, history, by_row.get(hint["r"], []))
            self.held.extend(history)  # the reader's ``Held``, in the same order
            out.append((hint["r"], row))
        return out, root

    def _row(self, hint: dict, history: list[dict], residual: list) -> tuple[dict, list[dict]]:
        step = hint["step_id"]
        resp = self.turns[response_id(self.context, step)]
        req = self.turns.get(request_id(self.context, step)) if "user" in hint else None
        row = self._row_keys(hint, resp)
        messages = row.get("messages")
        if messages is not None:
            self._fill_messages(messages, hint, history, resp, req)
        output = self._output_message(resp, hint)
        if hint["out"] == -1:
            row["response"] = output
        elif messages is not None:
            messages[hint["out"]] = output
        for tokens, value in residual:
            set_at(row, tokens, value)
        self._apply_forms(row, hint)
        history = [project(m) for m in (row.get("messages") or []) if isinstance(m, dict)]
        if hint["out"] == -1 and isinstance(row.get("response"), dict):
            history.append(project(row["response"]))
        return row, history

    def _values(self, step: int, resp: dict) -> dict[str, Any]:
        """What each consumed key (RFC-0009 tables 1, 3, 4) is written back as, from the document."""
        env = {**self.task_env, **(resp.get("env") or {})}
        state = {**(self.task_env.get("state") or {}), **((resp.get("env") or {}).get("state") or {})}
        model = resp.get("model")
        values = {
            "session_id": self.story["session"],
            "step_id": step,
            "created_at": resp.get("ts"),
            "agent_id": self.story["agent"]["id"],
            "agent_model": model,
            "llm_model": model,
            "env_id": self.story["session"],
            "meta_json/source": self.story["agent"]["id"],
            "meta_json/env_state/session_id": self.story["session"],
            "meta_json/env_state/requested_model": model,
            "meta_json/env_state/llm_step_index": step,
            TOOLS_KEY: self.story["agent"].get("tools"),
            ENVELOPE_KEY: self.carried,
        }
        for key in RUN_KEYS:
            values[key] = self.story.get("run")
        for rel, path in ENV_SOURCES:
            values[rel] = env.get(path[0]) if len(path) == 1 else state.get(path[1])
        for rel, name in TURN_ENV_SOURCES:
            values[rel] = (resp.get("env") or {}).get(name)
        return values

    def _row_keys(self, hint: dict, resp: dict) -> dict[str, Any]:
        """The row with every consumed key in its source order; messages as placeholders to fill."""
        values = self._values(hint["step_id"], resp)
        metrics = resp.get("metrics") or {}
        row: dict[str, Any] = {}
        for rel in hint["keys"]:
            tokens = rel.split("/")
            if rel in ("meta_json", "meta_json/env_state"):
                value: Any = {}
            elif rel == "messages":
                value = [None] * hint["n"]
            elif rel == "response":
                value = None
            elif (tokens[-1] in ROW_METRICS and len(tokens) == 1) or (
                tokens[0] == "meta_json" and len(tokens) == 3 and (tokens[-1] in ENV_STATE_METRICS)
            ):
                value = metrics.get(tokens[-1])
            else:
                value = values[rel]
            set_at(row, tokens, value)
        return row

    def _fill_messages(self, messages: list, hint: dict, history: list[dict], resp: dict, req: dict | None) -> None:
        """History copies, context turns (first row), the request and the tool results, in their places."""
        for m in range(hint["p"]):
            messages[m] = _rebuilt(history[m])
        for m, at in hint.get("echo", ()):
            messages[m] = dict(self.held[at])
        for i, m in enumerate(hint.get("ctx", ()), 1):  # RFC-0009's context turns: ids 1..context_count
            messages[m] = self._context_message(self.turns[i], hint, m)
        for m in hint.get("more", ()):
            messages[m] = self._context_message(self.turns[next(self.more_ids)], hint, m)
        if req is not None:
            messages[hint["user"]] = {"role": "user", "content": req["msg"]}
        results = (resp.get("observation") or {}).get("results") or []
        for m, result in zip(hint.get("tools", ()), results, strict=False):
            tool = {"role": "tool"}
            if "source_call_id" in result:  # a tool message without an id gave a result without one
                tool["tool_call_id"] = result["source_call_id"]
            if "content" in result:
                tool["content"] = result["content"]
            messages[m] = tool
        for m, holder in hint.get("loose", ()):
            o = self.written.get(holder, 0)
            result = self.turns[holder]["observation"]["results"][o]
            self.written[holder] = o + 1
            messages[m] = {"role": "tool", "content": result["content"]} if "content" in result else {"role": "tool"}

    def _calls(self, calls: list, hint: dict, rel: str) -> list:
        forms = hint.get("forms", {})
        out: list = []
        it = iter(calls)
        c = 0
        while True:
            if forms.get(f"{rel}/tool_calls/{c}") == "residual":
                out.append(None)  # filled from residual
            else:
                call = next(it, None)
                if call is None:
                    break
                out.append(call_message(call))
            c += 1
        return out

    @staticmethod
    def _has_calls(turn: dict, hint: dict, rel: str) -> bool:
        """Whether the source message had a tool_calls list (usable calls, or only calls kept whole)."""
        if turn.get("tool_calls") and not hint.get("derived_calls"):
            return True
        prefix = f"{rel}/tool_calls/"
        return any(k.startswith(prefix) and v == "residual" for k, v in (hint.get("forms") or {}).items())

    def _context_message(self, turn: dict, hint: dict, m: int) -> dict:
        """A message that became a turn of its own (context, or one RFC-0009 leaves out): role from ``src``."""
        msg: dict[str, Any] = {"role": message_role(turn["src"]), "content": turn["msg"]}
        if "reason" in turn:  # an unselected assistant message's reasoning_content
            msg["reasoning_content"] = turn["reason"]
        if turn["src"] == "agent" and self._has_calls(turn, hint, f"messages/{m}"):
            msg["tool_calls"] = self._calls(turn.get("tool_calls") or [], hint, f"messages/{m}")
        return msg

    def _output_message(self, turn: dict, hint: dict) -> dict:
        rel = "response" if hint["out"] == -1 else f"messages/{hint['out']}"
        forms = hint.get("forms") or {}
        msg: dict[str, Any] = {"role": "assistant"}
        if forms.get(f"{rel}/refusal") == "msg":  # the refusal was the fallback msg: it goes back to refusal
            content = forms.get(f"{rel}/content")
            if isinstance(content, dict):
                msg["content"] = content["value"]
            msg["refusal"] = turn["msg"]
        else:
            msg["content"] = turn["msg"]
        if "reason" in turn:
            msg[hint.get("reason_key", "reasoning_content")] = turn["reason"]
        if self._has_calls(turn, hint, rel):
            msg["tool_calls"] = self._calls(turn.get("tool_calls") or [], hint, rel)
        return msg

    def _apply_forms(self, row: dict, hint: dict) -> None:
        forms = hint.get("forms") or {}
        # Deepest first, so that an object is encoded as a string only after its members are restored.
        for rel in sorted(forms, key=lambda p: -p.count("/")):
            form = forms[rel]
            tokens = rel.split("/")
            found, parent, value = get_at(row, tokens)
            if form == "json-string":
                if found:
                    set_at(row, tokens, dumps(value).decode("utf-8"))
            elif form == "absent":
                if found and isinstance(parent, dict):
                    del parent[tokens[-1]]
            elif form == "null":
                set_at(row, tokens, None)
            # "msg", {"value": …} (the refusal fallback) and "residual" are laid out while building rows.


def _rebuilt(copied: dict) -> dict:
    """A history copy rebuilt from the message it copies, its calls copied too: residual may be set inside them
    (a call's ``index``, ``turns._copy_spelling``), which must not change the earlier row that holds them."""
    msg = dict(copied)
    calls = msg.get("tool_calls")
    if type(calls) is list:
        msg["tool_calls"] = [_call(c) for c in calls]
    return msg


def _call(call: Any) -> Any:
    if type(call) is not dict:
        return call
    out = dict(call)
    if type(out.get("function")) is dict:
        out["function"] = dict(out["function"])
    return out
