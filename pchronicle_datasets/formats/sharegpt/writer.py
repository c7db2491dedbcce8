"""Writing Storyline documents as ShareGPT trajectory records.

A document read from this format comes back as its source record (same source: the residual and the export
hints restore every byte the reader did not map); any other is written as a fresh record, and every value of it
the record has no place for is counted in the loss report as ``not in sharegpt: <pointer>`` (``WRITTEN``). The
CLI writes the seed's folder layout (``encode_folder``): completed trajectories and the others in two files.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ...losses import for_document, ignore_losses
from ...pointer import parse
from ...render.sharegpt import conversation, elements, jdumps
from ...schema import validate
from ..layout import report_unwritten
from ..residual import ENVELOPE_KEY, envelope, other_sources, source_fields
from .hints import HINTS, NAME, read_hints
from .llamafactory import DIALECT
from .llamafactory import elements as lf_elements

__all__ = ["FOLDER_FILES", "WRITTEN", "encode", "encode_folder", "is_completed", "record", "source_conversation"]

log = logging.getLogger("pchronicle_datasets.sharegpt")

#: The seed's file names: completed trajectories, and the others.
FOLDER_FILES = ("trajectory_samples.jsonl", "failed_trajectories.jsonl")

#: What a fresh record holds of a document (``layout.report_unwritten`` counts every other value): the turns as
#: ``conversations`` (a turn's id is its place, given again by the reader; a call's id is in the
#: ``<tool_response>`` that answers it), the model, the tools in the system prompt; ``timestamp``, ``completed``
#: and ``partial`` are added by ``_fresh_record`` when the document has them in the form the record takes.
WRITTEN = {
    "": ("turns",),
    "agent": ("model", "tools"),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("source_call_id", "content"),
}


def is_completed(story: dict[str, Any]) -> bool | None:
    """Whether the trajectory completed: ``/task/result/completed``, else the last agent turn's
    ``metrics.is_session_completed`` (RFC-0009), else None (the document does not say)."""
    result = (story.get("task") or {}).get("result") or {}
    if isinstance(result.get("completed"), bool):
        return result["completed"]
    for turn in reversed(story["turns"]):
        if turn["src"] == "agent":
            metrics = turn.get("metrics")
            value = metrics.get("is_session_completed") if isinstance(metrics, dict) else None
            return value if isinstance(value, bool) else None
    return None


def record(
    story: dict[str, Any],
    *,
    carry_residual: bool = False,
    train_marks: Callable[[list[dict[str, Any]], dict[str, Any]], list[bool]] | None = None,
    **options: Any,
) -> Any:
    """The JSON value of one trajectory record for a Storyline document.

    A document read from this format comes back as its source record (same source: the residual and the
    export hints restore every byte the reader did not map); any other is written as a trajectory record
    with ``conversations`` and, when the document has them, ``timestamp``, ``model``, ``completed`` and
    ``partial``; ``carry_residual=True`` adds other formats' residual in a version-1 ``_storyline`` envelope.
    ``train_marks`` (a training policy's marks of the elements and the document, ``training.policy.sharegpt_marks``,
    given by the caller: a format never imports ``training/``) adds ``train`` to every element.
    """
    value = _record(story, carry_residual=carry_residual, **options)
    if train_marks is None:
        return value
    conv = value["conversations"] if isinstance(value, dict) else value
    marked = [{**e, "train": m} for e, m in zip(conv, train_marks(conv, story), strict=True)]
    return {**value, "conversations": marked} if isinstance(value, dict) else marked


def _record(story: dict[str, Any], *, carry_residual: bool = False, **options: Any) -> Any:
    validate(story)
    hints = read_hints(story)
    source = source_fields(story, NAME)
    if source is not None and hints is not None:
        try:
            return _recover(story, hints, source.get("fields") or {})
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, StopIteration) as exc:
            # Hints that do not fit the document (edited after it was read): write it as any other
            # document, carrying this format's residual too, so nothing is dropped.
            log.warning("export hints at /meta/%s do not fit the document (%r); written as a new record", HINTS, exc)
            return _fresh_record(story, carry_residual=True, **options)
    return _fresh_record(story, carry_residual=carry_residual, **options)


def _fresh_record(story: dict[str, Any], *, carry_residual: bool = False, **options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"conversations": conversation(story, **options)}
    if isinstance(story.get("finished_at"), str):
        out["timestamp"] = story["finished_at"]
    if story["agent"].get("model"):
        out["model"] = story["agent"]["model"]
    result = (story.get("task") or {}).get("result") or {}
    for key in ("completed", "partial"):
        if isinstance(result.get(key), bool):
            out[key] = result[key]
    carried = envelope(other_sources(story, None)) if carry_residual else None
    if carried is not None:
        out[ENVELOPE_KEY] = carried
    root = ("finished_at",) if "timestamp" in out else ()
    task = tuple(f"/task/result/{key}" for key in ("completed", "partial") if key in out)
    report_unwritten(
        story,
        NAME,
        {**WRITTEN, "": WRITTEN[""] + root + (("unknown_fields",) if carry_residual else ()), "task": task},
    )
    return out


_ROLES = ("system", "human", "gpt", "tool")


def source_conversation(story: dict[str, Any]) -> list[dict[str, str]] | None:
    """The source ``conversations`` of a document read from the reference agent's ShareGPT, exactly (what
    ``to_sharegpt`` gives for it), or None when the document was not read from it, its hints do not fit, or an
    element is not a ``{"from", "value"}`` turn of the reference's roles with a text value.

    >>> import pchronicle_datasets as pc
    >>> line = ('[{"from": "human", "value": "hi"}, '
    ...         '{"from": "gpt", "value": "<think>\\\\nx\\\\n</think>\\\\n\\\\nhello"}]')
    >>> [story] = pc.into_storyline("sharegpt", line)
    >>> source_conversation(story)[1]["value"]
    '<think>\\nx\\n</think>\\n\\nhello'
    """
    hints = read_hints(story)
    source = source_fields(story, NAME)
    if hints is None or source is None or hints.get("dialect", "reference") != "reference":
        return None
    try:
        conv = _conversations(story, hints, source.get("fields") or {})
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, StopIteration):
        return None
    for element in conv:
        if not (
            isinstance(element, dict)
            and set(element) == {"from", "value"}
            and element["from"] in _ROLES
            and isinstance(element["value"], str)
        ):
            return None
    return conv


def _conversations(story: dict, hints: dict, fields: dict) -> list[Any]:
    """The source elements: the rendered ones, with the residual's exact values and whole elements put back."""
    bare = bool(hints.get("bare"))
    if hints.get("dialect") == DIALECT:
        conv = lf_elements(story, column_system=hints.get("system") == "column")
    else:
        with ignore_losses():  # the residual restores every value the rendering could not hold
            conv = elements(
                story,
                generated=hints.get("system") == "generated",
                inline_system=True,
                keep_invalid_args=True,
                loose=False,
            )
    # Elements kept whole (residual) go back to their positions; the generated ones fill the others in order.
    kept = {int(parse(p)[0 if bare else 1]): v for p, v in fields.items() if _is_element(p, bare)}
    generated = iter(conv)
    out = [kept[i] if i in kept else next(generated) for i in range(len(conv) + len(kept))]
    for pointer, value in fields.items():
        tokens = parse(pointer)
        if bare:
            tokens = ["conversations", *tokens]
        if len(tokens) == 3 and tokens[0] == "conversations" and tokens[2] in ("from", "value"):
            element = out[int(tokens[1])]
            if isinstance(element, dict):
                element[tokens[2]] = value
    return out


