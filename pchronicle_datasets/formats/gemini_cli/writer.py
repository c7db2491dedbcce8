"""Writing Storyline documents as Gemini CLI session files (docs/formats/gemini-cli.md, "Writing").

A document read from a Gemini CLI file is written back as that file (``recover``): every record in its place —
the metadata record, the message records of the conversation rebuilt from the turns, and every record the
replay set aside (earlier versions of a message, rewound ones, ``$set`` and ``$rewindTo`` records) from the
residual. Any other document becomes a fresh JSONL session (``synthesize``); what a session cannot hold is
counted (``losses``), other formats' residual rides in the metadata record's ``_storyline`` envelope.

A session file holds one session: ``encode`` takes one document (``convert --per-document`` writes one file
each).
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError
from ...jsonio import dumps_text
from ...linking import place_results, shown_call_ids
from ...losses import report_loss
from ...pointer import escape, parse
from ..residual import envelope, other_sources, source_fields
from .fields import (
    META_DIRECTORIES,
    META_KIND,
    META_PROJECT,
    META_SESSION,
    META_STARTED,
    META_SUMMARY,
    META_UPDATED,
    METRIC_OF,
    NAME,
    TOKENS_EXTRA,
    TYPE_OF,
    split_reason,
    type_of,
)
from .reader import ENVELOPE_KEY

__all__ = ["encode", "recover", "synthesize"]


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The session file of one document ("" for none)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Gemini CLI session file holds one session, not {len(stories)}: write one file per document "
            "(convert --per-document)",
            pointer="",
        )
    story = stories[0]
    hints = (story.get("meta") or {}).get(NAME) if isinstance(story.get("meta"), dict) else None
    if (story.get("origin") or {}).get("format") == NAME and _usable(story, hints):
        return recover(story, hints)
    return synthesize(story)


def _usable(story: dict[str, Any], hints: Any) -> bool:
    return (
        isinstance(hints, dict)
        and isinstance(hints.get("turns"), list)
        and len(hints["turns"]) == len(story["turns"])
        and isinstance(hints.get("header"), list)
        and len(hints["header"]) == 2
    )


def _dump(values: list[Any]) -> str:
    return "".join(orjson.dumps(v).decode() + "\n" for v in values)


# ----------------------------------------------------------------------------------------- same source


def _put(node: Any, tokens: list[str], value: Any) -> None:
    """Set ``value`` at ``tokens`` under ``node`` (objects made on the way; a list slot must exist)."""
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
    if isinstance(node, list):
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


class _Recovery:
    """The residual of one document grouped by the record it belongs to, and the turns by their record."""

    def __init__(self, story: dict[str, Any], hints: dict[str, Any]) -> None:
        self.story = story
        self.legacy = bool(hints.get("legacy"))
        fields = (source_fields(story, NAME) or {}).get("fields") or {}
        self.fields = fields
        self.whole: dict[str, Any] = {}
        self.under: dict[str, list[tuple[list[str], Any]]] = {}
        for pointer, value in fields.items():
            tokens = parse(pointer)
            key = self._record_of(tokens)
            at = "/" + "/".join(escape(t) for t in key)
            if len(tokens) == len(key):
                self.whole[at] = value
            else:
                self.under.setdefault(at, []).append((tokens[len(key) :], value))
        self.turns = {ref[0]: (turn, ref[1]) for ref, turn in zip(hints["turns"], story["turns"], strict=True)}
        self.renamed = shown_call_ids(story)
        self.raw = set(hints.get("raw_results") or ())

    def _record_of(self, tokens: list[str]) -> list[str]:
        """The tokens of the record a residual pointer is in: ``/i``, ``/i/$set/messages/k``, ``/messages/k``,
        or a legacy file's own root key."""
        if self.legacy:
            return tokens[:2] if tokens[:1] == ["messages"] and len(tokens) >= 2 else tokens[:1]
        if len(tokens) >= 4 and tokens[1] == "$set" and tokens[2] == "messages":
            return tokens[:4]
        return tokens[:1]

    def record(self, ptr: str) -> Any:
        """The record at ``ptr``: kept whole, or the message of a turn with its residual back in place."""
        if ptr in self.whole:
            return self.whole[ptr]
        turn, mid = self.turns[ptr]
        return self.message(ptr, turn, mid)

    def legacy_messages(self) -> list[Any]:
        """A legacy file's ``messages``: every index a turn or a whole residual message holds."""
        indexes = {int(parse(p)[1]) for p in self.turns}
        indexes |= {int(parse(p)[1]) for p in self.whole if p.startswith("/messages/")}
        return [self.record(f"/messages/{k}") for k in range(max(indexes) + 1)] if indexes else []

    def slots(self, ptr: str, key: str) -> set[int]:
        """The indexes of a list (``content``, ``toolCalls``) whose elements are residual whole."""
        return {int(rest[1]) for rest, _ in self.under.get(ptr, ()) if len(rest) == 2 and rest[0] == key}

    def message(self, ptr: str, turn: dict[str, Any], mid: str) -> dict[str, Any]:
        rec: dict[str, Any] = {"id": mid}
        if "ts" in turn:
            rec["timestamp"] = turn["ts"]
        rec["type"] = type_of(turn["src"], turn.get("kind")) or "info"
        msg = turn["msg"]
        if isinstance(msg, list):
            rec["content"] = _fill(
                [{"text": p["text"]} for p in msg if isinstance(p, dict) and "text" in p], self.slots(ptr, "content")
            )
        elif msg is not None:
            rec["content"] = msg
        if "reason" in turn:
            subjects = [v for rest, v in self._sorted(ptr, "thoughts") if rest[2] == "subject"]
            descriptions = split_reason(turn["reason"], subjects)
            if descriptions is None:  # an edited reason: all of it in the first thought
                descriptions = [turn["reason"]] + [""] * max(len(subjects) - 1, 0)
            rec["thoughts"] = [{"description": d} for d in descriptions]
        if "metrics" in turn:
            rec["tokens"] = _tokens(turn["metrics"])
        if "model" in turn:
            rec["model"] = turn["model"]
        if "tool_calls" in turn:
            rec["toolCalls"] = _fill([self._call(c) for c in turn["tool_calls"]], self.slots(ptr, "toolCalls"))
        for rest, value in self.under.get(ptr, ()):
            _put(rec, rest, value)
        return rec

    def _sorted(self, ptr: str, key: str) -> list[tuple[list[str], Any]]:
        items = [(rest, v) for rest, v in self.under.get(ptr, ()) if len(rest) == 3 and rest[0] == key]
        return sorted(items, key=lambda item: int(item[0][1]))

    def _call(self, call: dict[str, Any]) -> dict[str, Any]:
        cid = self.renamed.get(call["tcid"], call["tcid"])
        out: dict[str, Any] = {"id": cid, "name": call["fn"], "args": call["args"]}
        if "result" in call:
            if call["tcid"] in self.raw:
                out["result"] = call["result"]
            else:
                out["result"] = [{"functionResponse": {"id": cid, "name": call["fn"], "response": call["result"]}}]
        status = (call.get("response") or {}).get("status")
        if isinstance(status, str):
            out["status"] = status
        return out


