"""One Cline task history (``api_conversation_history.json``: a JSON array of messages) → one Storyline document
(the table in docs/formats/cline.md).

Each message is an Anthropic message read by the shared message model; Cline's own keys give the turn's time,
model and metrics. A tool's result that Cline gave back as a text block (``[read_file for 'a.ts'] Result:\\n…``)
in the user message right after the call is the call's result, as the model saw it.

>>> history = [
...     {"role": "user", "content": [{"type": "text", "text": "<task>\\nList.\\n</task>"}], "ts": 1777073170000},
...     {"role": "assistant",
...      "content": [{"type": "tool_use", "id": "t1", "name": "list_files", "input": {"path": "."}}],
...      "modelInfo": {"modelId": "m", "providerId": "p", "mode": "act"},
...      "metrics": {"tokens": {"prompt": 10, "completion": 2, "cached": 0}}, "ts": 1777073173494},
...     {"role": "user", "content": [{"type": "text", "text": "[list_files for '.'] Result:\\na.ts"},
...      {"type": "text", "text": "<environment_details>\\n…\\n</environment_details>"}], "ts": 1777073174000}]
>>> story = read_history(history, "tasks/1777073170000/api_conversation_history.json")
>>> story["session"], [(t["src"], t.get("kind")) for t in story["turns"]]
('1777073170000', [('user', None), ('agent', None), ('user', 'context')])
>>> story["turns"][1]["observation"]["results"][0]["content"], story["turns"][1]["ts"], story["turns"][1]["model"]
("[list_files for '.'] Result:\\na.ts", '2026-04-24T23:26:13.494Z', 'm')
"""

from __future__ import annotations

import posixpath
from typing import Any

from ...errors import FormatError, NoConversationError
from ...jsonio import json_type
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ..base import INTERRUPTED
from ..messages import Message, Reasoning, Result, TurnBuilder, read_message
from ..messages.anthropic import read_system
from ..messages.model import strip
from ..moments import time_of  # Cline's ts (ms since the epoch): kept importable here, as before
from ..residual import ENVELOPE_KEY, Residual, origin
from .fields import (
    AGENT_ID,
    AGENT_NAME,
    COMPACTION_KINDS,
    CONTEXT_HEADS,
    CONTEXT_KEYS,
    COST,
    DETAIL_ENCRYPTED,
    DETAIL_TEXT,
    ENV_MODEL,
    EXTENSIONS,
    FILE_BLOCK,
    HINTS,
    HISTORY_FILE,
    MANIFEST_KEYS,
    MESSAGES,
    METRICS,
    MODEL_INFO,
    MODEL_KEYS,
    NAME,
    REASONING,
    REASONING_DETAILS,
    REASONING_ENCRYPTED,
    REASONING_TEXT,
    RESULT_HEAD,
    RESUMPTION,
    ROO_AGENT,
    ROO_KEYS,
    ROO_MODE,
    SDK_TOKENS,
    SDK_TOKENS_EXTRA,
    SESSION_ID,
    SYSTEM_PROMPT,
    TOKENS,
    TS,
)

__all__ = [
    "HINTS_VERSION",
    "agent_of",
    "is_manifest",
    "is_reasoning_item",
    "is_session",
    "read_history",
    "session_of",
    "stamped",
    "time_of",
]

HINTS_VERSION = 1
ROLES = ("user", "assistant")


def stamped(value: Any) -> bool:
    """A message as Cline stores it: an object whose ``role`` is ``user`` or ``assistant`` (the only roles of an
    Anthropic history) with the integer ``ts`` (ms since the epoch) Cline stamps on each message
    (``ClineStorageMessage``; a bare Anthropic or OpenAI message has none). A chat log that stamps its messages
    too but holds a ``system`` or ``tool`` message is no Cline history: it stays the ``chat`` format's.

    >>> stamped({"role": "user", "content": "hi", "ts": 1}), stamped({"role": "user", "content": "hi"})
    (True, False)
    >>> stamped({"role": "tool", "content": "ok", "ts": 1})
    False
    """
    return isinstance(value, dict) and value.get("role") in ("user", "assistant") and type(value.get(TS)) is int


