"""OpenHands agent SDK (V1) events (a JSON array of events, JSON Lines of them, or an evaluation record holding them
in ``history``) → one Storyline document (docs/formats/openhands-sdk.md): the system prompt a system turn, messages
turns, the actions of one model response one agent turn with their calls, observations, agent errors and
rejections the results of the call their ``tool_call_id`` names, the tool calls an ACP server ran calls with their
results, a condensation a context turn; every other event residual."""

from __future__ import annotations

import json
from typing import Any

from ...errors import FormatError, NoConversationError
from ...jsonio import json_type
from ...pointer import get
from ..base import INTERRUPTED
from ..layout import Layout, same, walkable
from ..residual import origin
from . import acp
from .fields import (
    ACP,
    ACP_FAILED,
    CALL_KINDS,
    COMPACTION,
    CONDENSATION,
    CONTEXT,
    EVENT_FILE,
    EVENT_KINDS,
    HISTORY,
    INTERRUPT,
    INVERSE,
    MESSAGE,
    NAME,
    OBSERVATION_ERROR,
    OBSERVATION_TEXT,
    RECORD_KEYS,
    REJECTED,
    RESULT_KINDS,
    STATE,
    STATE_KEYS,
    STATS,
    SUMMARY,
    SYSTEM,
)


def is_event(value: Any) -> bool:
    """An SDK event: an object with a ``kind`` naming an event class, a string ``id`` and a string ``source``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("kind"), str)  # (a list or object would not hash)
        and value["kind"] in EVENT_KINDS
        and isinstance(value.get("id"), str)
        and isinstance(value.get("source"), str)
    )


def is_stream(value: Any) -> bool:
    """A non-empty array whose first element is an SDK event."""
    return isinstance(value, list) and bool(value) and is_event(value[0])


def is_record(value: Any) -> bool:
    """An evaluation record (OpenHands/benchmarks' ``output.jsonl`` line): an object whose ``history`` is a stream."""
    return isinstance(value, dict) and is_stream(value.get(HISTORY))


def is_base_state(value: Any) -> bool:
    """A persisted conversation's ``base_state.json``: an object with a string ``id``, an ``agent`` object of a
    ``kind`` with an ``llm`` object, and a ``workspace`` object."""
    agent = value.get("agent") if isinstance(value, dict) else None
    return (
        isinstance(value.get("id") if isinstance(value, dict) else None, str)
        and isinstance(agent, dict)
        and isinstance(agent.get("kind"), str)
        and isinstance(agent.get("llm"), dict)
        and isinstance(value.get("workspace"), dict)
    )


def folder_error(document_id: str | None, what: str) -> FormatError:
    """The error of a file of a persisted conversation folder read on its own (docs/formats/openhands-sdk.md): one
    event is no conversation; the folder, listed, is one (``sidecars.groups``)."""
    name = (document_id or "").replace("\\", "/")
    folder = name[: name.rfind("/events/")] if "/events/" in name else name.rpartition("/")[0]
    folder = folder or "."
    return FormatError(
        f"{what} of the OpenHands conversation folder {folder}, whose files are one conversation (base_state.json, "
        f"then events/event-*.json in name order): read the folder, not one of its files "
        f'(load_dataset("pchronicle", "auto", data_dir="{folder}"), or the folder as the CLI\'s input)',
        document_id=document_id,
    )


def is_event_file(document_id: str | None) -> bool:
    return bool(document_id) and EVENT_FILE.search(document_id.replace("\\", "/")) is not None


def _texts(blocks: Any) -> list[str] | None:
    """The texts of a list of text content blocks (``{"type": "text", "text"}``), None when it holds another."""
    if not isinstance(blocks, list):
        return None
    out = []
    for block in blocks:
        if not (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)):
            return None
        out.append(block["text"])
    return out


