"""ATIF trajectory → Storyline documents (the table in docs/formats/atif.md).

One trajectory gives one document, and each embedded ``subagent_trajectories[j]`` (recursively) one more,
linked by ``/children`` (the children's ``trajectory_id``) and ``/parent`` (the parent's session, and the
step and call whose observation refers to the child). Every value the table does not map, or whose type does
not fit its Storyline field, stays under its full ATIF pointer in ``/unknown_fields/sources/atif/fields``.

>>> atif = {"schema_version": "ATIF-v1.8", "session_id": "s1", "agent": {"name": "bot", "version": "1"},
...         "steps": [{"step_id": 1, "source": "user", "message": "hi", "vendor": 7}]}
>>> story = read_trajectory(atif, document_id="t.json")[0]
>>> story["agent"], story["turns"]
({'id': 'bot', 'name': 'bot', 'ver': '1'}, [{'id': 1, 'src': 'user', 'msg': 'hi'}])
>>> story["unknown_fields"]["sources"]["atif"]["fields"]
{'/steps/0/vendor': 7}
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import json_type
from ...pointer import join
from ...schema import is_time
from ..residual import Residual, read_extended_envelope
from .fields import AGENT, BARE, CALL, CALL_REQUIRED, ENVELOPE, HINTS, NAME, ROOT, SCHEMA, STEP, STEP_REQUIRED
from .tree import put, remove

__all__ = ["envelope_of", "fits", "read_trajectory", "spawn_link"]

_HANDLED_ROOT = ("schema_version", "agent", "steps", "subagent_trajectories")


def fits(kind: str, value: Any) -> bool:
    """Whether ``value`` has the Storyline type ``kind`` of a table row (else it stays residual).

    >>> fits("int", True), fits("int", 3), fits("str", None), fits("time", "2025-10-16T14:30:00Z")
    (False, True, False, True)
    """
    if kind == "any":
        return True
    if kind == "str":
        return type(value) is str
    if kind == "nestr":
        return type(value) is str and value != ""
    if kind == "int":
        return type(value) is int
    if kind == "bool":
        return type(value) is bool
    if kind == "time":
        return type(value) is str and is_time(value)
    raise ValueError(f"unknown kind {kind!r}")


def spawn_link(trajectory: Any, trajectory_id: str) -> dict[str, Any]:
    """``ptid``/``scid`` of the child ``trajectory_id``: the first step of ``trajectory`` whose observation
    result refers to it (``subagent_trajectory_ref[].trajectory_id``), and that result's ``source_call_id``.

    >>> t = {"steps": [{"step_id": 4, "observation": {"results": [
    ...     {"source_call_id": "c1", "subagent_trajectory_ref": [{"trajectory_id": "sub"}]}]}}]}
    >>> spawn_link(t, "sub"), spawn_link(t, "other")
    ({'ptid': 4, 'scid': 'c1'}, {})
    """
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    for step in steps if isinstance(steps, list) else ():
        obs = step.get("observation") if isinstance(step, dict) else None
        results = obs.get("results") if isinstance(obs, dict) else None
        for result in results if isinstance(results, list) else ():
            refs = result.get("subagent_trajectory_ref") if isinstance(result, dict) else None
            if isinstance(refs, list) and any(
                isinstance(r, dict) and r.get("trajectory_id") == trajectory_id for r in refs
            ):
                link: dict[str, Any] = {}
                if type(step.get("step_id")) is int:
                    link["ptid"] = step["step_id"]
                if isinstance(result.get("source_call_id"), str):
                    link["scid"] = result["source_call_id"]
                return link
    return {}


def envelope_of(extra: Any) -> dict[str, Any] | None:
    """The version-1 ``_storyline`` envelope in a trajectory's ``extra``, when it is one this writer wrote:
    ``{"version": 1, "unknown_fields": {"sources": {...}}, "fields": {pointer: value}, "absent": [pointer]}``
    (every key but ``version`` optional). Anything else is ordinary ``extra`` content.

    >>> envelope_of({"_storyline": {"version": 1, "fields": {"/task": {"llm": {"k": 2}}}}})["fields"]
    {'/task': {'llm': {'k': 2}}}
    >>> envelope_of({"_storyline": {"version": 2}}) is None
    True
    """
    env = read_extended_envelope(extra.get(ENVELOPE) if isinstance(extra, dict) else None, NAME, ("fields", "absent"))
    if env is None or not isinstance(env.get("fields", {}), dict):
        return None
    absent = env.get("absent", [])
    if not (isinstance(absent, list) and all(isinstance(p, str) for p in absent)):
        return None
    return env


class _Reader:
    """One trajectory (at ``at`` in its file) → its document, then its subagents' documents."""

    def __init__(self, document_id: str | None, line: int | None, at: str) -> None:
        self.document_id = document_id
        self.line = line
        self.at = at
        self.kept = Residual(NAME, document_id)
        self.hints: dict[str, Any] = {}

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def map_keys(self, obj: dict, table: dict, base: str, out: dict, required: tuple = (), skip: tuple = ()) -> None:
        """Each key of ``obj`` into ``out`` by ``table`` when its value fits, else residual (or an error for
        a ``required`` key: without it there is no Storyline object)."""
        for key in required:
            if key not in obj:
                raise self.error(join(base, key), f"required ATIF field {key!r} is missing")
        for key, value in obj.items():
            if key in skip:
                continue
            entry = table.get(key)
            if entry is not None and fits(entry[1], value):
                out[entry[0]] = value
            elif key in required:
                want = {"int": "an integer", "nestr": "a non-empty string"}.get(entry[1], entry[1])
                raise self.error(join(base, key), f"ATIF field {key!r} must be {want}, got {json_type(value)}")
            else:
                self.kept.keep(join(base, key), value)

    def read(self, value: Any, parent_session: str | None, link: dict) -> list[dict[str, Any]]:
        at = self.at
        if not isinstance(value, dict):
            raise self.error(at, f"expected an ATIF trajectory (a JSON object), got {json_type(value)}")
        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        origin: dict[str, Any] = {"format": NAME}
        version = value.get("schema_version")
        if "schema_version" in value or parent_session is None:
            if not (isinstance(version, str) and SCHEMA.fullmatch(version)):
                raise self.error(
                    join(at, "schema_version"),
                    f"not an ATIF 1.x schema_version: {version!r} (expected 'ATIF-v1.N' or '1.N'; other versions "
                    "are refused)",
                )
            origin["schema_version"] = version
            if BARE.fullmatch(version):
                self.hints["note"] = f'schema_version "{version}" (no "ATIF-v" prefix) read as ATIF-v{version}'
        if self.document_id:
            origin["document_id"] = self.document_id
        story["origin"] = origin
        root: dict[str, Any] = {}
        self.map_keys(value, ROOT, at, root, skip=_HANDLED_ROOT)
        session = root.pop("session", None)
        if session is None:
            # ATIF 1.7 made session_id optional; Storyline needs one. A subagent shares its parent's run
            # (ATIF: session_id is run-scoped); a root falls back to its trajectory_id, then to the file name.
            session = parent_session or root.get("trajectory") or self.document_id
            if not session:
                raise self.error(join(at, "session_id"), "the trajectory has no session_id, trajectory_id or file name")
            self.hints["session"] = "derived"
        story["session"] = session
        story["agent"] = self.agent(value.get("agent"), join(at, "agent"))
        story["turns"] = self.turns(value.get("steps"), join(at, "steps"))
        story.update(root)
        children, child_docs = self.subagents(value, session)
        if children:
            story["children"] = children
        if parent_session is not None:
            story["parent"] = {"psid": parent_session, **link}
        self.finish(story, value)
        return [story, *child_docs]

    def agent(self, agent: Any, base: str) -> dict[str, Any]:
        if not isinstance(agent, dict):
            raise self.error(base, f"expected the ATIF agent object, got {json_type(agent)}")
        name = agent.get("name")
        if not (isinstance(name, str) and name):
            raise self.error(join(base, "name"), "the agent needs a non-empty name (it is the Storyline agent id)")
        out: dict[str, Any] = {"id": name}  # RFC-0001: where ATIF has no agent.id, it is the name
        self.map_keys(agent, AGENT, base, out)
        return out

    def turns(self, steps: Any, base: str) -> list[dict[str, Any]]:
        if not isinstance(steps, list):
            raise self.error(base, f"expected the array of ATIF steps, got {json_type(steps)}")
        turns = []
        ids: dict[int, int] = {}
        tcids: dict[str, str] = {}
        for i, step in enumerate(steps):
            ptr = join(base, i)
            if not isinstance(step, dict):
                raise self.error(ptr, f"expected an ATIF step (a JSON object), got {json_type(step)}")
            turn: dict[str, Any] = {}
            self.map_keys(step, STEP, ptr, turn, required=STEP_REQUIRED, skip=("tool_calls",))
            if turn["id"] in ids:
                raise self.error(join(ptr, "step_id"), f"step_id {turn['id']} repeats step {ids[turn['id']]}")
            ids[turn["id"]] = i
            if "tool_calls" in step:
                calls = step["tool_calls"]
                if isinstance(calls, list):
                    turn["tool_calls"] = [self.call(c, join(ptr, "tool_calls", j), tcids) for j, c in enumerate(calls)]
                else:
                    self.kept.keep(join(ptr, "tool_calls"), calls)
            turns.append(turn)
        return turns

    def call(self, call: Any, ptr: str, tcids: dict[str, str]) -> dict[str, Any]:
        if not isinstance(call, dict):
            raise self.error(ptr, f"expected an ATIF tool call (a JSON object), got {json_type(call)}")
        out: dict[str, Any] = {}
        self.map_keys(call, CALL, ptr, out, required=CALL_REQUIRED)
        if out["tcid"] in tcids:
            raise self.error(
                join(ptr, "tool_call_id"),
                f"tool_call_id {out['tcid']!r} repeats the call at {tcids[out['tcid']]} (Storyline ids are unique)",
            )
        tcids[out["tcid"]] = ptr
        return out

    def subagents(self, value: dict, session: str) -> tuple[list[str], list[dict]]:
        subs = value.get("subagent_trajectories")
        base = join(self.at, "subagent_trajectories")
        if subs is None or not isinstance(subs, list):
            if "subagent_trajectories" in value:
                self.kept.keep(base, subs)
            return [], []
        ids: list[str] = []
        docs: list[dict] = []
        for j, sub in enumerate(subs):
            ptr = join(base, j)
            tid = sub.get("trajectory_id") if isinstance(sub, dict) else None
            if not (isinstance(tid, str) and tid):
                raise self.error(join(ptr, "trajectory_id"), "an embedded subagent trajectory needs a trajectory_id")
            if tid in ids:
                raise self.error(join(ptr, "trajectory_id"), f"trajectory_id {tid!r} repeats an earlier subagent")
            ids.append(tid)
            docs += _Reader(self.document_id, self.line, ptr).read(sub, session, spawn_link(value, tid))
        return ids, docs

    def finish(self, story: dict, value: dict) -> None:
        """Take the envelope back, add residual and hints, validate."""
        extra = story.get("extra")
        env = envelope_of(extra)
        if env is not None:
            story["extra"] = {k: v for k, v in extra.items() if k != ENVELOPE}
            self.kept.carry(env.get("unknown_fields", {}).get("sources", {}))
            try:
                for pointer in env.get("absent", []):
                    remove(story, pointer)
                for pointer, field in env.get("fields", {}).items():
                    put(story, pointer, field)
            except (KeyError, IndexError, ValueError, TypeError):
                raise self.error(
                    join(self.at, "extra", ENVELOPE), "the _storyline envelope does not fit this trajectory"
                ) from None
        if self.kept.fields:
            self.hints["at"] = self.at
        if self.hints:
            meta = story.setdefault("meta", {})
            if isinstance(meta, dict):
                meta[HINTS] = {"version": 1, **self.hints}
        try:
            # Residual only when there is some: a Harbor trajectory reads to exactly its shipped Storyline form.
            self.kept.finish(story, always=False)
        except PchronicleError as exc:
            raise self.error(
                self.at, f"the trajectory gives no valid Storyline: {exc.reason} at {exc.pointer}"
            ) from None


def read_trajectory(value: Any, *, document_id: str | None = None, line: int | None = None) -> list[dict[str, Any]]:
    """The Storyline documents of one parsed ATIF trajectory: its own first, then its subagents' (depth
    first, in ``subagent_trajectories`` order). ``FormatError`` with the ATIF pointer when it has none."""
    return _Reader(document_id, line, "").read(value, None, {})
