"""Storyline documents → SWE-agent ``.traj`` objects: a document read from SWE-agent exactly as it was (its
residual and pointer map), any other from its Storyline fields with every value a ``.traj`` cannot hold
counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...losses import for_document
from ..layout import LayoutError, openai_messages, rebuild, report_unwritten
from ..residual import envelope, other_sources, source_fields
from .fields import INFO, INVERSE, MODEL_PATH, NAME, SRC_ROLE, STATS, WRITTEN

__all__ = ["encode", "trajectory"]


def trajectory(story: dict[str, Any]) -> dict[str, Any]:
    """The ``.traj`` object of one document."""
    if (story.get("origin") or {}).get("format") == NAME:
        try:
            return rebuild(story, (source_fields(story, NAME) or {}).get("fields") or {}, INVERSE, NAME)
        except LayoutError:
            pass  # an edited document: written from its fields
    history = openai_messages(story, SRC_ROLE, lambda cid: {"tool_call_ids": [cid]})
    task = story.get("task") or {}
    info: dict[str, Any] = {}
    result = task.get("result") or {}
    for key, field in INFO.items():
        if field in result:
            info[key] = result[field]
    if "final_metrics" in story:
        info[STATS] = story["final_metrics"]
    out_traj: dict[str, Any] = {"trajectory": [], "history": history, "info": info}
    env = (task.get("env") or {}).get("name")
    if isinstance(env, str):
        out_traj["environment"] = env
    if isinstance(story["agent"].get("model"), str):
        config: object = story["agent"]["model"]
        for key in reversed(MODEL_PATH):  # where SWE-agent names its model
            config = {key: config}
        out_traj["replay_config"] = config
    report_unwritten(story, NAME, WRITTEN)
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        out_traj["_storyline"] = carried
    return out_traj


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One compact ``.traj`` object per line (one document: a valid ``.traj`` file)."""
    lines = []
    for story in stories:
        with for_document(story.get("session")):
            lines.append(orjson.dumps(trajectory(story)).decode() + "\n")
    return "".join(lines)
