"""Putting and removing values at RFC 6901 pointers inside a JSON tree (residual back in place, envelope
fields back into a document).

>>> doc = {"steps": [{"step_id": 1}]}
>>> put(doc, "/steps/0/vendor", {"a": 1})
>>> doc
{'steps': [{'step_id': 1, 'vendor': {'a': 1}}]}
>>> remove(doc, "/steps/0/step_id")
>>> doc
{'steps': [{'vendor': {'a': 1}}]}
"""

from __future__ import annotations

from typing import Any

from ...pointer import parse

__all__ = ["put", "remove"]


def _child(node: Any, token: str, pointer: str) -> Any:
    if isinstance(node, list):
        return node[int(token)]
    if isinstance(node, dict):
        return node.setdefault(token, {})
    raise KeyError(pointer)


def put(doc: Any, pointer: str, value: Any) -> None:
    """Set ``value`` at ``pointer``, creating missing objects on the way; ``KeyError``/``ValueError``/
    ``IndexError`` when the path crosses a scalar or a missing array element."""
    tokens = parse(pointer)
    if not tokens:
        raise KeyError(pointer)
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token, pointer)
    last = tokens[-1]
    if isinstance(node, list):
        index = int(last)
        if index == len(node):
            node.append(value)
        else:
            node[index] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise KeyError(pointer)


def remove(doc: Any, pointer: str) -> None:
    """Delete the object member at ``pointer`` (a missing one is fine: there is nothing to remove)."""
    tokens = parse(pointer)
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, list):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return
    if tokens and isinstance(node, dict):
        node.pop(tokens[-1], None)