def is_reasoning_item(value: Any) -> bool:
    """A reasoning item Roo Code's builds of 2025-11-12 to -14 kept in the array before its assistant message
    (OpenAI's encrypted reasoning: ``{type: "reasoning", summary, encrypted_content, id, ts}``, no ``role``).

    >>> item = {"type": "reasoning", "summary": [], "encrypted_content": "gAAA", "id": "rs_1", "ts": 1763012416347}
    >>> is_reasoning_item(item), is_reasoning_item({"type": "reasoning"})
    (True, False)
    """
    return (
        isinstance(value, dict)
        and value.get("type") == REASONING
        and "role" not in value
        and type(value.get(TS)) is int
        and isinstance(value.get(REASONING_ENCRYPTED, value.get(REASONING_TEXT)), str)
    )


def agent_of(document_id: str | None) -> tuple[str, str] | None:
    """The extension that wrote a task, when the document's id holds the folder VS Code keeps its storage in
    (``fields.EXTENSIONS``); else None.

    >>> agent_of("kilocode.kilo-code/tasks/9d2e/api_conversation_history.json"), agent_of("tasks/9d2e/h.json")
    (('kilo-code', 'Kilo Code'), None)
    """
    parts = (document_id or "").replace("\\", "/").split("/")
    return next((EXTENSIONS[p.lower()] for p in reversed(parts[:-1]) if p.lower() in EXTENSIONS), None)


def session_of(document_id: str | None) -> str:
    """The document's session: the task's id (the folder Cline keeps the history in), else the file's name.

    >>> session_of("tasks/1777073170000/api_conversation_history.json"), session_of("a/h.json"), session_of(None)
    ('1777073170000', 'a/h.json', 'cline')
    """
    if not document_id:
        return AGENT_ID
    folder, name = posixpath.split(document_id)
    if name == HISTORY_FILE and posixpath.basename(folder):
        return posixpath.basename(folder)
    return document_id


def _metrics(value: Any) -> dict[str, Any] | None:
    """Storyline metrics of Cline's ``metrics``: a task history's ``{tokens: {prompt, completion, cached}, cost}``, or
    an SDK session's ``{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost}``; None for neither."""
    if not isinstance(value, dict):
        return None
    out: dict[str, Any] = {}
    tokens = value.get("tokens")
    for source, table in ((tokens if isinstance(tokens, dict) else {}, TOKENS), (value, SDK_TOKENS)):
        for key, name in table.items():
            if type(source.get(key)) is int:
                out[name] = source[key]
    extra = {name: value[key] for key, name in SDK_TOKENS_EXTRA.items() if type(value.get(key)) is int}
    cost = value.get(COST[0])
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        out[COST[1]] = cost
    if extra:
        out["extra"] = extra
    return out or None


def _take_text_results(m: Message, calls: list[tuple[str | None, str]]) -> int:
    """Make the text blocks of user message ``m`` that are results of the previous message's ``calls`` (source id,
    name; those a ``tool_result`` block of ``m`` does not answer) its results: in order, the k-th such block the
    k-th call's. Returns how many."""
    answered = {r.call_id for r in m.results}
    queue = [c for c in calls if c[0] is None or c[0] not in answered]
    texts: list[str] = []
    slots: list[tuple[str, tuple]] = []
    taken = 0
    for pointer, address in m.slots:
        if address[0] == "texts":
            text = m.texts[address[1]]
            if queue and pointer.endswith("/text") and RESULT_HEAD.match(text):
                cid, name = queue.pop(0)
                slots.append((pointer, ("results", len(m.results), "content")))
                m.results.append(Result(text, cid, None if cid is not None else name))
                taken += 1
                continue
            slots.append((pointer, ("texts", len(texts))))
            texts.append(text)
        else:
            slots.append((pointer, address))
    m.texts, m.slots = texts, slots
    return taken


def _add_reasoning(m: Message, base: str, value: dict[str, Any]) -> bool:
    """Roo's reasoning ``value`` at ``base`` (a ``reasoning`` block, or an item of its own) as reasoning of ``m``:
    its ``text``, its ``encrypted_content``; its other keys (``summary``, ``id``, an item's ``ts``) stay residual.
    False (nothing taken) for one with neither."""
    text, encrypted = value.get(REASONING_TEXT), value.get(REASONING_ENCRYPTED)
    pointers = {}
    if isinstance(text, str):
        pointers["text"] = join(base, REASONING_TEXT)
    if isinstance(encrypted, str):
        pointers["encrypted"] = join(base, REASONING_ENCRYPTED)
    if not pointers:
        return False
    m.add_reasoning(
        Reasoning(text if "text" in pointers else None, encrypted=encrypted if "encrypted" in pointers else None),
        **pointers,
    )
    for key, item in value.items():
        if key != "type" and join(base, key) not in pointers.values():
            m.leave(join(base, key), item)
    return True


