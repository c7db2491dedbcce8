"""``from_messages``: a dataset example in the conversational shape (``messages`` and ``tools``, as TRL,
axolotl and most Hub datasets hold them) → a row of ``STORYLINE_FEATURES``, for ``ds.map``.

It reads the example exactly as the ``chat`` format reads one record (``docs/formats/chat.md``), so an
existing Hub dataset converts without files::

    ds = load_dataset(repo, split="train")
    stories = ds.map(pc.from_messages, remove_columns=ds.column_names, features=pc.STORYLINE_FEATURES)

>>> import pchronicle_datasets as pc
>>> from datasets import Dataset
>>> ds = Dataset.from_list([{"id": "c1", "messages": [{"role": "user", "content": "hi"},
...                                                   {"role": "assistant", "content": "hello"}]}])
>>> rows = ds.map(pc.from_messages, remove_columns=ds.column_names, features=pc.STORYLINE_FEATURES)
>>> story = pc.row_to_story(rows[0])
>>> story["session"], [t["src"] for t in story["turns"]]
('c1', ['user', 'agent'])
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..features import STORYLINE_FEATURES, story_to_row
from ..formats.chat.reader import read_conversation
from ..jsonio import dumps

__all__ = ["from_messages"]

_COLUMNS = tuple(STORYLINE_FEATURES)


def _present(value: Any) -> Any:
    """The example without null keys in messages, tool calls and functions, and null columns.

    Arrow stores a list of messages as structs with every key any row has: a key a message never had comes
    back as null. A dataset cannot tell that null from a source null, so both are read as absent.
    """
    if isinstance(value, Mapping):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


def _one(example: Mapping[str, Any]) -> dict[str, Any]:
    record = {k: v for k, v in example.items() if v is not None}
    for key in ("messages", "conversations"):
        if isinstance(record.get(key), list):
            record[key] = _present(record[key])
    # No id column: the session is named by the content, so the same conversation gets the same name in
    # every run and on every worker (a row index would change with shuffling and sharding).
    session = "chat-" + hashlib.sha1(dumps(record)).hexdigest()[:16]
    row = story_to_row(read_conversation(record, session=session), check=False)
    return {name: row.get(name) for name in _COLUMNS}


def _is_batch(example: Mapping[str, Any], messages: Any) -> bool:
    """A batch holds a list of conversations, and every column is a list of the same length (an example's
    messages are objects, so only an example whose every column is an empty list is taken as an empty batch)."""
    if not isinstance(messages, list) or not all(isinstance(m, list) for m in messages):
        return False
    return all(isinstance(v, list) and len(v) == len(messages) for v in example.values())


def from_messages(example: Mapping[str, Any]) -> dict[str, Any]:
    """A row of ``STORYLINE_FEATURES`` for a dataset example with ``messages`` (and optionally ``tools``, an
    id column and any other columns, which are kept as residual), or, with ``batched=True``, a batch of rows.

    Raises ``FormatError`` with the pointer of the first problem. Null keys of messages and tool calls are
    read as absent (Arrow fills in every key any row has).
    """
    messages = example.get("messages", example.get("conversations"))
    if _is_batch(example, messages):
        size = len(messages)
        rows = [_one({k: v[i] for k, v in example.items()}) for i in range(size)]
        return {name: [r[name] for r in rows] for name in _COLUMNS}
    return _one(example)
