"""JSON parsing and writing with orjson, made exact and strict.

orjson is fast but has two habits this project cannot accept on user data:

* it raises its own ``orjson.JSONDecodeError`` — ``loads`` turns every parse failure into a
  ``FormatError`` that names the file and line;
* it silently reads integers beyond 64 bits (above 2**64-1, or below -2**63) as floats, changing the
  value. Such an integer has at least 19 digits, so a cheap scan of the raw text for 19 digits in a row
  decides whether the slow, exact check (Python's own parser, which keeps big integers exact) is needed;
  an out-of-range integer is refused with the pointer of the value rather than rounded. A digit written as an
  escape (``\\u0031``) counts too: a JSON text inside a string of the scanned text (tool-call arguments) may
  spell its digits that way, and callers parse such inner texts without a scan of their own.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from .errors import FormatError
from .pointer import join

__all__ = [
    "dumps",
    "dumps_text",
    "json_shape",
    "json_type",
    "loads",
    "may_hold_big_int",
    "short",
    "split_objects",
    "try_loads",
    "wide_text",
]

_FOLD_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_RUN = b"0" * 19  # every integer beyond 64 bits has at least 19 digits
_ESCAPED_DIGIT = b"\\u003"  # \u0030–\u0039: a digit of a string's decoded text, invisible to the run search
INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1


# What a file that starts with a UTF-16 or UTF-32 byte-order mark is told: Windows PowerShell 5's ``>`` and
# ``Out-File`` write UTF-16, and its bytes read as UTF-8 give orjson's "surrogates not allowed", which says nothing
# of the cause. Readers take UTF-8 JSON (RFC 8259 §8.1); the user converts once.
_WIDE_MARKS = (  # UTF-32's marks first: UTF-32 LE's starts with UTF-16 LE's
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def wide_text(head: bytes | bytearray | memoryview | str) -> str | None:
    """What a text is told when it starts with a UTF-16 or UTF-32 byte-order mark (its encoding, and how to
    convert it), else None.

    >>> wide_text("{}".encode("utf-16"))[:48], wide_text("{}".encode("utf-8-sig")), wide_text("{}")
    ('the text is UTF-16 (it starts with its byte-orde', None, None)
    """
    if isinstance(head, str):
        return None
    start = bytes(head[:4])
    name = next((name for mark, name in _WIDE_MARKS if start.startswith(mark)), None)
    if name is None:
        return None
    return (
        f"the text is {name} (it starts with its byte-order mark; Windows PowerShell's > and Out-File write UTF-16) "
        f"and readers take UTF-8: convert it first, e.g. iconv -f {name} -t UTF-8 FILE > FILE.utf8"
    )


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    document_id: str | None = None,
    line: int | None = None,
    scan: bool = True,
) -> Any:
    """Parse one JSON text; every failure is a ``FormatError`` naming ``document_id`` and ``line``.

    ``scan=False`` skips the search for integers beyond 64 bits, for a caller that already scanned the
    whole file this text comes from (``may_hold_big_int``) and found none.

    >>> loads(b'{"a": [1, 2.5, "42"]}')
    {'a': [1, 2.5, '42']}
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # orjson counts lines from 1 within the text it was given; a JSONL caller passes its own line.
        where = line if line is not None else getattr(exc, "lineno", None)
        why = wide_text(data) or exc.msg
        raise FormatError(f"not valid JSON: {why}", document_id=document_id, line=where) from None
    if scan and may_hold_big_int(data):
        _refuse_big_ints(data, document_id=document_id, line=line)
    return value


