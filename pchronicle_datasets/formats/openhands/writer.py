"""Storyline documents → OpenHands event streams: a document read from OpenHands exactly as it was (its residual
and pointer map), any other from its Storyline fields with every value an event stream cannot hold counted."""

from __future__ import annotations

from typing import Any

import orjson

from ...losses import for_document
from ..layout import LayoutError, rebuild, report_unwritten
from ..residual import source_fields
from .fields import CALL, INVERSE, MESSAGE, NAME, RESULT, SYSTEM, WRITTEN

__all__ = ["encode", "events"]


def events(story: dict[str, Any]) -> list[dict[str, Any]]:
    """The event stream of one document."""
    if (story.get("origin") or {}).get("format") == NAME:
        try:
            return rebuild(story, (source_fields(story, NAME) or {}).get("fields") or {}, INVERSE, NAME)
        except LayoutError:
            pass  # an edited document: written from its fields
    out: list[dict[str, Any]] = []
    for turn in story["turns"]:
        source = turn["src"] if turn["src"] in ("user", "agent") else "environment"
        calls = turn.get("tool_calls") or []
        if not calls and turn["src"] == "system":
            # the system prompt as OpenHands writes it (SystemMessageAction), which the reader takes back as such
            out.append({"id": len(out), "source": "agent", "action": SYSTEM, "args": {"content": turn["msg"]}})
        elif not calls:
            out.append({"id": len(out), "source": source, "action": MESSAGE, "args": {"content": turn["msg"]}})
        by_tcid = {}
        for n, call in enumerate(calls):
            args = dict(call["args"]) if isinstance(call["args"], dict) else {"arguments": call["args"]}
            if n == 0 and isinstance(turn["msg"], str) and turn["msg"]:
                args["thought"] = turn["msg"]
            by_tcid[call["tcid"]] = len(out)
            out.append(
                {
                    "id": len(out),
                    "source": "agent",
                    "action": CALL,
                    "args": args,
                    "tool_call_metadata": {"function_name": call["fn"], "tool_call_id": call["tcid"]},
                }
            )
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        for result in results if isinstance(results, list) else ():
            if not isinstance(result, dict):
                continue
            event: dict[str, Any] = {
                "id": len(out),
                "source": "agent",
                "observation": RESULT,
                "content": result.get("content"),
            }
            cause = by_tcid.get(result.get("source_call_id"))
            if cause is not None:
                event["cause"] = cause
                call = calls[[c["tcid"] for c in calls].index(result["source_call_id"])]
                event["tool_call_metadata"] = {"function_name": call["fn"], "tool_call_id": call["tcid"]}
            out.append(event)
    report_unwritten(story, NAME, WRITTEN)
    return out


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One compact event array per line (one document: a valid OpenHands trajectory file)."""
    lines = []
    for story in stories:
        with for_document(story.get("session")):
            lines.append(orjson.dumps(events(story)).decode() + "\n")
    return "".join(lines)