class _Reader:
    def __init__(
        self, document_id: str | None, line: int | None, prefix: str = "", numbers: list[int] | None = None
    ) -> None:
        self.numbers = numbers  # the line of each event, when they were JSON Lines
        self.prefix = prefix  # the events' pointer: "" (an array or lines) or "/history" (an evaluation record)
        self.document_id = document_id
        self.line = line
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        self.calls: dict[str, tuple[int, int]] = {}  # the source's tool call id → (turn, call) of its last call
        self.tcids: set[str] = set()  # the calls' Storyline ids
        self.open: tuple[str, int] | None = None  # (llm_response_id, turn) that more parallel calls may join
        self.stats: tuple[str, Any] | None = None  # (pointer, value) of the last stats update
        self.interrupted = 0
        self.acp_runs: dict[int, list[int]] = {}  # an ACP call's first event → all its events (acp.runs)
        self.acp_end = -1  # where the last-ending call of the open ACP turn ends (no call joins it after)

    def error(self, pointer: str, reason: str) -> FormatError:
        line = self.line
        if self.numbers is not None:  # the event's own line, its pointer then inside that line
            e, _, rest = pointer[1:].partition("/")
            line, pointer = self.numbers[int(e)], f"/{rest}" if rest else ""
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=line)

    def read(self, events: list, session: str, record: dict | None = None, lines: bool = False) -> dict[str, Any]:
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["session"] = session
        story["agent"] = self.agent = {"id": "openhands", "name": "openhands"}
        self.acp_runs = acp.runs(events)
        later = {j for run in self.acp_runs.values() for j in run[1:]}  # read with their call's first event
        for e, event in enumerate(events):
            ptr = f"{self.prefix}/{e}"
            if e in later:
                continue
            if e == 0 and record is None and is_base_state(event):
                self.base_state(ptr, event, story)  # a conversation folder's: its first member
                continue
            if not (isinstance(event, dict) and walkable(event)):
                raise self.error(ptr, f"an OpenHands SDK event is an object, got {json_type(event)}")
            kind = event.get("kind")
            if not isinstance(kind, str):
                raise self.error(ptr, "an OpenHands SDK event has a kind (a string: its event class)")
            if kind == SYSTEM:
                self.system(ptr, event)
            elif kind in (MESSAGE, SUMMARY):
                self.message(ptr, event)
            elif kind in CALL_KINDS:
                self.action(ptr, event)
            elif kind in RESULT_KINDS:
                self.result(ptr, event)
            elif kind == CONDENSATION:
                self.condensation(ptr, event)
            elif kind == ACP and e in self.acp_runs:
                self.acp_call(e, events)
            else:
                if kind == STATE and event.get("key") == STATS and isinstance(event.get("value"), dict):
                    # the value apart: the last one is the document's final metrics
                    self.stats = (f"{ptr}/value", event["value"])
                    self.model_of(event["value"])
                    self.lay.rest(event, ptr, ("value",))
                    self.lay.keep(f"{ptr}/value", event["value"])
                else:
                    self.lay.keep(ptr, event)  # not part of the conversation the model saw: kept whole
                self.interrupted += kind == INTERRUPT
        if not self.turns:
            # only bookkeeping (state updates; a folder's base_state.json before any event): left out and said
            what = "only state events" if events else "no event"
            raise NoConversationError(f"the conversation holds no message: {what}", document_id=self.document_id)
        story["turns"] = self.turns
        if self.agent.get("model") is None:
            self.agent.pop("model", None)
        self.lay.record_keys(record, RECORD_KEYS, story, skip=(HISTORY,))
        if self.stats is not None and "final_metrics" not in story and self.stats[1].get("usage_to_metrics"):
            # the last stats update: the conversation's accumulated metrics at its end
            story["final_metrics"] = self.stats[1]
            self.lay.kept.fields.pop(self.stats[0], None)
            self.lay.map(self.stats[0], self.stats[1], "/final_metrics", self.stats[1])
        hints = self.lay.hints("array" if record is None else "object")
        if lines:
            hints["lines"] = True  # JSON Lines of events: the same-source writer writes them back one per line
        if self.interrupted:
            hints[INTERRUPTED] = self.interrupted
        story["meta"] = {NAME: hints}
        return self.lay.kept.finish(story)

    def base_state(self, ptr: str, state: dict, story: dict[str, Any]) -> None:
        """A conversation folder's ``base_state.json`` (the conversation's state when it was last saved): its ``id``
        the session, its ``stats`` (what every LLM of the conversation used and cost, when it has any) the final
        metrics, its agent's model a copy at ``/agent/model``; every other key residual."""
        used = []
        for key, (target, kind) in STATE_KEYS.items():
            val = state.get(key)
            if isinstance(val, kind) and val and (key != "stats" or val.get("usage_to_metrics")):
                story[target[1:]] = val
                self.lay.map(f"{ptr}/{key}", val, target, val)
                used.append(key)
        llm = state["agent"]["llm"]
        if isinstance(llm.get("model"), str) and llm["model"]:
            self.agent["model"] = llm["model"]
        self.lay.rest(state, ptr, used)

    def model_of(self, stats: dict) -> None:
        """``/agent/model`` (a copy): the model every LLM of the stats names, when they name one."""
        metrics = stats.get("usage_to_metrics")
        names = {
            m.get("model_name") for m in (metrics.values() if isinstance(metrics, dict) else ()) if isinstance(m, dict)
        }
        if len(names) == 1 and isinstance(model := names.pop(), str) and model:
            self.agent.setdefault("model", model)

    def text(self, ptr: str, blocks: Any, target: str) -> str | None:
        """The text of content blocks at ``ptr`` for ``target``: one text block's text (mapped), several joined by a
        newline (derived, as the SDK's string serializer joins them; the blocks stay residual), None when the
        blocks hold something else than text (kept as residual by the caller)."""
        texts = _texts(blocks)
        if texts is None:
            return None
        if len(texts) == 1:
            self.lay.map(f"{ptr}/0/text", texts[0], target, texts[0])
            self.lay.rest(blocks[0], f"{ptr}/0", ("text",))
        else:
            self.lay.keep(ptr, blocks)
        return "\n".join(texts)

    def reason(self, ptr: str, holder: dict, turn: dict, t: int, used: set[str]) -> None:
        """``/turns/{t}/reason``: ``reasoning_content`` (mapped), else the thinking blocks' or the Responses
        reasoning item's text (derived; they stay residual)."""
        rc = holder.get("reasoning_content")
        if isinstance(rc, str) and rc:
            turn["reason"] = rc
            self.lay.map(f"{ptr}/reasoning_content", rc, f"/turns/{t}/reason", rc)
            used.add("reasoning_content")
            return
        blocks = holder.get("thinking_blocks")
        parts = [b.get("thinking") for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        parts = [p for p in parts if isinstance(p, str) and p]
        item = holder.get("responses_reasoning_item")
        if not parts and isinstance(item, dict):
            for key in ("summary", "content"):
                parts += [p for p in item.get(key) or () if isinstance(p, str) and p.strip()]
        if parts:
            turn["reason"] = "\n".join(parts)

    def system(self, ptr: str, event: dict) -> None:
        t = len(self.turns)
        turn: dict[str, Any] = {"id": t + 1, "src": "system", "msg": ""}
        used = {"kind"}
        self.lay.keep(f"{ptr}/kind", event["kind"])
        prompt = event.get("system_prompt")
        dynamic = event.get("dynamic_context")
        texts = [b.get("text") for b in (prompt, dynamic) if isinstance(b, dict)]
        if isinstance(prompt, dict) and isinstance(prompt.get("text"), str) and all(isinstance(x, str) for x in texts):
            used.add("system_prompt")
            if isinstance(dynamic, dict):
                # the second block of the same system message: both joined (derived), as the SDK joins texts
                turn["msg"] = "\n".join(texts)
                self.lay.keep(f"{ptr}/system_prompt", prompt)
                self.lay.keep(f"{ptr}/dynamic_context", dynamic)
                used.add("dynamic_context")
            else:
                turn["msg"] = prompt["text"]
                self.lay.map(f"{ptr}/system_prompt/text", prompt["text"], f"/turns/{t}/msg", prompt["text"])
                self.lay.rest(prompt, f"{ptr}/system_prompt", ("text",))
        tools = event.get("tools")
        if isinstance(tools, list) and "tools" not in self.agent:
            self.agent["tools"] = tools
            self.lay.map(f"{ptr}/tools", tools, "/agent/tools", tools)
            used.add("tools")
        self.lay.rest(event, ptr, used)
        self.close()
        self.turns.append(turn)

    def message(self, ptr: str, event: dict) -> None:
        """A ``MessageEvent`` (the user's or the agent's words, ``llm_message``) or a ``CondensationSummaryEvent``
        (a summary the model is shown as a user message)."""
        t = len(self.turns)
        lay = self.lay
        source = event.get("source")
        src = source if isinstance(source, str) and source else "environment"
        turn: dict[str, Any] = {"id": t + 1, "src": src, "msg": ""}
        used = {"source"}
        if isinstance(source, str) and source:
            lay.map(f"{ptr}/source", source, f"/turns/{t}/src", src)
        if event["kind"] == SUMMARY:
            if isinstance(event.get("summary"), str):
                turn["msg"] = event["summary"]
                lay.map(f"{ptr}/summary", event["summary"], f"/turns/{t}/msg", turn["msg"])
                used.add("summary")
            turn["kind"] = CONTEXT
        else:
            msg = event.get("llm_message")
            mark = len(lay.entries)
            if isinstance(msg, dict) and walkable(msg):
                used.add("llm_message")
                mptr = f"{ptr}/llm_message"
                mused = {"content"}
                text = self.text(f"{mptr}/content", msg.get("content"), "@result")
                if text is None and "content" in msg:
                    lay.keep(f"{mptr}/content", msg["content"])  # images beside the text: residual
                elif text is not None:
                    turn["msg"] = text
                self.reason(mptr, msg, turn, t, mused)
                lay.rest(msg, mptr, mused)
            extended = _texts(event.get("extended_content"))
            if extended:
                # text the agent context added: the model saw it after the message (to_llm_message); derived
                turn["msg"] = "\n".join([turn["msg"], *extended]) if turn["msg"] else "\n".join(extended)
                self.unmap(mark, event, ptr)
            self.retarget(mark, f"/turns/{t}/msg")
        lay.rest(event, ptr, used)
        self.close()
        self.turns.append(turn)

    def action(self, ptr: str, event: dict) -> None:
        lay = self.lay
        response = event.get("llm_response_id")
        source = event.get("source")
        src = source if isinstance(source, str) and source else "agent"
        same_response = self.open is not None and isinstance(response, str) and response == self.open[0]
        if same_response and self.turns[self.open[1]]["src"] == src:
            t = self.open[1]  # another call of the same model response (parallel function calling)
            turn = self.turns[t]
        else:
            # (a call of another source is a turn of its own: one turn has one src, and each event's source
            # comes back as it was)
            t = len(self.turns)
            turn = {"id": t + 1, "src": src, "msg": ""}
            self.turns.append(turn)
            self.open = (response, t) if isinstance(response, str) else None
        used = {"kind"}
        lay.keep(f"{ptr}/kind", event["kind"])
        if isinstance(source, str) and source:
            lay.map(f"{ptr}/source", source, f"/turns/{t}/src", src)
            used.add("source")
        calls = turn.setdefault("tool_calls", [])
        c = len(calls)
        if c == 0:
            text = self.text(f"{ptr}/thought", event.get("thought"), f"/turns/{t}/msg")
            if text is not None:
                turn["msg"] = text
                used.add("thought")
            self.reason(ptr, event, turn, t, used)
        cptr = f"/turns/{t}/tool_calls/{c}"
        call: dict[str, Any] = {}
        tool_call = event.get("tool_call")
        tc = tool_call if isinstance(tool_call, dict) and walkable(tool_call) else {}
        tcid = event.get("tool_call_id")
        if not (isinstance(tcid, str) and tcid):
            tcid = tc.get("id") if isinstance(tc.get("id"), str) and tc.get("id") else None
        if tcid is None:
            raise self.error(f"{ptr}/tool_call_id", "an ActionEvent names its call (a tool_call_id)")
        call["tcid"], renamed = self.new_tcid(tcid)
        name = event.get("tool_name")
        if not (isinstance(name, str) and name):
            name = tc.get("name") if isinstance(tc.get("name"), str) and tc.get("name") else None
        if name is None:
            raise self.error(f"{ptr}/tool_name", "an ActionEvent names its tool (a tool_name)")
        call["fn"] = name
        for key, field, how in (("tool_call_id", "tcid", renamed), ("tool_name", "fn", None)):
            if key in event:
                lay.map(f"{ptr}/{key}", event[key], f"{cptr}/{field}", call[field], how)
                used.add(key)
        if tc:
            used.add("tool_call")
            tused = []
            for key, field, how in (("id", "tcid", renamed), ("name", "fn", None)):
                if key in tc and lay.map(f"{ptr}/tool_call/{key}", tc[key], f"{cptr}/{field}", call[field], how):
                    tused.append(key)
            if "arguments" in tc:
                # what the model called with (the parsed ``action`` stays residual: the SDK's reading of it)
                call["args"] = lay.map_arguments(f"{ptr}/tool_call/arguments", tc["arguments"], f"{cptr}/args")
                tused.append("arguments")
            lay.rest(tc, f"{ptr}/tool_call", tused)
        if "args" not in call:
            action = event.get("action")
            call["args"] = {k: v for k, v in action.items() if k != "kind"} if isinstance(action, dict) else None
        calls.append(call)
        self.calls[tcid] = (t, c)
        lay.rest(event, ptr, used)

    def new_tcid(self, tcid: str) -> tuple[str, str | None]:
        """A call's Storyline id and its transform: an id an earlier call has is renamed ``{id}#2``… as the
        session-log readers do."""
        new, renamed, n = tcid, None, 1
        while new in self.tcids:
            n += 1
            new, renamed = f"{tcid}#{n}", "renamed_id"
        self.tcids.add(new)
        return new, renamed

    def acp_call(self, e: int, events: list) -> None:
        """A tool call an ACP server ran (``ACPToolCallEvent``s of one ``tool_call_id``, ``acp.runs``): its first
        event the call, its terminal one the result; frames between (older SDKs) residual. The name and the input
        are the last ones given (a server starts a call with ``{}`` and completes its input later)."""
        lay = self.lay
        run = self.acp_runs[e]
        final = run[-1] if acp.done(events[run[-1]]) else None
        ends = final if final is not None else len(events)
        mapped = sorted({e} | ({final} if final is not None else set()))
        for j in run:
            if j not in mapped:
                lay.keep(f"{self.prefix}/{j}", events[j])  # a progress frame: the terminal event holds it all
        ptrs = {j: f"{self.prefix}/{j}" for j in mapped}
        used: dict[int, set[str]] = {j: {"kind"} for j in mapped}
        for j in mapped:
            lay.keep(f"{ptrs[j]}/kind", events[j]["kind"])
        first = events[e]
        source = first.get("source")
        src = source if isinstance(source, str) and source else "agent"
        joined = self.open is not None and self.open[0] == ACP and e < self.acp_end
        if joined and self.turns[self.open[1]]["src"] == src:
            t = self.open[1]  # started while the turn's calls still run, by the same source: called together
            turn = self.turns[t]
        else:
            t = len(self.turns)
            turn = {"id": t + 1, "src": src, "msg": ""}
            self.turns.append(turn)
            self.open, self.acp_end = (ACP, t), -1  # (no llm_response_id is that kind's name)
        self.acp_end = max(self.acp_end, ends)
        if isinstance(source, str) and source:
            lay.map(f"{ptrs[e]}/source", source, f"/turns/{t}/src", src)
            used[e].add("source")
        calls = turn.setdefault("tool_calls", [])
        cptr = f"/turns/{t}/tool_calls/{len(calls)}"
        tcid, renamed = self.new_tcid(first["tool_call_id"])
        lay.map(f"{ptrs[e]}/tool_call_id", first["tool_call_id"], f"{cptr}/tcid", tcid, renamed)
        used[e].add("tool_call_id")
        named = next(j for j in reversed(mapped) if acp.name_key(events[j]))
        key = acp.name_key(events[named])
        call: dict[str, Any] = {"tcid": tcid, "fn": events[named][key], "args": None}
        lay.map(f"{ptrs[named]}/{key}", call["fn"], f"{cptr}/fn", call["fn"])
        used[named].add(key)
        given = next((j for j in reversed(mapped) if isinstance(events[j].get("raw_input"), dict)), None)
        if given is not None:
            call["args"] = events[given]["raw_input"]
            lay.map(f"{ptrs[given]}/raw_input", call["args"], f"{cptr}/args", call["args"])
            used[given].add("raw_input")
        calls.append(call)
        if final is not None:
            end = events[final]
            results = turn.setdefault("observation", {"results": []})["results"]
            at = f"/turns/{t}/observation/results/{len(results)}"
            result: dict[str, Any] = {}
            content = self.acp_content(ptrs[final], end, f"{at}/content", used[final])
            if content is not None:
                result["content"] = content
            result["source_call_id"] = tcid
            if final != e:
                lay.map(f"{ptrs[final]}/tool_call_id", end["tool_call_id"], f"{at}/source_call_id", tcid, renamed)
                used[final].add("tool_call_id")
            if end.get("is_error") is True or end.get("status") == ACP_FAILED:
                call["response"] = {"status": "error"}  # a copy: is_error and status stay residual
            results.append(result)
        for j in mapped:
            lay.rest(events[j], ptrs[j], used[j])

    def acp_content(self, ptr: str, event: dict, target: str, used: set[str]) -> str | None:
        """What an ACP call's terminal event shows of its result: ``raw_output`` when it is a string (mapped), else
        the text of its ``content`` blocks (one mapped, several joined by a newline: derived), else a non-null
        ``raw_output`` as compact JSON (derived); None when it holds no text (diffs, a terminal's id)."""
        lay = self.lay
        out = event.get("raw_output")
        if isinstance(out, str):
            lay.map(f"{ptr}/raw_output", out, target, out)
            used.add("raw_output")
            return out
        blocks = event.get("content")
        texts = acp.result_texts(blocks)
        if texts and len(texts) == len(blocks) == 1 and walkable(blocks[0]):
            (bptr, text), block = texts[0], blocks[0]
            inner = block.get("content")
            if bptr.endswith("/content/text") and walkable(inner):
                lay.map(f"{ptr}/content{bptr}", text, target, text)
                lay.rest(block, f"{ptr}/content/0", ("content",))
                lay.rest(inner, f"{ptr}/content/0/content", ("text",))
                used.add("content")
            elif not bptr.endswith("/content/text"):
                lay.map(f"{ptr}/content{bptr}", text, target, text)
                lay.rest(block, f"{ptr}/content/0", ("text",))
                used.add("content")
            return text
        if texts:
            return "\n".join(text for _, text in texts)
        if out is not None:
            return json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        return None

    def result(self, ptr: str, event: dict) -> None:
        """An ``ObservationEvent``, ``AgentErrorEvent`` or ``UserRejectObservation``: the result of the call its
        ``tool_call_id`` names (else a turn of its own, ``src`` ``tool``)."""
        lay = self.lay
        self.close()
        kind = event["kind"]
        tcid = event.get("tool_call_id")
        where = self.calls.get(tcid) if isinstance(tcid, str) else None
        used = {"kind"}
        lay.keep(f"{ptr}/kind", kind)
        mark = len(lay.entries)
        content, status = self.result_content(ptr, event, used)
        extended = _texts(event.get("extended_content"))
        if extended and content is not None:
            # text the agent context added after the tool's (to_llm_message): the model saw both; derived
            content = "\n".join([content, *extended])
            self.unmap(mark, event, ptr)
        if where is None:
            # the answer to a call the file does not hold (an excerpt of a conversation): a turn of the tool
            n = len(self.turns)
            self.turns.append({"id": n + 1, "src": "tool", "msg": content if content is not None else ""})
            if content is not None:
                self.retarget(mark, f"/turns/{n}/msg")
            lay.rest(event, ptr, used)
            return
        t, c = where
        turn = self.turns[t]
        call = turn["tool_calls"][c]
        results = turn.setdefault("observation", {"results": []})["results"]
        at = f"/turns/{t}/observation/results/{len(results)}"
        result: dict[str, Any] = {}
        if content is not None:
            result["content"] = content
            self.retarget(mark, f"{at}/content")
        result["source_call_id"] = call["tcid"]
        how = None if tcid == call["tcid"] else "renamed_id"
        lay.map(f"{ptr}/tool_call_id", tcid, f"{at}/source_call_id", call["tcid"], how)
        used.add("tool_call_id")
        if "tool_name" in event and same(event["tool_name"], call["fn"]):
            lay.map(f"{ptr}/tool_name", event["tool_name"], f"/turns/{t}/tool_calls/{c}/fn", call["fn"])
            used.add("tool_name")
        exit_code = self.exit_code(event)
        response = {k: v for k, v in (("status", status), ("exit_code", exit_code)) if v is not None}
        if response and "response" not in call:
            call["response"] = response  # a copy: the observation stays residual
        lay.rest(event, ptr, used)
        results.append(result)

    def unmap(self, mark: int, event: dict, ptr: str) -> None:
        """Keep as residual the values ``result_content`` mapped (from ``mark``): the content is derived instead."""
        for entry in [e for e in self.lay.entries[mark:] if e[1] == "@result"]:
            self.lay.entries.remove(entry)
            self.lay.keep(entry[0], get(event, entry[0][len(ptr) :]))

    def retarget(self, mark: int, target: str) -> None:
        """Point the map entries ``result_content`` made (from ``mark``, at the placeholder ``@result``) at
        ``target``."""
        for entry in self.lay.entries[mark:]:
            if entry[1] == "@result":
                entry[1] = target

    def result_content(self, ptr: str, event: dict, used: set[str]) -> tuple[str | None, str | None]:
        """``(content, status)`` of a result event: what the model was shown, mapped to the placeholder ``@result``
        (retargeted once the result's place is known), and ``error``/``rejected`` when the tool failed."""
        lay = self.lay
        kind = event["kind"]
        if kind == "AgentErrorEvent":
            if isinstance(event.get("error"), str):
                used.add("error")
                lay.map(f"{ptr}/error", event["error"], "@result", event["error"])
                return event["error"], "error"
            return None, "error"
        if kind == "UserRejectObservation":
            reason = event.get("rejection_reason")
            if isinstance(reason, str):
                used.add("rejection_reason")
                shown = REJECTED + reason
                lay.map(f"{ptr}/rejection_reason", reason, "@result", shown, "rejected")
                return shown, "rejected"
            return None, "rejected"
        obs = event.get("observation")
        if not (isinstance(obs, dict) and walkable(obs)):
            return None, None
        used.add("observation")
        optr = f"{ptr}/observation"
        oused: list[str] = []
        content = None
        for key in OBSERVATION_TEXT:
            val = obs.get(key)
            if isinstance(val, str):
                content = val
                lay.map(f"{optr}/{key}", val, "@result", val)
                oused.append(key)
                break
            if _texts(val) is not None and val:
                content = self.text(f"{optr}/{key}", val, "@result")
                oused.append(key)
                break
        failed = next((obs[k] for k in OBSERVATION_ERROR if type(obs.get(k)) is bool), None)
        lay.rest(obs, optr, oused)
        return content, "error" if failed else None

    @staticmethod
    def exit_code(event: dict) -> int | None:
        obs = event.get("observation")
        meta = obs.get("metadata") if isinstance(obs, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        if type(code) is not int and isinstance(obs, dict):
            code = obs.get("exit_code")
        return code if type(code) is int else None

    def condensation(self, ptr: str, event: dict) -> None:
        """A ``Condensation``: the events it forgets leave the model's view, its summary (when any) takes their
        place: a context turn, ``extra.compaction`` ``condensation``."""
        t = len(self.turns)
        turn: dict[str, Any] = {"id": t + 1, "src": "system", "msg": "", "kind": CONTEXT}
        turn["extra"] = {"compaction": COMPACTION}
        used: set[str] = set()
        if isinstance(event.get("summary"), str):
            turn["msg"] = event["summary"]
            self.lay.map(f"{ptr}/summary", event["summary"], f"/turns/{t}/msg", turn["msg"])
            used.add("summary")
        self.lay.rest(event, ptr, used)
        self.close()
        self.turns.append(turn)

    def close(self) -> None:
        self.open = None


def read_stream(
    value: Any, document_id: str | None, line: int | None, session: str, numbers: list[int] | None = None
) -> dict[str, Any]:
    """The Storyline document of one parsed event list (or evaluation record: ``instance_id`` its session,
    ``metrics`` its final metrics, every other key residual); ``FormatError`` with its pointer when it has none.
    ``numbers``: the line of each event when they were JSON Lines (the writer gives them back so)."""
    if is_record(value):
        return _Reader(document_id, line, f"/{HISTORY}").read(value[HISTORY], session, record=value)
    if isinstance(value, dict) and value.get(HISTORY) == []:
        raise NoConversationError(
            "an evaluation record without events (an instance the run did not get to): no conversation",
            pointer=f"/{HISTORY}",
            document_id=document_id,
            line=line,
        )
    if not isinstance(value, list):
        raise FormatError(
            f"OpenHands SDK events are a JSON array or JSON Lines of events (or an object with them in {HISTORY!r}), "
            f"got {json_type(value)}",
            document_id=document_id,
            line=line,
        )
    return _Reader(document_id, line, numbers=numbers).read(value, session, lines=numbers is not None)
