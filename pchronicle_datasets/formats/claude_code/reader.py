"""One Claude Code session file → one Storyline document (docs/formats/claude-code.md is the mapping table).

The conversation (``chain.conversation``) gives the turns: each ``user``/``assistant`` record's ``message`` is an
Anthropic message read by the shared message model (``formats/messages``), so the blocks of one response,
written one line each with the same ``message.id``, are one turn; tool results are linked to their calls by
``tool_use_id``; a message the user typed mid-turn (an ``attachment``, ``fields.queued_prompt``) is a user turn of
its words. Every other record, and every record of an abandoned branch, is kept whole as residual under its line's
pointer. Usage is repeated on every fragment of a response: the turn's ``metrics`` is the fragment's
with the most ``output_tokens`` (each fragment's own stays residual, for the same-source writer).

>>> lines = [(0, 1, {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s", "message": {
...     "role": "user", "content": "hi"}}),
...     (1, 2, {"type": "assistant", "uuid": "a", "parentUuid": "u", "sessionId": "s", "message": {
...     "id": "m", "role": "assistant", "content": [{"type": "text", "text": "hello"}]}})]
>>> story = read_session(lines, "s.jsonl")
>>> story["session"], [(t["src"], t["msg"]) for t in story["turns"]]
('s', [('user', 'hi'), ('agent', 'hello')])
"""

from __future__ import annotations

import posixpath
from typing import Any

from ...errors import NoConversationError
from ...jsonio import loads
from ...linking import SOURCE_CALL_IDS
from ...schema import is_time
from ..base import INTERRUPTED
from ..messages import TurnBuilder, read_message
from ..messages.model import Message
from ..residual import ENVELOPE_KEY, Residual, origin
from .chain import conversation, is_message_record
from .fields import (
    AGENT_ID,
    AGENT_NAME,
    API_ERROR,
    API_ERROR_FLAG,
    COMPACTION_AGENT,
    CONTEXT_FLAGS,
    CONTEXT_KIND,
    EFFORT,
    ENV_STATE,
    ENVELOPE_KEYS,
    FORK_CONTEXT,
    HINTS,
    INTERRUPT_MARKERS,
    NAME,
    QUEUED,
    REL_COMPACTION,
    REL_FORK,
    REL_SPAWN,
    SPAWN_TOOLS,
    SUBAGENT_PREFIX,
    SYNTHETIC,
    SYNTHETIC_MODEL,
    child_session,
    forked_from,
    harness_origin,
    queued_prompt,
)

__all__ = ["read_session"]


def _kind(value: Any) -> str:
    """The count key of a record: its type (``system/<subtype>`` for system records)."""
    if not isinstance(value, dict):
        return "(not an object)"
    kind = value.get("type")
    kind = kind if isinstance(kind, str) else "(no type)"
    if kind == "system" and isinstance(value.get("subtype"), str):
        return f"system/{value['subtype']}"
    return kind


def _shared(lines: list[tuple[int, int, Any]]) -> dict[str, Any]:
    shared: dict[str, Any] = {}
    for _, _, value in lines:
        if isinstance(value, dict):
            for key in ENVELOPE_KEYS:
                if key in value and key not in shared:
                    shared[key] = value[key]
    return shared


def _mask(value: dict, shared: dict[str, Any]) -> int:
    return sum(
        1 << b
        for b, key in enumerate(ENVELOPE_KEYS)
        if key in value and key in shared and _same(value[key], shared[key])
    )


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # True == 1 in Python: a bool is never the same as an int


def _keep_keys(kept: Residual, i: int, value: dict, mask: int, skip: tuple[str, ...] = ()) -> None:
    masked = {key for b, key in enumerate(ENVELOPE_KEYS) if mask >> b & 1}
    for key, v in value.items():
        if key in masked or key in skip or (key == ENVELOPE_KEY and kept.take_envelope(v)):
            continue
        kept.keep(f"/{i}/{_escape(key)}", v)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _output_tokens(usage: Any) -> int:
    out = usage.get("output_tokens") if isinstance(usage, dict) else None
    return out if type(out) is int else -1


