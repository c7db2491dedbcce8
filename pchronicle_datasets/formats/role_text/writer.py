"""Storyline documents → role/text records: a document read from role/text exactly as it was (its residual and
pointer map), any other from its Storyline fields with every value the record cannot hold counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...losses import for_document, report_loss
from ..layout import LayoutError, rebuild, report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import INVERSE, NAME, RESULT_KEYS, SRC_ROLE, WRITTEN

__all__ = ["encode", "record"]


def record(story: dict[str, Any]) -> dict[str, Any]:
    """The role/text record of one document."""
    if (story.get("origin") or {}).get("format") == NAME:
        try:
            return rebuild(story, (source_fields(story, NAME) or {}).get("fields") or {}, INVERSE, NAME)
        except LayoutError:
            pass  # an edited document: written from its fields
    out: dict[str, Any] = {"instance_id": story["session"]}
    if isinstance((story.get("agent") or {}).get("model"), str):
        out["model_name"] = story["agent"]["model"]
    result = ((story.get("task") or {}).get("result")) or {}
    for key, target in RESULT_KEYS.items():
        if key in result:
            out[target] = result[key]
    trajectory = []
    for t, turn in enumerate(story["turns"]):
        msg = turn["msg"]
        if not isinstance(msg, str):
            report_loss("text in role-text", pointer=f"/turns/{t}/msg")
            msg = "" if msg is None else orjson.dumps(msg).decode()
        trajectory.append({"role": SRC_ROLE.get(turn["src"], turn["src"]), "text": msg})
    out["trajectory"] = trajectory
    report_unwritten(story, NAME, WRITTEN)
    env = envelope(other_sources(story, NAME))
    if env is not None:
        out["_storyline"] = env
    return out


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """JSON Lines of role/text records, one per document."""
    lines = []
    for story in stories:
        with for_document(story.get("session")):
            lines.append(orjson.dumps(record(story)).decode() + "\n")
    return "".join(lines)
