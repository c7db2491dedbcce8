"""Anthropic Messages: ``{"role": "user" | "assistant", "content": str | [blocks]}`` in a request, and the
response object (``{"type": "message", "role": "assistant", "content": [...], "stop_reason", "usage", …}``).

Blocks: ``text``, ``thinking`` (+ ``signature``), ``redacted_thinking`` (``data``), ``tool_use`` /
``server_tool_use`` (``id``, ``name``, ``input``), ``tool_result`` (``tool_use_id``, ``content``: a string or
blocks, ``is_error``), ``image`` and ``document`` (kept as media). Any other block, and every key a block has
beside those (``cache_control``, ``citations``), is a leftover under its pointer. ``docs/formats/messages.md``
is the mapping table.

>>> m = read({"role": "assistant", "content": [
...     {"type": "thinking", "thinking": "Look.", "signature": "sig"},
...     {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}}]})
>>> m.role, m.reasoning[0].signature, m.calls[0].name, m.calls[0].arguments
('assistant', 'sig', 'ls', {'path': '.'})
>>> read({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}).results
[Result(content='a.txt', call_id='toolu_1', name=None, is_error=None)]
"""

from __future__ import annotations

from typing import Any

from ...pointer import join
from .model import Call, Message, Reasoning, Result, strip

__all__ = ["BLOCK_TYPES", "SHAPE", "is_message", "read", "read_system"]

SHAPE = "anthropic"
#: Block types that only Anthropic's Messages API writes (a ``text``-only list is also an OpenAI content list).
OWN_BLOCKS = frozenset(
    {"thinking", "redacted_thinking", "tool_use", "server_tool_use", "tool_result", "image", "document"}
)
BLOCK_TYPES = OWN_BLOCKS | {"text", "web_search_tool_result", "search_result", "container_upload"}
#: Keys of a response object beside ``role`` and ``content``: ``usage`` is mapped, the others are leftovers.
RESPONSE_KEYS = ("id", "type", "model", "stop_reason", "stop_sequence", "usage", "container")


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, dict) else None


def is_message(value: Any) -> bool:
    """An Anthropic message: a ``user``/``assistant`` role and a list of typed blocks, one of them a kind only
    Anthropic writes (``tool_use``, ``tool_result``, ``thinking``, an ``image`` with a ``source``…), or a
    response object (``"type": "message"``)."""
    if not (isinstance(value, dict) and value.get("role") in ("user", "assistant")):
        return False
    content = value.get("content")
    if not isinstance(content, list):
        return value.get("type") == "message" and isinstance(content, str)
    kinds = [_block_type(b) for b in content]
    if not all(isinstance(k, str) for k in kinds):
        return False
    if value.get("type") == "message":
        return True
    own = [k for k in kinds if k in OWN_BLOCKS]
    if not own:
        return False
    # An OpenAI content list may hold "image_url" parts but never "image" with a "source".
    return any(k != "image" or "source" in b for k, b in zip(kinds, content, strict=True))


def read(value: dict[str, Any]) -> Message:
    """One Anthropic message (request or response) → ``Message``."""
    m = Message(SHAPE, value["role"])
    for key, val in value.items():
        if key == "role":
            continue
        if key == "content":
            _content(m, val)
        elif key == "usage":
            m.set_usage("/usage", val)
        else:
            m.leave(join("", key), val)
    m.skeleton = strip(value, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _content(m: Message, content: Any) -> None:
    if isinstance(content, str):
        m.add_text("/content", content)
        return
    if not isinstance(content, list):
        m.leave("/content", content)
        return
    for b, block in enumerate(content):
        _block(m, f"/content/{b}", block)


def _rest(m: Message, ptr: str, block: dict) -> None:
    """Every key of a mapped block beside ``type`` and the values it gave is a leftover."""
    used = {p for p, _ in m.slots}
    for key, val in block.items():
        if key != "type" and join(ptr, key) not in used:
            m.leave(join(ptr, key), val)


def _block(m: Message, ptr: str, block: Any) -> None:
    kind = _block_type(block)
    if kind == "text" and isinstance(block.get("text"), str):
        m.add_text(join(ptr, "text"), block["text"])
        _rest(m, ptr, block)
    elif kind == "thinking" and isinstance(block.get("thinking"), str):
        pointers = {"text": join(ptr, "thinking")}
        sig = block.get("signature")
        if isinstance(sig, str):
            pointers["signature"] = join(ptr, "signature")
        m.add_reasoning(Reasoning(block["thinking"], sig if isinstance(sig, str) else None), **pointers)
        _rest(m, ptr, block)
    elif kind == "redacted_thinking" and isinstance(block.get("data"), str):
        m.add_reasoning(Reasoning(None, encrypted=block["data"]), encrypted=join(ptr, "data"))
        _rest(m, ptr, block)
    elif kind in ("tool_use", "server_tool_use") and isinstance(block.get("name"), str) and block["name"]:
        pointers = {"name": join(ptr, "name")}
        cid = block.get("id") if isinstance(block.get("id"), str) else None
        if cid is not None:
            pointers["id"] = join(ptr, "id")
        if "input" in block:
            pointers["arguments"] = join(ptr, "input")
        call = Call(block["name"], block.get("input", {}), cid, "function" if kind == "tool_use" else "server")
        m.add_call(call, **pointers)
        _rest(m, ptr, block)
    elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
        pointers = {"call_id": join(ptr, "tool_use_id")}
        if "content" in block:
            pointers["content"] = join(ptr, "content")
        err = block.get("is_error")
        if isinstance(err, bool):
            pointers["is_error"] = join(ptr, "is_error")
        content = block.get("content", "")
        m.add_result(Result(content, block["tool_use_id"], None, err if isinstance(err, bool) else None), **pointers)
        _rest(m, ptr, block)
    elif kind in ("image", "document"):
        m.add_media(ptr, block)
    else:
        m.leave(ptr, block)


def read_system(value: Any) -> Message:
    """A request's top-level ``system`` (a string or text blocks) → a ``system`` Message whose pointers are
    relative to the value itself (``""``, ``/0/text``).

    >>> read_system([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]).leftovers
    {'/0/cache_control': {'type': 'ephemeral'}}
    """
    m = Message(SHAPE, "system")
    _content(m, value)
    m.slots = [(_unwrap(p), a) for p, a in m.slots]
    m.leftovers = {_unwrap(p): v for p, v in m.leftovers.items()}
    m.skeleton = strip(value, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _unwrap(pointer: str) -> str:
    return pointer[len("/content") :]
