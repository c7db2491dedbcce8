"""LLaMA-Factory's typed content parts (its v1 data format): ``{"type": "text" | "reasoning" | "tool_call",
"value": …}`` in place of a message's text, reasoning and tool calls.

``read_parts(content)`` gives what the parts hold, so the chat reader maps them like any message: the text
parts joined to ``msg``, the reasoning parts to ``reason``, each ``tool_call`` part (a JSON ``{"name",
"arguments"}``) to a tool call. The content itself is kept as residual, so the same record comes back exactly.
Content that is not only such parts (an image, a part that does not parse) is left as it is.

>>> read_parts([{"type": "reasoning", "value": "Look it up."},
...             {"type": "tool_call", "value": '{"name": "get_movie", "arguments": {"title": "Up"}}'}])
('', 'Look it up.', [('get_movie', {'title': 'Up'})])
>>> read_parts([{"type": "text", "text": "hi"}]) is None
True
"""

from __future__ import annotations

from typing import Any

from ...jsonio import try_loads

__all__ = ["PART_TYPES", "read_parts"]

PART_TYPES = ("text", "reasoning", "tool_call")


def read_parts(content: Any) -> tuple[str, str | None, list[tuple[str, Any]]] | None:
    """``(text, reasoning or None, [(name, arguments)])`` of typed parts, or None when ``content`` is not them."""
    if not (isinstance(content, list) and content):
        return None
    texts: list[str] = []
    reasons: list[str] = []
    calls: list[tuple[str, Any]] = []
    for part in content:
        if not (isinstance(part, dict) and set(part) == {"type", "value"} and isinstance(part["value"], str)):
            return None
        kind = part["type"]
        if kind == "text":
            texts.append(part["value"])
        elif kind == "reasoning":
            reasons.append(part["value"])
        elif kind == "tool_call":
            ok, call = try_loads(part["value"])
            if not (ok and isinstance(call, dict) and isinstance(call.get("name"), str) and call["name"]):
                return None
            calls.append((call["name"], call.get("arguments", {})))
        else:
            return None
    return "".join(texts), ("\n".join(reasons) if reasons else None), calls
