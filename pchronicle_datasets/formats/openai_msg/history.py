"""History copies (RFC-0009): each row resends the conversation so far; a message is a copy of the previous
row's when its compared fields are equal. The reader compares them by key; the writer rebuilds a copy from
the same fields (``messages.project``).

>>> same_copy(history_key({"role": "user", "content": "hi"}), history_key({"role": "user", "content": "hi", "x": 1}))
True
"""

from __future__ import annotations

from typing import Any

import orjson

from ...jsonio import may_hold_big_int

__all__ = ["COMPARED", "COMPARED_KEYS", "ECHO_ROLES", "Held", "history_key", "same_copy", "same_json"]

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

    def add(self, msgs: list[dict], keys: list[tuple]) -> None:
        """One row's messages (and its ``response``, last, when that was the output), with their keys.

        A message equal to the one at its place in the previous row (a history copy, resent whole) is counted but
        not indexed again: an equal message is indexed before it, with the same key and fields, and ``find``
        returns the first match, so the index answers the same. Indexing every row's whole history made a
        session's reading quadratic in its length (a gateway resends the history with every row)."""
        last, self._last = self._last, msgs
        # The usual row resends the last one's messages whole: one list comparison (in C) counts them all.
        start = len(last) if len(last) <= len(msgs) and msgs[: len(last)] == last else 0
        self.count += start
        for i, (msg, key) in enumerate(zip(msgs[start:], keys[start:], strict=True), start):
            if i < len(last) and msg == last[i]:
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


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal with their types (``1`` is not ``1.0``), key order aside."""
    try:
        return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a value orjson cannot write (an integer beyond 64 bits): not the same
        return False


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
    if a == b:
        return True
    if a[0] != b[0] or a[1] != b[1] or a[3] != b[3] or len(a[2]) != len(b[2]):
        return False
    for x, y in zip(a[2], b[2], strict=True):
        if not (isinstance(x, tuple) and isinstance(y, tuple)):
            if x != y:
                return False
        elif x[:2] != y[:2] or not _same_args(x[2], y[2]):
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
