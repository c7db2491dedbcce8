"""OpenAI Responses API items: each item of an ``input`` / ``output`` list is one ``Message``.

``message`` (``role``, ``content``: a string or parts ``input_text`` / ``output_text`` / ``refusal``; images
``input_image`` / ``input_file`` as media), ``reasoning`` (``summary`` of ``summary_text`` parts, ``content`` of
``reasoning_text`` parts, ``encrypted_content``), ``function_call`` (``call_id``, ``name``, ``arguments``: the JSON
string as written), ``function_call_output`` (``call_id``, ``output``), ``custom_tool_call`` (``input``: the raw
string) and its ``_output``, ``local_shell_call`` (``action`` as the arguments, name ``local_shell``) and its
``_output``, ``web_search_call`` (``action`` as the arguments, name ``web_search``; its results are not in the
item). The items of one answer (reasoning, message, calls) are one turn: every assistant-side item
``continues`` the previous one. Other keys (``id``, ``status``, ``annotations``…) are leftovers.

>>> m = read({"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{\\"path\\": \\".\\"}"})
>>> m.role, m.calls[0].id, m.calls[0].arguments
('assistant', 'call_1', '{"path": "."}')
>>> read({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan."}],
...       "encrypted_content": "gAAA"}).reasoning
[Reasoning(text='Plan.', signature=None, encrypted='gAAA')]
"""

from __future__ import annotations

from typing import Any

from ...pointer import join
from .model import Call, Message, Reasoning, Result, strip

__all__ = ["ITEM_TYPES", "SHAPE", "is_item", "read"]

SHAPE = "responses"
#: Call items: their type → (the key of the arguments, the call's name when the item has none, its kind).
CALLS = {
    "function_call": ("arguments", None, "function"),
    "custom_tool_call": ("input", None, "custom"),
    "local_shell_call": ("action", "local_shell", "local_shell"),
    "web_search_call": ("action", "web_search", "web_search"),
}
#: Output items: their type → the kind of call they answer.
OUTPUTS = {
    "function_call_output": "function",
    "custom_tool_call_output": "custom",
    "local_shell_call_output": "local_shell",
}
ITEM_TYPES = frozenset({"message", "reasoning", *CALLS, *OUTPUTS})
TEXT_PARTS = ("input_text", "output_text")
MEDIA_PARTS = ("input_image", "input_file", "input_audio")
PART_TYPES = frozenset({*TEXT_PARTS, *MEDIA_PARTS, "refusal"})


def is_item(value: Any) -> bool:
    """A Responses item: an object whose ``type`` is one of ``ITEM_TYPES``; a ``message`` also needs a role and
    a string content or parts of the Responses types (an Anthropic response is ``"type": "message"`` too, with
    ``text`` blocks)."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind == "message":
        content = value.get("content")
        if not isinstance(value.get("role"), str) or "stop_reason" in value:
            return False
        return isinstance(content, str) or (
            isinstance(content, list)
            and all(isinstance(p, dict) and _is_str_in(p.get("type"), PART_TYPES) for p in content)
        )
    return _is_str_in(kind, ITEM_TYPES)


def _is_str_in(value: Any, table: frozenset[str]) -> bool:
    # The type of an item or part is data: a list or object there is unhashable, so only a string is looked up.
    return isinstance(value, str) and value in table


def read(value: dict[str, Any]) -> Message:
    """One Responses item → ``Message``."""
    kind = value["type"]
    if kind == "message":
        m = _message(value)
    elif kind == "reasoning":
        m = _reasoning(value)
    elif kind in CALLS:
        m = _call(value, kind)
    else:
        m = _output(value)
    m.skeleton = strip(value, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _leave_rest(m: Message, value: dict, used: tuple[str, ...]) -> None:
    for key, val in value.items():
        if key not in used and key != "type":
            m.leave(join("", key), val)


def _message(value: dict) -> Message:
    m = Message(SHAPE, value["role"], continues=value["role"] == "assistant")
    content = value.get("content")
    if isinstance(content, str):
        m.add_text("/content", content)
    elif isinstance(content, list):
        for p, part in enumerate(content):
            ptr = f"/content/{p}"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in TEXT_PARTS and isinstance(part.get("text"), str):
                m.add_text(join(ptr, "text"), part["text"])
                for key, val in part.items():
                    if key not in ("type", "text"):
                        m.leave(join(ptr, key), val)
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                m.add_text(join(ptr, "refusal"), part["refusal"])
                for key, val in part.items():
                    if key not in ("type", "refusal"):
                        m.leave(join(ptr, key), val)
            elif kind in MEDIA_PARTS:
                m.add_media(ptr, part)
            else:
                m.leave(ptr, part)
    elif "content" in value:
        m.leave("/content", content)
    _leave_rest(m, value, ("role", "content"))
    return m


def _reasoning(value: dict) -> Message:
    m = Message(SHAPE, "assistant", continues=True)
    used = []
    for key in ("summary", "content"):
        parts = value.get(key)
        if not isinstance(parts, list):
            continue
        used.append(key)
        for p, part in enumerate(parts):
            ptr = f"/{key}/{p}"
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                m.add_reasoning(Reasoning(part["text"]), text=join(ptr, "text"))
                for k, val in part.items():
                    if k not in ("type", "text"):
                        m.leave(join(ptr, k), val)
            else:
                m.leave(ptr, part)
    enc = value.get("encrypted_content")
    if isinstance(enc, str):
        used.append("encrypted_content")
        if m.reasoning and m.reasoning[-1].encrypted is None:
            m.reasoning[-1].encrypted = enc
            m.slots.append(("/encrypted_content", ("reasoning", len(m.reasoning) - 1, "encrypted")))
        else:
            m.add_reasoning(Reasoning(None, encrypted=enc), encrypted="/encrypted_content")
    _leave_rest(m, value, tuple(used))
    return m


def _call(value: dict, kind: str) -> Message:
    m = Message(SHAPE, "assistant", continues=True)
    args_key, fixed_name, call_kind = CALLS[kind]
    name = value.get("name") if fixed_name is None else fixed_name
    if not (isinstance(name, str) and name):
        m.leave("", value)  # a call without a name: kept whole
        return m
    pointers: dict[str, str] = {}
    if fixed_name is None:
        pointers["name"] = "/name"
    id_key = (
        "call_id" if isinstance(value.get("call_id"), str) else ("id" if isinstance(value.get("id"), str) else None)
    )
    if id_key is not None:
        pointers["id"] = join("", id_key)
    if args_key in value:
        pointers["arguments"] = join("", args_key)
    m.add_call(Call(name, value.get(args_key, {}), value.get(id_key) if id_key else None, call_kind), **pointers)
    _leave_rest(m, value, tuple(k for k in ("name", id_key, args_key) if k and join("", k) in pointers.values()))
    return m


def _output(value: dict) -> Message:
    m = Message(SHAPE, "tool")
    pointers: dict[str, str] = {}
    cid = value.get("call_id") if isinstance(value.get("call_id"), str) else None
    if cid is not None:
        pointers["call_id"] = "/call_id"
    if "output" in value:
        pointers["content"] = "/output"
    m.add_result(Result(value.get("output", ""), cid), **pointers)
    _leave_rest(m, value, tuple(k for k in ("call_id", "output") if join("", k) in pointers.values()))
    return m
