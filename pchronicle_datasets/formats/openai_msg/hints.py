"""The export hints: what the reader notes under ``/meta/openai-msg`` so that the same-source writer gives the
rows back exactly. The shape is declared here once (``RowHint``), written by the reader and checked and read by
the writer (``docs/formats/openai-msg.md`` describes each key).

>>> hint = new_hint(0, 1)
>>> set_form(hint, "messages/0/content", "json-string")
>>> hint
{'r': 0, 'step_id': 1, 'keys': [], 'forms': {'messages/0/content': 'json-string'}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from .tables import REASONING_KEYS

__all__ = ["HINTS", "Form", "RowHint", "check_hints", "new_hint", "read_hints", "set_form"]

HINTS = "openai-msg"  # the key of this format's hints under /meta

#: How a source value was spelled, where the Storyline value does not say it: ``json-string`` (a JSON value
#: encoded as a string), ``absent`` (the key was missing), ``null``, ``msg`` (a refusal was the fallback msg),
#: ``residual`` (a tool call kept whole), or ``{"value": …}`` (the content beside a refusal fallback).
Form = Literal["json-string", "absent", "null", "msg", "residual"] | dict


class _RowHintRequired(TypedDict):
    r: int  # the row's index in the file ({r} of its pointers)
    step_id: int
    keys: list[str]  # relative source keys that mapped (consumed), in source order (``tools`` among them)


class RowHint(_RowHintRequired, total=False):
    """One row's hints."""

    p: int  # messages [0, p) are history copies of the previous row
    n: int  # how many messages the row had
    out: int  # which message was the output (-1: ``response``)
    user: int  # which message was the request turn
    tools: list[int]  # which messages were the tool results
    ctx: list[int]  # which messages became RFC-0009's context turns (first row only)
    more: list[int]  # which messages became turns RFC-0009 leaves out (developer, unselected assistant…)
    loose: list[list[int]]  # [message, turn id]: tool messages without an id, as results of the turn they follow
    echo: list[list[int]]  # [message, held index]: assistant or tool messages that repeat an earlier row's message
    forms: dict[str, Form]  # relative pointer → how the value was spelled
    reason_key: str  # the reasoning key, when it was not reasoning_content
    derived_calls: bool  # the tool calls were derived from markup in the content


def new_hint(r: int, step_id: int) -> RowHint:
    return {"r": r, "step_id": step_id, "keys": []}


def set_form(hint: RowHint, rel: str, form: Form) -> None:
    """Note how the source spelled the value at ``rel`` (a pointer relative to the row, without the slash)."""
    hint.setdefault("forms", {})[rel] = form


def read_hints(story: Mapping[str, Any]) -> Any:
    """The document's hints object (``{"version": 1, "rows": [...]}``) when it claims this version, else None."""
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    if isinstance(hints, dict) and hints.get("version") == 1 and isinstance(hints.get("rows"), list):
        return hints
    return None


def check_hints(rows: Any) -> None:
    """``ValueError`` unless every row hint has the shape ``RowHint`` declares."""

    def index(value: Any, n: int, low: int = 0) -> bool:
        return type(value) is int and low <= value < n

    seen: set[int] = set()
    for hint in rows:
        if not isinstance(hint, dict):
            raise ValueError("a row hint is not an object")
        r, n = hint.get("r"), hint.get("n")
        if type(r) is not int or r < 0 or r in seen or type(hint.get("step_id")) is not int or hint["step_id"] < 1:
            raise ValueError("bad r or step_id")
        seen.add(r)
        if type(n) is not int or n < 0 or not index(hint.get("p"), n + 1) or not index(hint.get("out"), n, -1):
            raise ValueError("bad p, n or out")
        if not isinstance(hint.get("keys"), list) or not all(type(k) is str for k in hint["keys"]):
            raise ValueError("bad keys")
        if "user" in hint and not index(hint["user"], n):
            raise ValueError("bad user")
        for name in ("tools", "ctx", "more"):
            if name in hint and not (isinstance(hint[name], list) and all(index(m, n) for m in hint[name])):
                raise ValueError(f"bad {name}")
        loose = hint.get("loose", [])
        if not isinstance(loose, list) or not all(
            isinstance(x, list) and len(x) == 2 and index(x[0], n) and type(x[1]) is int for x in loose
        ):
            raise ValueError("bad loose")
        echo = hint.get("echo", [])
        if not isinstance(echo, list) or not all(
            isinstance(x, list) and len(x) == 2 and index(x[0], n) and type(x[1]) is int and x[1] >= 0 for x in echo
        ):
            raise ValueError("bad echo")
        forms = hint.get("forms", {})
        if not isinstance(forms, dict) or not all(isinstance(v, (str, dict)) for v in forms.values()):
            raise ValueError("bad forms")
        if hint.get("reason_key", "reasoning_content") not in REASONING_KEYS:
            raise ValueError("bad reason_key")
