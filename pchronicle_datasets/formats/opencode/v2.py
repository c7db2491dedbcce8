"""OpenCode 2's ``session_message`` rows → the messages of the export the 1.x store builds (``store.py``), so that the
export rules (``reader.py``) stay the one home of the mapping (docs/formats/opencode.md, "OpenCode 2").

OpenCode 2 keeps one row per message: its kind in ``type`` (``user``, ``assistant``, ``system``, ``synthetic``,
``shell``, ``compaction``, ``agent-switched``…), its order in ``seq``, and the rest of the message in ``data``
(``session/projector.ts``: the encoded ``SessionMessage`` without ``id`` and ``type``). A user message holds its
prompt in ``text``; an assistant message its parts in ``content`` (``text``, ``reasoning``, ``tool``). This module
undoes what OpenCode's own backfill did to a 1.x message (``session/message-backfill.ts``): the prompt becomes a text
part, the model ``{id, providerID, variant}`` the ``modelID``/``providerID``/``variant`` keys, a tool item
``{id, name, state{status, input, content, error}}`` the tool part ``{callID, tool, state{status, input, output,
error}}``. Every other key stays where it was, so the export reader keeps it as residual; nothing is dropped.

>>> row = {"id": "msg_2", "session_id": "ses_1", "type": "assistant"}
>>> data = {"model": {"id": "m1", "providerID": "fake"}, "content": [{"type": "tool", "id": "call_1",
...     "name": "shell", "state": {"status": "completed", "input": {"command": "ls"},
...     "content": [{"type": "text", "text": "a.txt"}]}}]}
>>> message = export_message(row, data)
>>> message["info"]["modelID"], message["parts"][0]["callID"], message["parts"][0]["state"]["output"]
('m1', 'call_1', 'a.txt')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from .fields import (
    CONTEXT_ROLES,
    V2_BACKFILL_PREFIX,
    V2_BACKFILL_VERSION,
    V2_CONTEXT_TEXT,
    V2_ERROR_TYPE,
    V2_MODEL_KEYS,
    V2_OUTPUT_JOIN,
    V2_ROLES,
    V2_SHADOWED,
    V2_SHELL_TEXT,
    V2_TOOL_CALL_ID,
    V2_TOOL_ID,
    V2_TOOL_NAME,
)

__all__ = ["backfilled_from", "export_message"]


def _is_text_block(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and type(block.get("text")) is str


def _state(state: Any) -> Any:
    """A 2.x tool state as the 1.x export holds it: the text a completed tool printed as ``output``, an error's message
    as ``error`` (its type beside it). A state of any other shape is left as it is (residual)."""
    if not isinstance(state, dict):
        return state
    out = dict(state)
    content = out.get("content")
    if out.get("status") == "completed" and "output" not in out and isinstance(content, list) and content:
        texts = [block["text"] for block in content if _is_text_block(block)]
        if len(content) == 1 and texts and content[0].keys() == {"type", "text"}:
            del out["content"]  # one plain text block: the output alone says it
            out["output"] = texts[0]
        elif texts:  # several blocks, or blocks that are not text: the joined text, the blocks kept beside it
            out["output"] = V2_OUTPUT_JOIN.join(texts)
    error = out.get("error")
    if isinstance(error, dict) and error.keys() <= {"type", "message"} and type(error.get("message")) is str:
        out["error"] = error["message"]
        if "type" in error and V2_ERROR_TYPE not in out:
            out[V2_ERROR_TYPE] = error["type"]
    return out


def _part(item: Any) -> Any:
    """One ``content`` item as a 1.x part: a tool item renamed (call id, tool name, state); text, reasoning and every
    other item unchanged (their shapes are the 1.x ones: ``{type, text, …}``)."""
    if not (isinstance(item, dict) and item.get("type") == "tool"):
        return item
    part: dict[str, Any] = {}
    for key, value in item.items():
        if key == V2_TOOL_NAME:
            part["tool"] = value
        elif key == V2_TOOL_ID and V2_TOOL_CALL_ID not in item:
            part["callID"] = value  # 2.0.26 writes the provider's call id here
        elif key == "state":
            part["state"] = _state(value)
        else:
            part[key] = value
    return part


def _model(info: dict[str, Any], model: Any, data: dict[str, Any]) -> None:
    if isinstance(model, dict) and model and model.keys() <= V2_MODEL_KEYS.keys() and type(model.get("id")) is str:
        if not any(V2_MODEL_KEYS[k] in data for k in model):  # no key of the message's own would be overwritten
            info.update({V2_MODEL_KEYS[k]: v for k, v in model.items()})
            return
    info["model"] = model  # another shape: kept as it is


def _shell_text(data: dict[str, Any]) -> str | None:
    """What the model was sent for a command the user ran with ``!`` (``toLLMMessage``'s ``shell`` case), or None."""
    output = data.get("output")
    output = output.get("output", "") if isinstance(output, dict) else output  # an object in some 2.x versions
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and metadata.get("commandInvocation"):
        return None  # a shell command a slash command ran: toLLMMessage sends nothing for it
    if type(data.get("command")) is not str or type(output) is not str:
        return None
    return V2_SHELL_TEXT.format(command=data["command"], output=output)


def _sent(kind: Any, data: dict[str, Any]) -> bool:
    """Whether a message of a kind other than user/assistant was sent the model as text (``fields.CONTEXT_ROLES``):
    a compaction once it has its summary (OpenCode writes it empty when the compaction starts; a status other than
    ``completed`` is one not finished)."""
    if kind == "compaction":
        return (
            bool(data.get("summary"))
            and type(data["summary"]) is str
            and data.get("status", "completed") == "completed"
        )
    return kind in V2_CONTEXT_TEXT and type(data.get(V2_CONTEXT_TEXT[kind])) is str


def export_message(row: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The export message ``{info, parts}`` of one ``session_message`` row whose ``data`` (a JSON object) is parsed."""
    kind = row.get("type")
    info: dict[str, Any] = {}
    parts: list[Any] = []
    sent = isinstance(kind, str) and kind in CONTEXT_ROLES and _sent(kind, data)
    if kind == "shell" and (text := _shell_text(data)) is not None:
        parts.append({"type": "text", "text": text})  # derived: command and output stay in the info
    for key, value in data.items():
        if kind == "user" and key == "text" and type(value) is str:
            parts.append({"type": "text", "text": value})
        elif sent and key == V2_CONTEXT_TEXT[kind]:
            parts.append({"type": "text", "text": value})  # the text the model was sent: its context turn's
        elif kind == "assistant" and key == "content" and isinstance(value, list):
            parts.extend(_part(item) for item in value)
        elif kind == "assistant" and key == "model":
            _model(info, value, data)
        else:
            info[key] = value
    # the row's own columns, as OpenCode reads a row back ({...data, id, type}: a `sessionID` of the data, a synthetic
    # message's, stays); the kind is the message's role. A data key the columns would overwrite is kept beside them.
    columns = {"id": row.get("id"), "role": V2_ROLES.get(kind, kind)}
    for key, value in columns.items():
        if key in info and info[key] != value:
            info[f"{key}{V2_SHADOWED}"] = info[key]
        info[key] = value
    info.setdefault("sessionID", row.get("session_id"))
    return {"info": info, "parts": parts}


def backfilled_from(row_id: Any, session_id: Any, legacy_ids: Iterable[str]) -> str | None:
    """The 1.x message id a ``session_message`` row id names when OpenCode's backfill made it (``fields.py``,
    ``V2_BACKFILL_PREFIX``: the hash of the 1.x id and its place), else None.

    >>> ids = ["msg_a", "msg_b"]
    >>> digest = hashlib.sha256(json.dumps([V2_BACKFILL_VERSION, "ses_1", "msg_b", "message", 1],
    ...                                    separators=(",", ":")).encode()).hexdigest()[:24]
    >>> backfilled_from("evt_legacy_backfill_m_00000001_" + digest, "ses_1", ids), backfilled_from("m", "ses_1", ids)
    ('msg_b', None)
    """
    if not (isinstance(row_id, str) and row_id.startswith(V2_BACKFILL_PREFIX)):
        return None
    ordinal, _, digest = row_id[len(V2_BACKFILL_PREFIX) :].partition("_")
    try:
        place = int(ordinal, 36)
    except ValueError:
        return None
    for legacy in legacy_ids:
        # JSON.stringify of the array: no spaces, non-ASCII as it is
        text = json.dumps([V2_BACKFILL_VERSION, session_id, legacy, "message", place], separators=(",", ":"),
                          ensure_ascii=False)  # fmt: skip
        if hashlib.sha256(text.encode()).hexdigest()[:24] == digest:
            return legacy
    return None
