"""What the chat reader and writer agree on: the keys tried in a record, the roles, and how tool-call
``arguments`` strings are spelled (so that the same source is written back byte for byte).

>>> read_arguments('{"path": "."}')
({'path': '.'}, 's')
>>> read_arguments('{"path":"."}')
({'path': '.'}, 'c')
>>> write_arguments({"path": "."}, "c")
'{"path":"."}'
>>> read_arguments("ls -la")  # not JSON: kept as the string
('ls -la', 'r')
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import FormatError
from ...jsonio import loads

__all__ = [
    "ID_KEYS",
    "REASON_KEYS",
    "ROLE_SRC",
    "SRC_ROLE",
    "TOOLS_KEYS",
    "read_arguments",
    "write_arguments",
]

#: Record keys tried, in this order, for the session id (the first non-empty string wins).
ID_KEYS = ("id", "session_id", "conversation_id", "instance_id")
#: Record keys tried, in this order, for the tool definitions (the first present and not null wins).
TOOLS_KEYS = ("tools", "tool_definitions", "available_tools")
#: Message keys tried, in this order, for the reasoning text (the first holding a string wins).
REASON_KEYS = ("reasoning_content", "reasoning", "thinking")
#: Message roles that become turns, and the turn ``src`` they get (developer is not folded into system).
ROLE_SRC = {"system": "system", "developer": "developer", "user": "user", "assistant": "agent"}
SRC_ROLE = {src: role for role, src in ROLE_SRC.items()}

# The spellings of a JSON ``arguments`` string that are regenerated from the parsed value; the code is kept in
# the export hints. Python's json.dumps (OpenHands, litellm, most SDKs), the compact form (OpenAI's API) and
# json.dumps with ASCII escapes. A string in none of these forms is kept exactly as residual ("x").
_ENCODERS = {
    "s": json.JSONEncoder(ensure_ascii=False).encode,
    "c": json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode,
    "a": json.JSONEncoder().encode,
}


def read_arguments(value: Any) -> tuple[Any, str]:
    """``(args, form)`` for a source ``arguments`` value.

    A JSON string is decoded (as RFC-0009 does) and ``form`` says how to spell it again: ``s``, ``c``, ``a``
    (see ``_ENCODERS``) or ``x`` (no regenerated form matches: the caller keeps the string as residual). A
    string that is not JSON (or that Storyline cannot hold exactly, e.g. an integer beyond 64 bits) stays the
    string (``r``); a value that is not a string (an object, as some exporters write) is kept as it is (``o``).
    """
    if not isinstance(value, str):
        return value, "o"
    try:
        parsed = loads(value)
    except FormatError:
        return value, "r"
    for code, encode in _ENCODERS.items():
        if encode(parsed) == value:
            return parsed, code
    return parsed, "x"


def write_arguments(args: Any, form: str) -> Any:
    """The source ``arguments`` value for Storyline ``args`` and the form ``read_arguments`` gave."""
    if form in ("o", "r"):
        return args
    return _ENCODERS.get(form, _ENCODERS["s"])(args)