class _Session:
    """The state of one file's reading: the turns, the residual, the export hints."""

    def __init__(self, document_id: str | None) -> None:
        self.document_id = document_id
        self.kept = Residual(NAME, document_id)
        self.b = TurnBuilder()
        self.hints: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self.abandoned: list[int] = []
        self.gaps: list[int] = []
        self.usage: dict[int, list[Any]] = {}  # turn index → the usage objects of its fragments
        self.agents: dict[str, str] = {}  # tool_use id → toolUseResult.agentId of its result
        self.response: tuple[str, int] | None = None  # (message.id, turn index) of the latest response
        self.forked_from: str | None = None  # the session the first copied record (``forkedFrom``) came from
        self.fork_turns: set[int] = set()  # the turns of records copied from it

    def message(self, i: int, value: dict, mask: int) -> dict[str, Any] | None:
        """The export hint of a message record of the conversation, or None when its message is not one."""
        msg = value["message"]
        if not isinstance(msg.get("role"), str) or msg["role"] not in ("user", "assistant"):
            return None
        m = read_message(msg, "anthropic")
        usage = m.usage
        if usage is not None:  # repeated on every fragment: the turn's metrics is chosen after the file is read
            m.usage = None
            m.slots = [s for s in m.slots if s[1] != ("usage",)]
            self.kept.keep(f"/{i}/message/usage", usage)
        mid = msg.get("id") if m.role == "assistant" else None
        b = self.b
        before = len(b.turns)
        if m.role == "assistant":
            m.continues = True
            same = self.response is not None and self.response[0] == mid and self.response[1] == before - 1
            # The shared builder joins a continuing message to the turn it continues; a line of results only
            # between two fragments of one response (Claude Code runs tools while it streams) breaks that
            # join, so the response's turn is named again here.
            b._continuing = self.response[1] if same and isinstance(mid, str) else None
        _keep_keys(self.kept, i, value, mask, skip=("message",))
        hint = b.add(m, f"/{i}/message", self.kept.keep, where=i)
        if m.role == "assistant" and b.turns and b.turns[-1]["src"] == "agent":
            t = len(b.turns) - 1
            self.response = (mid, t) if isinstance(mid, str) else None
            if usage is not None:
                self.usage.setdefault(t, []).append(usage)
            if t == before:  # a new turn: its time and model are the first fragment's
                if is_time(value.get("timestamp")):
                    b.turns[t]["ts"] = value["timestamp"]
                if isinstance(msg.get("model"), str):
                    b.turns[t]["model"] = msg["model"]
                if value.get(EFFORT) is not None:  # 2.1.212+: the reasoning effort of the answer
                    b.turns[t]["effort"] = value[EFFORT]
                if msg.get("model") == SYNTHETIC_MODEL:  # written by Claude Code itself, not by a model
                    _context_turn(b.turns[t], SYNTHETIC)
                    if value.get(API_ERROR_FLAG) is True:
                        error = value.get("error")
                        said = b.turns[t]["extra"]["claude_code"]
                        said[API_ERROR] = error if isinstance(error, str) and error else True
        elif len(b.turns) > before:
            turn = b.turns[-1]
            if is_time(value.get("timestamp")):
                turn["ts"] = value["timestamp"]
            context = next((c for flag, c in CONTEXT_FLAGS.items() if value.get(flag) is True), None)
            _context_turn(turn, context or harness_origin(value.get("origin")))
        result = value.get("toolUseResult")
        if isinstance(result, dict) and isinstance(result.get("agentId"), str) and result["agentId"]:
            for r in m.results:
                if isinstance(r.call_id, str):
                    self.agents[r.call_id] = result["agentId"]
        return hint

    def copied(self, first: int, parent: str) -> None:
        """The turns from ``first`` on came from a record a branched session copied from ``parent``
        (``fields.FORKED_FROM``): context turns of the fork (one already context keeps why it is)."""
        if self.forked_from is None:
            self.forked_from = parent
        for t in range(first, len(self.b.turns)):
            self.fork_turns.add(t)
            if not self.b.turns[t].get("copied"):
                _context_turn(self.b.turns[t], FORK_CONTEXT)

    def queued(self, i: int, value: dict, mask: int) -> dict[str, Any] | None:
        """The export hint of a message queued mid-turn (``fields.queued_prompt``) on the conversation: a user turn
        of its ``attachment.prompt`` (a context turn when it is not the user's words); None for any other record."""
        found = queued_prompt(value)
        if found is None:
            return None
        prompt, context = found
        m = _prompt_message(prompt)
        if not m.mapped:
            return None  # blocks no reader maps: the record stays whole
        _keep_keys(self.kept, i, value, mask, skip=("attachment",))
        for key, v in value["attachment"].items():
            if key != "prompt":
                self.kept.keep(f"/{i}/attachment/{_escape(key)}", v)
        hint = self.b.add(m, f"/{i}/attachment", self.kept.keep, where=i)
        turn = self.b.turns[-1]
        if is_time(value.get("timestamp")):
            turn["ts"] = value["timestamp"]
        turn.setdefault("extra", {})["claude_code"] = {QUEUED: True}
        _context_turn(turn, context)  # not the user's words: context, as isMeta lines are
        return hint


