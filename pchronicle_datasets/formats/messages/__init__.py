"""The shared message model: every provider's message shapes → one neutral ``Message`` → Storyline turns.

Not a format: formats (``chat``, and the harness readers: Claude Code's messages are Anthropic blocks, Codex's
are Responses items, Gemini CLI's are Gemini parts) import it. ``docs/formats/messages.md`` is the mapping table
of every shape.

API (stable: add, never break)::

    shape_of(value) -> str | None         # "anthropic" | "responses" | "gemini" | "typed" | "openai" | None
    read_message(value, shape=None)       # one source message → Message (shape_of's when None)
    Message, Call, Result, Reasoning      # the neutral structure (model.py)
    TurnBuilder                           # Messages → Storyline turns; .add(m, pointer, keep) → export hint
    write_message(story, hint)            # the source message back from the document and the hint
    tools_to_openai(tools) / tools_back   # provider tool definitions ↔ OpenAI function tools (+ hint)

A ``Message`` holds ``role`` (``system``/``developer``/``user``/``assistant``/``tool``), ``texts``, ``reasoning``
(text, signature, encrypted payload), ``calls`` (id, name, arguments as the source wrote them, kind),
``results`` (call id or None, name, content, is_error), ``media`` (parts as written), ``usage``, and
``leftovers`` (relative JSON Pointer → value: the reader's residual). ``slots`` and ``skeleton`` say where each
mapped value sat, so ``write_message`` gives the same source message back.

A harness reader (Claude Code: Anthropic blocks; Codex: Responses items; Gemini CLI: Gemini parts) uses it as
the ``chat`` reader does: one ``TurnBuilder`` per document; for each log message
``hint = builder.add(read_message(value, "anthropic"), pointer, residual.keep)`` (``pointer`` the message's
pointer in the source record, ``residual`` the reader's ``formats.residual.Residual``; refuse a message with
``not m.mapped and m.first_unread()`` — its content all fell into residual); ``builder.turns`` are the
document's turns (add ``ts``, ``model``… of the log lines to them), ``builder.source_ids`` its
``/meta/source_call_ids``; keep the hints in the format's export hints for ``write_message``. A shape's own
call state (a call answered by a later log line) is the builder's: ``register``, ``answers``, ``tcid``.

Recognising a shape is by structure, one message at a time (a file may mix them); ``shape_of`` tries the
shapes from the most specific: Responses items (a ``type`` of theirs), Gemini Content (``parts``), Anthropic
messages (a block type only Anthropic writes), typed parts (``tool_call``/``tool_output`` parts), else an
OpenAI message (a string ``role``).

>>> shape_of({"role": "model", "parts": [{"text": "hi"}]}), shape_of({"type": "function_call_output", "call_id": "c"})
('gemini', 'responses')
>>> shape_of({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": {}}]})
'anthropic'
>>> shape_of({"role": "user", "content": "hi"}), shape_of(42)
('openai', None)
>>> b, kept = TurnBuilder(), {}
>>> for i, msg in enumerate([
...         {"role": "user", "parts": [{"text": "List."}]},
...         {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
...         {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"out": "a"}}}]}]):
...     _ = b.add(read_message(msg), f"/{i}", kept.__setitem__)
>>> [(t["src"], t["msg"], [c["fn"] for c in t.get("tool_calls", [])]) for t in b.turns]
[('user', 'List.', []), ('agent', '', ['ls'])]
>>> b.turns[1]["observation"]
{'results': [{'content': {'out': 'a'}, 'source_call_id': 'call-1-0'}]}
"""

from __future__ import annotations

from typing import Any

from . import anthropic, gemini, openai_chat, responses, typed
from .builder import TurnBuilder, write_message
from .model import Call, Message, Reasoning, Result
from .tools import tools_back, tools_to_openai

__all__ = [
    "SHAPES",
    "Call",
    "Message",
    "Reasoning",
    "Result",
    "TurnBuilder",
    "read_message",
    "shape_of",
    "tools_back",
    "tools_to_openai",
    "write_message",
]

#: Shape name → (recogniser, reader), tried in this order by ``shape_of``.
SHAPES = {
    responses.SHAPE: (responses.is_item, responses.read),
    gemini.SHAPE: (gemini.is_content, gemini.read),
    anthropic.SHAPE: (anthropic.is_message, anthropic.read),
    typed.SHAPE: (typed.is_message, typed.read),
    openai_chat.SHAPE: (openai_chat.is_message, openai_chat.read),
}


def shape_of(value: Any) -> str | None:
    """The shape of one source message (see the module docs), or None when it is no message."""
    return next((name for name, (recognise, _) in SHAPES.items() if recognise(value)), None)


def read_message(value: Any, shape: str | None = None) -> Message:
    """One source message → ``Message`` (``shape``: one of ``SHAPES``, else ``shape_of``'s; ``ValueError`` for a
    value that is no message). A reader that knows its shape says it: a Claude Code user message
    ``{"role": "user", "content": "hi"}`` is ``read_message(value, "anthropic")``."""
    shape = shape or shape_of(value)
    if shape not in SHAPES:
        raise ValueError(f"not a message of the shared model's shapes: {shape}")
    return SHAPES[shape][1](value)