def _fill(mapped: list[Any], residual_slots: set[int]) -> list[Any]:
    """A list of ``len(mapped) + len(residual_slots)`` elements: the residual slots left for their values, the
    mapped elements in the others, in order."""
    out: list[Any] = []
    it = iter(mapped)
    for k in range(len(mapped) + len(residual_slots)):
        out.append(None if k in residual_slots else next(it, None))
    return out


def _tokens(metrics: Any) -> Any:
    if not isinstance(metrics, dict):
        return metrics
    tokens = {METRIC_OF[k]: v for k, v in metrics.items() if k in METRIC_OF}
    extra = metrics.get("extra")
    if isinstance(extra, dict):
        tokens.update((k, v) for k, v in extra.items() if k in TOKENS_EXTRA)
    return tokens


def _header(story: dict[str, Any], rec: _Recovery, hptr: str, keys: list[str]) -> dict[str, Any]:
    env = (story.get("task") or {}).get("env") or {}
    state = env.get("state") or {}
    mapped = {
        META_SESSION: story["session"],
        META_STARTED: story.get("started_at"),
        META_UPDATED: story.get("finished_at"),
        META_SUMMARY: story.get("notes"),
        META_PROJECT: env.get("id"),
        META_KIND: state.get(META_KIND),
        META_DIRECTORIES: state.get(META_DIRECTORIES),
    }
    header: dict[str, Any] = {}
    for key in keys:
        ptr = f"{hptr}/{escape(key)}"
        if key == "messages" and rec.legacy:
            header[key] = rec.legacy_messages()
        elif ptr in rec.fields:
            header[key] = rec.fields[ptr]
        else:
            header[key] = mapped.get(key)
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        header[ENVELOPE_KEY] = carried
    return header


