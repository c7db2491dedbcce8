"""Reading a Kimi Code journal (``agents/<agent>/wire.jsonl``) into one Storyline document
(docs/formats/kimi-code.md).

The journal is every operation on one agent's state, line by line: the model's context is what its
``context.*`` records build (``loopEventFold.ts``). A ``context.append_message`` is a turn; the
``context.append_loop_event`` records of one model step (``stepUuid``) are one agent turn (its ``content.part``
texts the message, ``think`` parts the reasoning, ``tool.call`` its calls), a ``tool.result`` the result of the
call it names; a ``context.apply_compaction`` is a context turn (the summary); a changed ``systemPrompt`` a system
turn. Every other record (the UI's, usage, requests, permissions) is kept whole as residual. Each value is mapped
through ``formats/layout.py``'s pointer map (only when it comes back exactly) or kept under its source pointer
``/{i}``, so the same-source writer gives every line back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, NoConversationError
from ...jsonio import loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ..base import INTERRUPTED, Record, one_document_records
from ..layout import Layout, walkable
from ..moments import time_of
from ..residual import origin
from .fields import (
    AGENT_ID,
    AGENT_ID_LINE,
    AGENT_NAME,
    AGENT_TOOL,
    AGENTS,
    APPEND_MESSAGE,
    CANCEL_NOT_USER,
    CLEAR,
    COMPACTION,
    COMPACTION_RECORD,
    CONTENT_PART,
    CONTEXT_KIND,
    EXTRA_KEY,
    INHERITED,
    LLM_REQUEST,
    LOOP_EVENT,
    MAIN_AGENT,
    MARKERS,
    NAME,
    PARENT_AGENT,
    ROLE_SRC,
    SRC_ROLE,
    STATE_AGENTS,
    STEP_END,
    SUBAGENT_REL,
    SUBAGENT_TASK,
    SWARM_AGENT_ID,
    SWARM_TOOL,
    SYSTEM_PROMPT_KEY,
    SYSTEM_PROMPT_RECORDS,
    TEXT,
    THINK,
    TOOL_CALL,
    TOOL_RESULT,
    TOOL_ROLE,
    TURN_CANCEL,
    UNDO,
    USER_ORIGINS,
    place_of,
    state_of,
)

__all__ = ["INVERSE", "is_marker", "iter_records", "read_journal"]

#: How the same-source writer gives back the values the pointer map derived: a turn's ``src`` back to its
#: message's ``role``.
INVERSE = {"role": SRC_ROLE}
_AGENT_ID = re.compile(AGENT_ID_LINE, re.MULTILINE)
_SWARM_ID = re.compile(SWARM_AGENT_ID, re.MULTILINE)


def _obj(value: Any) -> bool:
    return isinstance(value, dict) and walkable(value)


def is_marker(value: Any) -> bool:
    """A record only a Kimi Code journal holds: an object whose ``type`` is one of ``MARKERS`` with that record's
    key (a ``context.append_message`` with its ``message``, a ``turn.prompt`` with its ``input``, …).

    >>> is_marker({"type": "context.append_message", "message": {"role": "user", "content": []}})
    True
    >>> is_marker({"type": "metadata", "protocol_version": "1.4"}), is_marker({"type": "context.append_message"})
    (False, False)
    """
    kind = value.get("type") if isinstance(value, dict) else None
    return type(kind) is str and kind in MARKERS and any(key in value for key in MARKERS[kind])


def _metrics(usage: Any) -> dict[str, Any] | None:
    """Storyline metrics of a step's ``usage`` (``TokenUsage``: ``inputOther`` the input not read from the cache,
    ``inputCacheRead``, ``inputCacheCreation``, ``output``): the prompt is the three inputs together."""
    if not isinstance(usage, dict):
        return None
    nums = {k: v for k, v in usage.items() if type(v) is int}
    inputs = [nums[k] for k in ("inputOther", "inputCacheRead", "inputCacheCreation") if k in nums]
    out: dict[str, Any] = {}
    if inputs:
        out["prompt_tokens"] = sum(inputs)
    if "output" in nums:
        out["completion_tokens"] = nums["output"]
    if "inputCacheRead" in nums:
        out["cached_tokens"] = nums["inputCacheRead"]
    if "inputCacheCreation" in nums:
        out["extra"] = {"cache_write_tokens": nums["inputCacheCreation"]}
    return out or None


class _Journal:
    """One journal being read: the layout (residual and pointer map), the turns, the calls waiting for results."""

    def __init__(self, document_id: str | None, records: dict[int, Any], starter: str | None = None) -> None:
        self.document_id = document_id
        self.starter = starter  # the agent that started this one, by the session's state.json (fields.STATE)
        self.records = records
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        self.parts: dict[int, list[tuple[str, dict[str, Any]]]] = {}  # agent turn → its content parts (pointer, part)
        self.steps: dict[str, int] = {}  # stepUuid → its agent turn
        self.pending: dict[str, list[tuple[int, str]]] = {}  # source call id → (turn, Storyline id), latest last
        self.used_ids: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.system: str | None = None
        self.model: str | None = None
        self.counts = {"undo": 0, "clear": 0, "orphan_results": 0, "unread": 0, INTERRUPTED: 0}
        self.subagents: list[tuple[dict[str, Any], str]] = []
        self.task: int | None = None  # a subagent's task (its first message from its starter)
        self.before_task: list[int] = []  # the message turns before it (a fork's copied history)

    def read(self) -> dict[str, Any]:
        unread: str | None = None  # the first context record not read
        for i, rec in self.records.items():
            ptr = f"/{i}"
            kind = rec.get("type") if _obj(rec) else None
            done = False
            if kind == APPEND_MESSAGE:
                done = self._message(ptr, rec)
            elif kind == LOOP_EVENT:
                done = self._event(ptr, rec)
            elif kind == COMPACTION_RECORD:
                done = self._compaction(ptr, rec)
            elif kind in SYSTEM_PROMPT_RECORDS:
                done = self._system_prompt(ptr, rec)
            elif kind in (UNDO, CLEAR):
                self.counts["undo" if kind == UNDO else "clear"] += 1
            elif kind == TURN_CANCEL and not any(rec.get(k) == v for k, v in CANCEL_NOT_USER.items()):
                self.counts[INTERRUPTED] += 1  # the user stopped the running turn (fields.TURN_CANCEL)
            elif kind == LLM_REQUEST and self.model is None and isinstance(rec.get("model"), str) and rec["model"]:
                self.model = rec["model"]  # derived: the record stays residual
            if not done:
                if kind in (APPEND_MESSAGE, LOOP_EVENT, COMPACTION_RECORD):
                    self.counts["unread"] += 1
                    unread = ptr if unread is None else unread
                self.lay.keep_record(ptr, rec)
        self._finish_parts()
        if not any(turn["src"] in ("user", "agent") for turn in self.turns):
            if unread is not None:
                raise FormatError(
                    "no message or model step of the journal has content that makes a turn: nothing to read as turns",
                    pointer=unread,
                    document_id=self.document_id,
                )
            raise NoConversationError(
                "the journal holds no message and no model step: only the CLI's records", document_id=self.document_id
            )
        return self._story()

    def _new_turn(self, src: str, rec: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A new turn, its ``ts`` the ``time`` of the record that makes it (derived: ``time`` stays residual)."""
        t = len(self.turns)
        turn: dict[str, Any] = {"id": t + 1, "src": src, "msg": None}
        ts = time_of(rec.get("time"))
        if ts is not None:
            turn["ts"] = ts
        self.turns.append(turn)
        return t, turn

    # ---------------------------------------------------------------------------------------------- records

    def _message(self, ptr: str, rec: dict[str, Any]) -> bool:
        """A ``context.append_message``: a ``system``, ``user`` or ``assistant`` message with its ``content``, or a
        ``tool`` message (a forked subagent's copy of its parent's history) as the result of the call it names."""
        msg = rec.get("message")
        role = msg.get("role") if _obj(msg) else None
        if role == TOOL_ROLE and "content" in msg:
            return self._tool_message(ptr, rec, msg)
        if not (type(role) is str and role in ROLE_SRC and "content" in msg):
            return False
        mp = f"{ptr}/message"
        t, turn = self._new_turn(ROLE_SRC[role], rec)
        self.lay.map(f"{mp}/role", role, f"/turns/{t}/src", turn["src"], "role")
        used = ["role", "content"]
        content = msg["content"]
        if isinstance(content, list) and content and all(_obj(p) for p in content):
            self.parts[t] = [(f"{mp}/content/{k}", p) for k, p in enumerate(content)]
        elif isinstance(content, str):  # never written by Kimi Code (parts always), but a message all the same
            turn["msg"] = content
            self.lay.map(f"{mp}/content", content, f"/turns/{t}/msg", content)
        else:
            self.lay.keep(f"{mp}/content", content)  # [] (no content), or what kosong would refuse
        if self.task is None:
            self.before_task.append(t)
        if turn["src"] == "user":
            org = msg.get("origin") if _obj(msg.get("origin")) else {}
            kind = org.get("kind") if isinstance(org.get("kind"), str) else None  # another type: no origin known
            name = org.get("name") if isinstance(org.get("name"), str) else None
            if (kind, name) == SUBAGENT_TASK and self.task is None:
                self._task(t)
            if "origin" in msg and not ({(kind, None), (kind, name)} & USER_ORIGINS):
                # the CLI's words (a reminder, a summary): context
                why: dict[str, Any] = {"context": kind if isinstance(kind, str) else "origin"}
                if isinstance(org.get("variant"), str):
                    why["variant"] = org["variant"]
                turn.update(copied=True, kind=CONTEXT_KIND, extra={EXTRA_KEY: why})
        if turn["src"] == "agent" and isinstance(msg.get("toolCalls"), list) and msg["toolCalls"]:
            used.append("toolCalls")
            for c, call in enumerate(msg["toolCalls"]):
                ok = _obj(call) and isinstance(call.get("id"), str) and isinstance(call.get("name"), str)
                if not ok:
                    self.lay.keep(f"{mp}/toolCalls/{c}", call)
                    continue
                self._call(f"{mp}/toolCalls/{c}", call, ("id", "name", "arguments"), t)
        self.lay.record_rest(mp, msg, tuple(used))
        self.lay.record_rest(ptr, rec, ("message",))
        return True

    def _task(self, t: int) -> None:
        """A subagent's task (turn ``t``): the messages before it are its starter's history, copied into a forked
        subagent (``agentLifecycle.fork``): context turns, as Codex's inherited history is."""
        self.task = t
        for before in self.before_task[:-1]:
            turn = self.turns[before]
            if not turn.get("copied"):
                turn.update(copied=True, kind=CONTEXT_KIND)
                turn.setdefault("extra", {})[EXTRA_KEY] = {"context": INHERITED}
        self.before_task.clear()

    def _tool_message(self, ptr: str, rec: dict[str, Any], msg: dict[str, Any]) -> bool:
        """A ``tool`` message (``createToolMessage``: ``toolCallId``, its output as parts) as the result of the
        latest pending call of that id; False (the caller keeps it) when it names none."""
        source = msg.get("toolCallId")
        if not (isinstance(source, str) and self.pending.get(source)):
            self.counts["orphan_results"] += 1
            self.lay.keep(ptr, rec)
            return True
        mp = f"{ptr}/message"
        t, tcid = self.pending[source].pop()
        turn = self.turns[t]
        results = turn.setdefault("observation", {"results": []})["results"]
        at = f"/turns/{t}/observation/results/{len(results)}"
        content = msg["content"]
        one = isinstance(content, list) and len(content) == 1 and _obj(content[0])
        if one and content[0].get("type") == TEXT and isinstance(content[0].get("text"), str):
            out: dict[str, Any] = {"content": content[0]["text"]}  # one text part: its text, as tool.result's output
            self.lay.map(f"{mp}/content/0/text", content[0]["text"], f"{at}/content", content[0]["text"])
            self.lay.rest(content[0], f"{mp}/content/0", ("text",))
        else:
            out = {"content": content}
            self.lay.map(f"{mp}/content", content, f"{at}/content", content)
        out["source_call_id"] = tcid
        self.lay.map(f"{mp}/toolCallId", source, f"{at}/source_call_id", tcid, None if tcid == source else "renamed_id")
        used = ["content", "toolCallId"]
        if type(msg.get("isError")) is bool:
            out["is_error"] = msg["isError"]
            self.lay.map(f"{mp}/isError", msg["isError"], f"{at}/is_error", msg["isError"])
            used.append("isError")
        results.append(out)
        self.lay.record_rest(mp, msg, tuple(used))
        self.lay.record_rest(ptr, rec, ("message",))
        return True

    def _step_turn(self, step: str, rec: dict[str, Any]) -> int:
        """The agent turn of a model step, made at its first part or call (a step that streamed nothing, cancelled
        or failed, makes none: Kimi Code drops it too, ``dropOpenAssistant``)."""
        if step not in self.steps:
            t, _turn = self._new_turn("agent", rec)
            self.steps[step] = t
        return self.steps[step]

    def _event(self, ptr: str, rec: dict[str, Any]) -> bool:
        event = rec["event"]
        kind = event.get("type") if _obj(event) else None
        ep = f"{ptr}/event"
        step = event.get("stepUuid") if _obj(event) else None
        if kind == CONTENT_PART and isinstance(step, str) and _obj(event.get("part")):
            t = self._step_turn(step, rec)
            self.parts.setdefault(t, []).append((f"{ep}/part", event["part"]))
            used: tuple[str, ...] = ("part",)
        elif kind == TOOL_CALL and isinstance(step, str) and isinstance(event.get("toolCallId"), str):
            if not isinstance(event.get("name"), str):
                return False
            t = self._step_turn(step, rec)
            self._call(ep, event, ("toolCallId", "name", "args"), t)
            used = ("toolCallId", "name", "args")
        elif kind == TOOL_RESULT:
            if not self._result(ep, event):
                self.counts["orphan_results"] += 1
                self.lay.keep(ptr, rec)
                return True
            used = ("toolCallId", "result")
        elif kind == STEP_END and isinstance(event.get("uuid"), str) and event["uuid"] in self.steps:
            metrics = _metrics(event.get("usage"))
            if metrics is not None:  # derived: the record stays residual
                self.turns[self.steps[event["uuid"]]]["metrics"] = metrics
            self.lay.keep(ptr, rec)
            return True
        elif kind in (CONTENT_PART, TOOL_CALL):  # no stepUuid (or no part): Kimi Code's fold drops it too
            return False
        else:  # step.begin, a step.end of no turn, an event this reader does not know
            self.lay.keep(ptr, rec)
            return True
        self.lay.record_rest(ep, event, used)
        self.lay.record_rest(ptr, rec, ("event",))
        return True

    def _call(self, ptr: str, call: dict[str, Any], keys: tuple[str, str, str], t: int) -> None:
        """A call (a ``tool.call`` event's ``toolCallId``, ``name``, ``args``; a message's ``toolCalls`` entry's
        ``id``, ``name``, ``arguments``) on turn ``t``. A repeated id becomes ``{id}#{n}``."""
        id_key, name_key, args_key = keys
        turn = self.turns[t]
        calls = turn.setdefault("tool_calls", [])
        at = f"/turns/{t}/tool_calls/{len(calls)}"
        cid = call[id_key]
        tcid, n = cid, 2
        while tcid in self.used_ids:
            tcid, n = f"{cid}#{n}", n + 1
        self.used_ids.add(tcid)
        if tcid != cid:
            self.renamed[tcid] = cid
        entry: dict[str, Any] = {"tcid": tcid, "fn": call[name_key], "args": {}}
        self.lay.map(join(ptr, id_key), cid, f"{at}/tcid", tcid, None if tcid == cid else "renamed_id")
        self.lay.map(join(ptr, name_key), call[name_key], f"{at}/fn", call[name_key])
        if args_key in call:
            if args_key == "arguments":  # a message's call: JSON text, as kosong writes it
                entry["args"] = self.lay.map_arguments(join(ptr, args_key), call[args_key], f"{at}/args")
            else:
                entry["args"] = call[args_key]
                self.lay.map(join(ptr, args_key), call[args_key], f"{at}/args", call[args_key])
        calls.append(entry)
        self.pending.setdefault(cid, []).append((t, tcid))
        if id_key == "id":
            self.lay.record_rest(ptr, call, keys)

    def _result(self, ep: str, event: dict[str, Any]) -> bool:
        """A ``tool.result`` as the result of the latest pending call of its ``toolCallId``."""
        source = event.get("toolCallId")
        result = event.get("result")
        if not (isinstance(source, str) and self.pending.get(source) and _obj(result) and "output" in result):
            return False
        t, tcid = self.pending[source].pop()
        turn = self.turns[t]
        results = turn.setdefault("observation", {"results": []})["results"]
        at = f"/turns/{t}/observation/results/{len(results)}"
        out: dict[str, Any] = {"content": result["output"], "source_call_id": tcid}
        self.lay.map(f"{ep}/result/output", result["output"], f"{at}/content", result["output"])
        self.lay.map(f"{ep}/toolCallId", source, f"{at}/source_call_id", tcid, None if tcid == source else "renamed_id")
        used = ["output"]
        if type(result.get("isError")) is bool:
            out["is_error"] = result["isError"]
            self.lay.map(f"{ep}/result/isError", result["isError"], f"{at}/is_error", result["isError"])
            used.append("isError")
        results.append(out)
        self.lay.record_rest(f"{ep}/result", result, tuple(used))
        call = next(c for c in turn["tool_calls"] if c["tcid"] == tcid)
        text = _first_text(result["output"])
        if call["fn"] == AGENT_TOOL and text is not None:
            found = _AGENT_ID.search(text)
            if found is not None:
                self.subagents.append((call, found.group(1)))
        elif call["fn"] == SWARM_TOOL and text is not None:  # one <subagent agent_id="…"> line per subagent
            self.subagents.extend((call, agent_id) for agent_id in _SWARM_ID.findall(text))
        return True

    def _compaction(self, ptr: str, rec: dict[str, Any]) -> bool:
        """The summary the context was replaced with (``createCompactionSummaryMessage`` of ``contextSummary``, else
        of ``summary``): a context turn, as Codex's and Pi's compaction turns are."""
        key = next((k for k in ("contextSummary", "summary") if isinstance(rec.get(k), str)), None)
        if key is None:
            return False
        t, turn = self._new_turn("user", rec)
        turn.update(copied=True, kind=CONTEXT_KIND, extra={EXTRA_KEY: {"context": COMPACTION}, COMPACTION: "summary"})
        turn["msg"] = rec[key]
        self.lay.map(join(ptr, key), rec[key], f"/turns/{t}/msg", rec[key])
        self.lay.record_rest(ptr, rec, (key,))
        return True

    def _system_prompt(self, ptr: str, rec: dict[str, Any]) -> bool:
        prompt = rec.get(SYSTEM_PROMPT_KEY)
        if not isinstance(prompt, str) or prompt == self.system:
            return False  # no prompt, or the one the agent already runs with (a resume binds it again)
        self.system = prompt
        t, turn = self._new_turn("system", rec)
        turn["msg"] = prompt
        self.lay.map(join(ptr, SYSTEM_PROMPT_KEY), prompt, f"/turns/{t}/msg", prompt)
        self.lay.record_rest(ptr, rec, (SYSTEM_PROMPT_KEY,))
        return True

    # ---------------------------------------------------------------------------------------------- content

    def _finish_parts(self) -> None:
        """Each turn's content parts: the ``think`` parts the reasoning, the rest the message (its text when every
        part is text: one a string, several a list of text parts; else the parts as they are)."""
        for t, parts in self.parts.items():
            at = f"/turns/{t}"
            turn = self.turns[t]
            thinks = [(p, part) for p, part in parts if _is_think(part)]
            for p, part in parts:
                if part.get("type") == THINK and not _is_think(part):
                    self.lay.keep(p, part)  # a think part without its text: no reasoning, and not the message
            rest = [(p, part) for p, part in parts if part.get("type") != THINK]
            texts = all(part.get("type") == TEXT and isinstance(part.get("text"), str) for _, part in rest)
            if rest and texts and len(rest) == 1:
                p, part = rest[0]
                turn["msg"] = part["text"]
                self.lay.map(f"{p}/text", part["text"], f"{at}/msg", part["text"])
                self.lay.rest(part, p, ("text",))
            elif rest and texts:
                turn["msg"] = []
                for j, (p, part) in enumerate(rest):
                    turn["msg"].append({"type": TEXT, "text": part["text"]})
                    self.lay.map(f"{p}/text", part["text"], f"{at}/msg/{j}/text", part["text"])
                    self.lay.rest(part, p, ("text",))
            elif rest:
                turn["msg"] = []
                for j, (p, part) in enumerate(rest):
                    turn["msg"].append(part)
                    self.lay.map(p, part, f"{at}/msg/{j}", part)
            if len(thinks) == 1:
                p, part = thinks[0]
                turn["reason"] = part["think"]
                self.lay.map(f"{p}/think", part["think"], f"{at}/reason", part["think"])
                self.lay.rest(part, p, ("think",))
            elif thinks:  # several (one per streamed block): reason is a derived copy, the parts stay as written
                turn["reason"] = "\n\n".join(part["think"] for _, part in thinks)
                for p, part in thinks:
                    self.lay.keep(p, part)

    # ---------------------------------------------------------------------------------------------- document

    def _story(self) -> dict[str, Any]:
        place = place_of(self.document_id)
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["session"] = place.get("session") or NAME
        story["agent"] = {"id": AGENT_ID, "name": AGENT_NAME}
        if self.model is not None:
            story["agent"]["model"] = self.model
        story["turns"] = self.turns
        if "parent" in place:
            # the session's main agent, unless state.json names another agent as the one that started it
            above = place["parent"] if self.starter is None else f"{place['parent']}/{AGENTS}/{self.starter}"
            story["parent"] = {"psid": above, "rel": SUBAGENT_REL}
        if self.subagents:
            # another agent's journal lies at <session>/agents/<agent id>/wire.jsonl (derived links)
            base = place.get("parent") or story["session"]
            children: list[str] = []
            started: dict[int, tuple[dict[str, Any], list[str]]] = {}  # a call (by identity) → the agents it started
            for call, agent_id in self.subagents:
                child = f"{base}/{AGENTS}/{agent_id}"
                started.setdefault(id(call), (call, []))[1].append(child)
                if child not in children:
                    children.append(child)
            for call, started_children in started.values():
                # an Agent call starts one (the key Claude Code's and Kimi CLI's calls carry); an AgentSwarm several
                one = call["fn"] == AGENT_TOOL
                call["extra"] = {"subagent": started_children[0]} if one else {"subagents": started_children}
            story["children"] = children
        if "work_dir" in place:
            story["extra"] = {EXTRA_KEY: {"work_dir": place["work_dir"]}}
        hints: dict[str, Any] = {**self.lay.hints("object"), "records": len(self.records)}
        hints.update({k: v for k, v in self.counts.items() if v})
        story["meta"] = {NAME: hints}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return self.lay.kept.finish(story)


