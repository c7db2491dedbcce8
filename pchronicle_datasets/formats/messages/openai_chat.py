"""OpenAI Chat Completions messages: ``{"role", "content", "tool_calls": [{"id", "type": "function",
"function": {"name", "arguments"}}], …}`` and ``{"role": "tool", "tool_call_id", "content"}``.

The ``chat`` format reads this shape itself, with export hints of its own (its mapping table is
``docs/formats/chat.md``). ``read`` is the shared model's reading of it, for harness readers whose logs hold
such messages: ``content`` (a string, or ``text`` parts; ``image_url`` / ``input_audio`` parts as media),
``reasoning_content`` (else ``reasoning``, ``thinking``), ``tool_calls`` (``arguments`` as the JSON string
written), and a ``tool`` message's ``tool_call_id`` and ``content`` as a result. How an ``arguments`` JSON
string is spelled lives here too, so that the same source is written back byte for byte (Responses
``function_call.arguments`` is the same kind of string).

>>> m = read({"role": "assistant", "content": None, "tool_calls": [
...     {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]})
>>> m.calls, m.leftovers
([Call(name='ls', arguments='{}', id='c1', kind='function')], {'/content': None})

>>> read_arguments('{"path": "."}')
({'path': '.'}, 's')
>>> read_arguments('{"path":"."}')
({'path': '.'}, 'c')
>>> write_arguments({"path": "."}, "c")
'{"path":"."}'
>>> read_arguments("ls -la")  # not JSON: kept as the string
('ls -la', 'r')
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import FormatError
from ...jsonio import loads
from ...pointer import join
from .model import Call, Message, Reasoning, Result, strip

__all__ = ["SHAPE", "is_message", "read", "read_arguments", "write_arguments"]

SHAPE = "openai"


def is_message(value: Any) -> bool:
    """An OpenAI-style message: an object with a string ``role``."""
    return isinstance(value, dict) and isinstance(value.get("role"), str)


REASON_KEYS = ("reasoning_content", "reasoning", "thinking")
MEDIA_PARTS = ("image_url", "input_audio", "file")


def read(value: dict[str, Any]) -> Message:
    """One OpenAI Chat Completions message → ``Message``."""
    role = value["role"]
    m = Message(SHAPE, "tool" if role in ("tool", "function") else role)
    used = {"role"}
    content = value.get("content")
    if m.role == "tool":
        pointers = {}
        if "content" in value:
            pointers["content"] = "/content"
            used.add("content")
        cid = value.get("tool_call_id") if isinstance(value.get("tool_call_id"), str) else None
        if cid is not None:
            pointers["call_id"] = "/tool_call_id"
            used.add("tool_call_id")
        name = value.get("name") if isinstance(value.get("name"), str) else None
        if name is not None:
            pointers["name"] = "/name"
            used.add("name")
        m.add_result(Result(content if "content" in value else "", cid, name), **pointers)
    elif isinstance(content, str):
        m.add_text("/content", content)
        used.add("content")
    elif isinstance(content, list):
        used.add("content")
        for p, part in enumerate(content):
            ptr = f"/content/{p}"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                m.add_text(join(ptr, "text"), part["text"])
                for key, val in part.items():
                    if key not in ("type", "text"):
                        m.leave(join(ptr, key), val)
            elif kind in MEDIA_PARTS:
                m.add_media(ptr, part)
            else:
                m.leave(ptr, part)
    reason_key = next((k for k in REASON_KEYS if isinstance(value.get(k), str)), None)
    if reason_key is not None and m.role != "tool":
        m.add_reasoning(Reasoning(value[reason_key]), text=join("", reason_key))
        used.add(reason_key)
    calls = value.get("tool_calls")
    if isinstance(calls, list) and m.role != "tool":
        used.add("tool_calls")
        for c, call in enumerate(calls):
            ptr = f"/tool_calls/{c}"
            fn = call.get("function") if isinstance(call, dict) else None
            if not (isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]):
                m.leave(ptr, call)
                continue
            pointers = {"name": join(ptr, "function", "name")}
            cid = call.get("id") if isinstance(call.get("id"), str) else None
            if cid is not None:
                pointers["id"] = join(ptr, "id")
            if "arguments" in fn:
                pointers["arguments"] = join(ptr, "function", "arguments")
            m.add_call(Call(fn["name"], fn.get("arguments", "{}"), cid), **pointers)
            for key, val in call.items():
                if key not in ("function", "type") and join(ptr, key) not in pointers.values():
                    m.leave(join(ptr, key), val)
                elif key == "type" and val != "function":
                    m.leave(join(ptr, key), val)
            for key, val in fn.items():
                if key not in ("name", "arguments"):
                    m.leave(join(ptr, "function", key), val)
    for key, val in value.items():
        if key not in used:
            m.leave(join("", key), val)
    m.skeleton = strip(value, [p for p, _ in m.slots] + list(m.leftovers))
    return m


# The spellings of a JSON ``arguments`` string that are regenerated from the parsed value; the code is kept in
# the export hints. Python's json.dumps (OpenHands, litellm, most SDKs), the compact form (OpenAI's API) and
# json.dumps with ASCII escapes. A string in none of these forms is kept exactly as residual ("x").
_ENCODERS = {
    "s": json.JSONEncoder(ensure_ascii=False).encode,
    "c": json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode,
    "a": json.JSONEncoder().encode,
}


def read_arguments(value: Any) -> tuple[Any, str]:
    """``(args, form)`` for a source ``arguments`` value.

    A JSON string is decoded (as RFC-0009 does) and ``form`` says how to spell it again: ``s``, ``c``, ``a``
    (see ``_ENCODERS``) or ``x`` (no regenerated form matches: the caller keeps the string as residual). A
    string that is not JSON (or that Storyline cannot hold exactly, e.g. an integer beyond 64 bits) stays the
    string (``r``); a value that is not a string (an object, as some exporters write) is kept as it is (``o``).
    """
    if not isinstance(value, str):
        return value, "o"
    try:
        parsed = loads(value)
    except FormatError:
        return value, "r"
    for code, encode in _ENCODERS.items():
        if encode(parsed) == value:
            return parsed, code
    return parsed, "x"


def write_arguments(args: Any, form: str) -> Any:
    """The source ``arguments`` value for Storyline ``args`` and the form ``read_arguments`` gave."""
    if form in ("o", "r"):
        return args
    return _ENCODERS.get(form, _ENCODERS["s"])(args)
