"""History copies (RFC-0009): each row resends the conversation so far; a message is a copy of the previous
row's when its compared fields are equal. The reader compares them by key; the writer rebuilds a copy from
the same fields (``messages.project``).

>>> same_copy(history_key({"role": "user", "content": "hi"}), history_key({"role": "user", "content": "hi", "x": 1}))
True
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["COMPARED", "COMPARED_KEYS", "history_key", "same_copy"]

COMPARED = ("role", "content", "tool_calls", "tool_call_id")  # in the order the writer writes them
COMPARED_KEYS = frozenset(COMPARED)


def history_key(msg: dict) -> tuple:
    """What makes a message a history copy: role, content, tool calls (id, name, arguments), tool_call_id."""
    calls = msg.get("tool_calls")
    call_key: list = []
    if isinstance(calls, list):
        for c in calls:
            if isinstance(c, dict):
                fn = c.get("function") if isinstance(c.get("function"), dict) else {}
                call_key.append((c.get("id") or None, fn.get("name"), fn.get("arguments")))
            else:
                call_key.append(c)
    content = msg.get("content")
    return (msg.get("role"), None if content == "" else content, call_key, msg.get("tool_call_id") or None)


def _parsed_args(args: Any) -> Any:
    if type(args) is str:
        try:
            return ("json", orjson.loads(args))
        except orjson.JSONDecodeError:
            return args
    return ("json", args)


def same_copy(a: tuple, b: tuple) -> bool:
    """Keys equal, or equal once arguments are compared as JSON (a client may re-serialise them)."""
    if a == b:
        return True
    if a[0] != b[0] or a[1] != b[1] or a[3] != b[3] or len(a[2]) != len(b[2]):
        return False
    for x, y in zip(a[2], b[2], strict=True):
        if not (isinstance(x, tuple) and isinstance(y, tuple)):
            if x != y:
                return False
        elif x[:2] != y[:2] or _parsed_args(x[2]) != _parsed_args(y[2]):
            return False
    return True
