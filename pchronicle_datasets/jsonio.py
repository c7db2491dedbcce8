"""JSON parsing and writing with orjson, made exact and strict.

orjson is fast but has two habits this project cannot accept on user data:

* it raises its own ``orjson.JSONDecodeError`` — ``loads`` turns every parse failure into a
  ``FormatError`` that names the file and line;
* it silently reads integers beyond 64 bits (above 2**64-1, or below -2**63) as floats, changing the
  value. Such an integer has at least 19 digits, so a cheap scan of the raw text for 19 digits in a row
  decides whether the slow, exact check (Python's own parser, which keeps big integers exact) is needed;
  an out-of-range integer is refused with the pointer of the value rather than rounded.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from .errors import FormatError
from .pointer import join

__all__ = ["dumps", "dumps_text", "loads"]

_LONG_DIGITS_B = re.compile(rb"[0-9]{19}")
_LONG_DIGITS_S = re.compile(r"[0-9]{19}")
INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    document_id: str | None = None,
    line: int | None = None,
) -> Any:
    """Parse one JSON text; every failure is a ``FormatError`` naming ``document_id`` and ``line``.

    >>> loads(b'{"a": [1, 2.5, "42"]}')
    {'a': [1, 2.5, '42']}
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # orjson counts lines from 1 within the text it was given; a JSONL caller passes its own line.
        where = line if line is not None else getattr(exc, "lineno", None)
        raise FormatError(f"not valid JSON: {exc.msg}", document_id=document_id, line=where) from None
    scan = _LONG_DIGITS_S if isinstance(data, str) else _LONG_DIGITS_B
    if scan.search(data if not isinstance(data, memoryview) else bytes(data)):
        _refuse_big_ints(data, document_id=document_id, line=line)
    return value


def _refuse_big_ints(data: Any, *, document_id: str | None, line: int | None) -> None:
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    exact = json.loads(text)  # valid JSON already (orjson accepted it); ints stay exact here
    found = _find_big_int(exact, "")
    if found is not None:
        pointer, value = found
        raise FormatError(
            f"integer {value} is outside the 64-bit range this format keeps exactly; refused rather than rounded",
            pointer=pointer,
            document_id=document_id,
            line=line,
        )


def _find_big_int(node: Any, pointer: str) -> tuple[str, int] | None:
    stack = [(node, pointer)]
    while stack:
        node, pointer = stack.pop()
        if type(node) is int:
            if node < INT_MIN or node > UINT_MAX:
                return pointer, node
        elif isinstance(node, dict):
            stack.extend((v, join(pointer, k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, join(pointer, i)) for i, v in reversed(list(enumerate(node))))
    return None


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (orjson: shortest float repr, so every digit of a float survives)."""
    return orjson.dumps(value)


def dumps_text(value: Any) -> str:
    """``dumps`` as ``str``, for Arrow string columns that hold JSON text."""
    return orjson.dumps(value).decode("utf-8")
