"""Storyline documents → ATIF trajectories (the table in docs/formats/atif.md, read right to left).

A document read from ATIF is written back as its source trajectory: mapped fields under their ATIF names,
the residual at its pointers, children embedded again in ``subagent_trajectories``. Any other document is
written as an ATIF v1.8 trajectory the public models accept; what ATIF cannot hold (Storyline-only fields,
values of a type ATIF refuses, turn ids that are not 1..n) rides in a version-1 envelope at
``/extra/_storyline`` — ``fields`` (Storyline pointer → value), ``absent`` (pointers the writer had to fill)
and ``unknown_fields`` (other formats' residual) — which the reader takes back.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "bot"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi", "kind": "llm.request"}]}
>>> t = trajectory(story)
>>> t["agent"], t["steps"]
({'name': 'bot', 'version': 'unknown'}, [{'step_id': 1, 'source': 'user', 'message': 'hi'}])
>>> t["extra"]["_storyline"]
{'version': 1, 'fields': {'/turns/0/kind': 'llm.request'}, 'absent': ['/agent/name', '/agent/ver', '/extra']}
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import orjson

from ...jsonio import dumps, dumps_text
from ...losses import report_loss
from ...schema import validate
from ..residual import ENVELOPE_VERSION, envelope
from .fields import (
    AGENT_ONLY,
    ENVELOPE,
    HINTS,
    NAME,
    SCHEMA,
    SOURCES,
    WRITTEN_SCHEMA,
)
from .reader import spawn_link
from .shape import FINAL_METRICS, METRICS, fit_object, message_fits, number, observation_fits, timestamp_fits
from .tree import put

__all__ = ["encode", "trajectories", "trajectory"]


# Storyline fields with no ATIF slot: carried in the envelope as they are.
_ROOT_ONLY = ("run", "attempt_id", "task", "prompt", "started_at", "finished_at")
_TURN_ONLY = ("kind", "latency_ms", "ttft_ms", "env", "prompt", "finished_at")
_CALL_ONLY = ("result", "duration_ms", "kind", "response")


class _Writer:
    def __init__(self, story: dict[str, Any], parent: dict[str, Any] | None = None) -> None:
        self.story = story
        self.parent = parent  # the ATIF trajectory this one is embedded in
        origin = story.get("origin") or {}
        meta = story.get("meta")
        hints = meta.get(HINTS) if isinstance(meta, dict) else None
        self.hints = hints if isinstance(hints, dict) and hints.get("version") == 1 else {}
        sources = (story.get("unknown_fields") or {}).get("sources") or {}
        self.residual = (sources.get(NAME) or {}).get("fields") or {}
        self.others = {k: v for k, v in sources.items() if k != NAME}
        # Read from ATIF: its values go back as they are. Others are fitted to what the v1.8 models accept.
        self.faithful = origin.get("format") == NAME
        self.fields: dict[str, Any] = {}
        self.absent: list[str] = []

    def carry(self, pointer: str, value: Any) -> None:
        self.fields[pointer] = value

    def build(self, children: list[str]) -> dict[str, Any]:
        """The trajectory, without ``subagent_trajectories`` (the caller embeds ``children`` there)."""
        story = self.story
        out: dict[str, Any] = {}
        origin = story.get("origin") or {}
        version = origin.get("schema_version")
        if self.faithful and isinstance(version, str) and SCHEMA.fullmatch(version):
            out["schema_version"] = version
        elif not self.faithful or self.parent is None:  # a file's root trajectory needs one
            out["schema_version"] = WRITTEN_SCHEMA
        if not self.derived_session():
            out["session_id"] = story["session"]
        if "trajectory" in story:
            out["trajectory_id"] = story["trajectory"]
        out["agent"] = self.agent(story["agent"])
        out["steps"] = [self.step(t, turn) for t, turn in enumerate(story["turns"])]
        for key in ("notes", "continued_trajectory_ref"):
            if key in story:
                out[key] = story[key]
        if "final_metrics" in story:
            self.fitted(out, "final_metrics", story["final_metrics"], FINAL_METRICS, "/final_metrics")
        if "extra" in story:
            self.plain(out, "extra", story["extra"], "/extra", lambda v: type(v) is dict)
        for key in _ROOT_ONLY:
            if key in story:
                self.carry(f"/{key}", story[key])
        meta = story.get("meta")
        if isinstance(meta, dict) and HINTS in meta:
            meta = {k: v for k, v in meta.items() if k != HINTS}
            if meta:
                self.carry("/meta", meta)
        elif "meta" in story:
            self.carry("/meta", meta)
        if story.get("children") != (children or None):  # the reader writes /children only when non-empty
            if "children" in story:
                self.carry("/children", story["children"])
            else:
                self.absent.append("/children")
        if "parent" in story:
            tid = story.get("trajectory")
            derived = None if self.parent is None else {"psid": story["parent"]["psid"], **spawn_link(self.parent, tid)}
            if story["parent"] != derived:
                self.carry("/parent", story["parent"])
        if "unknown_fields" in story and not self.others and not self.residual:
            self.carry("/unknown_fields", story["unknown_fields"])  # present but empty: kept as written
        self.put_residual(out)
        self.envelope(out)
        return out

    def derived_session(self) -> bool:
        """Whether the reader derives this session again, so ``session_id`` stays out as in the source."""
        story = self.story
        if self.hints.get("session") != "derived":
            return False
        if self.parent is not None:
            return story["session"] == story["parent"]["psid"]  # a subagent shares its parent's session
        return story["session"] in (story.get("trajectory"), (story.get("origin") or {}).get("document_id"))

    def fitted(self, out: dict, key: str, value: Any, spec: dict, pointer: str) -> None:
        if self.faithful:
            out[key] = value
            return
        fitted, exact = fit_object(value, spec)
        if not exact:
            self.carry(pointer, value)
        if fitted is not None or (exact and value is None):
            out[key] = fitted

    def agent(self, agent: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if agent.get("name"):
            out["name"] = agent["name"]
            if agent["id"] != agent["name"]:
                self.carry("/agent/id", agent["id"])
        else:  # the reader needs a non-empty name: the id stands in, the envelope keeps what was there
            out["name"] = agent["id"]
            if "name" in agent:
                self.carry("/agent/name", agent["name"])
            else:
                self.absent.append("/agent/name")
        if "ver" in agent:
            out["version"] = agent["ver"]
        elif not self.faithful:
            out["version"] = "unknown"  # ATIF requires it; the reader drops it again (absent)
            self.absent.append("/agent/ver")
        if "model" in agent:
            out["model_name"] = agent["model"]
        for short, key, ok in (
            ("tools", "tool_definitions", lambda v: type(v) is list and all(type(x) is dict for x in v)),
            ("extra", "extra", lambda v: type(v) is dict),
        ):
            if short in agent:
                if self.faithful or ok(agent[short]):
                    out[key] = agent[short]
                else:
                    self.carry(f"/agent/{short}", agent[short])
        return out

    def step(self, t: int, turn: dict[str, Any]) -> dict[str, Any]:
        base = f"/turns/{t}"
        out: dict[str, Any] = {}
        if self.faithful or turn["id"] == t + 1:
            out["step_id"] = turn["id"]
        else:
            out["step_id"] = t + 1  # ATIF numbers steps 1..n in order; Storyline ids are only identities
            self.carry(f"{base}/id", turn["id"])
        src = turn["src"]
        if self.faithful or src in SOURCES:
            out["source"] = src
        else:
            out["source"] = "system"
            self.carry(f"{base}/src", src)
        if "ts" in turn:
            self.timestamp(out, turn["ts"], f"{base}/ts")
        msg = turn["msg"]
        if self.faithful or message_fits(msg):
            out["message"] = msg
        else:
            out["message"] = "" if msg is None else msg if isinstance(msg, str) else dumps_text(msg)
            self.carry(f"{base}/msg", msg)
        agent_step = out["source"] == "agent"
        for short in AGENT_ONLY:
            if short in turn and not self.faithful and not agent_step:
                self.carry(f"{base}/{short}", turn[short])  # ATIF allows these on agent steps only
        if self.faithful or agent_step:
            if "model" in turn:
                out["model_name"] = turn["model"]
            if "effort" in turn:
                self.plain(
                    out, "reasoning_effort", turn["effort"], f"{base}/effort", lambda v: type(v) is str or number(v)
                )
            if "reason" in turn:
                out["reasoning_content"] = turn["reason"]
            if "tool_calls" in turn:
                out["tool_calls"] = [
                    self.call(f"{base}/tool_calls/{c}", call) for c, call in enumerate(turn["tool_calls"])
                ]
        if "observation" in turn:
            ids = {c["tcid"] for c in turn["tool_calls"]} if out.get("tool_calls") else None
            self.plain(
                out, "observation", turn["observation"], f"{base}/observation", lambda v: observation_fits(v, ids)
            )
        elif "tool_calls" in out and any("result" in c for c in turn["tool_calls"]):
            # Storyline keeps a call's output on the call; ATIF in the step's observation, where readers look.
            out["observation"] = {
                "results": [
                    {
                        "source_call_id": c["tcid"],
                        "content": c["result"] if isinstance(c["result"], str) else dumps_text(c["result"]),
                    }
                    for c in turn["tool_calls"]
                    if "result" in c
                ]
            }
            self.absent.append(f"{base}/observation")
        if "metrics" in turn and (self.faithful or agent_step):
            self.fitted(out, "metrics", turn["metrics"], METRICS, f"{base}/metrics")
        if "nllm" in turn:
            zero_ok = not (turn["nllm"] == 0 and agent_step and ("metrics" in out or "reasoning_content" in out))
            self.plain(out, "llm_call_count", turn["nllm"], f"{base}/nllm", lambda v: v >= 0 and zero_ok)
        if "copied" in turn:
            out["is_copied_context"] = turn["copied"]
        if "extra" in turn:
            self.plain(out, "extra", turn["extra"], f"{base}/extra", lambda v: type(v) is dict)
        for key in _TURN_ONLY:
            if key in turn:
                self.carry(f"{base}/{key}", turn[key])
        return out

    def plain(self, out: dict, key: str, value: Any, pointer: str, ok: Any) -> None:
        if self.faithful or ok(value):
            out[key] = value
        else:
            self.carry(pointer, value)

    def timestamp(self, out: dict, ts: Any, pointer: str) -> None:
        if self.faithful or timestamp_fits(ts):
            out["timestamp"] = ts
            return
        self.carry(pointer, ts)
        if type(ts) in (int, float):  # epoch seconds: ATIF wants ISO 8601, the envelope keeps the number
            when = datetime.fromtimestamp(ts, tz=timezone.utc)
            out["timestamp"] = when.isoformat().replace("+00:00", "Z")

    def call(self, pointer: str, call: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"tool_call_id": call["tcid"], "function_name": call["fn"]}
        args = call["args"]
        if self.faithful or type(args) is dict:
            out["arguments"] = args
        else:
            out["arguments"] = {"value": args}  # ATIF arguments are an object; the envelope keeps the value
            self.carry(f"{pointer}/args", args)
        if "extra" in call:
            self.plain(out, "extra", call["extra"], f"{pointer}/extra", lambda v: type(v) is dict)
        for key in _CALL_ONLY:
            if key in call:
                self.carry(f"{pointer}/{key}", call[key])
        return out

    def put_residual(self, out: dict) -> None:
        at = self.hints.get("at", "")
        for pointer, value in self.residual.items():
            try:
                if not pointer.startswith(at):
                    raise KeyError(pointer)
                put(out, pointer[len(at) :], value)
            except (KeyError, IndexError, ValueError):
                # the loss report counts it (a logged warning outside one): never silent
                report_loss("residual_dropped", pointer=pointer, detail=f"session {self.story['session']!r}")

    def envelope(self, out: dict) -> None:
        """Put what ATIF cannot hold into ``/extra/_storyline`` (only when there is something)."""
        extra = out.get("extra")
        clash = type(extra) is dict and ENVELOPE in extra  # a key of the document's own named like the envelope
        if not (self.fields or self.absent or self.others or clash):
            return
        if "extra" not in self.story:
            self.absent.append("/extra")
            extra = {}
        elif type(extra) is not dict or clash:
            self.carry("/extra", self.story["extra"])
            extra = {}
        # The shared version-1 envelope (residual.envelope), extended with what ATIF itself cannot hold.
        env: dict[str, Any] = envelope(self.others) or {"version": ENVELOPE_VERSION}
        if self.fields:
            env["fields"] = self.fields
        if self.absent:
            env["absent"] = self.absent
        out["extra"] = {**extra, ENVELOPE: env}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else dumps_text(value)


def trajectories(stories: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The top-level ATIF trajectories of ``stories``: a document whose ``/parent`` names another of them
    (by session, and by ``trajectory`` in that one's ``/children``) is embedded in it again, in
    ``/children`` order (RFC-0001: a converter MAY embed them when it writes one ATIF file)."""
    pool = list(stories)
    for story in pool:
        validate(story)
    embedded = _embedded(pool)
    inside = set(embedded.values())
    return [_tree(i, pool, embedded) for i in range(len(pool)) if i not in inside]


