"""Gemini ``Content``: ``{"role": "user" | "model" | "function", "parts": [...]}`` (the API's contents, Gemini
CLI's chat history and checkpoints).

Parts: ``text`` (with ``"thought": true`` it is reasoning), ``thoughtSignature`` (on any part: the signature of
the reasoning, kept with the part's reasoning or call), ``functionCall`` (``id``?, ``name``, ``args``),
``functionResponse`` (``id``?, ``name``, ``response``), ``inlineData`` / ``fileData`` (media). Results without an id
are linked by name and order (the builder). Other parts (``executableCode``, ``codeExecutionResult``…) and keys
are leftovers.

>>> m = read({"role": "model", "parts": [{"text": "Plan.", "thought": True},
...     {"functionCall": {"name": "ls", "args": {"path": "."}}, "thoughtSignature": "c2ln"}]})
>>> m.role, m.reasoning[0].text, m.calls[0].name, m.calls[0].id
('assistant', 'Plan.', 'ls', None)
>>> read({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a"}}}]}).results
[Result(content={'output': 'a'}, call_id=None, name='ls', is_error=None)]
"""

from __future__ import annotations

from typing import Any

from ...pointer import join
from .model import Call, Message, Reasoning, Result, strip

__all__ = ["PART_KEYS", "ROLES", "SHAPE", "is_content", "read"]

SHAPE = "gemini"
ROLES = {"user": "user", "model": "assistant", "function": "tool", "system": "system"}
#: The keys that make a part what it is (a part holds one of them).
PART_KEYS = frozenset(
    {"text", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode", "codeExecutionResult"}
)


def is_content(value: Any) -> bool:
    """A Gemini Content: a ``parts`` array of objects, each with one of ``PART_KEYS``, a Gemini role (or none)
    and no ``content`` key."""
    if not isinstance(value, dict) or "content" in value or not isinstance(value.get("parts"), list):
        return False
    role = value.get("role")
    if role is not None and not (isinstance(role, str) and role in ROLES):  # a list role is unhashable
        return False
    return all(isinstance(p, dict) and not PART_KEYS.isdisjoint(p) for p in value["parts"])


def read(value: dict[str, Any]) -> Message:
    """One Gemini Content → ``Message`` (role ``model`` → ``assistant``; no role → ``user``)."""
    role = value.get("role")
    m = Message(SHAPE, ROLES.get(role, "user") if isinstance(role, str) or role is None else "user")
    for key, val in value.items():
        if key == "parts":
            for p, part in enumerate(val):
                _part(m, f"/parts/{p}", part)
        elif key != "role":
            m.leave(join("", key), val)
    m.skeleton = strip(value, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _part(m: Message, ptr: str, part: dict) -> None:
    sig = part.get("thoughtSignature") if isinstance(part.get("thoughtSignature"), str) else None
    used = {"thoughtSignature"} if sig is not None else set()
    fc, fr = part.get("functionCall"), part.get("functionResponse")
    if isinstance(part.get("text"), str) and part.get("thought") is True:
        pointers = {"text": join(ptr, "text")}
        if sig is not None:
            pointers["signature"] = join(ptr, "thoughtSignature")
        m.add_reasoning(Reasoning(part["text"], sig), **pointers)
        used |= {"text", "thought"}
        m.slots.append((join(ptr, "thought"), ("const", True)))
    elif isinstance(part.get("text"), str):
        m.add_text(join(ptr, "text"), part["text"])
        used.add("text")
        if sig is not None:  # a signature on an answer's text: opaque reasoning state
            m.add_reasoning(Reasoning(None, sig), signature=join(ptr, "thoughtSignature"))
    elif isinstance(fc, dict) and isinstance(fc.get("name"), str) and fc["name"]:
        cptr = join(ptr, "functionCall")
        if sig is not None:  # the signature of the reasoning that led to this call
            m.add_reasoning(Reasoning(None, sig), signature=join(ptr, "thoughtSignature"))
        pointers = {"name": join(cptr, "name")}
        cid = fc.get("id") if isinstance(fc.get("id"), str) else None
        if cid is not None:
            pointers["id"] = join(cptr, "id")
        if "args" in fc:
            pointers["arguments"] = join(cptr, "args")
        m.add_call(Call(fc["name"], fc.get("args", {}), cid), **pointers)
        for key, val in fc.items():
            if join(cptr, key) not in pointers.values():
                m.leave(join(cptr, key), val)
        used.add("functionCall")
    elif isinstance(fr, dict) and isinstance(fr.get("name"), str):
        rptr = join(ptr, "functionResponse")
        pointers = {"name": join(rptr, "name")}
        cid = fr.get("id") if isinstance(fr.get("id"), str) else None
        if cid is not None:
            pointers["call_id"] = join(rptr, "id")
        if "response" in fr:
            pointers["content"] = join(rptr, "response")
        m.add_result(Result(fr.get("response", ""), cid, fr["name"]), **pointers)
        for key, val in fr.items():
            if join(rptr, key) not in pointers.values():
                m.leave(join(rptr, key), val)
        used.add("functionResponse")
    elif "inlineData" in part or "fileData" in part:
        m.add_media(ptr, part)
        return
    else:
        m.leave(ptr, part)
        return
    for key, val in part.items():
        if key not in used:
            m.leave(join(ptr, key), val)