def _recover(story: dict, hints: dict, fields: dict) -> Any:
    bare = bool(hints.get("bare"))
    out = _conversations(story, hints, fields)
    rec: dict[str, Any] = {}
    result = (story.get("task") or {}).get("result") or {}
    agent_extra = story["agent"].get("extra") or {}
    for key in hints.get("keys", []):
        if key == "conversations":
            rec["conversations"] = out
        elif key in ("model", "metadata/model"):
            _put(rec, key, story["agent"].get("model"))
        elif key in ("timestamp", "metadata/timestamp"):
            _put(rec, key, story.get("finished_at"))
        elif key in ("completed", "partial"):
            rec[key] = result.get(key)
        elif key == "api_calls":
            rec[key] = (story.get("final_metrics") or {}).get(key)
        elif key == "toolsets_used":
            rec[key] = agent_extra.get(key)
        elif key == "system":  # LLaMA-Factory's system key: the first turn
            rec[key] = story["turns"][0]["msg"]
        elif key == "tools":  # LLaMA-Factory's tools key: a JSON string
            rec[key] = jdumps(story["agent"]["tools"])
        elif key == "metadata":
            rec.setdefault("metadata", {})
        elif key == ENVELOPE_KEY:
            rec[ENVELOPE_KEY] = envelope(other_sources(story, NAME)) or {
                "version": 1,
                "unknown_fields": {"sources": {}},
            }
    if bare:
        rec["conversations"] = out
    for pointer, value in fields.items():
        if _is_element(pointer, bare):
            continue
        tokens = parse(pointer)
        if bare:
            tokens = ["conversations", *tokens]
        node: Any = rec
        for token in tokens[:-1]:
            node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
        if isinstance(node, list):
            node[int(tokens[-1])] = value
        else:
            node[tokens[-1]] = value
    return rec["conversations"] if bare else rec


def _put(rec: dict, key: str, value: Any) -> None:
    if key.startswith("metadata/"):
        rec.setdefault("metadata", {})[key.split("/", 1)[1]] = value
    else:
        rec[key] = value


def _is_element(pointer: str, bare: bool) -> bool:
    tokens = parse(pointer)
    if bare:
        return len(tokens) == 1
    return len(tokens) == 2 and tokens[0] == "conversations"


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One JSON Lines record per document, written as the reference writes JSON (``ensure_ascii=False``)."""
    out = []
    for story in stories:
        with for_document(story["session"]):  # the loss report names the document of each loss
            out.append(jdumps(record(story, **options)) + "\n")
    return "".join(out)


def encode_folder(stories: list[dict[str, Any]], **options: Any) -> dict[str, str]:
    """The seed's folder: ``trajectory_samples.jsonl`` (trajectories that completed, or do not say) and
    ``failed_trajectories.jsonl`` (the others)."""
    done = [s for s in stories if is_completed(s) is not False]
    failed = [s for s in stories if is_completed(s) is False]
    return {FOLDER_FILES[0]: encode(done, **options), FOLDER_FILES[1]: encode(failed, **options)}
