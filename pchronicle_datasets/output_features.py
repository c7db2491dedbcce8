"""The fixed schemas of the training examples ``to_sharegpt`` and ``to_messages`` produce.

``ds.map(pc.to_sharegpt)`` lets ``datasets`` infer its output types, which is fine on one machine. Engines
that need the output schema before they see a row (Spark's ``mapInArrow``, a Parquet writer shared by many
workers) need it fixed, and a schema inferred from values would change with the tool set: a struct keyed
by argument names differs between two agents. So the values of any JSON type are **JSON text** (orjson):

- ``SHAREGPT_FEATURES``: ``conversations: list<struct<from, value>>``, exactly what ``to_sharegpt`` returns;
- ``MESSAGES_FEATURES``: ``messages: list<struct<role, content, reasoning_content, name, tool_call_id,
  tool_calls: list<struct<id, type, function: struct<name, arguments>>>>>`` and ``tools: list<string>``,
  where ``arguments`` and each tool schema are JSON text. A key ``to_messages`` leaves out is null here.

``encode_messages`` gives that JSON-text form of one ``to_messages`` output and ``decode_messages`` gives
the output back, value for value:

>>> out = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
...     {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": {"n": 1.0}}}]}],
...     "tools": [{"type": "function", "function": {"name": "ls"}}]}
>>> enc = encode_messages(out)
>>> enc["messages"][0]["tool_calls"][0]["function"]["arguments"], enc["messages"][0]["name"]
('{"n":1.0}', None)
>>> enc["tools"]
['{"type":"function","function":{"name":"ls"}}']
>>> decode_messages(enc) == out
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from datasets import Features, List, Value

from .jsonio import dumps_text

__all__ = ["MESSAGES_FEATURES", "SHAREGPT_FEATURES", "decode_messages", "encode_messages"]

SHAREGPT_FEATURES = Features({"conversations": List({"from": Value("string"), "value": Value("string")})})
"""What ``to_sharegpt`` returns, as ``datasets.Features``."""

_MESSAGE_KEYS = ("role", "content", "reasoning_content", "name", "tool_call_id")

MESSAGES_FEATURES = Features(
    {
        "messages": List(
            {
                **{key: Value("string") for key in _MESSAGE_KEYS},
                "tool_calls": List(
                    {
                        "id": Value("string"),
                        "type": Value("string"),
                        "function": {"name": Value("string"), "arguments": Value("string")},
                    }
                ),
            }
        ),
        "tools": List(Value("string")),
    }
)
"""What ``to_messages`` returns with its JSON values as JSON text (``encode_messages``)."""


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    fn = call["function"]
    return {
        "id": call["id"],
        "type": call["type"],
        "function": {"name": fn["name"], "arguments": dumps_text(fn["arguments"])},
    }


def encode_messages(out: Mapping[str, Any]) -> dict[str, Any]:
    """One ``to_messages`` output in the form of ``MESSAGES_FEATURES`` (arguments and tools as JSON text)."""
    messages = []
    for msg in out["messages"]:
        row: dict[str, Any] = {key: msg.get(key) for key in _MESSAGE_KEYS}
        calls = msg.get("tool_calls")
        # to_messages writes tool_calls only when there are some: null stands for "no key".
        row["tool_calls"] = [_call(c) for c in calls] if calls is not None else None
        messages.append(row)
    return {"messages": messages, "tools": [dumps_text(tool) for tool in out["tools"]]}


def decode_messages(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``to_messages`` output an ``encode_messages`` row (or a row read back from Parquet) stands for."""
    messages = []
    for msg in row["messages"]:
        out = {key: msg[key] for key in _MESSAGE_KEYS if msg.get(key) is not None}
        if msg.get("tool_calls") is not None:
            out["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": c["type"],
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": orjson.loads(c["function"]["arguments"]),
                    },
                }
                for c in msg["tool_calls"]
            ]
        messages.append(out)
    return {"messages": messages, "tools": [orjson.loads(tool) for tool in row["tools"] or []]}
