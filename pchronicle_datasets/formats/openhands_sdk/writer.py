"""Storyline documents → OpenHands SDK events: a document read from them exactly as it was (its residual and
pointer map), any other from its Storyline fields with every value the events cannot hold counted."""

from __future__ import annotations

import json
from typing import Any

import orjson

from ...losses import for_document, report_loss
from ..layout import LayoutError, rebuild, report_unwritten
from ..residual import source_fields
from .fields import INVERSE, MESSAGE, NAME, SYSTEM, WRITTEN

__all__ = ["encode", "events"]


def _same_source(story: dict[str, Any]) -> Any:
    """The source value (an event list, or an evaluation record) of a document read from SDK events, else None."""
    if (story.get("origin") or {}).get("format") != NAME:
        return None
    try:
        return rebuild(story, (source_fields(story, NAME) or {}).get("fields") or {}, INVERSE, NAME)
    except LayoutError:
        return None  # an edited document: written from its fields


def _text(text: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text if isinstance(text, str) else orjson.dumps(text).decode()}]


def events(story: dict[str, Any]) -> Any:
    """The events of one document (an evaluation record when it was read from one)."""
    back = _same_source(story)
    if back is not None:
        return back
    out: list[dict[str, Any]] = []

    def add(kind: str, source: str, **fields: Any) -> None:
        out.append({"kind": kind, "id": f"event-{len(out)}", "source": source, **fields})

    tools = story["agent"].get("tools")
    tools = tools if isinstance(tools, list) else None  # the tools offered: the first system prompt's
    written = WRITTEN
    for turn in story["turns"]:
        calls = turn.get("tool_calls") or []
        reason = {"reasoning_content": turn["reason"]} if isinstance(turn.get("reason"), str) else {}
        if not calls and turn["src"] == "system":
            add(SYSTEM, "agent", system_prompt=_text(turn["msg"])[0], tools=tools or [])
            if tools is not None:
                written, tools = {**WRITTEN, "agent": ("id", "name", "tools")}, None
        elif not calls:
            role = {"agent": "assistant", "user": "user"}.get(turn["src"], "user")
            source = turn["src"] if turn["src"] in ("agent", "user") else "environment"
            add(MESSAGE, source, llm_message={"role": role, "content": _text(turn["msg"]), **reason})
        response = f"response-{turn['id']}"
        for n, call in enumerate(calls):
            thought = _text(turn["msg"]) if n == 0 and turn["msg"] not in ("", None) else []
            arguments = call["args"] if isinstance(call["args"], str) else json.dumps(call["args"])
            add(
                "ActionEvent",
                "agent",
                thought=thought,
                **(reason if n == 0 else {}),
                tool_name=call["fn"],
                tool_call_id=call["tcid"],
                tool_call={"id": call["tcid"], "name": call["fn"], "arguments": arguments},
                llm_response_id=response,
            )
        by_tcid = {c["tcid"]: (c, out[len(out) - len(calls) + n]["id"]) for n, c in enumerate(calls)}
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        for result in results if isinstance(results, list) else ():
            if not isinstance(result, dict):
                continue
            call, action_id = by_tcid.get(result.get("source_call_id"), (None, None))
            content = _text(result.get("content")) if result.get("content") is not None else []
            if call is None:
                add(MESSAGE, "environment", llm_message={"role": "user", "content": content})
                continue
            add(
                "ObservationEvent",
                "environment",
                tool_name=call["fn"],
                tool_call_id=call["tcid"],
                observation={"content": content},
                action_id=action_id,
            )
    report_unwritten(story, NAME, written)
    return out


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One compact event array (or evaluation record) per line; a lone document read from JSON Lines of events is
    given back as they were, one event per line (several such documents are arrays, so that each reads back as
    one document). A document with no turn is not written (a ``no_turn`` loss): its events would read back as
    none."""
    lines = []
    for story in stories:
        with for_document(story.get("session")):
            if not story["turns"] and (story.get("origin") or {}).get("format") != NAME:
                report_loss("no_turn", pointer="/turns", detail=f"session {story.get('session')!r}")
                continue
            value = events(story)
        hints = (story.get("meta") or {}).get(NAME) if isinstance(story.get("meta"), dict) else None
        if len(stories) == 1 and isinstance(value, list) and isinstance(hints, dict) and hints.get("lines") is True:
            lines.extend(orjson.dumps(event).decode() + "\n" for event in value)
        else:
            lines.append(orjson.dumps(value).decode() + "\n")
    return "".join(lines)
