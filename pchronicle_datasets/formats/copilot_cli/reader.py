"""One Copilot CLI events file (its parsed lines) → one Storyline document (the table in docs/formats/copilot-cli.md).

``Session`` takes the events one at a time (``event(i, value)``, ``i`` the 0-based index among the non-blank
lines): every event is planned (``/meta/copilot-cli/layout``: what it became, or None when it stays residual,
whole, at ``/{i}``), and ``finish()`` gives the document.

>>> session = Session("events.jsonl")
>>> session.event(0, {"type": "session.start", "data": {"sessionId": "s1"}})
>>> session.event(1, {"type": "user.message", "data": {"content": "hi"}})
>>> story = session.finish()
>>> story["turns"][0]["msg"], story["meta"]["copilot-cli"]["layout"]
('hi', ['start', 'turn'])
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, NoConversationError
from ...linking import SOURCE_CALL_IDS
from ...pointer import escape
from ...schema import is_time
from ..residual import Residual, origin
from .fields import (
    AGENT_KEY,
    ASSISTANT,
    COMPACTION,
    COMPACTION_CONTEXT,
    COMPLETE,
    CONTEXT_KIND,
    EVENT_KEYS,
    EXTRA_KEY,
    NAME,
    REPEATED_SYSTEM,
    SHUTDOWN,
    START,
    SUBAGENT_DATA_KEY,
    SUBAGENT_REL,
    SUBAGENT_STARTED,
    SUMMARY_KEY,
    SYSTEM,
    USER,
    agent_of,
    context_of,
)

SOURCES = {SYSTEM: "system", USER: "user", ASSISTANT: "agent"}  # a message event's turn source

__all__ = ["Session", "subagent_documents"]


def _failure(data: dict) -> str | None:
    """The message of a failed call's completion (``success: false``, ``error{message, code}``, no ``result``),
    else None."""
    error = data.get("error")
    if data.get("success") is False and "result" not in data and isinstance(error, dict):
        message = error.get("message")
        return message if type(message) is str else None
    return None


class Session:
    """The reading of one events file, an event at a time (its document: ``finish()``)."""

    def __init__(self, document_id: str | None, agent: str | None = None) -> None:
        self.document_id = document_id
        self.agent = agent  # the subagent whose events this reading takes (None: the main agent's)
        self.subagents: dict[str, list[tuple[int, dict]]] = {}  # a subagent's events, by agent, in file order
        self.lines: list[int] = []  # a subagent's reading: the lines of its events
        self.kept = Residual(NAME, document_id)
        self.story: dict[str, Any] = {
            "schema_version": "storyline/v1",
            "origin": origin(NAME, document_id),
            "session": "",
            "agent": {"id": NAME},
            "turns": [],
        }
        self.layout: list[Any] = []
        self.calls: dict[str, dict[str, Any]] = {}  # source call id → its call in the document
        self.renamed: dict[str, str] = {}
        self.used: set[str] = set()  # every Storyline call id given
        self.system_prompt: str | None = None  # the text of the last system.message

    def event(self, i: int, ev: Any) -> None:
        ptr, kept = f"/{i}", self.kept
        while len(self.layout) < i:
            self.layout.append(None)  # a line that was not JSON
        kind = ev.get("type") if isinstance(ev, dict) else None
        data = ev.get("data") if isinstance(ev, dict) else None
        agent = agent_of(ev) if isinstance(ev, dict) else None
        keys = EVENT_KEYS | {AGENT_KEY} if self.agent is not None else EVENT_KEYS
        if agent is not None and self.agent is None:
            self.subagents.setdefault(agent, []).append((i, ev))  # also read as a document of its own
        if not isinstance(data, dict) or not ev.keys() <= keys or type(kind) is not str:
            kind = None  # an event type that is no string is no event this reader maps (and no key of SOURCES)
        elif agent != self.agent:
            kind = None  # a subagent's event (a top-level ``agentId`` is no key of EVENT_KEYS): not the main agent's
        if kind == START and type(data.get("sessionId")) is str and data["sessionId"] and not self.story["session"]:
            self._start(ptr, ev)
            self.layout.append("start")
        elif kind in SOURCES and type(data.get("content")) is str:
            self._turn(ptr, ev)
            self.layout.append("turn")
        elif kind == COMPACTION and type(data.get(SUMMARY_KEY)) is str and data[SUMMARY_KEY]:
            self._compaction(ptr, ev)
            self.layout.append("compaction")
        elif (
            kind == COMPLETE
            and data.get("toolCallId") in self.calls
            and "result" not in self.calls[data["toolCallId"]]
            and ((isinstance(data.get("result"), dict) and "content" in data["result"]) or _failure(data) is not None)
        ):
            self._result(ptr, ev)
            # a failed call has no ``result``, only ``error{message, code}`` (Copilot CLI 1.0.78): kept for the writer
            self.layout.append(["result" if "result" in data else "error", self.calls[data["toolCallId"]]["tcid"]])
        elif kind == SHUTDOWN and "modelMetrics" in data and "final_metrics" not in self.story:
            self.story["final_metrics"] = data["modelMetrics"]
            self._rest(ptr, ev, ("type",), data, ("modelMetrics",))
            self.layout.append("shutdown")
        else:
            kept.keep(ptr, ev)
            self.layout.append(None)

    def _rest(self, ptr: str, ev: dict, used: tuple, data: dict, data_used: tuple) -> None:
        for key, v in ev.items():
            if key not in used and key != "data":
                self.kept.keep(f"{ptr}/{escape(key)}", v)
        for key, v in data.items():
            if key not in data_used:
                self.kept.keep(f"{ptr}/data/{escape(key)}", v)

    def _start(self, ptr: str, ev: dict) -> None:
        data, story = ev["data"], self.story
        story["session"] = data["sessionId"]
        used = ["sessionId"]
        if type(data.get("copilotVersion")) is str:
            story["agent"]["ver"] = data["copilotVersion"]
            used.append("copilotVersion")
        if is_time(data.get("startTime")):
            story["started_at"] = data["startTime"]
            used.append("startTime")
        self._rest(ptr, ev, ("type",), data, tuple(used))

    def _turn(self, ptr: str, ev: dict) -> None:
        data = ev["data"]
        turn: dict[str, Any] = {
            "id": len(self.story["turns"]) + 1,
            "src": SOURCES[ev["type"]],
            "msg": data["content"],
        }
        used = ["content"]
        ev_used = ["type"]
        if is_time(ev.get("timestamp")):
            turn["ts"] = ev["timestamp"]
            ev_used.append("timestamp")
        if type(data.get("model")) is str:  # the model that wrote this assistant message
            turn["model"] = data["model"]
            used.append("model")
        why = context_of(data) if ev["type"] == USER else None
        if ev["type"] == SYSTEM and data["content"] == self.system_prompt:
            why = REPEATED_SYSTEM  # the same prompt written again for the next interaction
        if why is not None:
            # the key that says so stays residual (the writer gives it back); the turn says why
            turn.update(copied=True, kind=CONTEXT_KIND, extra={EXTRA_KEY: {"context": why}})
        if ev["type"] == SYSTEM:
            self.system_prompt = data["content"]
        if ev["type"] == ASSISTANT:
            if type(data.get("reasoningText")) is str:
                turn["reason"] = data["reasoningText"]
                used.append("reasoningText")
            if type(data.get("outputTokens")) is int:
                turn["metrics"] = {"completion_tokens": data["outputTokens"]}
                used.append("outputTokens")
            requests = data.get("toolRequests")
            if isinstance(requests, list):
                used.append("toolRequests")
                calls = []
                for c, req in enumerate(requests):
                    rptr = f"{ptr}/data/toolRequests/{c}"
                    if not (
                        isinstance(req, dict)
                        and type(req.get("toolCallId")) is str
                        and req["toolCallId"]
                        and type(req.get("name")) is str
                        and req["name"]
                        and "arguments" in req
                    ):
                        self.kept.keep(rptr, req)
                        continue
                    calls.append(self._call(req, rptr))
                turn["tool_calls"] = calls
        self.story["turns"].append(turn)
        self._rest(ptr, ev, tuple(ev_used), data, tuple(used))

    def _compaction(self, ptr: str, ev: dict) -> None:
        turn: dict[str, Any] = {
            "id": len(self.story["turns"]) + 1,
            "src": "user",
            "msg": ev["data"][SUMMARY_KEY],
            "copied": True,
            "kind": CONTEXT_KIND,
            "extra": {EXTRA_KEY: {"context": COMPACTION_CONTEXT}},
        }
        ev_used = ["type"]
        if is_time(ev.get("timestamp")):
            turn["ts"] = ev["timestamp"]
            ev_used.append("timestamp")
        self.story["turns"].append(turn)
        self._rest(ptr, ev, tuple(ev_used), ev["data"], (SUMMARY_KEY,))

    def _call(self, req: dict, rptr: str) -> dict[str, Any]:
        cid = tcid = req["toolCallId"]
        n = 2
        while tcid in self.used:  # every id given so far (``calls`` holds only each source id's latest call)
            tcid, n = f"{cid}#{n}", n + 1
        self.used.add(tcid)
        if tcid != cid:
            self.renamed[tcid] = cid
        call = {"tcid": tcid, "fn": req["name"], "args": req["arguments"]}
        self.calls[cid] = call  # a later request with the same id takes its results
        for key, v in req.items():
            if key not in ("toolCallId", "name", "arguments"):
                self.kept.keep(f"{rptr}/{escape(key)}", v)
        return call

    def _result(self, ptr: str, ev: dict) -> None:
        data = ev["data"]
        call = self.calls[data["toolCallId"]]
        used = ["toolCallId", "result"]
        if type(data.get("success")) is bool:
            call["response"] = {"status": "success" if data["success"] else "error"}
            used.append("success")
        if "result" in data:
            content = data["result"]["content"]
            call["result"] = {"error": content} if data.get("success") is False else content
            part, text = "result", "content"
        else:  # a failure: ``error{message, code}`` in place of ``result``
            call["result"] = {"error": data["error"]["message"]}
            used[1] = part = "error"
            text = "message"
        self._rest(ptr, ev, ("type",), data, tuple(used))
        for key, v in data[part].items():
            if key != text:
                self.kept.keep(f"{ptr}/data/{part}/{escape(key)}", v)

    def finish(self) -> dict[str, Any]:
        story = self.story
        if self.agent is not None:
            return self._finish_subagent()
        if not story["session"]:
            raise FormatError(
                "a Copilot CLI events file starts with a session.start event naming its sessionId; this one has none",
                pointer="",
            )
        if not story["turns"]:
            raise NoConversationError("the events file holds no message: only session and tool events", pointer="")
        story["meta"] = {NAME: {"version": 1, "layout": self.layout}}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return self.kept.finish(story)

    def _finish_subagent(self) -> dict[str, Any]:
        """The document of a subagent's events: no residual (its main document holds every value), its agent and
        lines in ``/meta/copilot-cli`` (no layout: not a file of its own)."""
        story = self.story
        if not story["turns"]:
            raise NoConversationError("the subagent's events hold no message", pointer="")
        story["meta"] = {NAME: {"version": 1, "subagent": self.agent, "lines": self.lines}}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return Residual(NAME, self.document_id).finish(story, always=False)


def subagent_documents(main: Session, story: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents of the subagents whose events ``main`` kept whole (``fields.SUBAGENT_REL``), each linked to
    ``story`` (the main document, which gets their sessions in ``/children``); a subagent without a message gives
    none."""
    out = []
    turn_of = {c["tcid"]: t["id"] for t in story["turns"] for c in t.get("tool_calls") or ()}
    for agent, events in main.subagents.items():
        child = Session(main.document_id, agent)
        child.story["session"] = f"{story['session']}/{agent}"
        child.lines = [i for i, _ in events]
        spawn = next(
            (
                v
                for _, ev in events
                for v in (
                    ev["data"].get(SUBAGENT_DATA_KEY),
                    ev["data"].get("toolCallId") if ev.get("type") == SUBAGENT_STARTED else None,
                )
                if type(v) is str and v
            ),
            None,
        )
        parent: dict[str, Any] = {"psid": story["session"], "rel": SUBAGENT_REL}
        if spawn is not None:
            parent["scid"] = spawn
            if spawn in turn_of:
                parent["ptid"] = turn_of[spawn]
        for i, ev in events:
            child.event(i, ev)
        child.story["parent"] = parent
        try:
            out.append(child.finish())
        except NoConversationError:
            continue
    if out:
        story["children"] = [c["session"] for c in out]
    return out
