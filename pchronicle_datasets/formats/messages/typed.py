"""Typed tool parts in an OpenAI-style message (what converted exports write, e.g. of Claude Code sessions):
``{"role", "content": [{"type": "text", "text"}, {"type": "tool_call", "tool_call_id", "name", "arguments"},
{"type": "tool_output", "text"}]}``; a ``tool`` message's ``tool_call_id`` names the call its outputs answer.

Each ``tool_call`` part is a call (``arguments`` as written: an object or a JSON string), each ``tool_output``
part a result (``text``, else ``output``/``content``), as is a ``tool_result`` part (``tool_result``: Azure AI
Evaluation's agent messages), ``text`` parts the text, ``reasoning``/``thinking`` parts (``text``) the reasoning.
Converters that write the parts beside OpenAI ``tool_calls`` (a Claude Code converter writes both) give each
call twice: the ``tool_calls`` entry is the call, and a part with the same id, name and arguments is read as
a copy of it (written back from the same call, never a second one). Other parts and keys are leftovers.

>>> m = read({"role": "assistant", "content": [{"type": "text", "text": "Run it."},
...     {"type": "tool_call", "tool_call_id": "c1", "name": "bash", "arguments": {"cmd": "ls"}}]})
>>> m.texts, m.calls[0].id, m.calls[0].arguments
(['Run it.'], 'c1', {'cmd': 'ls'})
>>> read({"role": "tool", "tool_call_id": "c1", "content": [{"type": "tool_output", "text": "a"}]}).results
[Result(content='a', call_id='c1', name=None, is_error=None)]
"""

from __future__ import annotations

from typing import Any

from ...pointer import join
from .model import Call, Message, Reasoning, Result, strip

__all__ = ["SHAPE", "is_message", "read"]

SHAPE = "typed"
TOOL_PARTS = ("tool_call", "tool_output", "tool_result")
#: The key of a result part's content, per part type, tried in this order.
OUTPUT_KEYS = {"tool_output": ("text", "output", "content"), "tool_result": ("tool_result", "content", "text")}
REASON_PARTS = ("reasoning", "thinking")


def _kind(part: Any) -> Any:
    return part.get("type") if isinstance(part, dict) else None


def is_message(value: Any) -> bool:
    """An OpenAI-style message whose content list holds a ``tool_call`` part (with a ``name``), a
    ``tool_output`` part, a ``tool_result`` part without Anthropic's ``tool_use_id`` or a ``reasoning`` /
    ``thinking`` part with a ``text``, every part typed and none of LLaMA-Factory's ``value`` parts."""
    if not (isinstance(value, dict) and isinstance(value.get("role"), str) and isinstance(value.get("content"), list)):
        return False
    parts = value["content"]
    if not all(isinstance(_kind(p), str) and "value" not in p for p in parts):
        return False
    return any(
        (_kind(p) == "tool_call" and isinstance(p.get("name"), str))
        or _kind(p) == "tool_output"
        or (_kind(p) == "tool_result" and "tool_use_id" not in p)  # Anthropic's has tool_use_id
        or (_kind(p) in REASON_PARTS and isinstance(p.get("text"), str))  # the converter's thinking parts
        for p in parts
    )


