"""Writing Storyline documents as openai-msg rows: same-source documents are recovered (``recover``), others
synthesized (``synthesize``)."""

from __future__ import annotations

import logging
from typing import Any

from ...jsonio import dumps
from ...schema import validate
from ..residual import source_fields
from .hints import HINTS, check_hints, read_hints
from .recover import Recover
from .synthesize import synthesize
from .tables import NAME

__all__ = ["encode"]

log = logging.getLogger("pchronicle_datasets.openai_msg")


def _try_recover(story: dict, source: dict, hints: Any) -> tuple[list, dict] | None:
    """Same-source rows, or None when the export hints are missing or do not fit the document (a document
    edited after it was read, or hints of another producer): the rows are then synthesized, with a warning,
    and the document's residual rides in the ``_storyline`` envelope, so nothing is dropped."""
    if hints is None:
        return None
    try:
        check_hints(hints["rows"])
        return Recover(story, source, hints).rows()
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        log.warning(
            "session %r: export hints at /meta/%s do not fit the document (%r); rows are synthesized",
            story.get("session"),
            HINTS,
            exc,
        )
        return None


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """Rows for Storyline documents: JSON Lines, or an envelope when root fields must come back.

    Documents read from openai-msg are recovered from their residual and export hints (same source);
    others get synthesized rows (RFC-0009: ``job_id``, ``agent_id``, ``agent_model``), with their own
    formats' residual carried in a version-1 ``_storyline`` envelope on the session's first row.
    """
    if options:
        raise TypeError(f"the {NAME} writer takes no options, got {sorted(options)}")
    files: dict[str, int] = {}
    keyed: list[tuple[tuple, dict]] = []
    root: dict[str, Any] = {}
    for index, story in enumerate(stories):
        validate(story)
        source = source_fields(story, NAME)
        recovered = _try_recover(story, source, read_hints(story)) if source is not None else None
        if recovered is not None:
            rows, story_root = recovered
            order = files.setdefault(source["source_document_id"], len(files))
            root.update(story_root)
            keyed.extend(((0, order, r), row) for r, row in rows)
        else:
            keyed.extend(((1, index, s), row) for s, row in enumerate(synthesize(story)))
    keyed.sort(key=lambda x: x[0])
    rows_out = [row for _, row in keyed]
    if root or (len(rows_out) == 1 and "session_steps" in rows_out[0]):
        # Root fields need the envelope; so does a lone row with a `session_steps` key of its own, which
        # would otherwise read back as an envelope.
        return dumps({**root, "session_steps": rows_out}).decode("utf-8") + "\n"
    return "".join(dumps(row).decode("utf-8") + "\n" for row in rows_out)
