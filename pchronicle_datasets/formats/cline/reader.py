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
from datetime import UTC, datetime
from typing import Any

from ...errors import FormatError, NoConversationError
from ...jsonio import json_type
from ...linking import SOURCE_CALL_IDS
from ..base import INTERRUPTED
from ..messages import Message, Result, TurnBuilder, read_message
from ..residual import ENVELOPE_KEY, Residual, origin
from .fields import (
    AGENT_ID,
    AGENT_NAME,
    CONTEXT_HEADS,
    COST,
    HINTS,
    HISTORY_FILE,
    METRICS,
    MODEL_INFO,
    NAME,
    RESULT_HEAD,
    RESUMPTION,
    TOKENS,
    TS,
)

__all__ = ["HINTS_VERSION", "read_history", "session_of", "stamped", "time_of"]

HINTS_VERSION = 1
ROLES = ("user", "assistant")


def stamped(value: Any) -> bool:
    """A message as Cline stores it: an object with a string ``role`` and the integer ``ts`` (ms since the epoch)
    Cline stamps on each message (``ClineStorageMessage``; a bare Anthropic or OpenAI message has none).

    >>> stamped({"role": "user", "content": "hi", "ts": 1}), stamped({"role": "user", "content": "hi"})
    (True, False)
    """
    return isinstance(value, dict) and isinstance(value.get("role"), str) and type(value.get(TS)) is int


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


def time_of(ts: Any) -> str | None:
    """A turn's time from Cline's ``ts`` (integer ms since the epoch) as RFC 3339 UTC with milliseconds, which
    gives the same integer back; None for any other value (it stays residual only).

    >>> time_of(1777073173494), time_of(True), time_of(1.5)
    ('2026-04-24T23:26:13.494Z', None, None)
    """
    if type(ts) is not int or not 0 <= ts < 253402300800000:  # years 1970–9999
        return None
    moment = datetime.fromtimestamp(ts // 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ts % 1000:03d}Z"


def _metrics(value: Any) -> dict[str, Any] | None:
    """Storyline metrics of Cline's ``metrics`` (``{tokens: {prompt, completion, cached}, cost}``), or None."""
    if not isinstance(value, dict):
        return None
    out: dict[str, Any] = {}
    tokens = value.get("tokens")
    if isinstance(tokens, dict):
        for key, name in TOKENS.items():
            if type(tokens.get(key)) is int:
                out[name] = tokens[key]
    cost = value.get(COST[0])
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        out[COST[1]] = cost
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


def _context_kinds(m: Message) -> list[str] | None:
    """The kinds of what Cline added to a user message (``CONTEXT_HEADS``), in order, when it holds nothing else
    (blank blocks aside); else None: the message is the user's."""
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


def read_history(value: Any, document_id: str | None, line: int | None = None) -> dict[str, Any]:
    """The Storyline document of one parsed Cline history; ``FormatError`` with the pointer of what it refuses."""
    if not isinstance(value, list):
        raise FormatError(
            f"a Cline task history is a JSON array of messages, got {json_type(value)}",
            pointer="",
            document_id=document_id,
            line=line,
        )
    if not value:
        raise NoConversationError("the task history holds no message", pointer="", document_id=document_id, line=line)
    residual = Residual(NAME, document_id)
    builder = TurnBuilder()
    hints: list[dict[str, Any]] = []
    previous_calls: list[tuple[str | None, str]] = []
    text_results = interrupted = 0
    model: str | None = None
    for i, message in enumerate(value):
        pointer = f"/{i}"
        if not (isinstance(message, dict) and message.get("role") in ROLES):
            raise FormatError(
                f"a Cline message is an object with role 'user' or 'assistant', got {json_type(message)}"
                + (f" with role {message.get('role')!r}" if isinstance(message, dict) else ""),
                pointer=pointer,
                document_id=document_id,
                line=line,
            )
        if i == 0 and ENVELOPE_KEY in message and residual.take_envelope(message[ENVELOPE_KEY]):
            message = {k: v for k, v in message.items() if k != ENVELOPE_KEY}  # other formats' residual, carried
        m = read_message(message, "anthropic")
        if m.role == "user" and previous_calls:
            text_results += _take_text_results(m, previous_calls)
        previous_calls = [(c.id, c.name) for c in m.calls] if m.role == "assistant" else []
        if m.role == "user":
            interrupted += sum(t.startswith(RESUMPTION) for t in m.texts)
        if not m.mapped and m.first_unread() is not None:
            raise FormatError(
                "all of this message's content is of a kind no reader maps (it would be residual only)",
                pointer=pointer + m.first_unread(),
                document_id=document_id,
                line=line,
            )
        before = len(builder.turns)
        hints.append(builder.add(m, pointer, residual.keep))
        if len(builder.turns) > before:
            turn = builder.turns[-1]
            _stamp(turn, message)
            if turn["src"] == "agent" and model is None and "model" in turn:
                model = turn["model"]
            kinds = _context_kinds(m) if turn["src"] == "user" else None
            if kinds is not None:
                turn["copied"] = True
                turn["kind"] = "context"
                turn.setdefault("extra", {})[NAME] = {"context": kinds}
    calls = [call["tcid"] for turn in builder.turns for call in turn.get("tool_calls") or ()]
    unanswered = [tcid for tcid in calls if tcid not in builder.answered]
    meta: dict[str, Any] = {
        HINTS: {
            "version": HINTS_VERSION,
            "messages": hints,
            "text_results": text_results,
            INTERRUPTED: interrupted,
            "unanswered_calls": len(unanswered),
            "unanswered": unanswered,
        }
    }
    if builder.source_ids:
        meta[SOURCE_CALL_IDS] = builder.source_ids
    agent: dict[str, Any] = {"id": AGENT_ID, "name": AGENT_NAME}
    if model is not None:
        agent["model"] = model
    story: dict[str, Any] = {
        "schema_version": "storyline/v1",
        "origin": origin(NAME, document_id),
        "session": session_of(document_id),
        "agent": agent,
        "turns": builder.turns,
        "meta": meta,
    }
    return residual.finish(story)


def _stamp(turn: dict[str, Any], message: dict[str, Any]) -> None:
    """The turn's time, model and metrics from Cline's keys of its message (derived: the keys stay residual)."""
    ts = time_of(message.get(TS))
    if ts is not None:
        turn["ts"] = ts
    info = message.get(MODEL_INFO)
    if isinstance(info, dict) and isinstance(info.get("modelId"), str) and info["modelId"]:
        turn["model"] = info["modelId"]
    metrics = _metrics(message.get(METRICS))
    if metrics is not None and "metrics" not in turn:
        turn["metrics"] = metrics