def split_objects(raw: bytes, *, document_id: str | None = None, line: int | None = None) -> list[Any] | None:
    """The JSON objects of a line that holds two or more of them one after another (``{…}{…}``), each parsed as
    ``loads`` parses it; None for any other text (one value, a value that is no object, or text that is not JSON
    objects throughout). An append-only log whose last line lost its newline gets the next record on the same
    line: Claude Code's session files hold such lines (docs/formats/claude-code.md).

    >>> split_objects(b'{"a": 1}{"b": [2]}'), split_objects(b'{"a": 1}'), split_objects(b'{"a": 1} x')
    ([{'a': 1}, {'b': [2]}], None, None)
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder, pieces, at = _DECODER, [], 0
    while True:
        at = len(text) - len(text[at:].lstrip())
        if at == len(text):
            break
        try:
            _, end = decoder.raw_decode(text, at)  # only where each value ends: loads parses it (its types)
        except ValueError:
            return None
        piece = text[at:end]
        if not piece.startswith("{"):
            return None
        pieces.append(loads(piece, document_id=document_id, line=line))
        at = end
    return pieces if len(pieces) > 1 else None


_DECODER = json.JSONDecoder()


def may_hold_big_int(data: bytes | bytearray | memoryview | str) -> bool:
    """Whether the text has a run of 19+ digits that is an integer literal (or sits inside a string).

    Digits are folded to ``0`` and runs found with ``bytes.find`` (C speed, unlike a regex scan); only
    the few hits are looked at in Python, to pass over the long digit runs of ordinary floats
    (``0.0012345678901234567``, exponents), which are common in metrics. A digit written as a ``\\u`` escape
    answers True: the decoded text of a string (arguments that are JSON text, parsed by callers that scanned
    only this outer text) could hold a run this search cannot see. No encoder escapes digits, so real files
    never pay for the exact check this asks for.

    >>> may_hold_big_int(b'{"a": 12345678901234567890}'), may_hold_big_int(b'{"a": 0.12345678901234567890}')
    (True, False)
    >>> may_hold_big_int(b'{"args": "{\\"n\\": \\u00312}"}')
    True
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    pos = raw.find(_ESCAPED_DIGIT)
    while pos != -1:
        if raw[pos + 5 : pos + 6].isdigit():
            return True
        pos = raw.find(_ESCAPED_DIGIT, pos + 5)
    folded = raw.translate(_FOLD_DIGITS)
    pos = folded.find(_RUN)
    while pos != -1:
        end = pos + len(_RUN)
        while folded[end : end + 1] == b"0":
            end += 1
        start = pos
        prev = raw[start - 1 : start]
        fraction_or_exponent = prev in (b".", b"e", b"E", b"+") or (
            prev == b"-" and raw[start - 2 : start - 1] in (b"e", b"E")
        )
        float_integer_part = raw[end : end + 1] in (b".", b"e", b"E")
        if not (fraction_or_exponent or float_integer_part):
            return True
        pos = folded.find(_RUN, end)
    return False


def _refuse_big_ints(data: Any, *, document_id: str | None, line: int | None) -> None:
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    try:
        exact = json.loads(text)  # valid JSON already (orjson accepted it); ints stay exact here
    except RecursionError:  # Python's parser stops nesting earlier than orjson
        raise FormatError("JSON nested too deeply", document_id=document_id, line=line) from None
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


def try_loads(text: str | bytes, *, scan: bool = True) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is JSON that Storyline can hold, else ``(False, None)``: the one
    try-parse of JSON strings found inside source values (arguments, content, ``meta_json``). ``scan=False``
    when the file holds no integer beyond 64 bits (checked once per file), so no part of it can.

    >>> try_loads('{"a": 1}'), try_loads("{not json"), try_loads("NaN")
    ((True, {'a': 1}), (False, None), (False, None))
    """
    try:
        return True, loads(text, scan=scan)
    except FormatError:
        return False, None


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for messages.

    >>> json_type(1), json_type(1.0), json_type(True), json_type(None), json_type([])
    ('integer', 'number', 'boolean', 'null', 'array')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_shape(value: Any) -> str:
    """What a value is, for a refusal: an object by its first keys (so "got object" says which object).

    >>> json_shape({"trajectory": [], "id": 1}), json_shape({}), json_shape("x")
    ('an object with keys trajectory, id', 'an empty object', 'string')
    """
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        return (
            "an object with keys " + ", ".join(keys[:6]) + (", …" if len(keys) > 6 else "")
            if keys
            else "an empty object"
        )
    return json_type(value)


def short(value: Any, limit: int = 80) -> str:
    """A value as compact JSON for a message, cut to ``limit`` characters.

    >>> short("x" * 100)[-3:]
    'xx…'
    """
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