def _take_reasoning(m: Message) -> bool:
    """Roo's ``reasoning`` blocks, left over by the Anthropic reader, as the message's reasoning; whether any was
    taken (the caller then strips the message's skeleton again)."""
    taken = False
    for pointer, value in list(m.leftovers.items()):
        if isinstance(value, dict) and value.get("type") == REASONING and pointer.count("/") == 2:
            del m.leftovers[pointer]
            if _add_reasoning(m, pointer, value):
                taken = True
            else:
                m.leave(pointer, value)  # neither text nor payload: residual as it is
    return taken


def _take_reasoning_details(m: Message) -> bool:
    """OpenRouter's ``reasoning_details`` of a message with no reasoning of its own (left over whole by the
    Anthropic reader) as its reasoning: each item's text or summary (with its ``signature``), or its encrypted
    ``data``; the items of another type, and the other keys, stay residual. Whether any was taken."""
    details = m.leftovers.get("/" + REASONING_DETAILS)
    if m.reasoning or not isinstance(details, list):
        return False
    taken = False
    del m.leftovers["/" + REASONING_DETAILS]
    for i, item in enumerate(details):
        base = join("", REASONING_DETAILS, i)
        kind = item.get("type") if isinstance(item, dict) else None
        text_key, data_key = DETAIL_TEXT.get(kind), DETAIL_ENCRYPTED.get(kind)
        if text_key is not None and isinstance(item.get(text_key), str):
            sig = item.get("signature")
            pointers = {"text": join(base, text_key)}
            if isinstance(sig, str):
                pointers["signature"] = join(base, "signature")
            m.add_reasoning(Reasoning(item[text_key], sig if isinstance(sig, str) else None), **pointers)
        elif data_key is not None and isinstance(item.get(data_key), str):
            pointers = {"encrypted": join(base, data_key)}
            m.add_reasoning(Reasoning(None, encrypted=item[data_key]), **pointers)
        else:
            m.leave(base, item)
            continue
        taken = True
        for key, value in item.items():
            if key != "type" and join(base, key) not in pointers.values():
                m.leave(join(base, key), value)
    return taken


