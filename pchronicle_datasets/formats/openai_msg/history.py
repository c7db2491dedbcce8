"""History copies (RFC-0009): each row resends the conversation so far; a message is a copy of the previous
row's when its compared fields are equal. The reader compares them by key; the writer rebuilds a copy from
the same fields (``messages.project``).

>>> same_copy(history_key({"role": "user", "content": "hi"}), history_key({"role": "user", "content": "hi", "x": 1}))
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from ...jsonio import may_hold_big_int
from .tables import same_json

__all__ = [
    "COMPARED",
    "COMPARED_KEYS",
    "ECHO_ROLES",
    "NO_HISTORY",
    "Held",
    "History",
    "dumped",
    "history_key",
    "resends",
    "same_copy",
    "same_json",
    "same_values",
]

COMPARED = ("role", "content", "tool_calls", "tool_call_id")  # in the order the writer writes them
COMPARED_KEYS = frozenset(COMPARED)


def history_key(msg: dict) -> tuple:
    """What makes a message a history copy: role, content, tool calls (id, name, arguments), tool_call_id."""
    calls = msg.get("tool_calls")
    call_key: list = []
    if isinstance(calls, list):
        for c in calls:
            if isinstance(c, dict):
                fn = c.get("function") if isinstance(c.get("function"), dict) else {}
                call_key.append((c.get("id") or None, fn.get("name"), fn.get("arguments")))
            else:
                call_key.append(c)
    content = msg.get("content")
    return (msg.get("role"), None if content == "" else content, call_key, msg.get("tool_call_id") or None)


#: The roles of a message that repeats what an earlier row already holds (an *echo*): a gateway that logs only
#: the new messages of each request still resends the assistant message whose calls the new tool results answer
#: (docs/formats/openai-msg.md, "Echoes"). A user message is never an echo: a person may say the same thing twice.
ECHO_ROLES = frozenset({"assistant", "tool"})


class Held:
    """Every message and output the earlier rows of a session held, by history key, in row order: the reader
    finds echoes in it, and the same-source writer rebuilds them from the same positions.

    >>> held = Held()
    >>> held.add([{"role": "assistant", "content": "hi"}], [history_key({"role": "assistant", "content": "hi"})])
    >>> held.find({"role": "assistant", "content": "hi"}, history_key({"role": "assistant", "content": "hi"}))
    (0, {'role': 'assistant', 'content': 'hi'})
    >>> held.find({"role": "user", "content": "hi"}, ("user", "hi", [], None)) is None
    True
    """

    def __init__(self) -> None:
        self.count = 0
        self._by_print: dict[tuple, list[tuple[int, tuple, dict]]] = {}
        self._last: list[dict] = []  # the messages of the last add: the next row resends most of them

    @staticmethod
    def _print(key: tuple) -> tuple:
        # What two copies share exactly (same_copy compares arguments as JSON): role, tool_call_id, call ids.
        # Only strings are bucketed by value: a wrong-typed field (a list role, an object id) is refused later
        # with its pointer, and must not stop the reader here as an unhashable key.
        calls = tuple(_str_or_none(c[0]) if isinstance(c, tuple) else None for c in key[2])
        return _str_or_none(key[0]), _str_or_none(key[3]), calls, _str_or_none(key[1])

    def add(self, msgs: list[dict], keys: list[tuple], same: int = 0) -> None:
        """One row's messages (and its ``response``, last, when that was the output), with their keys; ``same``:
        how many of them are known to be the last add's resent equal (``resends``).

        A message equal to the one at its place in the previous row (a history copy, resent whole) is counted but
        not indexed again: an equal message is indexed before it, with the same key and fields, and ``find``
        returns the first match, so the index answers the same. Indexing every row's whole history made a
        session's reading quadratic in its length (a gateway resends the history with every row)."""
        last, self._last = self._last, msgs
        # The usual row resends the last one's messages whole: one comparison counts them all.
        start = same or (len(last) if len(last) <= len(msgs) and same_values(msgs[: len(last)], last) else 0)
        self.count += start
        for i, (msg, key) in enumerate(zip(msgs[start:], keys[start:], strict=True), start):
            if i < len(last) and same_values(msg, last[i]):
                self.count += 1
                continue
            role = msg.get("role")
            if type(role) is str and role in ECHO_ROLES:
                projected = {k: msg[k] for k in COMPARED if k in msg}
                self._by_print.setdefault(self._print(key), []).append((self.count, key, projected))
            self.count += 1

    def find(self, msg: dict, key: tuple) -> tuple[int, dict] | None:
        """``(position, compared fields)`` of the first held message that ``msg`` (of history key ``key``) is a
        copy of, or None. A held message with a compared key ``msg`` lacks is not its copy (the writer rebuilds
        an echo from the held message, then sets the echo's own spellings)."""
        for index, held_key, projected in self._by_print.get(self._print(key), ()):
            if same_copy(key, held_key) and projected.keys() <= msg.keys():
                return index, projected
        return None


