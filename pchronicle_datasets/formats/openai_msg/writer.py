"""Writing Storyline documents as openai-msg rows: same-source documents are recovered (``recover``), others
synthesized (``synthesize``)."""

from __future__ import annotations

import logging
from typing import Any

from ...jsonio import dumps
from ...losses import report_loss
from ...pointer import join
from ...schema import validate
from ..residual import source_fields
from .hints import HINTS, check_hints, read_hints
from .recover import Recover
from .synthesize import synthesize
from .tables import NAME
from .unwritten import report_unwritten

__all__ = ["distinct_sessions", "encode"]

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


def distinct_sessions(sessions: list[str]) -> list[str]:
    """The ``session_id`` each document is written under, so that distinct documents stay distinct sessions:
    the first document of a session keeps its id, each later one gets ``{session}#{n}``, the smallest ``n`` from
    2 that no document of the output uses (readers group rows by ``session_id``, so two documents sharing one
    would read back as one session, or not at all).

    >>> distinct_sessions(["s", "t", "s", "s#2", "s"])
    ['s', 't', 's#3', 's#2', 's#4']
    """
    taken = set(sessions)
    seen: set[str] = set()
    out = []
    for sid in sessions:
        if sid in seen:
            n = 2
            while f"{sid}#{n}" in taken:
                n += 1
            sid = f"{sid}#{n}"
            taken.add(sid)
        seen.add(sid)
        out.append(sid)
    return out


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """Rows for Storyline documents: JSON Lines, or an envelope when root fields must come back.

    Documents read from openai-msg are recovered from their residual and export hints (same source);
    others get synthesized rows (RFC-0009: ``job_id``, ``agent_id``, ``agent_model``), with their own
    formats' residual carried in a version-1 ``_storyline`` envelope on the session's first row. Each document
    is its own session (``distinct_sessions``; a renamed one is a ``session_renamed`` loss); a document no row
    can hold (no agent turn) is a ``no_agent_turn`` loss.
    """
    if options:
        raise TypeError(f"the {NAME} writer takes no options, got {sorted(options)}")
    for story in stories:
        validate(story)
    files: dict[str, int] = {}
    keyed: list[tuple[tuple, dict]] = []
    roots: list[tuple[int, dict[str, Any]]] = []  # (file order, root fields) of each document that has them
    sessions = distinct_sessions([s["session"] for s in stories])
    for index, (story, sid) in enumerate(zip(stories, sessions, strict=True)):
        if sid != story["session"]:
            report_loss("session_renamed", pointer="/session", detail=f"{story['session']!r} written as {sid!r}")
            story = {**story, "session": sid}
        source = source_fields(story, NAME)
        recovered = _try_recover(story, source, read_hints(story)) if source is not None else None
        if recovered is not None:
            rows, story_root = recovered
            order = files.setdefault(source["source_document_id"], len(files))
            if story_root:
                roots.append((order, story_root))
            keyed.extend(((0, order, r), row) for r, row in rows)
        else:
            synthesized = synthesize(story)
            if not synthesized:
                report_loss("no_agent_turn", pointer="/turns", detail=f"session {story['session']!r}")
            keyed.extend(((1, index, s), row) for s, row in enumerate(synthesized))
    # What the synthesized rows cannot hold (keys (1, index, step): documents not written from their own rows).
    report_unwritten(stories[i] for i in sorted({key[1] for key, _ in keyed if key[0] == 1}))
    keyed.sort(key=lambda x: x[0])
    rows_out = [row for _, row in keyed]
    root = _root(roots)
    if root or (len(rows_out) == 1 and "session_steps" in rows_out[0]):
        # Root fields need the envelope; so does a lone row with a `session_steps` key of its own, which
        # would otherwise read back as an envelope.
        return dumps({**root, "session_steps": rows_out}).decode("utf-8") + "\n"
    return "".join(dumps(row).decode("utf-8") + "\n" for row in rows_out)


def _root(roots: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The output's envelope root fields, from the ``(file order, root fields)`` of the documents that have them.

    An output has one root, which its reader gives to the output's first document (the first session of the
    first file): only the first file's root comes back with its own document. Any other document's root fields
    are still written when the key is free, and are a ``root_fields_merged`` loss either way."""
    root: dict[str, Any] = {}
    for n, (order, fields) in enumerate(roots):
        for key, value in fields.items():
            if n > 0 or order != 0:
                report_loss("root_fields_merged", pointer=join("", key))
            root.setdefault(key, value)
    return root
