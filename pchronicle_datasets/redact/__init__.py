"""Redaction before anything leaves the machine (docs/redaction.md).

``push`` and ``push_to_hub`` redact by default and upload nothing when redaction fails; for local use:

>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s1", "agent": {"id": "bot"},
...          "turns": [{"id": 1, "src": "user", "msg": "key AKIA" + "Z2Q7" * 4 + " in /home/alice/x"}]}
>>> pc.redact(story, key="demo")["turns"][0]["msg"]
'key <REDACTED:aws-access-key-id:6921bf4b> in /home/<REDACTED:user-name:0718cd20>/x'
>>> row = pc.redact_row(pc.story_to_row(story), key="demo")   # ds.map(pc.redact_row) on a dataset
>>> pc.row_to_story(row) == pc.redact(story, key="demo")
True

A ``Redactor`` keeps one run's key and report (``r.report.lines()``); ``redact``/``redact_row`` share one
per process (a random key) unless given ``key=`` (the same key gives the same placeholders in every run and
every process: pass it with ``num_proc``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import RedactionConfig, RedactionError
from .engine import Redactor
from .report import RedactionReport
from .rules import RULES, Rule

__all__ = ["RULES", "RedactionConfig", "RedactionError", "RedactionReport", "Redactor", "Rule", "redact", "redact_row"]

_SHARED: dict[str | None, Redactor] = {}


def _shared(key: str | None) -> Redactor:
    redactor = _SHARED.get(key)
    if redactor is None:
        redactor = _SHARED[key] = Redactor(key=key)
    return redactor


def redact(story: Mapping[str, Any], *, key: str | None = None, redactor: Redactor | None = None) -> dict[str, Any]:
    """A redacted copy of a Storyline document: every secret, e-mail address and user name replaced by its
    placeholder, opaque reasoning payloads stripped; ids, links and times as they were.

    >>> story = {"schema_version": "storyline/v1", "session": "s1", "agent": {"id": "bot"},
    ...          "turns": [{"id": 1, "src": "user", "msg": "write to ann@acme.io, not ann@example.com"}]}
    >>> redact(story, key="demo")["turns"][0]["msg"]
    'write to <REDACTED:email:75aebe8e>, not ann@example.com'
    """
    return (redactor or _shared(key)).story(story)


def redact_row(row: Mapping[str, Any], *, key: str | None = None, redactor: Redactor | None = None) -> dict[str, Any]:
    """A redacted copy of a dataset row, for ``ds.map(pc.redact_row)``: a ``STORYLINE_FEATURES`` row, or a
    training row (``to_sharegpt``/``to_messages`` output), every string of it.

    >>> redact_row({"conversations": [{"from": "human", "value": "my dir is /Users/ann/code"}]}, key="demo")
    {'conversations': [{'from': 'human', 'value': 'my dir is /Users/<REDACTED:user-name:d8bd1658>/code'}]}
    """
    return (redactor or _shared(key)).row(row)
