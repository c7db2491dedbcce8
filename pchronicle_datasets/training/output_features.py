"""The fixed schemas of the training examples ``to_sharegpt`` and ``to_messages`` produce.

Left to infer its output types, ``ds.map`` derives them from the values: two corpora whose tool schemas have
different keys (``additionalProperties``, ``required``) get different struct types and ``concatenate_datasets``
raises "The features can't be aligned"; a corpus without tools gets ``List(Value('null'))``. So the schemas are
fixed here, and the values of any JSON type are **JSON text** (orjson):

- ``SHAREGPT_FEATURES``: ``conversations: list<struct<from, value>>``, exactly what ``to_sharegpt`` returns;
- ``MESSAGES_FEATURES``: ``messages: list<struct<role, content, reasoning_content, name, tool_call_id, train
  (bool), tool_calls: list<struct<id, type, function: struct<name, arguments>>>>>`` and ``tools: string``, where
  ``arguments`` is the JSON text of the arguments object and ``tools`` the JSON text of the list of OpenAI
  function schemas (TRL reads ``tools`` given as a JSON string). Every key is in every message (null where the
  message has none). This is what ``to_messages`` returns by default (``arguments="string"``).

Why JSON text and not ``datasets.Json``: its encoder and decoder (pandas' ujson) write floats with 10 significant
digits and read them back inexactly (``0.9073017428710906`` → ``0.9073017429`` on the way in,
``2.48696838041943e-10`` → ``2e-10``), and refuse integers beyond 64 bits; JSON text written and read with orjson
keeps every digit (``tests/test_output_features.py``).

``encode_messages`` gives the ``MESSAGES_FEATURES`` form of a ``to_messages(arguments="object")`` output and
``decode_messages`` gives it back, value for value (or with ``arguments="string"``, the arguments as JSON text):

>>> out = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
...     {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": {"n": 2.5e-05}}}]}],
...     "tools": [{"type": "function", "function": {"name": "ls"}}]}
>>> enc = encode_messages(out)
>>> enc["messages"][0]["tool_calls"][0]["function"]["arguments"], enc["messages"][0]["name"]
('{"n":0.000025}', None)
>>> enc["tools"]
'[{"type":"function","function":{"name":"ls"}}]'
>>> decode_messages(enc) == out
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from datasets import Features, List, Value

from ..jsonio import dumps_text, try_loads

__all__ = [
    "LLAMAFACTORY_FEATURES",
    "LLAMAFACTORY_TRAIN_FEATURES",
    "MESSAGES_FEATURES",
    "MESSAGE_KEYS",
    "SHAREGPT_FEATURES",
    "SHAREGPT_TRAIN_FEATURES",
    "decode_messages",
    "encode_messages",
]

SHAREGPT_FEATURES = Features({"conversations": List({"from": Value("string"), "value": Value("string")})})
"""What ``to_sharegpt`` returns, as ``datasets.Features``."""

SHAREGPT_TRAIN_FEATURES = Features(
    {"conversations": List({"from": Value("string"), "value": Value("string"), "train": Value("bool")})}
)
"""What ``to_sharegpt(trainable=…)`` returns when a policy narrows training (every element has ``train``)."""

LLAMAFACTORY_FEATURES = Features(
    {
        "conversations": List({"from": Value("string"), "value": Value("string")}),
        "system": Value("string"),
        "tools": Value("string"),
    }
)
"""What ``to_sharegpt(dialect="llamafactory")`` returns: LLaMA-Factory's ``conversations``, ``system`` and
``tools`` (JSON text of the function schemas) columns."""

LLAMAFACTORY_TRAIN_FEATURES = Features(
    {
        "conversations": List({"from": Value("string"), "value": Value("string"), "train": Value("bool")}),
        "system": Value("string"),
        "tools": Value("string"),
    }
)
"""``LLAMAFACTORY_FEATURES`` with a policy (``trainable="last"``…): every element has ``train`` (LLaMA-Factory
reads only ``from`` and ``value``; its ``mask_history: true`` is ``"last"``)."""

#: The keys of a message other than ``tool_calls``, in ``MESSAGES_FEATURES`` order: strings, and ``train``
#: (``to_messages(trainable=…)``: whether the policy trains the message; null when no policy was asked for).
MESSAGE_KEYS = ("role", "content", "reasoning_content", "name", "tool_call_id", "train")
_TEXT_KEYS = MESSAGE_KEYS[:-1]

MESSAGES_FEATURES = Features(
    {
        "messages": List(
            {
                **{key: Value("string") for key in _TEXT_KEYS},
                "train": Value("bool"),
                "tool_calls": List(
                    {
                        "id": Value("string"),
                        "type": Value("string"),
                        "function": {"name": Value("string"), "arguments": Value("string")},
                    }
                ),
            }
        ),
        "tools": Value("string"),
    }
)
"""What ``to_messages`` returns (``arguments="string"``, the default), as ``datasets.Features``."""


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    fn = call["function"]
    args = fn["arguments"]
    return {
        "id": call["id"],
        "type": call["type"],
        # A string is already the arguments' text (the raw source text of arguments that were not JSON).
        "function": {"name": fn["name"], "arguments": args if isinstance(args, str) else dumps_text(args)},
    }


def encode_messages(out: Mapping[str, Any]) -> dict[str, Any]:
    """A ``to_messages`` output in the form of ``MESSAGES_FEATURES`` (every key; arguments and tools as JSON text)."""
    messages = []
    for msg in out["messages"]:
        row: dict[str, Any] = {key: msg.get(key) for key in MESSAGE_KEYS}
        calls = msg.get("tool_calls")
        # to_messages writes tool_calls only when there are some: null stands for "no key".
        row["tool_calls"] = [_call(c) for c in calls] if calls is not None else None
        messages.append(row)
    tools = out["tools"]
    return {"messages": messages, "tools": tools if isinstance(tools, str) else dumps_text(list(tools))}


def _arguments(text: Any) -> Any:
    ok, value = try_loads(text) if isinstance(text, str) else (False, None)
    return value if ok else text  # arguments that were not JSON stay the string they were


def decode_messages(row: Mapping[str, Any], *, arguments: str = "object") -> dict[str, Any]:
    """The chat-template form of a ``MESSAGES_FEATURES`` row (from ``to_messages``, a ``Dataset`` or Parquet):
    keys only where they have a value, ``tools`` as a list, arguments as objects (``arguments="object"``; those
    whose source text was not JSON stay that text, as stored: nothing to count) or JSON text (``"string"``) —
    what ``tokenizer.apply_chat_template(out["messages"], tools=out["tools"])`` takes.

    >>> row = {"messages": [{"role": "user", "content": "hi", "reasoning_content": None, "name": None,
    ...                      "tool_call_id": None, "tool_calls": None}], "tools": "[]"}
    >>> decode_messages(row)
    {'messages': [{'role': 'user', 'content': 'hi'}], 'tools': []}
    """
    if arguments not in ("object", "string"):
        raise ValueError(f'arguments is "object" or "string", got {arguments!r}')
    messages = []
    for msg in row["messages"]:
        out = {key: msg[key] for key in MESSAGE_KEYS if msg.get(key) is not None}
        if msg.get("tool_calls") is not None:
            out["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": c["type"],
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": (
                            _arguments(c["function"]["arguments"])
                            if arguments == "object"
                            else c["function"]["arguments"]
                        ),
                    },
                }
                for c in msg["tool_calls"]
            ]
        messages.append(out)
    tools = row.get("tools")
    if isinstance(tools, str):
        ok, parsed = try_loads(tools)
        tools = parsed if ok else []
    return {"messages": messages, "tools": list(tools or [])}
