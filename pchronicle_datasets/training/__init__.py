"""Storyline rows → training examples: the map functions for ``ds.map`` and the schemas of their outputs.

- ``maps``: ``to_sharegpt``, ``to_messages``, ``incomplete`` (the map functions);
- ``from_messages``: a conversational dataset example → a Storyline row (``pc.from_messages``);
- ``sharegpt_rows``: ``to_sharegpt``'s fast path, a plain row read straight from its columns;
- ``output_features``: ``SHAREGPT_FEATURES``, ``MESSAGES_FEATURES`` and their JSON-text codec;
- ``map_losses``: one loss summary per ``ds.map`` call.

The renderings themselves (``render/``) sit below both this package and the format packages: the ShareGPT
and chat writers write exactly what ``to_sharegpt`` and ``to_messages`` give, and a format never imports
``training/``.

>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
>>> to_messages(story, arguments="object")["messages"]
[{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'hello'}]
"""

from .from_messages import from_messages
from .maps import incomplete, to_messages, to_sharegpt
from .output_features import MESSAGES_FEATURES, SHAREGPT_FEATURES, decode_messages, encode_messages

__all__ = [
    "MESSAGES_FEATURES",
    "SHAREGPT_FEATURES",
    "decode_messages",
    "encode_messages",
    "from_messages",
    "incomplete",
    "to_messages",
    "to_sharegpt",
]
