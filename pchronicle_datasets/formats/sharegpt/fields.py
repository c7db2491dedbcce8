"""The trajectory record's own keys, as data: what the reader maps and where each goes in the document.

Each entry is ``key → (what the value must be, where it goes)``: the bucket (``story``: the document's root,
``result``: ``/task/result``, ``metrics``: ``/final_metrics``, ``extra``: ``/agent/extra``) and the name in it.
A key whose value is not what it must be, or whose place is taken, is kept as residual; the keys not listed
here (``conversations``, ``model``, ``metadata``, LLaMA-Factory's ``system`` and ``tools``, the envelope)
need a rule of their own in ``reader``. ``metadata`` keys listed in ``METADATA_FIELDS`` map the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...schema import is_time

__all__ = ["METADATA_FIELDS", "RECORD_FIELDS", "Field"]

#: (accepts the value, bucket, name in the bucket)
Field = tuple[Callable[[Any], bool], str, str]


def _time(value: Any) -> bool:
    return isinstance(value, str) and is_time(value)


def _bool(value: Any) -> bool:
    return isinstance(value, bool)


def _int(value: Any) -> bool:
    return type(value) is int


def _list(value: Any) -> bool:
    return isinstance(value, list)


RECORD_FIELDS: dict[str, Field] = {
    "timestamp": (_time, "story", "finished_at"),
    "completed": (_bool, "result", "completed"),
    "partial": (_bool, "result", "partial"),
    "api_calls": (_int, "metrics", "api_calls"),
    "toolsets_used": (_list, "extra", "toolsets_used"),
}

METADATA_FIELDS: dict[str, Field] = {
    "timestamp": (_time, "story", "finished_at"),
}
