"""The neutral message: what one provider message holds, whatever its shape.

A shape module (``anthropic``, ``responses``, ``gemini``, ``typed``, ``openai_chat``) reads one source message into
a ``Message``; ``builder.TurnBuilder`` places it in Storyline turns. Besides its content, a ``Message`` says where
every mapped value sat in the source (``slots``: relative source pointer → neutral address) and keeps the
source message with those values and the leftovers taken out (``skeleton``), so a writer can put the same message
back together from the Storyline document: ``rebuild(skeleton, values)``.

>>> m = Message("anthropic", "assistant")
>>> m.add_text("/content/0/text", "hi")
>>> m.slots, m.texts
([('/content/0/text', ('texts', 0))], ['hi'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...pointer import parse

__all__ = ["CONTENT_ROOTS", "Call", "Message", "Reasoning", "Result", "rebuild", "strip"]


@dataclass
class Call:
    """A tool call: ``arguments`` is the JSON value or string the source wrote (never re-encoded); ``kind`` is
    ``function`` or the provider's own kind (``custom``, ``local_shell``, ``web_search``, ``server``)."""

    name: str
    arguments: Any
    id: str | None = None
    kind: str = "function"


@dataclass
class Result:
    """A tool result: ``call_id`` is None where the shape has no id (Gemini without ``id``): the builder then
    links it by ``name`` and order. ``content`` is the value as written (a string, blocks, an object)."""

    content: Any
    call_id: str | None = None
    name: str | None = None
    is_error: bool | None = None


@dataclass
class Reasoning:
    """A piece of reasoning: its text (None when only an opaque payload exists), a ``signature`` (Anthropic
    ``thinking.signature``, Gemini ``thoughtSignature``) and an ``encrypted`` payload (Responses
    ``encrypted_content``, Anthropic ``redacted_thinking.data``)."""

    text: str | None = None
    signature: str | None = None
    encrypted: str | None = None


@dataclass
class Message:
    """One provider message in neutral form.

    ``role``: ``system``, ``developer``, ``user``, ``assistant`` or ``tool`` (a message that only carries
    results), or a role of the source's own. ``texts``: the text pieces in order. ``media``: image and binary
    parts as written (by reference: the builder keeps them beside the turn, never in its text). ``usage``: the
    provider's usage object. ``leftovers``: relative pointer → value of everything the mapping does not use
    (the reader keeps them as residual). ``content_keys``: relative pointers of the content containers, for
    "all of it fell into residual" checks. ``continues``: the message belongs to the same turn as the previous
    one of the same role (Responses items: reasoning, message and calls of one answer are separate items)."""

    shape: str
    role: str
    texts: list[str] = field(default_factory=list)
    reasoning: list[Reasoning] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    media: list[Any] = field(default_factory=list)
    usage: Any = None
    leftovers: dict[str, Any] = field(default_factory=dict)
    slots: list[tuple[str, tuple]] = field(default_factory=list)
    skeleton: Any = None
    continues: bool = False

    # -- what readers call while reading (each records its slot) --------------------------------------------

    def add_text(self, pointer: str, text: str) -> None:
        self.slots.append((pointer, ("texts", len(self.texts))))
        self.texts.append(text)

    def add_reasoning(self, reasoning: Reasoning, **pointers: str) -> None:
        """``pointers``: ``text=``, ``signature=``, ``encrypted=`` source pointers of the values given."""
        r = len(self.reasoning)
        for key, pointer in pointers.items():
            self.slots.append((pointer, ("reasoning", r, key)))
        self.reasoning.append(reasoning)

    def add_call(self, call: Call, **pointers: str) -> None:
        """``pointers``: ``name=``, ``arguments=``, ``id=``."""
        c = len(self.calls)
        for key, pointer in pointers.items():
            self.slots.append((pointer, ("calls", c, key)))
        self.calls.append(call)

    def add_result(self, result: Result, **pointers: str) -> None:
        """``pointers``: ``content=``, ``call_id=``, ``name=``, ``is_error=``."""
        o = len(self.results)
        for key, pointer in pointers.items():
            self.slots.append((pointer, ("results", o, key)))
        self.results.append(result)

    def add_media(self, pointer: str, part: Any) -> None:
        self.slots.append((pointer, ("media", len(self.media))))
        self.media.append(part)

    def set_usage(self, pointer: str, usage: Any) -> None:
        self.slots.append((pointer, ("usage",)))
        self.usage = usage

    def leave(self, pointer: str, value: Any) -> None:
        self.leftovers[pointer] = value

    @property
    def mapped(self) -> bool:
        """Whether anything of the message's content has a Storyline place."""
        return bool(self.texts or self.reasoning or self.calls or self.results or self.media)

    def first_unread(self) -> str | None:
        """The pointer of the first leftover that is content (under one of ``CONTENT_ROOTS``, or the whole
        message): with nothing ``mapped``, the message's content all fell into residual — a reader refuses it."""
        for pointer in self.leftovers:
            root = "/" + pointer.split("/", 2)[1] if pointer else ""
            if root in CONTENT_ROOTS:
                return pointer
        return None


#: The keys that hold a message's content in some shape (``""``: the message kept whole).
CONTENT_ROOTS = frozenset({"", "/content", "/parts", "/summary", "/output", "/input", "/arguments", "/action"})


def strip(source: Any, pointers: list[str]) -> Any:
    """A copy of ``source`` (a JSON value) without the values at ``pointers``: the skeleton of a message.
    Array elements are never removed (an element taken whole leaves ``None`` in its place), so pointers stay
    valid.

    >>> strip({"role": "user", "content": [{"type": "text", "text": "hi"}]}, ["/content/0/text"])
    {'role': 'user', 'content': [{'type': 'text'}]}
    """
    out = _copy(source)
    for pointer in pointers:
        tokens = parse(pointer)
        if not tokens:
            return None
        node = out
        for token in tokens[:-1]:
            node = node[int(token)] if isinstance(node, list) else node[token]
        last = tokens[-1]
        if isinstance(node, list):
            node[int(last)] = None
        else:
            node.pop(last, None)
    return out


def rebuild(skeleton: Any, values: list[tuple[str, Any]]) -> Any:
    """The source message: ``skeleton`` with each ``(pointer, value)`` put back (the inverse of ``strip``).

    >>> rebuild({"role": "user", "content": [{"type": "text"}]}, [("/content/0/text", "hi")])
    {'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}
    """
    out = _copy(skeleton)
    for pointer, value in values:
        tokens = parse(pointer)
        if not tokens:
            out = value
            continue
        node = out
        for token in tokens[:-1]:
            if isinstance(node, list):
                i = int(token)
                if node[i] is None:
                    node[i] = {}
                node = node[i]
            else:
                node = node.setdefault(token, {})
        last = tokens[-1]
        if isinstance(node, list):
            i = int(last)
            while len(node) <= i:
                node.append(None)
            node[i] = value
        else:
            node[last] = value
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