def read(value: dict[str, Any]) -> Message:
    role = value["role"]
    m = Message(SHAPE, role)
    owner = value.get("tool_call_id") if isinstance(value.get("tool_call_id"), str) else None
    owner_used = False
    listed = _listed_calls(m, value.get("tool_calls")) if "tool_calls" in value else {}
    for p, part in enumerate(value["content"]):
        ptr = f"/content/{p}"
        kind = _kind(part)
        used: set[str] = {"type"}
        if kind == "text" and isinstance(part.get("text"), str):
            m.add_text(join(ptr, "text"), part["text"])
            used.add("text")
        elif kind in REASON_PARTS and isinstance(part.get("text"), str):
            m.add_reasoning(Reasoning(part["text"]), text=join(ptr, "text"))
            used.add("text")
        elif kind == "tool_call" and _copy_of(m, ptr, part, listed):
            continue
        elif kind == "tool_call" and isinstance(part.get("name"), str) and part["name"]:
            id_key = next((k for k in ("tool_call_id", "id") if isinstance(part.get(k), str)), None)
            pointers = {"name": join(ptr, "name")}
            if id_key:
                pointers["id"] = join(ptr, id_key)
            if "arguments" in part:
                pointers["arguments"] = join(ptr, "arguments")
            m.add_call(Call(part["name"], part.get("arguments", {}), part.get(id_key) if id_key else None), **pointers)
            used |= {"name", "arguments", id_key or "name"}
        elif kind in OUTPUT_KEYS:
            key = next((k for k in OUTPUT_KEYS[kind] if k in part), None)
            cid = part.get("tool_call_id") if isinstance(part.get("tool_call_id"), str) else None
            pointers = {}
            if key:
                pointers["content"] = join(ptr, key)
                used.add(key)
            if cid is not None:
                pointers["call_id"] = join(ptr, "tool_call_id")
                used.add("tool_call_id")
            elif owner is not None and not owner_used:
                pointers["call_id"] = "/tool_call_id"
                cid, owner_used = owner, True
            m.add_result(Result(part.get(key, "") if key else "", cid), **pointers)
        else:
            m.leave(ptr, part)
            continue
        for k, val in part.items():
            if k not in used:
                m.leave(join(ptr, k), val)
    for key, val in value.items():
        if key not in ("role", "content", "tool_calls") and not (key == "tool_call_id" and owner_used):
            m.leave(join("", key), val)
    m.skeleton = strip(value, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _listed_calls(m: Message, calls: Any) -> dict[str, int]:
    """Read OpenAI ``tool_calls`` beside the parts; returns call id → index in ``m.calls``."""
    if not isinstance(calls, list):
        m.leave("/tool_calls", calls)
        return {}
    out: dict[str, int] = {}
    for c, call in enumerate(calls):
        ptr = f"/tool_calls/{c}"
        fn = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"] and set(call) <= CALL_KEYS):
            m.leave(ptr, call)
            continue
        if call.get("type", "function") != "function" or not set(fn) <= {"name", "arguments"}:
            m.leave(ptr, call)
            continue
        pointers = {"name": join(ptr, "function", "name")}
        cid = call.get("id") if isinstance(call.get("id"), str) else None
        if cid is not None:
            pointers["id"] = join(ptr, "id")
        elif "id" in call:
            m.leave(join(ptr, "id"), call["id"])
        if "arguments" in fn:
            pointers["arguments"] = join(ptr, "function", "arguments")
        if "type" in call:
            m.slots.append((join(ptr, "type"), ("const", "function")))
        if cid is not None:
            out[cid] = len(m.calls)
        m.add_call(Call(fn["name"], fn.get("arguments", {}), cid), **pointers)
    return out


CALL_KEYS = frozenset({"id", "type", "function"})


def _copy_of(m: Message, ptr: str, part: dict, listed: dict[str, int]) -> bool:
    """Whether a ``tool_call`` part repeats a listed call exactly (same id, name and arguments, no other key):
    its values then point at that call's."""
    cid = part.get("tool_call_id")
    c = listed.get(cid) if isinstance(cid, str) else None
    if c is None or not set(part) <= {"type", "tool_call_id", "name", "arguments"}:
        return False
    call = m.calls[c]
    if part.get("name") != call.name or part.get("arguments", {}) != call.arguments:
        return False
    m.slots.append((join(ptr, "tool_call_id"), ("calls", c, "id")))
    m.slots.append((join(ptr, "name"), ("calls", c, "name")))
    if "arguments" in part:
        m.slots.append((join(ptr, "arguments"), ("calls", c, "arguments")))
    return True
