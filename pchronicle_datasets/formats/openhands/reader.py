"""One OpenHands event stream (a JSON array of events, or an evaluation record holding one in ``history``) → one
Storyline document (docs/formats/openhands.md): ``message`` actions are turns, the ``system`` action the system
prompt, every other action one agent turn with one call, observations the results of the action their ``cause``
names."""

from __future__ import annotations

from typing import Any

from ...errors import FormatError
from ...jsonio import json_type, try_loads
from ..layout import Layout, same, walkable
from ..residual import origin
from .fields import CALL_METADATA, FINISH, HISTORY, INVERSE, MESSAGE, NAME, RECORD_KEYS, SYSTEM, SYSTEM_ARGS


def is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and type(value.get("id")) is int
        and isinstance(value.get("source"), str)
        and (isinstance(value.get("action"), str) or isinstance(value.get("observation"), str))
    )


def is_stream(value: Any) -> bool:
    """A non-empty array whose first element is an OpenHands event."""
    return isinstance(value, list) and bool(value) and is_event(value[0])


def is_record(value: Any) -> bool:
    """An evaluation record (OpenHands' ``output.jsonl`` line): an object whose ``history`` is an event stream."""
    return isinstance(value, dict) and is_stream(value.get(HISTORY))


def _model_call(metadata: dict, tcid: str) -> tuple[str | None, Any]:
    """``(model, arguments)`` of the call ``tcid`` in the model response the metadata holds (the arguments
    decoded; ``None`` when the response has no such call)."""
    response = metadata.get("model_response")
    if not isinstance(response, dict):
        return None, None
    model = response.get("model") if isinstance(response.get("model"), str) else None
    choices = response.get("choices")
    message = (
        choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    )
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    for call in calls if isinstance(calls, list) else ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and call.get("id") == tcid and isinstance(fn.get("arguments"), str):
            ok, args = try_loads(fn["arguments"])
            return model, args if ok else fn["arguments"]
    return model, None


