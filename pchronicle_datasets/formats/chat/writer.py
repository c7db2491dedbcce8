"""Writing whole conversations: one Storyline document → one chat record (one JSON Lines line).

A document read from a chat file comes back as its source record, equal as JSON: the export hints in
``/meta/chat`` put every message back in its place and spelling, and the residual fills in what the
mapping did not consume. Any other document is written as ``{"id", "messages", "tools", "model"}`` with the
messages ``render_messages`` gives (the shape of ``pc.to_messages``), plus other formats' residual in a
version-1 ``_storyline`` envelope; the Storyline values such a record has no key for (a turn's ``ts``,
``metrics``, ``/task``…) are counted in the loss report (``unwritten``).

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}]}
>>> record(story)
{'id': 's', 'messages': [{'role': 'user', 'content': 'hi'}], 'tools': []}
"""

from __future__ import annotations

import logging
from typing import Any

from ...jsonio import dumps, dumps_text, try_loads
from ...losses import for_document, ignore_losses, report_loss
from ...pointer import parse
from ...schema import validate
from ..messages import tools_back, write_message
from ..residual import ENVELOPE_KEY, envelope, other_sources, source_fields
from .forms import SRC_ROLE, write_arguments
from .reader import HINTS, NAME, PAIRED, SYSTEM_KEYS
from .render import render_messages
from .unwritten import report_unwritten

__all__ = ["encode", "record"]

log = logging.getLogger("pchronicle_datasets.chat")


def record(story: dict[str, Any], *, carry_residual: bool = True) -> Any:
    """The JSON value of the chat record for one Storyline document (see the module docs).

    ``carry_residual=False`` leaves other formats' residual out (a logged warning counts the values)."""
    rec, fresh = _record(story, carry_residual=carry_residual)
    if fresh:
        report_unwritten([story])
    return rec


def _record(story: dict[str, Any], *, carry_residual: bool = True) -> tuple[Any, bool]:
    """The record, and whether it was written fresh (not recovered from this format's hints and residual)."""
    validate(story)
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    source = source_fields(story, NAME)
    if source is not None and isinstance(hints, dict) and hints.get("version") == 1:
        try:
            return _Recovery(story, hints, source.get("fields") or {}).record(), False
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, StopIteration) as exc:
            # Hints that do not fit the document (edited after it was read): write it as any other document,
            # carrying this format's residual too, so nothing is dropped.
            log.warning("export hints at /meta/%s do not fit the document (%r); written as a new record", HINTS, exc)
            return _fresh(story, carry_residual=True), True
    return _fresh(story, carry_residual=carry_residual), True


def _fresh(story: dict[str, Any], *, carry_residual: bool) -> dict[str, Any]:
    # What the record cannot hold is counted once, field by field, by ``unwritten`` (the rendering's own loss
    # kinds would count the same values twice).
    with ignore_losses():
        messages = render_messages(story, keep_invalid_args=True)
    for msg in messages["messages"]:
        for call in msg.get("tool_calls") or ():
            fn = call["function"]
            # Storyline string args are a source's arguments that were not JSON; one that still reads as JSON
            # ("42", "true") is written as a JSON string, or the reader would take it for the number or boolean.
            if isinstance(fn["arguments"], str) and try_loads(fn["arguments"])[0]:
                fn["arguments"] = dumps_text(fn["arguments"])
    out: dict[str, Any] = {"id": story["session"], **messages}
    if story["agent"].get("model"):
        out["model"] = story["agent"]["model"]
    others = other_sources(story, None)
    if others and carry_residual:
        out[ENVELOPE_KEY] = envelope(others)
    elif others:
        count = sum(len(s.get("fields") or {}) for s in others.values() if isinstance(s, dict))
        report_loss("residual_dropped", pointer="/unknown_fields", count=count, detail="carry_residual=False")
    return out


