"""The ``copilot-cli`` format: GitHub Copilot CLI's ``~/.copilot/session-state/<sessionId>/events.jsonl``, one
session per file (docs/formats/copilot-cli.md).

Each line is an event ``{type, data, id, timestamp, parentId}``. ``user.message`` and ``assistant.message`` events
are turns (an assistant message's ``toolRequests`` its calls), ``tool.execution_complete`` gives a call its result,
``session.start`` the session, ``session.shutdown`` the session's ``modelMetrics``; every other event and key is
residual at its pointer (``/{i}``: the ``i``-th non-blank line), and the writer puts every line back.

Written from the schema (entireio/cli ``cmd/entire/cli/agent/copilotcli/AGENT.md``, yoavf/ai-sessions' Copilot
fixture): no public events file is known.

>>> text = ('{"type": "session.start", "data": {"sessionId": "s1", "copilotVersion": "0.0.420"}, "id": "e1", '
...         '"timestamp": "2026-02-25T10:00:00.000Z", "parentId": null}\\n'
...         '{"type": "user.message", "data": {"content": "hi"}, "id": "e2", "timestamp": "2026-02-25T10:00:01.000Z",'
...         ' "parentId": "e1"}\\n')
>>> [story] = decode(text, "events.jsonl")
>>> story["session"], story["agent"]["ver"], story["turns"][0]["msg"]
('s1', '0.0.420', 'hi')
>>> import json; [json.loads(x) for x in encode([story]).splitlines()] == [json.loads(x) for x in text.splitlines()]
True
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError, PchronicleError
from ...linking import SOURCE_CALL_IDS, place_results
from ...losses import report_loss
from ...pointer import escape, parse
from ...schema import is_time
from ..base import Record, as_source, documents, parse_file
from ..residual import Residual, envelope, origin, other_sources, source_fields

__all__ = ["ALIASES", "EXTENSION", "NAME", "OUTPUT", "PER_DOCUMENT", "decode", "encode", "iter_records", "sniff"]

NAME = "copilot-cli"
ALIASES: tuple[str, ...] = ()
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl
EVENT_KEYS = frozenset({"type", "data", "id", "timestamp", "parentId"})
START, USER, ASSISTANT, COMPLETE, SHUTDOWN = (
    "session.start",
    "user.message",
    "assistant.message",
    "tool.execution_complete",
    "session.shutdown",
)


def sniff(sample: Any) -> bool:
    """A Copilot CLI event: an object of exactly ``type`` (dotted: ``session.start``), ``data``, ``id``,
    ``timestamp`` and ``parentId`` (some may be missing), whose type starts with a Copilot event family.

    >>> sniff({"type": "session.start", "data": {"sessionId": "s"}, "id": "e1", "timestamp": "t", "parentId": None})
    True
    >>> sniff({"type": "user", "message": {"role": "user", "content": "hi"}})  # Claude Code
    False
    """
    return (
        isinstance(sample, dict)
        and {"type", "data"} <= sample.keys() <= EVENT_KEYS
        and type(sample["type"]) is str
        and sample["type"].split(".", 1)[0] in ("session", "user", "assistant", "tool", "subagent")
        and "." in sample["type"]
        and isinstance(sample["data"], dict)
    )


class _Session:
    def __init__(self, document_id: str | None) -> None:
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

    def event(self, i: int, ev: Any) -> None:
        ptr, kept = f"/{i}", self.kept
        while len(self.layout) < i:
            self.layout.append(None)  # a line that was not JSON
        kind = ev.get("type") if isinstance(ev, dict) else None
        data = ev.get("data") if isinstance(ev, dict) else None
        if not isinstance(data, dict) or not ev.keys() <= EVENT_KEYS:
            kind = None
        if kind == START and type(data.get("sessionId")) is str and data["sessionId"] and not self.story["session"]:
            self._start(ptr, ev)
            self.layout.append("start")
        elif kind in (USER, ASSISTANT) and type(data.get("content")) is str:
            self._turn(ptr, ev)
            self.layout.append("turn")
        elif (
            kind == COMPLETE
            and data.get("toolCallId") in self.calls
            and "result" not in self.calls[data["toolCallId"]]
            and isinstance(data.get("result"), dict)
            and "content" in data["result"]
        ):
            self._result(ptr, ev)
            self.layout.append(["result", self.calls[data["toolCallId"]]["tcid"]])
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
            "src": "user" if ev["type"] == USER else "agent",
            "msg": data["content"],
        }
        used = ["content"]
        ev_used = ["type"]
        if is_time(ev.get("timestamp")):
            turn["ts"] = ev["timestamp"]
            ev_used.append("timestamp")
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

    def _call(self, req: dict, rptr: str) -> dict[str, Any]:
        cid = tcid = req["toolCallId"]
        n = 2
        while any(c["tcid"] == tcid for c in self.calls.values()) or tcid in self.renamed:
            tcid, n = f"{cid}#{n}", n + 1
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
        content = data["result"]["content"]
        call["result"] = {"error": content} if data.get("success") is False else content
        self._rest(ptr, ev, ("type",), data, tuple(used))
        for key, v in data["result"].items():
            if key != "content":
                self.kept.keep(f"{ptr}/data/result/{escape(key)}", v)

    def finish(self) -> dict[str, Any]:
        story = self.story
        if not story["session"]:
            raise FormatError(
                "a Copilot CLI events file starts with a session.start event naming its sessionId; this one has none",
                pointer="",
            )
        story["meta"] = {NAME: {"version": 1, "layout": self.layout}}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return self.kept.finish(story)


def iter_records(data: Any, document_id: str | None = None):
    """The document of an events file (one line that is not JSON: its own error record; the others still read)."""
    src = as_source(data, document_id)
    if src.is_blank():
        return
    try:
        whole, parsed = parse_file(src, document_id)
    except FormatError as exc:
        yield Record(exc.line, src.text, error=exc)
        return
    session = _Session(document_id)
    items = [(0, None, src.text, parsed)] if whole else parsed
    first, raws = None, []
    for index, line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        first = line if first is None else first
        raws.append(raw)
        session.event(index, value)
    try:
        story = session.finish()
    except PchronicleError as exc:
        yield Record(first, b"\n".join(raws), error=exc.with_context(document_id=document_id, line=first))
        return
    yield Record(first, b"\n".join(raws), story=story)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))


# ------------------------------------------------------------------------------------------------ writing


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for k, token in enumerate(tokens[:-1]):
        if isinstance(node, list):
            node = node[int(token)]
        else:
            node = node.setdefault(token, [] if token == "toolRequests" and tokens[k + 1].isdigit() else {})
    if isinstance(node, list):
        index = int(tokens[-1])
        while len(node) <= index:
            node.append(None)
        node[index] = value
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], layout: list) -> list[Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    shown = (story.get("meta") or {}).get(SOURCE_CALL_IDS) or {}
    by_tcid = {c["tcid"]: c for t in story["turns"] for c in t.get("tool_calls") or ()}
    turns = iter(story["turns"])
    lines: list[Any] = []
    for entry in layout:
        if entry == "start":
            data: dict[str, Any] = {"sessionId": story["session"]}
            if "ver" in story["agent"]:
                data["copilotVersion"] = story["agent"]["ver"]
            if "started_at" in story:
                data["startTime"] = story["started_at"]
            lines.append({"type": "session.start", "data": data})
        elif entry == "turn":
            turn = next(turns)
            ev: dict[str, Any] = {
                "type": USER if turn["src"] == "user" else ASSISTANT,
                "data": {"content": turn["msg"]},
            }
            if "ts" in turn:
                ev["timestamp"] = turn["ts"]
            if "reason" in turn:
                ev["data"]["reasoningText"] = turn["reason"]
            if "completion_tokens" in (turn.get("metrics") or {}):
                ev["data"]["outputTokens"] = turn["metrics"]["completion_tokens"]
            if "tool_calls" in turn:
                ev["data"]["toolRequests"] = [
                    {"toolCallId": shown.get(c["tcid"], c["tcid"]), "name": c["fn"], "arguments": c["args"]}
                    for c in turn["tool_calls"]
                ]
            lines.append(ev)
        elif isinstance(entry, list):
            call = by_tcid[entry[1]]
            data = {"toolCallId": shown.get(call["tcid"], call["tcid"])}
            status = (call.get("response") or {}).get("status")
            if status is not None:
                data["success"] = status == "success"
            result = call.get("result")
            if status == "error" and isinstance(result, dict):
                result = result.get("error")
            data["result"] = {"content": result}
            lines.append({"type": COMPLETE, "data": data})
        elif entry == "shutdown":
            lines.append({"type": SHUTDOWN, "data": {"modelMetrics": story.get("final_metrics")}})
        else:
            lines.append(None)
    # the residual in its place; a list of toolRequests rebuilt above makes room for its residual requests
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        tokens = parse(pointer)
        i = int(tokens[0])
        if len(tokens) == 1:
            lines[i] = value
            continue
        node = lines[i]
        if tokens[1:4] == ["data", "toolRequests"] and len(tokens) == 4:
            node["data"]["toolRequests"].insert(int(tokens[3]), value)
            continue
        _put(node, tokens[1:], value)
    return [line for line in lines if line is not None]


def _synthesized(story: dict[str, Any]) -> list[Any]:
    data: dict[str, Any] = {"sessionId": story["session"]}
    if isinstance(story["agent"].get("ver"), str):
        data["copilotVersion"] = story["agent"]["ver"]
    if "started_at" in story:
        data["startTime"] = story["started_at"]
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        data["_storyline"] = carried
    lines: list[Any] = [{"type": START, "data": data}]
    placed, _ = place_results(story)
    for t, turn in enumerate(story["turns"]):
        if turn["src"] not in ("user", "agent"):
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
            continue
        msg = turn["msg"] if isinstance(turn["msg"], str) else orjson.dumps(turn["msg"]).decode()
        ev: dict[str, Any] = {"type": USER if turn["src"] == "user" else ASSISTANT, "data": {"content": msg}}
        if "ts" in turn:
            ev["timestamp"] = turn["ts"]
        if turn["src"] == "agent":
            if isinstance(turn.get("reason"), str):
                ev["data"]["reasoningText"] = turn["reason"]
            ev["data"]["toolRequests"] = [
                {"toolCallId": c["tcid"], "name": c["fn"], "arguments": c["args"]} for c in turn.get("tool_calls") or ()
            ]
        lines.append(ev)
        for cid, _, content in placed.get(t, ()):
            lines.append(
                {"type": COMPLETE, "data": {"toolCallId": cid, "success": True, "result": {"content": content}}}
            )
    return lines


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The events file of one document ("" for none); several are refused (one file per session)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Copilot CLI events file holds one session, not {len(stories)}: convert --per-document", pointer=""
        )
    story = stories[0]
    meta = story.get("meta") if isinstance(story.get("meta"), dict) else {}
    layout = (meta.get(NAME) or {}).get("layout")
    turns = sum(entry == "turn" for entry in layout) if isinstance(layout, list) else -1
    if (story.get("origin") or {}).get("format") == NAME and turns == len(story["turns"]):
        lines = _same_source(story, layout)
    else:
        lines = _synthesized(story)
    return "".join(orjson.dumps(line).decode() + "\n" for line in lines)