def _embedded(pool: list[dict]) -> dict[tuple[int, str], int]:
    """(parent index, child trajectory id) → child index; each document is embedded once at most, and never in
    a document embedded (at any depth) in itself: documents whose ``/parent`` links form a cycle would
    otherwise all be inside one another, with none left at the top to write them."""
    taken: dict[tuple[int, str], int] = {}
    inside: dict[int, int] = {}  # child index → the index of the document it is embedded in
    for i, story in enumerate(pool):
        for tid in story.get("children", []):
            for j, s in enumerate(pool):
                parent = s.get("parent") or {}
                if (
                    j != i
                    and j not in inside
                    and s.get("trajectory") == tid
                    and parent.get("psid") == story["session"]
                    and not _within(i, j, inside)
                ):
                    taken[(i, tid)] = j
                    inside[j] = i
                    break
    return taken


def _within(i: int, j: int, inside: dict[int, int]) -> bool:
    """Whether document ``i`` is embedded, at any depth, in document ``j``."""
    while i in inside:
        i = inside[i]
        if i == j:
            return True
    return False


def _tree(i: int, pool: list[dict], embedded: dict, parent: dict | None = None) -> dict[str, Any]:
    kids = [(tid, j) for (p, tid), j in embedded.items() if p == i]
    out = _Writer(pool[i], parent).build([tid for tid, _ in kids])
    if kids:
        # Children are written once the parent's steps exist: each compares its /parent with what the
        # reader derives from them (spawn_link).
        out["subagent_trajectories"] = [_tree(j, pool, embedded, out) for _, j in kids]
    return out


def trajectory(story: dict[str, Any]) -> dict[str, Any]:
    """The ATIF trajectory of one Storyline document (no children embedded)."""
    validate(story)
    return _Writer(story).build([])


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One trajectory: a JSON file indented like Harbor's; several: JSON Lines, one trajectory a line."""
    if options:
        raise TypeError(f"the {NAME} writer takes no options, got {sorted(options)}")
    out = trajectories(stories)
    if len(out) == 1:
        return orjson.dumps(out[0], option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    return "".join(dumps(t).decode("utf-8") + "\n" for t in out)