class _Recovery:
    """The source record of a document read from a chat file, from its turns, hints and residual."""

    def __init__(self, story: dict[str, Any], hints: dict[str, Any], fields: dict[str, Any]) -> None:
        self.story = story
        self.turns = story["turns"]
        self.hints = hints
        self.per_message = hints.get("m") or {}
        self.fields = fields
        self.fn_of = {c["tcid"]: c["fn"] for t in self.turns for c in t.get("tool_calls") or ()}

    def record(self) -> Any:
        messages = [self._message(entry, m) for m, entry in enumerate(self.hints["layout"])]
        if self.hints.get("bare"):
            rec: Any = messages
        elif "single" in self.hints:  # a provider response of one message
            rec = _nest(parse(self.hints["single"]), messages[0])
            if "usage" in self.hints:
                key, t = self.hints["usage"]
                rec[key] = self.turns[t]["metrics"]
        else:
            keys = self.hints["keys"]
            rec = {keys["messages"]: messages}
            if keys["messages"] in PAIRED:  # a conversation split in two arrays
                split = len(self.hints["layout"]) - keys["tail"]
                rec = {keys["messages"]: messages[:split], PAIRED[keys["messages"]]: messages[split:]}
            agent = self.story["agent"]
            if "id" in keys:
                rec[keys["id"]] = self.story["session"]
            if "tools" in keys:
                spelled = keys.get("tools_spelled")
                rec[keys["tools"]] = agent["tools"] if spelled is None else tools_back(agent["tools"], spelled)
            if "usage" in keys:  # a Responses response object's usage: its answer's metrics
                rec["usage"] = self.turns[keys["usage"]]["metrics"]
            if keys.get("system") is not None:
                rec[SYSTEM_KEYS[keys["messages"]]] = write_message(self.story, keys["system"])
            if keys.get("model"):
                rec["model"] = agent["model"]
            for key in keys.get("result", ()):
                rec[key] = self.story["task"]["result"][key]
            if "response" in self.hints:
                rec["response"] = {"choices": [{"message": self._message(self.hints["response"], "response")}]}
            if keys.get("carried"):
                rec[ENVELOPE_KEY] = envelope(other_sources(self.story, NAME)) or {
                    "version": 1,
                    "unknown_fields": {"sources": {}},
                }
        for pointer, value in self.fields.items():
            rec = _put(rec, parse(pointer), value)
        return rec

    def _message(self, entry: Any, where: int | str) -> Any:
        hint = self.per_message.get(str(where), {})
        if entry is None:
            return None  # kept whole: the residual at this message's pointer fills it in
        if isinstance(entry, dict):  # another shape: the shared model's export hint
            return write_message(self.story, entry)
        if isinstance(entry, int):
            return self._turn_message(self.turns[entry], hint)
        t, o = entry
        return self._result_message(self.turns[t]["observation"]["results"][o], hint)

    def _turn_message(self, turn: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": SRC_ROLE.get(turn["src"], turn["src"])}  # a role of its own: as spelled
        content = hint.get("content")
        if hint.get("refusal"):
            msg["refusal"] = turn["msg"]
            if content != "absent":
                msg["content"] = None if content == "null" else ""
        elif content != "absent":
            msg["content"] = turn["msg"]
        if "reason" in turn and hint.get("reason") != "parts":  # typed parts: the content (residual) holds it
            msg[hint.get("reason", "reasoning_content")] = turn["reason"]
        calls = iter(turn.get("tool_calls") or ())
        if "a" in hint:
            msg["tool_calls"] = [None if form is None else _call(next(calls), form) for form in hint["a"]]
        if "fc" in hint:
            call = next(calls)
            fc: dict[str, Any] = {"name": call["fn"]}
            if hint["fc"] != "-":
                fc["arguments"] = write_arguments(call["args"], hint["fc"])
            msg["function_call"] = fc
        return msg

    def _result_message(self, result: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
        role = hint.get("role", "tool")
        msg: dict[str, Any] = {"role": role}
        sid = result.get("source_call_id")
        if role == "tool" and sid is not None:
            msg["tool_call_id"] = sid
        if hint.get("name"):
            msg["name"] = self.fn_of[sid]
        if hint.get("content") != "absent":
            msg["content"] = result.get("content")
        return msg


def _call(call: dict[str, Any], form: str) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": call["fn"]}
    if form[0] != "-":
        fn["arguments"] = write_arguments(call["args"], form[0])
    out: dict[str, Any] = {} if "g" in form else {"id": call["tcid"]}
    if "n" not in form:
        out["type"] = "function"
    out["function"] = fn
    return out


def _nest(tokens: list[str], value: Any) -> Any:
    """``value`` at ``tokens`` in new containers: an array for the index ``0``, an object for a key
    (``/candidates/0/content`` → ``{"candidates": [{"content": value}]}``)."""
    for token in reversed(tokens):
        value = [value] if token == "0" else {token: value}
    return value


def _put(node: Any, tokens: list[str], value: Any) -> Any:
    """Set ``value`` at ``tokens`` under ``node`` (objects made on the way; an array index one past the end
    appends); returns the root, which is ``value`` itself for the empty pointer."""
    if not tokens:
        return value
    root = node
    for depth, token in enumerate(tokens):
        last = depth == len(tokens) - 1
        if isinstance(node, list):
            i = int(token)
            if i == len(node):
                node.append(value if last else {})
            elif last:
                node[i] = value
            node = node[i]
        else:
            if last:
                node[token] = value
            else:
                node = node.setdefault(token, {})
    return root


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """JSON Lines, one conversation record per document (``record``'s options: ``carry_residual``); what the
    records of documents from other formats cannot hold is counted once per kind for the whole file."""
    lines, fresh = [], []
    for story in stories:
        with for_document(story["session"]):  # the loss report names the document of each loss
            rec, is_fresh = _record(story, **options)
        lines.append(dumps(rec) + b"\n")
        if is_fresh:
            fresh.append(story)
    report_unwritten(fresh)
    return b"".join(lines).decode("utf-8")
