"""One role/text record → one Storyline document (docs/formats/role-text.md)."""

from __future__ import annotations

from typing import Any

from ...errors import FormatError
from ...jsonio import json_shape, json_type
from ..layout import Layout
from ..residual import origin
from .fields import INVERSE, NAME, ROLE_SRC, ROOT


def is_entry(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str) and isinstance(value.get("text"), str)


def is_record(value: Any) -> bool:
    """A record whose ``trajectory`` is a non-empty array starting with a ``role``/``text`` entry (no
    ``content``: that is a chat message)."""
    if not isinstance(value, dict):
        return False
    traj = value.get("trajectory")
    return isinstance(traj, list) and bool(traj) and is_entry(traj[0]) and "content" not in traj[0]


def read_record(value: Any, document_id: str | None, line: int | None, session: str, at: str) -> dict[str, Any]:
    def error(pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=at + pointer, document_id=document_id, line=line)

    if not isinstance(value, dict):
        raise error("", f"a role/text record is an object with a trajectory array, got {json_type(value)}")
    traj = value.get("trajectory")
    if not isinstance(traj, list):
        raise error("/trajectory", f"a role/text record needs a trajectory array, got {json_type(traj)}")
    lay = Layout(NAME, document_id, INVERSE)
    story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, document_id)}
    story["session"] = session
    story["agent"] = {"id": NAME}
    turns = []
    if not traj:
        lay.keep("/trajectory", traj)
    for i, entry in enumerate(traj):
        ptr = f"/trajectory/{i}"
        if not (isinstance(entry, dict) and isinstance(entry.get("role"), str) and entry["role"]):
            raise error(ptr, f"a trajectory entry is an object with a string role, got {json_shape(entry)}")
        t = len(turns)
        turn: dict[str, Any] = {"id": t + 1, "src": ROLE_SRC.get(entry["role"], entry["role"])}
        lay.map(f"{ptr}/role", entry["role"], f"/turns/{t}/src", turn["src"], "role")
        if "text" in entry:
            turn["msg"] = entry["text"]
            lay.map(f"{ptr}/text", entry["text"], f"/turns/{t}/msg", entry["text"])
        else:
            turn["msg"] = None  # derived: the writer writes no text back (the map has none)
        lay.rest(entry, ptr, ("role", "text"))
        turns.append(turn)
    story["turns"] = turns
    result: dict[str, Any] = {}
    for key, val in value.items():
        if key == "trajectory":
            continue
        if key == "_storyline" and lay.kept.take_envelope(val):
            continue
        target = ROOT.get(key)
        if target is None or type(val) is not target[1] or val == "":
            lay.keep(f"/{key}", val)
            continue
        pointer = target[0]
        if pointer == "/session":
            story["session"] = val
        elif pointer == "/agent/model":
            story["agent"]["model"] = val
        else:
            result[pointer.rsplit("/", 1)[1]] = val
        lay.map(f"/{key}", val, pointer, val)
    if result:
        story["task"] = {"result": result}
    story["meta"] = {NAME: lay.hints("object")}
    return lay.kept.finish(story)
