"""What a conversion would leave out, before anything is written: the loss inventory (issue #23).

``losses(data, target)`` runs a target over documents the way a user would (``to_messages``, ``to_sharegpt``,
or a format's writer through ``from_storyline``) inside a loss collection, writes nothing, and gives the
``LossReport``: each kind of loss with its count, the pointer of the first and the document it is in. The
target ``"storyline"`` (the dataset rows themselves) loses nothing: its inventory lists what the readers kept
as residual instead of mapping (``unknown_fields``), by source format and pointer pattern. ``inspect --losses``
prints the inventory of every target per file, and ``push`` writes the one of its conversion into the dataset
card ("What the conversion left out").

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "hi", "reason": "private"}, {"id": 2, "src": "agent", "msg": "hello"}]}
>>> losses([story], target="to_sharegpt").summary()
'1 kind of loss: reasoning_dropped 1 (first at /turns/0/reason of s)'
>>> losses([story], target="storyline").summary()
'no loss'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .errors import PchronicleError
from .losses import LossReport, collect_losses, for_document

__all__ = ["TRAINING_TARGETS", "losses", "targets"]

#: The map functions a loss inventory can run, by the name users call them.
TRAINING_TARGETS = ("to_messages", "to_sharegpt")

_INDEX = re.compile(r"/\d+(?=/|$)")


def targets() -> list[str]:
    """Every target ``losses`` knows: the dataset rows, the map functions, then each registered format's writer.

    >>> targets()[:3]
    ['storyline', 'to_messages', 'to_sharegpt']
    """
    from .formats import formats

    return ["storyline", *TRAINING_TARGETS, *(f.NAME for f in formats() if f.NAME != "storyline")]


def _documents(data: Any) -> Iterator[dict[str, Any]]:
    """Storyline documents from a document, dataset rows (a ``Dataset`` or dicts) or documents."""
    from .features import is_row, row_to_story

    items: Iterable[Any] = [data] if isinstance(data, Mapping) else data
    for item in items:
        if isinstance(item, Mapping) and is_row(item):
            yield row_to_story(item)
        else:
            yield dict(item)


def _residual(story: Mapping[str, Any], report: LossReport) -> None:
    """What the readers kept as residual, counted by source and pointer pattern (``/turns/*/x``)."""
    sources = (story.get("unknown_fields") or {}).get("sources") or {}
    for source, entry in sources.items():
        for pointer in (entry.get("fields") or {}) if isinstance(entry, Mapping) else ():
            report.add(f"kept as residual ({source}): {_INDEX.sub('/*', pointer)}", pointer)


def _run(target: str, story: dict[str, Any], options: Mapping[str, Any]) -> None:
    if target == "to_messages":
        from .training import to_messages

        to_messages(story, **options)
    elif target == "to_sharegpt":
        from .training import to_sharegpt

        to_sharegpt(story, **options)
    else:
        from .formats import from_storyline

        from_storyline(target, [story], **options)


def losses(data: Any, target: str = "to_sharegpt", **options: Any) -> LossReport:
    """The loss report of converting ``data`` (a Storyline document, documents, or dataset rows such as a
    ``load_dataset("pchronicle", …)`` split) to ``target`` (``targets()``: ``"storyline"`` for the rows'
    residual, ``"to_messages"``, ``"to_sharegpt"``, or a format name), with ``options`` passed to it. Nothing is
    written and nothing is logged; a document the target refuses is counted as ``refused: <reason>``.
    """
    if target not in targets():
        raise ValueError(f"unknown target {target!r}: one of {', '.join(targets())}")
    report = LossReport()
    if target == "storyline":
        for story in _documents(data):
            _residual(story, report)
        return report
    for story in _documents(data):
        name = str(story.get("session", ""))
        with collect_losses(propagate=False) as one, for_document(name):
            try:
                _run(target, story, options)
            except PchronicleError as err:
                one.add(f"refused: {err.reason}", err.pointer)
        report.update(one, document=name)
    return report