def _prompt_message(prompt: str | list) -> Message:
    """The message of a queued prompt at ``/prompt`` of its attachment: its text, or its content blocks read as a
    ``user`` record's content (the Anthropic shape), their pointers moved from ``/content`` to ``/prompt``. The
    attachment's other keys are residual, one entry each (``_Session.queued``)."""
    if isinstance(prompt, str):
        m = Message(NAME, "user")
        m.add_text("/prompt", prompt)
        m.skeleton = {}
        return m
    m = read_message({"role": "user", "content": prompt}, "anthropic")

    def moved(pointer: str) -> str:
        return "/prompt" + pointer[len("/content") :]

    m.slots = [(moved(p), address) for p, address in m.slots]
    m.leftovers = {moved(p): v for p, v in m.leftovers.items()}
    m.skeleton = {"prompt": m.skeleton["content"]} if isinstance(m.skeleton, dict) and "content" in m.skeleton else {}
    return m


def _context_turn(turn: dict[str, Any], context: str | None) -> None:
    """Mark ``turn`` as context the harness wrote (``fields.CONTEXT_FLAGS``), ``context`` saying why; None: not."""
    if context is not None:
        turn["copied"] = True
        turn["kind"] = CONTEXT_KIND
        turn.setdefault("extra", {}).setdefault("claude_code", {})["context"] = context


def read_session(lines: list[tuple[int, int, Any]], document_id: str | None, sidecar: Any = None) -> dict[str, Any]:
    """The document of one session file's parsed lines ``(index, line, value)`` (``index``: 0-based among the
    non-blank lines, the first token of every residual pointer); ``sidecar``: the parsed ``.meta.json`` of a
    2.1.x subagent file, when there is one."""
    s = _Session(document_id)
    shared = _shared(lines)
    members = set(conversation([(i, v) for i, _, v in lines]))
    expected = 0
    for i, _line, value in lines:
        s.gaps.extend(range(expected, i))  # lines refused as not JSON: the indices the hints skip
        expected = i + 1
        kind = _kind(value)
        s.counts[kind] = s.counts.get(kind, 0) + 1
        if not isinstance(value, dict):
            s.kept.keep(f"/{i}", value)
            s.hints.append({})
            continue
        mask = _mask(value, shared)
        entry: dict[str, Any] = {"e": mask} if mask else {}
        before = len(s.b.turns)
        hint = s.message(i, value, mask) if i in members and is_message_record(value) else None
        queued = s.queued(i, value, mask) if i in members and hint is None else None
        if (hint is not None or queued is not None) and (parent := forked_from(value)) is not None:
            s.copied(before, parent)
        if hint is not None:
            entry["m"] = hint
        elif queued is not None:
            entry["q"] = queued
        else:
            if is_message_record(value):
                s.abandoned.append(i)
            # Kept whole under the line's own pointer (one residual entry per record, not one per key: a 2.1.x
            # session is mostly progress records), less the envelope keys its mask restores.
            masked = {key for b, key in enumerate(ENVELOPE_KEYS) if mask >> b & 1}
            rest = {k: v for k, v in value.items() if k not in masked}
            if ENVELOPE_KEY in rest and s.kept.take_envelope(rest[ENVELOPE_KEY]):
                del rest[ENVELOPE_KEY]
            s.kept.keep(f"/{i}", rest)
        s.hints.append(entry)
    turns = s.b.turns
    if not any(t["src"] in ("user", "agent") for t in turns):
        raise NoConversationError(
            "no user or assistant message on the conversation chain: a file of title summaries, snapshots or "
            "progress records only",
            document_id=document_id,
        )
    for t, usages in s.usage.items():
        best = max(range(len(usages)), key=lambda k: (_output_tokens(usages[k]), k))
        turns[t]["metrics"] = usages[best]
    return _document(s, shared, sidecar)


