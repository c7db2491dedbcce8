"""The parsed sample that structural detection looks at: the value of a file's first record.

>>> first_value(b'{"messages": []}\\n{"messages": [1]}\\n')
{'messages': []}
>>> first_value(b'[\\n  {"role": "user", "content": "hi"}\\n]\\n')
[{'role': 'user', 'content': 'hi'}]
>>> first_value(b"not json") is NO_SAMPLE
True
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["NO_SAMPLE", "first_value"]

NO_SAMPLE: Any = object()  # the file has no record that parses


def first_value(data: bytes) -> Any:
    """The whole file's value when the whole file is one JSON value, else the value of the first JSON Lines
    line that parses, else ``NO_SAMPLE``.

    The first line is tried first: in JSON Lines it is the first record, and a one-line file is its value;
    only a file whose first line is not JSON by itself (pretty-printed) is parsed whole. Parsing is orjson's
    alone: detection needs the structure, the reader then parses strictly.
    """
    lines = (raw for raw in data.split(b"\n", 1024) if raw and not raw.isspace())
    first = next(lines, None)
    if first is None:
        return NO_SAMPLE
    try:
        return orjson.loads(first)
    except orjson.JSONDecodeError:
        pass
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    for raw in lines:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
    return NO_SAMPLE
