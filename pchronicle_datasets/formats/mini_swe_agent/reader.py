"""One mini-SWE-agent trajectory (``{"info", "messages", "trajectory_format"}``) → one Storyline document
(docs/formats/mini-swe-agent.md)."""

from __future__ import annotations

from typing import Any

from ...errors import FormatError
from ...jsonio import json_shape, json_type
from ...schema import is_time
from ..layout import Layout, walkable
from ..residual import origin
from .fields import (
    API_ERROR_FRAMES,
    API_ERROR_PREFIX,
    EXIT_ROLE,
    INFO,
    INVERSE,
    MODEL_PATH,
    NAME,
    REASONING,
    ROLE_SRC,
    STATS,
    VERSION,
)


def _api_error(extra: Any) -> bool:
    """An ``exit`` message's ``extra`` of a run the model's API ended (``fields.API_ERROR_FRAMES``)."""
    if not isinstance(extra, dict):
        return False
    trace, text = extra.get("traceback"), extra.get("exception_str")
    return (isinstance(trace, str) and any(frame in trace for frame in API_ERROR_FRAMES)) or (
        isinstance(text, str) and text.startswith(API_ERROR_PREFIX)
    )


def is_record(value: Any) -> bool:
    """An object with a ``messages`` array and a ``trajectory_format`` ``mini-swe-agent…``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("messages"), list)
        and isinstance(value.get("trajectory_format"), str)
        and value["trajectory_format"].startswith("mini-swe-agent")
    )


class _Reader:
    def __init__(self, document_id: str | None, line: int | None) -> None:
        self.document_id = document_id
        self.line = line
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        self.by_id: dict[str, int] = {}
        self.latest: dict[str, str] = {}  # a source call id → the Storyline id of its latest call (renamed repeats)
        self.tcids: set[str] = set()
        self.answered: set[str] = set()
        self.shown_calls: list[tuple[int, str]] = []  # the text calls of the message just read, not yet shown

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def read(self, value: dict, session: str) -> dict[str, Any]:
        lay = self.lay
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["origin"]["schema_version"] = value["trajectory_format"]
        lay.map("/trajectory_format", value["trajectory_format"], "/origin/schema_version", value["trajectory_format"])
        story["session"] = session
        story["agent"] = {"id": NAME, "name": NAME}
        messages = value["messages"]
        if not messages:
            lay.keep("/messages", messages)
        for m, msg in enumerate(messages):
            self.message(f"/messages/{m}", msg)
        story["turns"] = self.turns
        task: dict[str, Any] = {}
        for key, val in value.items():
            if key in ("messages", "trajectory_format"):
                continue
            if key == "_storyline" and lay.kept.take_envelope(val):
                continue
            if key == "instance_id" and isinstance(val, str) and val:
                story["session"] = val
                lay.map("/instance_id", val, "/session", val)
            elif key == "info" and isinstance(val, dict) and walkable(val):
                self.info(val, task, story)
            else:
                lay.keep(f"/{key}", val)
        if task:
            story["task"] = task
        story["meta"] = {NAME: lay.hints("object")}
        return lay.kept.finish(story)

    def info(self, info: dict, task: dict, story: dict) -> None:
        self.lay.info(info, story, task, INFO, STATS, VERSION)
        name: Any = info
        for key in MODEL_PATH:
            name = name.get(key) if isinstance(name, dict) else None
        if isinstance(name, str) and name:
            story["agent"]["model"] = name  # a copy: info.config stays residual

    def tcid(self, wanted: Any, generated: str) -> tuple[str, bool]:
        if isinstance(wanted, str) and wanted and wanted not in self.tcids:
            self.tcids.add(wanted)
            return wanted, True
        tcid, n = generated, 1
        while tcid in self.tcids:
            n += 1
            tcid = f"{generated}-{n}"
        self.tcids.add(tcid)
        return tcid, False

    def message(self, ptr: str, msg: Any) -> None:
        lay = self.lay
        if not (isinstance(msg, dict) and isinstance(msg.get("role"), str) and msg["role"] and walkable(msg)):
            raise self.error(ptr, f"a message is an object with a string role, got {json_shape(msg)}")
        role = msg["role"]
        waiting, self.shown_calls = self.shown_calls, []
        if role == "tool" and self.result(ptr, msg):
            return
        if role == "user" and waiting:
            # The text protocol: the user message after an assistant message whose actions were run shows the
            # model an action's output (one message per action, in order): the result of the action's call, as the
            # tool message is with tool calling. Read as a user turn, the call had no result, and every such
            # trajectory was flagged tool_call_unanswered.
            t, tcid = waiting.pop(0)
            self.answered.add(tcid)
            self.lay.result_message(ptr, msg, self.turns[t], t, tcid, "shown_role")
            self.lay.rest(msg, ptr, ("role", "content"))
            self.shown_calls = waiting
            return
        t = len(self.turns)
        m = ptr.rsplit("/", 1)[1]
        turn: dict[str, Any] = {"id": t + 1, "src": ROLE_SRC.get(role, role), "msg": msg.get("content")}
        lay.map(f"{ptr}/role", role, f"/turns/{t}/src", turn["src"], "role")
        if "content" in msg:
            lay.map(f"{ptr}/content", msg["content"], f"/turns/{t}/msg", msg["content"])
        used = {"role", "content"}
        reason = msg.get(REASONING)
        if role == "assistant" and isinstance(reason, str) and reason:
            # what the model reasoned before it answered (litellm's message, saved whole): the turn's reasoning,
            # not a residual that training outputs never show
            turn["reason"] = reason
            lay.map(f"{ptr}/{REASONING}", reason, f"/turns/{t}/reason", reason)
            used.add(REASONING)
        calls: list[dict[str, Any]] = []
        if role == "assistant" and isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
            used.add("tool_calls")
            for c, call in enumerate(msg["tool_calls"]):
                entry = lay.openai_call(
                    f"{ptr}/tool_calls/{c}", call, f"/turns/{t}/tool_calls/{len(calls)}", self.tcids
                )
                if entry is not None:
                    self.by_id[entry["tcid"]] = t
                    self.latest[call["id"]] = entry["tcid"]
                    calls.append(entry)
        extra = msg.get("extra")
        if isinstance(extra, dict) and walkable(extra):
            used.add("extra")
            text_calls = role == "assistant" and not calls
            self.extra(f"{ptr}/extra", extra, turn, t, m, text_calls=text_calls, calls=calls)
            if text_calls:
                self.shown_calls = [(t, call["tcid"]) for call in calls]
        if calls:
            turn["tool_calls"] = calls
        if role == EXIT_ROLE and _api_error(extra):
            turn["extra"] = {NAME: {"api_error": True}}  # derived: the model's API ended the run (fields)
        lay.rest(msg, ptr, used)
        self.turns.append(turn)

    def extra(self, ptr: str, extra: dict, turn: dict, t: int, m: str, *, text_calls: bool, calls: list) -> None:
        lay = self.lay
        if not extra:
            lay.keep(ptr, extra)
        for key, val in extra.items():
            if (
                key == "timestamp"
                and (isinstance(val, (int, float, str)) and not isinstance(val, bool))
                and is_time(val)
            ):
                turn["ts"] = val
                lay.map(f"{ptr}/timestamp", val, f"/turns/{t}/ts", val)
            elif key == "actions" and text_calls and isinstance(val, list) and val:
                for a, action in enumerate(val):
                    aptr = f"{ptr}/actions/{a}"
                    if not (isinstance(action, dict) and walkable(action) and isinstance(action.get("command"), str)):
                        lay.keep(aptr, action)
                        continue
                    c = len(calls)
                    tcid, own = self.tcid(action.get("tool_call_id"), f"action-{m}-{a}")
                    calls.append({"tcid": tcid, "fn": "bash", "args": {"command": action["command"]}})
                    lay.map(
                        f"{aptr}/command",
                        action["command"],
                        f"/turns/{t}/tool_calls/{c}/args/command",
                        action["command"],
                    )
                    used = ["command"]
                    if own:
                        self.by_id[tcid] = t
                        lay.map(f"{aptr}/tool_call_id", tcid, f"/turns/{t}/tool_calls/{c}/tcid", tcid)
                        used.append("tool_call_id")
                    lay.rest(action, aptr, used)
            else:
                lay.keep(f"{ptr}/{key}", val)

    def result(self, ptr: str, msg: dict) -> bool:
        source = msg.get("tool_call_id")
        cid = self.latest.get(source, source) if isinstance(source, str) else None  # a repeated id: its latest call
        if not (isinstance(cid, str) and cid in self.by_id and cid not in self.answered):
            return False
        self.answered.add(cid)
        t = self.by_id[cid]
        at = self.lay.result_message(ptr, msg, self.turns[t], t, cid, "tool_role")
        self.lay.map(
            f"{ptr}/tool_call_id", source, f"{at}/source_call_id", cid, None if cid == source else "renamed_id"
        )
        self.lay.rest(msg, ptr, ("role", "content", "tool_call_id"))
        return True


def read_trajectory(value: Any, document_id: str | None, line: int | None, session: str) -> dict[str, Any]:
    """The Storyline document of one parsed mini-SWE-agent trajectory; ``FormatError`` with its pointer."""
    if not (isinstance(value, dict) and walkable(value) and isinstance(value.get("messages"), list)):
        raise FormatError(
            f"a mini-swe-agent trajectory is an object with a messages array, got {json_type(value)}",
            pointer="/messages" if isinstance(value, dict) else "",
            document_id=document_id,
            line=line,
        )
    if not isinstance(value.get("trajectory_format"), str):
        raise FormatError(
            "a mini-swe-agent trajectory names its trajectory_format (a string)",
            pointer="/trajectory_format",
            document_id=document_id,
            line=line,
        )
    return _Reader(document_id, line).read(value, session)