def _reasoning_item(item: dict[str, Any]) -> Message:
    """A reasoning item of its own (``is_reasoning_item``) as an assistant message of reasoning only, which the
    assistant message after it continues (one agent turn)."""
    m = Message("anthropic", "assistant")
    m.continues = True
    _add_reasoning(m, "", item)
    m.skeleton = strip(item, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _roo_mode(m: Message) -> tuple[bool, str | None]:
    """Whether the message's environment details are the Roo family's (a ``# Current Mode`` section with a
    ``<slug>``), and the model they name (``<model>…</model>`` in that section, the last of the message's)."""
    roo, model = False, None
    for text in m.texts:
        mode = ROO_MODE.search(text)
        if mode is None:
            continue
        roo = True
        found = ENV_MODEL.search(text, mode.end())
        if found and found.group(1).strip():
            model = found.group(1).strip()
    return roo, model


def _context_kinds(m: Message, message: dict[str, Any]) -> list[str] | None:
    """The kinds of what Cline added to a user message (``CONTEXT_HEADS``), in order, when it holds nothing else
    (blank blocks aside); a compaction's message (``metadata.kind``) whatever it holds; else None: the message is
    the user's."""
    meta = message.get("metadata")
    if isinstance(meta, dict) and meta.get("kind") in COMPACTION_KINDS:
        return [meta["kind"]]
    marked = [kind for key, kind in CONTEXT_KEYS.items() if message.get(key) is True]
    if marked:
        return marked
    kinds: list[str] = []
    for text in m.texts:
        head = text.lstrip()
        if not head:
            continue
        kind = next((k for prefix, k in CONTEXT_HEADS.items() if head.startswith(prefix)), None)
        if kind is None:
            return None
        if kind not in kinds:
            kinds.append(kind)
    return kinds or None


def is_session(value: Any) -> bool:
    """A session file of Cline's SDK (``<id>.messages.json``): ``{version, sessionId, updated_at, messages, …}``.

    >>> is_session({"version": 1, "sessionId": "s", "updated_at": "t", "messages": []}), is_session({"messages": []})
    (True, False)
    """
    return (
        isinstance(value, dict)
        and type(value.get("version")) is int
        and isinstance(value.get(SESSION_ID), str)
        and "updated_at" in value
        and isinstance(value.get(MESSAGES), list)
    )


def is_manifest(value: Any) -> bool:
    """The manifest the SDK writes beside a session (``<id>.json``: ``session_id``, ``messages_path``, status…)."""
    return (
        isinstance(value, dict)
        and type(value.get("version")) is int
        and all(isinstance(value.get(k), str) for k in MANIFEST_KEYS)
    )


def read_history(value: Any, document_id: str | None, line: int | None = None) -> dict[str, Any]:
    """The Storyline document of one parsed Cline history (a task's message array, or an SDK session object);
    ``FormatError`` with the pointer of what it refuses."""
    if is_manifest(value):
        raise NoConversationError(
            "a Cline session's manifest holds no conversation (its messages are in <id>.messages.json)",
            pointer="",
            document_id=document_id,
            line=line,
        )
    session = is_session(value)
    if not (session or isinstance(value, list)):
        raise FormatError(
            "a Cline history is a JSON array of messages or a session object (version, sessionId, messages), "
            f"got {json_type(value)}",
            pointer="",
            document_id=document_id,
            line=line,
        )
    messages = value[MESSAGES] if session else value
    if not messages:
        raise NoConversationError("the history holds no message", pointer="", document_id=document_id, line=line)
    reading = _Reading(document_id, line, "/" + MESSAGES if session else "")
    if session:
        for key, item in value.items():
            if key == SYSTEM_PROMPT and isinstance(item, (str, list)):
                reading.system = reading.builder.add(read_system(item), f"/{key}", reading.residual.keep)
            elif key == ENVELOPE_KEY and reading.residual.take_envelope(item):
                continue
            elif key != MESSAGES:
                reading.residual.keep(join("", key), item)  # version, updated_at, agent, sessionId (derived), …
    for i, message in enumerate(messages):
        reading.message(i, message)
    return reading.story(
        value[SESSION_ID] if session else session_of(document_id), value.get("version") if session else None
    )


class _Reading:
    """The state of one history being read: its residual, turns, export hints and counts."""

    def __init__(self, document_id: str | None, line: int | None, base: str) -> None:
        self.document_id, self.line, self.base = document_id, line, base
        self.residual = Residual(NAME, document_id)
        self.builder = TurnBuilder()
        self.hints: list[dict[str, Any]] = []
        self.system: dict[str, Any] | None = None
        self.previous_calls: list[tuple[str | None, str]] = []
        self.text_results = self.interrupted = 0
        self.model: str | None = None
        self.env_model: str | None = None  # the model the last environment details named (the Roo family's)
        self.continues = False  # the last message was a reasoning item of its own: the next answer continues it
        self.roo = self.cline = False  # what the history shows of the extension that wrote it (``agent``)

    def refuse(self, reason: str, pointer: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def message(self, i: int, message: Any) -> None:
        pointer = join(self.base, i) if self.base else f"/{i}"
        if is_reasoning_item(message):
            self.roo = True
            self._place(_reasoning_item(message), message, pointer)
            self.continues = True  # the assistant message after it is the same answer
            return
        if not (isinstance(message, dict) and message.get("role") in ROLES):
            role = f" with role {message.get('role')!r}" if isinstance(message, dict) else ""
            raise self.refuse(
                f"a Cline message is an object with role 'user' or 'assistant', got {json_type(message)}{role}", pointer
            )
        if i == 0 and not self.base and ENVELOPE_KEY in message and self.residual.take_envelope(message[ENVELOPE_KEY]):
            message = {k: v for k, v in message.items() if k != ENVELOPE_KEY}  # other formats' residual, carried
        m = read_message(message, "anthropic")
        _take_files(m)
        roo_reasoning = _take_reasoning(m)
        if _take_reasoning_details(m) or roo_reasoning:
            m.skeleton = strip(message, [p for p, _ in m.slots] + list(m.leftovers))
        if roo_reasoning or any(key in message for key in ROO_KEYS):
            self.roo = True  # what only the Roo family writes
        if MODEL_INFO in message or METRICS in message:
            self.cline = True
        if m.role == "user" and self.previous_calls:
            self.text_results += _take_text_results(m, self.previous_calls)
        self.previous_calls = [(c.id, c.name) for c in m.calls] if m.role == "assistant" else []
        if m.role == "user":
            self.interrupted += sum(t.startswith(RESUMPTION) for t in m.texts)
            roo, model = _roo_mode(m)
            self.roo = self.roo or roo
            if model is not None:
                self.env_model = model
        if m.role == "assistant" and self.continues:
            m.continues = True
        self.continues = False
        if not m.mapped and m.first_unread() is not None:
            raise self.refuse(
                "all of this message's content is of a kind no reader maps (it would be residual only)",
                pointer + m.first_unread(),
            )
        self._place(m, message, pointer)

    def _place(self, m: Message, message: dict[str, Any], pointer: str) -> None:
        """Add message ``m`` (its source ``message``) to the turns; a turn it makes (or the turn a continuing
        message joins) takes its time, model and metrics, and a user turn of what Cline added is a context turn."""
        before = len(self.builder.turns)
        self.hints.append(self.builder.add(m, pointer, self.residual.keep))
        if len(self.builder.turns) == before and not (m.continues and self.builder.turns):
            return
        turn = self.builder.turns[-1]
        _stamp(turn, message)
        if turn["src"] == "agent" and "model" not in turn and self.env_model is not None:
            turn["model"] = self.env_model  # derived: the model Roo's environment details named before it
        if turn["src"] == "agent" and self.model is None and "model" in turn:
            self.model = turn["model"]
        kinds = _context_kinds(m, message) if turn["src"] == "user" and len(self.builder.turns) > before else None
        if kinds is not None:
            turn["copied"] = True
            turn["kind"] = "context"
            turn.setdefault("extra", {})[NAME] = {"context": kinds}

    def agent(self) -> tuple[str, str]:
        """Which extension wrote the history: the one whose storage folder the document's id holds, else Roo
        Code for a history only the Roo family writes (its reasoning blocks, condensing keys, mode in the
        environment details) and none of Cline's ``modelInfo``/``metrics``, else Cline."""
        found = agent_of(self.document_id)
        if found is not None:
            return found
        return ROO_AGENT if self.roo and not self.cline and not self.base else (AGENT_ID, AGENT_NAME)

    def story(self, session: str, version: Any) -> dict[str, Any]:
        calls = [call["tcid"] for turn in self.builder.turns for call in turn.get("tool_calls") or ()]
        unanswered = [tcid for tcid in calls if tcid not in self.builder.answered]
        hints: dict[str, Any] = {"version": HINTS_VERSION, "messages": self.hints}
        if self.base:
            hints["layout"] = "session"
        if self.system is not None:
            hints["system"] = self.system
        hints.update(
            {
                "text_results": self.text_results,
                INTERRUPTED: self.interrupted,
                "unanswered_calls": len(unanswered),
                "unanswered": unanswered,
            }
        )
        meta: dict[str, Any] = {HINTS: hints}
        if self.builder.source_ids:
            meta[SOURCE_CALL_IDS] = self.builder.source_ids
        agent_id, agent_name = self.agent()
        agent: dict[str, Any] = {"id": agent_id, "name": agent_name}
        if self.model is not None:
            agent["model"] = self.model
        story: dict[str, Any] = {
            "schema_version": "storyline/v1",
            "origin": origin(NAME, self.document_id),
            "session": session or AGENT_ID,
            "agent": agent,
            "turns": self.builder.turns,
            "meta": meta,
        }
        if type(version) is int:
            story["origin"]["schema_version"] = f"cline-messages/v{version}"
        return self.residual.finish(story)


def _take_files(m: Message) -> None:
    """The SDK's ``file`` blocks (a file the user attached: path and content), left over by the Anthropic reader,
    are the turn's media: kept beside the turn as written, as images are."""
    for pointer, value in list(m.leftovers.items()):
        if isinstance(value, dict) and value.get("type") == FILE_BLOCK and pointer.count("/") == 2:
            del m.leftovers[pointer]
            m.add_media(pointer, value)


def _stamp(turn: dict[str, Any], message: dict[str, Any]) -> None:
    """The turn's time, model and metrics from Cline's keys of its message (derived: the keys stay residual)."""
    ts = time_of(message.get(TS))
    if ts is not None:
        turn["ts"] = ts
    info = message.get(MODEL_INFO)
    model = (
        next((info[k] for k in MODEL_KEYS if isinstance(info.get(k), str) and info[k]), None)
        if isinstance(info, dict)
        else None
    )
    if model is not None:
        turn["model"] = model
    metrics = _metrics(message.get(METRICS))
    if metrics is not None and "metrics" not in turn:
        turn["metrics"] = metrics
