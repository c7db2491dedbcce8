"""Storyline rows → training examples: the map functions for ``ds.map`` and the schemas of their outputs.

- ``maps``: ``to_sharegpt``, ``to_messages``, ``to_prompt_completion``, ``incomplete`` (the map functions);
- ``policy``: which turns to train (``trainable=``) and ``flags`` (why a conversation may not belong);
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
from .maps import incomplete, to_messages, to_prompt_completion, to_sharegpt
from .output_features import (
    LLAMAFACTORY_FEATURES,
    LLAMAFACTORY_TRAIN_FEATURES,
    MESSAGES_FEATURES,
    SHAREGPT_FEATURES,
    SHAREGPT_TRAIN_FEATURES,
    decode_messages,
    encode_messages,
)
from .policy import FLAGS, TRAINABLE, flags

__all__ = [
    "FLAGS",
    "LLAMAFACTORY_FEATURES",
    "LLAMAFACTORY_TRAIN_FEATURES",
    "MESSAGES_FEATURES",
    "SHAREGPT_FEATURES",
    "SHAREGPT_TRAIN_FEATURES",
    "TRAINABLE",
    "decode_messages",
    "encode_messages",
    "flags",
    "from_messages",
    "incomplete",
    "to_messages",
    "to_prompt_completion",
    "to_sharegpt",
]