def recover(story: dict[str, Any], hints: dict[str, Any]) -> str:
    """The source file of a document read from a Gemini CLI file, record by record."""
    rec = _Recovery(story, hints)
    hptr, keys = hints["header"]
    header = _header(story, rec, hptr, keys)
    if rec.legacy:
        return orjson.dumps(header, option=orjson.OPT_INDENT_2).decode() + "\n"
    sets = hints.get("sets") or {}
    lines: list[Any] = []
    for i in range(int(hints.get("lines") or 0)):
        ptr = f"/{i}"
        if ptr == hptr:
            lines.append(header)
        elif ptr in rec.whole:
            lines.append(rec.whole[ptr])
        elif str(i) in sets:
            line: dict[str, Any] = {"$set": {}}
            for rest, value in rec.under.get(ptr, ()):
                _put(line, rest, value)
            line["$set"]["messages"] = [rec.record(f"{ptr}/$set/messages/{k}") for k in range(sets[str(i)])]
            lines.append(line)
        elif ptr in rec.turns:
            lines.append(rec.record(ptr))
        # else: a line that was not JSON, which the reader refused on its own
    return _dump(lines)


# ------------------------------------------------------------------------------------------- synthesized

_LOSSY_TURN_FIELDS = ("effort", "env", "prompt", "latency_ms", "ttft_ms", "finished_at", "nllm", "copied", "extra")
# The root keys a session holds (its metadata record, the turns) or that every reader gives again; any other is counted.
_HELD_ROOT_FIELDS = ("schema_version", "origin", "session", "agent", "task", "started_at", "finished_at", "notes",
                     "turns", "meta", "unknown_fields", "unknown_key_counts")  # fmt: skip


def _report_agent_and_task(story: dict[str, Any]) -> None:
    """Count what the session's metadata record has no place for: the agent's fields (a model is a turn's, written
    with it), and the task but its environment's id and the state's ``kind`` and ``directories``."""
    for key in story["agent"]:
        if key != "id":  # the reader names the agent itself
            report_loss(f"not in {NAME}: /agent/{key}", pointer=f"/agent/{key}")
    task = story.get("task") if isinstance(story.get("task"), dict) else {}
    for part, values in task.items():
        for key, value in values.items() if isinstance(values, dict) else [("", values)]:
            if part == "env" and key == "id":
                continue
            if part == "env" and key == "state" and isinstance(value, dict):
                for name in value:
                    if name not in (META_KIND, META_DIRECTORIES):
                        report_loss(f"not in {NAME}: /task/env/state/{name}", pointer=f"/task/env/state/{name}")
                continue
            pointer = f"/task/{part}/{key}".rstrip("/")
            report_loss(f"not in {NAME}: {pointer}", pointer=pointer)


def _type(turn: dict[str, Any], t: int) -> str:
    src, kind = turn["src"], turn.get("kind")
    if (src, kind) in TYPE_OF:
        return TYPE_OF[(src, kind)]
    if "kind" in turn:  # a kind no record type stands for (a Claude Code "autonomous" turn…)
        report_loss(f"not in {NAME}: /turns/*/kind", pointer=f"/turns/{t}/kind")
    if src in ("user", "agent"):
        return TYPE_OF[(src, None)]
    report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src", detail=f"{src!r} written as an info")
    return "info"


