"""The format's name and its export hints: what the reader notes under ``/meta/sharegpt`` so that the
same-source writer gives the record back byte for byte. The shape is declared here once; the reader writes it
(``make_hints``) and the writer reads it (``read_hints``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

__all__ = ["HINTS", "NAME", "Hints", "make_hints", "read_hints"]

NAME = "sharegpt"
HINTS = NAME  # the key of this format's hints under /meta


class _RequiredHints(TypedDict):
    version: Literal[1]
    bare: bool  # the record was a bare conversation array, not an object with ``conversations``
    # "generated": element 0 was the generated tools prompt; "column": the first turn is LLaMA-Factory's
    # ``system`` key
    system: Literal["none", "generated", "column"]
    keys: list[str]  # the record keys (or ``metadata/…`` keys) that mapped to Storyline, in source order


# The optional key in a subclass with total=False: typing.NotRequired is Python 3.11+, and the package
# supports 3.10.
class Hints(_RequiredHints, total=False):
    dialect: Literal["llamafactory"]  # absent: the reference agent's dialect


def make_hints(*, bare: bool, system: str, keys: list[str], dialect: str = "reference") -> Hints:
    hints: Hints = {"version": 1, "bare": bare, "system": system, "keys": keys}  # type: ignore[typeddict-item]
    if dialect != "reference":
        hints["dialect"] = dialect  # type: ignore[typeddict-item]
    return hints


def read_hints(story: Mapping[str, Any]) -> Any:
    """The document's hints when they claim this version (their fit is checked by using them), else None."""
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    return hints if isinstance(hints, dict) and hints.get("version") == 1 else None