def _document(s: _Session, shared: dict[str, Any], sidecar: Any) -> dict[str, Any]:
    turns = s.b.turns
    session_id = shared.get("sessionId") if isinstance(shared.get("sessionId"), str) else None
    stem = posixpath.basename(s.document_id or "session").split(".")[0] or "session"
    agent_id = shared.get("agentId") if isinstance(shared.get("agentId"), str) and shared["agentId"] else None
    if agent_id is None and stem.startswith(SUBAGENT_PREFIX) and shared.get("isSidechain") is True:
        agent_id = stem[len(SUBAGENT_PREFIX) :]
    story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, s.document_id)}
    child = agent_id is not None and (shared.get("isSidechain") is True or sidecar is not None)
    story["session"] = child_session(session_id or stem, agent_id) if child else (session_id or stem)
    agent: dict[str, Any] = {"id": AGENT_ID, "name": AGENT_NAME}
    if isinstance(shared.get("version"), str):
        agent["ver"] = shared["version"]
    model = next((t["model"] for t in turns if "model" in t and t["model"] != SYNTHETIC_MODEL), None)
    if model is not None:
        agent["model"] = model
    story["agent"] = agent
    state = {k: shared[k] for k in ENV_STATE if isinstance(shared.get(k), str) and shared[k]}
    if state:
        story["task"] = {"env": {"state": state}}
    story["turns"] = turns
    children = _children(s, session_id or stem)
    if children:
        story["children"] = children
    if child:
        story["parent"] = _parent(session_id or stem, agent_id, sidecar)
    elif s.forked_from is not None:
        story["parent"] = {"psid": s.forked_from, "rel": REL_FORK}
    hints: dict[str, Any] = {"lines": s.hints, "shared": shared, "counts": s.counts}
    interrupted = sum(1 for t in turns if t["src"] == "user" and t.get("msg") in INTERRUPT_MARKERS)
    if interrupted:
        hints[INTERRUPTED] = interrupted
    if s.gaps:
        hints["gaps"] = s.gaps
    if s.abandoned:
        hints["abandoned"] = s.abandoned
    if sidecar is not None:
        hints["sidecar"] = sidecar
    meta: dict[str, Any] = {HINTS: hints}
    if s.b.source_ids:
        meta[SOURCE_CALL_IDS] = dict(s.b.source_ids)
    story["meta"] = meta
    return s.kept.finish(story)


def _children(s: _Session, session_id: str) -> list[str]:
    """The sessions of the subagents this conversation started, in call order; each spawning call says its
    child in ``extra.subagent``. A call a branched session copied from its parent (``fields.FORKED_FROM``) started
    the parent's subagent (its file is the parent's, its lines the parent's ``sessionId``): the call names that
    session, and the fork does not list it as its own child."""
    children: list[str] = []
    for t, turn in enumerate(s.b.turns):
        copied = t in s.fork_turns and s.forked_from is not None
        for call in turn.get("tool_calls") or ():
            agent = s.agents.get(s.b.source_ids.get(call["tcid"], call["tcid"]))
            if agent is None or call["fn"] not in SPAWN_TOOLS:
                continue
            child = child_session(s.forked_from if copied else session_id, agent)
            call.setdefault("extra", {})["subagent"] = child
            if not copied and child not in children:
                children.append(child)
    return children


def _parent(session_id: str, agent_id: str, sidecar: Any) -> dict[str, Any]:
    meta = sidecar if isinstance(sidecar, dict) else {}
    above = meta.get("parentAgentId")
    psid = child_session(session_id, above) if isinstance(above, str) and above else session_id
    parent: dict[str, Any] = {"psid": psid}
    if isinstance(meta.get("toolUseId"), str) and meta["toolUseId"]:
        parent["scid"] = meta["toolUseId"]
    parent["rel"] = REL_COMPACTION if agent_id.startswith(COMPACTION_AGENT) else REL_SPAWN
    return parent


def parse_sidecar(data: bytes | None, document_id: str | None) -> Any:
    """The parsed ``.meta.json`` sidecar (None when there is none); a sidecar that is not JSON is refused with
    its name, so a broken sidecar is never silently taken for none."""
    if data is None:
        return None
    return loads(data, document_id=document_id)