def _is_think(part: dict[str, Any]) -> bool:
    return part.get("type") == THINK and isinstance(part.get("think"), str)


def _first_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and _obj(content[0]) and content[0].get("type") == TEXT:
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def starter_of(state: bytes | None, document_id: str | None) -> str | None:
    """The agent that started the one whose journal is ``document_id``, by its session's ``state.json`` (``state``,
    its bytes): its ``parentAgentId`` when that is another subagent; None when it is ``main`` (what the layout
    says already), absent, or there is no state. A state that is not JSON is refused with its name, so a broken
    one is never silently taken for none."""
    if state is None:
        return None
    agent = (document_id or "").replace("\\", "/").split("/")[-2:-1]
    parsed = loads(state, document_id=state_of(document_id or ""))
    agents = parsed.get(STATE_AGENTS) if isinstance(parsed, dict) else None
    entry = agents.get(agent[0]) if isinstance(agents, dict) and agent else None
    starter = entry.get(PARENT_AGENT) if isinstance(entry, dict) else None
    if isinstance(starter, str) and starter and starter not in (MAIN_AGENT, agent[0]):
        return starter
    return None


def read_journal(data: Any, document_id: str | None = None, *, sidecar: bytes | None = None) -> Iterator[Record]:
    """The records of one journal (``base.one_document_records``): one error record per line that is not JSON (the
    other lines still make the document), then the document, or the error that refused it. ``sidecar``: the
    session's ``state.json`` (``fields.state_of``), which names the agent that started a subagent."""

    def build(records: dict[int, Any]) -> dict[str, Any]:
        return _Journal(document_id, records, starter_of(sidecar, document_id)).read()

    return one_document_records(data, document_id, "a Kimi Code journal is JSON Lines of records (objects)", build)


iter_records = read_journal
