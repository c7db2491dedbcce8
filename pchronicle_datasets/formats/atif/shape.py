"""What ATIF v1.8 can hold (the public pydantic models of the ``atif`` package, written out as checks), for
the writer: a Storyline value that fits is written as is, one that does not is fitted and carried.

>>> message_fits("hi"), message_fits([{"type": "text", "text": "hi"}]), message_fits(None)
(True, True, False)
>>> fit_object({"prompt_tokens": 3, "reward": 1.0}, METRICS)
({'prompt_tokens': 3, 'extra': {'reward': 1.0}}, False)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = [
    "FINAL_METRICS",
    "METRICS",
    "fit_object",
    "message_fits",
    "number",
    "observation_fits",
    "timestamp_fits",
]

IMAGE_TYPES = frozenset(("image/jpeg", "image/png", "image/gif", "image/webp"))
AUDIO_TYPES = frozenset(
    ("audio/wav", "audio/mpeg", "audio/mp4", "audio/aac", "audio/ogg", "audio/flac", "audio/webm", "audio/aiff")
)


def _int(v: Any) -> bool:
    return v is None or type(v) is int


def number(v: Any) -> bool:
    """A JSON number that is not a boolean (pydantic's ``float`` takes integers too), or null."""
    return v is None or (type(v) in (int, float))


def _ints(v: Any) -> bool:
    return v is None or (type(v) is list and all(type(x) is int for x in v))


def _numbers(v: Any) -> bool:
    return v is None or (type(v) is list and all(type(x) in (int, float) for x in v))


def _obj(v: Any) -> bool:
    return v is None or type(v) is dict


def _str(v: Any) -> bool:
    return v is None or type(v) is str


METRICS = {
    "prompt_tokens": _int,
    "completion_tokens": _int,
    "cached_tokens": _int,
    "cost_usd": number,
    "prompt_token_ids": _ints,
    "completion_token_ids": _ints,
    "logprobs": _numbers,
    "extra": _obj,
}
FINAL_METRICS = {
    "total_prompt_tokens": _int,
    "total_completion_tokens": _int,
    "total_cached_tokens": _int,
    "total_cost_usd": number,
    "total_steps": _int,
    "extra": _obj,
}


def fit_object(value: Any, spec: dict) -> tuple[dict | None, bool]:
    """``(fitted, exact)``: the keys of ``value`` that fit ``spec``, the others moved into its ``extra``
    (where ATIF keeps what its schema does not name); ``exact`` when nothing had to move. A value that is
    not an object gives ``(None, False)``."""
    if value is None:
        return None, True
    if type(value) is not dict:
        return None, False
    fitted = {k: v for k, v in value.items() if k in spec and spec[k](v)}
    rest = {k: v for k, v in value.items() if k not in fitted}
    if rest:
        extra = fitted.get("extra")
        fitted["extra"] = {**rest, **extra} if isinstance(extra, dict) else rest
    return fitted, not rest


def _part_fits(part: Any) -> bool:
    if type(part) is not dict or set(part) - {"type", "text", "source"}:
        return False
    kind, source = part.get("type"), part.get("source")
    if kind == "text":
        return type(part.get("text")) is str and source is None
    if kind not in ("image", "audio") or part.get("text") is not None or type(source) is not dict:
        return False
    if kind == "image":
        return set(source) <= {"media_type", "path"} and source.get("media_type") in IMAGE_TYPES and _path(source)
    duration = source.get("duration_sec")
    return (
        set(source) <= {"media_type", "path", "duration_sec"}
        and source.get("media_type") in AUDIO_TYPES
        and _path(source)
        and (duration is None or (type(duration) in (int, float) and duration >= 0))
    )


def _path(source: dict) -> bool:
    return type(source.get("path")) is str


def message_fits(value: Any) -> bool:
    """An ATIF ``message`` (or result ``content`` when not null): a string or an array of content parts."""
    return type(value) is str or (type(value) is list and all(_part_fits(p) for p in value))


def _ref_fits(ref: Any) -> bool:
    return (
        type(ref) is dict
        and not set(ref) - {"trajectory_id", "trajectory_path", "session_id", "extra"}
        and _str(ref.get("trajectory_id"))
        and _str(ref.get("trajectory_path"))
        and _str(ref.get("session_id"))
        and _obj(ref.get("extra"))
        and (ref.get("trajectory_id") is not None or ref.get("trajectory_path") is not None)
    )


def _result_fits(result: Any, call_ids: set[str] | None) -> bool:
    if type(result) is not dict or set(result) - {"source_call_id", "content", "subagent_trajectory_ref", "extra"}:
        return False
    scid, content, refs = result.get("source_call_id"), result.get("content"), result.get("subagent_trajectory_ref")
    return (
        _str(scid)
        and (scid is None or call_ids is None or scid in call_ids)
        and (content is None or message_fits(content))
        and (refs is None or (type(refs) is list and all(_ref_fits(r) for r in refs)))
        and _obj(result.get("extra"))
    )


def observation_fits(value: Any, call_ids: set[str] | None) -> bool:
    """An ATIF ``observation``: ``{"results": [...]}`` whose ``source_call_id`` name calls of the step
    (``call_ids``; None when the step has no tool calls, which ATIF does not check)."""
    if value is None:
        return True
    return (
        type(value) is dict
        and set(value) == {"results"}
        and type(value["results"]) is list
        and all(_result_fits(r, call_ids) for r in value["results"])
    )


def timestamp_fits(value: Any) -> bool:
    """ATIF's timestamp check: an ISO 8601 string ``datetime.fromisoformat`` reads (``Z`` allowed)."""
    if type(value) is not str:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