def _content(msg: Any, t: int) -> Any:
    if isinstance(msg, str):
        return msg
    if isinstance(msg, list):
        parts = []
        for k, part in enumerate(msg):
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append({"text": part["text"]})
            else:
                report_loss(f"text in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg/{k}")
                parts.append({"text": dumps_text(part)})
        return parts
    if msg is None:
        return ""
    report_loss(f"text in {NAME}: /turns/*/msg", pointer=f"/turns/{t}/msg")
    return dumps_text(msg)


def _metrics(metrics: Any, t: int) -> Any:
    tokens = _tokens(metrics)
    if not isinstance(metrics, dict) or not all(k in METRIC_OF or k == "extra" for k in metrics):
        report_loss(f"not in {NAME}: /turns/*/metrics", pointer=f"/turns/{t}/metrics")
    elif isinstance(metrics.get("extra"), dict) and not metrics["extra"].keys() <= set(TOKENS_EXTRA):
        report_loss(f"not in {NAME}: /turns/*/metrics", pointer=f"/turns/{t}/metrics/extra")
    return tokens if isinstance(tokens, dict) and tokens else None


def synthesize(story: dict[str, Any]) -> str:
    """A fresh JSONL session of any document: a metadata record, then one message record per turn, each call with
    its result as one ``functionResponse`` (a result that is not an object is ``{"output": …}``, the CLI's form)."""
    env = (story.get("task") or {}).get("env") or {}
    header: dict[str, Any] = {META_SESSION: story["session"], META_PROJECT: env.get("id") or ""}
    if "started_at" in story:
        header[META_STARTED] = story["started_at"]
    if "finished_at" in story:
        header[META_UPDATED] = story["finished_at"]
    if isinstance(story.get("notes"), str):
        header[META_SUMMARY] = story["notes"]
    state = env.get("state") or {}
    for key in (META_KIND, META_DIRECTORIES):
        if key in state:
            header[key] = state[key]
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        header[ENVELOPE_KEY] = carried
    for key in story:
        if key not in _HELD_ROOT_FIELDS:  # /run, /trajectory, /final_metrics, /continued_trajectory_ref…
            report_loss(f"not in {NAME}: /{key}", pointer=f"/{key}")
    _report_agent_and_task(story)
    placed, loose = place_results(story)
    shown = shown_call_ids(story)
    lines: list[Any] = [header]
    for t, turn in enumerate(story["turns"]):
        rec: dict[str, Any] = {"id": str(turn["id"])}
        if "ts" in turn:
            rec["timestamp"] = turn["ts"]
        rec["type"] = _type(turn, t)
        rec["content"] = _content(turn["msg"], t)
        if "model" in turn:
            rec["model"] = turn["model"]
        if isinstance(turn.get("reason"), str):
            rec["thoughts"] = [{"subject": "", "description": turn["reason"]}]
        if "metrics" in turn:
            tokens = _metrics(turn["metrics"], t)
            if tokens is not None:
                rec["tokens"] = tokens
        results = {cid: content for cid, _, content in placed.get(t, ())}
        calls = []
        for c, call in enumerate(turn.get("tool_calls") or ()):
            cid = shown.get(call["tcid"], call["tcid"])
            out: dict[str, Any] = {"id": cid, "name": call["fn"], "args": call["args"]}
            if call["tcid"] in results:
                content = results.pop(call["tcid"])
                response = content if isinstance(content, dict) else {"output": content}
                out["result"] = [{"functionResponse": {"id": cid, "name": call["fn"], "response": response}}]
            status = (call.get("response") or {}).get("status")
            if isinstance(status, str):
                out["status"] = status
            for key in ("duration_ms", "kind", "extra"):
                if key in call:
                    report_loss(f"not in {NAME}: /turns/*/tool_calls/*/{key}", pointer=f"/turns/{t}/tool_calls/{c}")
            calls.append(out)
        if calls:
            rec["toolCalls"] = calls
        if results or loose.get(t):
            report_loss(f"not in {NAME}: /turns/*/observation", pointer=f"/turns/{t}/observation")
        for key in _LOSSY_TURN_FIELDS:
            if key in turn:
                report_loss(f"not in {NAME}: /turns/*/{key}", pointer=f"/turns/{t}/{key}")
        lines.append(rec)
    return _dump(lines)