class _Reader:
    def __init__(self, document_id: str | None, line: int | None, prefix: str = "") -> None:
        self.prefix = prefix  # the events' pointer: "" (a bare array) or "/history" (an evaluation record)
        self.document_id = document_id
        self.line = line
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        self.actions: dict[int, int] = {}  # event id → the turn of its call
        self.tcids: set[str] = set()

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def read(self, events: list, session: str, record: dict | None = None) -> dict[str, Any]:
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["session"] = session
        story["agent"] = self.agent = {"id": NAME, "name": NAME}
        for e, event in enumerate(events):
            ptr = f"{self.prefix}/{e}"
            if not (isinstance(event, dict) and walkable(event)):
                raise self.error(ptr, f"an OpenHands event is an object, got {json_type(event)}")
            if isinstance(event.get("action"), str):
                self.action(ptr, event)
            elif isinstance(event.get("observation"), str):
                self.observation(ptr, event)
            else:
                raise self.error(ptr, "an OpenHands event has an action or an observation (a string)")
        story["turns"] = self.turns
        self.lay.record_keys(record, RECORD_KEYS, story, skip=(HISTORY,))
        story["meta"] = {NAME: self.lay.hints("array" if record is None else "object")}
        return self.lay.kept.finish(story)

    def action(self, ptr: str, event: dict) -> None:
        lay = self.lay
        t = len(self.turns)
        args = event.get("args")
        args_ok = isinstance(args, dict) and walkable(args)
        # The system prompt (SystemMessageAction, the first event since OpenHands 0.3x) is a system turn, not a call.
        system = event["action"] == SYSTEM and args_ok and isinstance(args.get("content"), str)
        src = "system" if system else event["source"] or "agent"
        turn: dict[str, Any] = {"id": t + 1, "src": src, "msg": ""}
        lay.map(f"{ptr}/source", event["source"], f"/turns/{t}/src", src)  # "agent" of a system turn: residual
        used = {"source"}
        if system:
            used.update(("action", "args"))
            lay.keep(f"{ptr}/action", event["action"])
            turn["msg"] = args["content"]
            lay.map(f"{ptr}/args/content", args["content"], f"/turns/{t}/msg", turn["msg"])
            for key, val in args.items():
                target = SYSTEM_ARGS.get(key)
                field = target.rsplit("/", 1)[-1] if target else None
                if field and field not in self.agent and val is not None and (field != "ver" or isinstance(val, str)):
                    self.agent[field] = val  # the tools the model was offered, the OpenHands version
                    lay.map(f"{ptr}/args/{key}", val, target, val)
                elif key != "content":
                    lay.keep(f"{ptr}/args/{key}", val)
            if "message" in event:
                lay.map(f"{ptr}/message", event["message"], f"/turns/{t}/msg", turn["msg"])
                used.add("message")
        elif event["action"] == MESSAGE or src != "agent":
            # A message, or an action the agent did not take (the environment changing the agent's state, a
            # user's own action): a turn without calls; the action and its args stay as they are (residual).
            used.add("action")
            lay.keep(f"{ptr}/action", event["action"])
            content = args.get("content") if args_ok else None
            if args_ok and "content" in args and event["action"] == MESSAGE:
                turn["msg"] = content
                lay.map(f"{ptr}/args/content", content, f"/turns/{t}/msg", content)
                lay.rest(args, f"{ptr}/args", ("content",))
                used.add("args")
            elif "message" in event:
                turn["msg"] = event["message"]
            if "message" in event:
                lay.map(f"{ptr}/message", event["message"], f"/turns/{t}/msg", turn["msg"])
                used.add("message")
        else:
            used.add("args")
            meta = event.get("tool_call_metadata")
            meta_ok = isinstance(meta, dict) and walkable(meta)
            if args_ok and isinstance(args.get("thought"), str):
                turn["msg"] = args["thought"]
                lay.map(f"{ptr}/args/thought", args["thought"], f"/turns/{t}/msg", args["thought"])
            if event["action"] == FINISH and not turn["msg"] and isinstance(event.get("message"), str):
                # finish carries the agent's final words in its message when the model gave no thought
                turn["msg"] = event["message"]
                lay.map(f"{ptr}/message", event["message"], f"/turns/{t}/msg", turn["msg"])
                used.add("message")
            if "args" in event and args_ok and isinstance(args.get("thought"), str) and args["thought"] != turn["msg"]:
                lay.entries = [e for e in lay.entries if e[0] != f"{ptr}/args/thought"]
                lay.keep(f"{ptr}/args/thought", args["thought"])
            call: dict[str, Any] = {}
            cptr = f"/turns/{t}/tool_calls/0"
            tcid = meta.get("tool_call_id") if meta_ok else None
            if isinstance(tcid, str) and tcid and tcid not in self.tcids:
                call["tcid"] = tcid
                lay.map(f"{ptr}/tool_call_metadata/tool_call_id", tcid, f"{cptr}/tcid", tcid)
            else:
                call["tcid"] = self.generated(f"event-{event.get('id')}")
            self.tcids.add(call["tcid"])
            name = meta.get("function_name") if meta_ok else None
            if isinstance(name, str) and name:
                call["fn"] = name
                lay.map(f"{ptr}/tool_call_metadata/function_name", name, f"{cptr}/fn", name)
                lay.keep(f"{ptr}/action", event["action"])
            else:
                call["fn"] = event["action"] or "action"
                lay.map(f"{ptr}/action", event["action"], f"{cptr}/fn", call["fn"])
            used.update(("action", "tool_call_metadata"))
            if meta_ok:
                lay.rest(meta, f"{ptr}/tool_call_metadata", ("tool_call_id", "function_name"))
                model, model_args = _model_call(meta, call["tcid"])
                if model is not None:
                    turn["model"] = model  # a copy: the model response stays residual
            else:
                model_args = None
                if "tool_call_metadata" in event:
                    lay.keep(f"{ptr}/tool_call_metadata", meta)
            if model_args is not None:
                call["args"] = model_args  # what the model called with (derived: the response is residual)
                if args_ok:
                    lay.rest(args, f"{ptr}/args", ("thought",) if isinstance(args.get("thought"), str) else ())
                elif "args" in event:
                    lay.keep(f"{ptr}/args", args)
            elif args_ok:
                call["args"] = {k: v for k, v in args.items() if not (k == "thought" and isinstance(v, str))}
                for key, val in call["args"].items():
                    lay.map(f"{ptr}/args/{key}", val, f"{cptr}/args/{key}", val)
                if not args:
                    lay.keep(f"{ptr}/args", args)
            else:
                call["args"] = None
                if "args" in event:
                    lay.keep(f"{ptr}/args", args)
            turn["tool_calls"] = [call]
            if type(event.get("id")) is int:
                self.actions.setdefault(event["id"], t)
        lay.rest(event, ptr, used)
        self.turns.append(turn)

    def generated(self, wanted: str) -> str:
        tcid, n = wanted, 1
        while tcid in self.tcids:
            n += 1
            tcid = f"{wanted}-{n}"
        return tcid

    def observation(self, ptr: str, event: dict) -> None:
        lay = self.lay
        cause = event.get("cause")
        t = self.actions.get(cause) if type(cause) is int else None
        if t is None:
            # An observation that answers no action (agent state changes, a result before its action): a turn.
            n = len(self.turns)
            src = "environment" if event.get("source") == "environment" else "tool"
            turn = {"id": n + 1, "src": src, "msg": event.get("content")}
            if "content" in event:
                lay.map(f"{ptr}/content", event["content"], f"/turns/{n}/msg", event["content"])
            lay.rest(event, ptr, ("content",))
            self.turns.append(turn)
            return
        call = self.turns[t]["tool_calls"][0]
        results = self.turns[t].setdefault("observation", {"results": []})["results"]
        at = f"/turns/{t}/observation/results/{len(results)}"
        result: dict[str, Any] = {}
        used = {"cause"}
        lay.keep(f"{ptr}/cause", cause)
        if "content" in event:
            result["content"] = event["content"]
            lay.map(f"{ptr}/content", event["content"], f"{at}/content", event["content"])
            used.add("content")
        result["source_call_id"] = call["tcid"]
        meta = event.get("tool_call_metadata")
        if isinstance(meta, dict) and walkable(meta) and meta:
            used.add("tool_call_metadata")
            for key, target in CALL_METADATA.items():
                if key in meta and same(meta[key], call[target]):
                    lay.map(
                        f"{ptr}/tool_call_metadata/{key}", meta[key], f"/turns/{t}/tool_calls/0/{target}", call[target]
                    )
            lay.rest(
                meta,
                f"{ptr}/tool_call_metadata",
                [k for k, target in CALL_METADATA.items() if k in meta and same(meta[k], call[target])],
            )
        extras = event.get("extras")
        exit_code = (extras.get("metadata") or {}).get("exit_code") if isinstance(extras, dict) else None
        if isinstance((extras or {}).get("metadata"), dict) and type(exit_code) is int and "response" not in call:
            call["response"] = {"exit_code": exit_code}  # a copy: extras stays residual
        lay.rest(event, ptr, used)
        results.append(result)


def read_stream(value: Any, document_id: str | None, line: int | None, session: str) -> dict[str, Any]:
    """The Storyline document of one parsed event stream, or of an evaluation record (``instance_id`` its session,
    ``metrics`` its final metrics, every other key residual); ``FormatError`` with its pointer when it has none."""
    if is_record(value):
        return _Reader(document_id, line, f"/{HISTORY}").read(value[HISTORY], session, record=value)
    if not isinstance(value, list):
        raise FormatError(
            f"an OpenHands event stream is a JSON array of events (or an object with one in {HISTORY!r}), "
            f"got {json_type(value)}",
            document_id=document_id,
            line=line,
        )
    return _Reader(document_id, line).read(value, session)
