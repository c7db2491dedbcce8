"""The ``sharegpt`` format (alias ``agent-jsonl``): the agent's ShareGPT trajectory JSON Lines.

The seed ``trajectory-format-sharegpt.md`` describes it; the reference agent's own converter (hermes-agent)
decides every byte the seed leaves open, except the deliberate differences in ``docs/formats/sharegpt.md``.

- ``render.sharegpt`` (outside the format, shared with ``to_sharegpt``): a Storyline document as
  ``[{"from", "value"}]``; ``training/sharegpt_rows.py`` gives the same straight from a plain dataset row;
- ``reader``: records → documents; an element the writer would not give back byte for byte keeps its exact
  value as residual;
- ``writer``: documents → records (same source: exact), and the seed's two-file folder;
- ``hints``: the export hints' shape, shared by the reader and the writer.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "Say hello."}, {"id": 2, "src": "agent", "msg": "Hello!"}]}
>>> [(c["from"], c["value"][:40]) for c in conversation(story)][1:]
[('human', 'Say hello.'), ('gpt', '<think>\\n</think>\\nHello!')]
"""

from ...render.sharegpt import (
    SYSTEM_TEMPLATE,
    conversation,
    gpt_value,
    system_prompt,
    text_of,
    tool_schema,
    tool_value,
)
from .hints import HINTS, NAME
from .reader import decode, iter_records, read_line, sniff
from .writer import FOLDER_FILES, encode, encode_folder, is_completed, record, source_conversation

ALIASES = ("agent-jsonl",)
KEYS = (
    "conversations",
    "from",
    "value",
    "tools",
    "system",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".jsonl"
OUTPUT = "folder"  # the CLI writes the seed's two files (encode_folder); from_storyline gives one text
PER_DOCUMENT = False
ENCODE_IN_BATCHES = True  # encode(a + b) == encode(a) + encode(b): the CLI writes a batch at a time

__all__ = [
    "ALIASES",
    "ENCODE_IN_BATCHES",
    "EXTENSION",
    "FOLDER_FILES",
    "HINTS",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "SYSTEM_TEMPLATE",
    "conversation",
    "decode",
    "encode",
    "encode_folder",
    "gpt_value",
    "is_completed",
    "iter_records",
    "read_line",
    "record",
    "sniff",
    "source_conversation",
    "system_prompt",
    "text_of",
    "tool_schema",
    "tool_value",
]