def _str_or_none(value: Any) -> str | None:
    return value if type(value) is str else None


class History(NamedTuple):
    """What a row's messages are compared with: the previous row's."""

    msgs: list[dict]  # its messages
    keys: list[tuple]  # their history keys, and its output's when that was ``response``
    extra: list[int]  # which of its messages carry keys beyond the compared ones
    held: list[dict]  # its messages and that output: what a copy is rebuilt from (``messages.project``)
    text: bytes | None  # its messages as ``dumped`` writes them (None: orjson cannot)


NO_HISTORY = History([], [], [], [], b"[]")


def dumped(msgs: list[dict]) -> bytes | None:
    """A row's messages as orjson writes them, keys sorted (a copy may order them otherwise: the same-source
    writer rebuilds copies in ``COMPARED`` order), or None when it cannot (an integer beyond 64 bits)."""
    try:
        return orjson.dumps(msgs, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def resends(msgs: list[dict], text: bytes | None, prev: History) -> bool:
    """Whether a row's messages (``text``: ``dumped(msgs)``) begin with the previous row's, equal with their types.

    The written texts tell it in one comparison: the previous row's, its closing bracket left out, begins this
    row's, followed by a comma or the end. Python's ``==`` first: most rows that do not resend fail it at once.

    >>> a, b = [{"role": "user", "content": "q"}], [{"role": "user", "content": "q"}, {"role": "user", "content": "r"}]
    >>> prev = History(a, [], [], a, dumped(a))
    >>> resends(b, dumped(b), prev), resends([{"role": "user", "content": "q", "x": 1}], None, prev)
    (True, False)
    """
    n = len(prev.msgs)
    if not n or n > len(msgs) or msgs[:n] != prev.msgs:
        return False
    if text is not None and prev.text is not None:
        cut = len(prev.text) - 1
        if text[cut : cut + 1] in (b",", b"]") and text[:cut] == prev.text[:cut]:
            return True
    return same_values(msgs[:n], prev.msgs)  # texts orjson cannot write


def same_values(a: Any, b: Any) -> bool:
    """``a == b`` for parsed JSON values, their types told apart: Python's ``==`` says ``true == 1 == 1.0``, and
    a resent message that differs from the last row's only so is an edit, not a copy (its values would come
    back as the first row spelled them). Key order aside, as ``==``.

    >>> same_values([{"a": 1, "b": "x"}], [{"b": "x", "a": 1}]), same_values([{"a": 1}], [{"a": True}])
    (True, False)
    """
    if a is b:
        return True
    if a != b:
        return False
    try:
        # Equal by ``==``: the same bytes (nearly always: a client resends what it sent) are the same types.
        return orjson.dumps(a) == orjson.dumps(b) or same_json(a, b)
    except TypeError:  # orjson cannot write it (an integer beyond 64 bits): the types, one value at a time
        return _same_types(a, b)


def _same_types(a: Any, b: Any) -> bool:
    """For ``a == b``: whether every value has the same type as its counterpart."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return all(_same_types(v, b[k]) for k, v in a.items())
    if type(a) in (list, tuple):
        return all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return True


def _parsed_args(args: Any) -> Any:
    if type(args) is str:
        if may_hold_big_int(args):
            return args  # orjson would read an integer beyond 64 bits as a float: two values could compare equal
        try:
            return ("json", orjson.loads(args))
        except orjson.JSONDecodeError:
            return args
    return ("json", args)


def same_copy(a: tuple, b: tuple) -> bool:
    """Keys equal, or equal once arguments are compared as JSON (a client may re-serialise them)."""
    if same_values(a, b):
        return True
    if len(a[2]) != len(b[2]) or not same_values((a[0], a[1], a[3]), (b[0], b[1], b[3])):
        return False
    for x, y in zip(a[2], b[2], strict=True):
        if not (isinstance(x, tuple) and isinstance(y, tuple)):
            if not same_values(x, y):
                return False
        elif not same_values(x[:2], y[:2]) or not _same_args(x[2], y[2]):
            return False
    return True


def _same_args(a: Any, b: Any) -> bool:
    """Arguments equal as JSON values, with their types (``true`` is not ``1``, ``1`` not ``1.0``: Python's ``==``
    says they are), whatever their spacing and key order; arguments that are not JSON, as text."""
    if a == b and type(a) is str:
        return True
    x, y = _parsed_args(a), _parsed_args(b)
    if type(x) is tuple and type(y) is tuple:
        return same_json(x[1], y[1])
    return x == y
