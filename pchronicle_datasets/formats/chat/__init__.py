"""The ``chat`` format (aliases ``openai-chat``, ``messages``): whole OpenAI-style conversations.

One conversation per record: ``{"messages": [...], "tools": [...], …}`` as JSON Lines, a JSON array of such
records, one record as the whole file (litellm logs, converted Claude Code / Codex sessions), a bare array
of messages, Harbor's ``{"conversations": [role messages], "tool_definitions": …}``, and a Chat Completions
``response`` whose ``choices[0].message`` is the last assistant turn. ``docs/formats/chat.md`` is the
mapping table.

>>> text = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\\n'
>>> encode(decode(text, "a.jsonl")) == text.replace(": ", ":").replace(", ", ",")
True
"""

from __future__ import annotations

from ...render.messages import render_messages
from .reader import NAME, decode, iter_records, read_conversation, read_line, sniff
from .writer import encode, record

ALIASES: tuple[str, ...] = ("openai-chat", "messages")
KEYS = (
    "messages",
    "tools",
    "model",
    "role",
    "content",
    "tool_calls",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = False
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): the CLI writes a batch at a time

__all__ = [
    "ALIASES",
    "ENCODE_IN_BATCHES",
    "EXTENSION",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "decode",
    "encode",
    "iter_records",
    "read_conversation",
    "read_line",
    "record",
    "render_messages",
    "sniff",
]
