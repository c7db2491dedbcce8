"""Storyline documents → mini-SWE-agent trajectories: a document read from mini-swe-agent exactly as it was (its
residual and pointer map), any other from its Storyline fields with every value the trajectory cannot hold
counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...losses import for_document
from ..layout import LayoutError, openai_messages, rebuild, report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import INFO, INVERSE, MODEL_PATH, NAME, SRC_ROLE, STATS, VERSION, WRITTEN, WRITTEN_FORMAT

__all__ = ["WRITTEN_FORMAT", "encode", "trajectory"]


def trajectory(story: dict[str, Any]) -> dict[str, Any]:
    """The mini-SWE-agent trajectory of one document."""
    if (story.get("origin") or {}).get("format") == NAME:
        try:
            return rebuild(story, (source_fields(story, NAME) or {}).get("fields") or {}, INVERSE, NAME)
        except LayoutError:
            pass  # an edited document: written from its fields
    messages = openai_messages(story, SRC_ROLE, lambda cid: {"tool_call_id": cid})
    info: dict[str, Any] = {}
    result = (story.get("task") or {}).get("result") or {}
    for key, field in INFO.items():
        if field in result:
            info[key] = result[field]
    if "final_metrics" in story:
        info[STATS] = story["final_metrics"]
    if isinstance(story["agent"].get("ver"), str):
        info[VERSION] = story["agent"]["ver"]
    if isinstance(story["agent"].get("model"), str):
        config: object = story["agent"]["model"]
        for key in reversed(MODEL_PATH[1:]):  # where mini-swe-agent names its model
            config = {key: config}
        info[MODEL_PATH[0]] = config
    out_traj: dict[str, Any] = {
        "instance_id": story["session"],
        "info": info,
        "messages": messages,
        "trajectory_format": WRITTEN_FORMAT,
    }
    report_unwritten(story, NAME, WRITTEN)
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        out_traj["_storyline"] = carried
    return out_traj


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One compact trajectory object per line (one document: a valid ``.traj.json`` file)."""
    lines = []
    for story in stories:
        with for_document(story.get("session")):
            lines.append(orjson.dumps(trajectory(story)).decode() + "\n")
    return "".join(lines)
