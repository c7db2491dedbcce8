"""A source record as a pointer map: what the research-agent readers (``swe-agent``, ``mini-swe-agent``,
``openhands``, ``role-text``) keep so that their same-source writers give the record back as equal JSON.

A reader walks its source record and, for each value, either maps it to a Storyline pointer
(``Layout.map``: the value must come back exactly from the document, through an optional named inverse
transform, or it is kept as residual instead) or keeps it as residual under its source pointer
(``Layout.keep``). Several source values may map to one Storyline value (the duplicates research agents
write: OpenHands' ``message`` beside ``args.content``, SWE-agent's ``trajectory`` beside ``history``), so
nothing is written twice in the document and nothing is lost. The map goes to ``/meta/<format>`` as the
export hints (``hints``); ``rebuild`` gives the source record back from the residual and the map.

>>> lay = Layout("demo", "f.json", {"role": {"agent": "assistant"}})
>>> story = {"turns": [{"id": 1, "src": "agent", "msg": "hi"}]}
>>> lay.map("/m/0/role", "assistant", "/turns/0/src", "agent", "role"), lay.map("/m/0/text", "hi", "/turns/0/msg", "hi")
(True, True)
>>> lay.keep("/m/0/mask", True)
>>> story["meta"] = {"demo": lay.hints("object")}
>>> rebuild(story, lay.kept.fields, {"role": {"agent": "assistant"}}, "demo")
{'m': [{'mask': True, 'role': 'assistant', 'text': 'hi'}]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..pointer import get, join, parse
from .residual import Residual

__all__ = ["Layout", "LayoutError", "rebuild", "walkable"]

HINTS_VERSION = 1


class LayoutError(ValueError):
    """The document no longer fits its source layout (it was edited): write it from its Storyline fields."""


def _inverse(tables: Mapping[str, Any], name: str | None, value: Any) -> Any:
    if name is None:
        return value
    table = tables[name]
    if callable(table):
        return table(value)
    if not isinstance(value, str) or value not in table:
        raise LayoutError(f"no {name} for {value!r}")
    return table[value]


class Layout:
    """What one reader keeps of one source record: its residual and its pointer map."""

    def __init__(self, fmt: str, document_id: str | None, inverse: Mapping[str, Any] | None = None) -> None:
        self.fmt = fmt
        self.kept = Residual(fmt, document_id)
        self.inverse = dict(inverse or {})
        self.entries: list[list[str]] = []

    def keep(self, pointer: str, value: Any) -> None:
        """Keep a source value as residual under its source pointer."""
        self.kept.keep(pointer, value)

    def map(self, source: str, value: Any, target: str, mapped: Any, transform: str | None = None) -> bool:
        """Map the source value at ``source`` to the Storyline value ``mapped`` at ``target`` when the inverse
        ``transform`` gives the source value back exactly (same JSON type too); else keep it as residual.
        Returns whether it was mapped."""
        try:
            back = _inverse(self.inverse, transform, mapped)
        except (LayoutError, TypeError, ValueError):
            back = _MISSING
        if back is not _MISSING and _same(back, value):
            self.entries.append([source, target] if transform is None else [source, target, transform])
            return True
        self.keep(source, value)
        return False

    def rest(self, obj: dict[str, Any], base: str, used: set[str] | tuple[str, ...]) -> None:
        """Keep every key of ``obj`` (at ``base``) that the reader did not use; an empty object is kept whole
        (``rebuild`` makes containers only for the values inside them)."""
        if not obj:
            self.keep(base, obj)
        for key, value in obj.items():
            if key not in used:
                self.keep(join(base, key), value)

    def hints(self, root: str) -> dict[str, Any]:
        """``/meta/<format>``: the map, and whether the record is an ``"object"`` or an ``"array"``."""
        return {"version": HINTS_VERSION, "root": root, "map": self.entries}


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (``1 == 1.0 == True`` in Python, not in JSON)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def walkable(value: Any) -> bool:
    """Whether a reader may map values inside ``value`` one by one: an object none of whose keys looks like
    an array index (``rebuild`` would take it for an array), or any array. Else it is kept whole.

    >>> walkable({"a": 1}), walkable({"0": 1}), walkable([1])
    (True, False, True)
    """
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and not any(k.isdigit() for k in value)


def _order(pointer: str) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in parse(pointer))


def rebuild(story: Mapping[str, Any], fields: Mapping[str, Any], inverse: Mapping[str, Any], fmt: str) -> Any:
    """The source record of a document read by ``fmt``: its residual ``fields`` and the values its hints map
    (``/meta/<fmt>``). ``LayoutError`` when the document does not fit them any more (an edited document)."""
    hints = (story.get("meta") or {}).get(fmt) if isinstance(story.get("meta"), dict) else None
    if not (isinstance(hints, dict) and hints.get("version") == HINTS_VERSION and isinstance(hints.get("map"), list)):
        raise LayoutError(f"no {fmt} layout hints")
    values: list[tuple[str, Any]] = list(fields.items())
    for entry in hints["map"]:
        if not (isinstance(entry, list) and 2 <= len(entry) <= 3 and all(isinstance(e, str) for e in entry)):
            raise LayoutError("a layout entry is [source, target, transform?]")
        try:
            value = get(story, entry[1])
        except KeyError:
            raise LayoutError(f"the document has no {entry[1]}") from None
        try:
            values.append((entry[0], _inverse(inverse, entry[2] if len(entry) == 3 else None, value)))
        except (KeyError, TypeError, ValueError) as exc:
            raise LayoutError(str(exc)) from None
    root: Any = [] if hints.get("root") == "array" else {}
    try:
        for pointer, value in sorted(values, key=lambda pv: _order(pv[0])):
            _put(root, parse(pointer), value)
    except (ValueError, IndexError, TypeError) as exc:
        raise LayoutError(f"the residual does not fit the layout: {exc}") from None
    return root


def _put(node: Any, tokens: list[str], value: Any) -> None:
    if not tokens:
        raise ValueError("a layout pointer names a value inside the record")
    *path, last = tokens
    for i, token in enumerate(path):
        following = path[i + 1] if i + 1 < len(path) else last
        node = _child(node, token, [] if following.isdigit() else {})
    _set(node, last, value)


def _child(node: Any, token: str, empty: Any) -> Any:
    if isinstance(node, list):
        index = int(token)
        if index == len(node):
            node.append(empty)
        return node[index]
    return node.setdefault(token, empty)


def _set(node: Any, token: str, value: Any) -> None:
    if isinstance(node, list):
        index = int(token)
        if index == len(node):
            node.append(value)
        elif index < len(node):
            node[index] = value
        else:
            raise IndexError(f"index {index} past the end")
    else:
        node[token] = value
