"""One Goose session in its export's JSON shape (``goose session export --format json``, or assembled from the
database by ``sessions_db``) → one Storyline document (the tables in docs/formats/goose.md).

A message with a text, image, thinking or tool-request part is one turn; a message of tool responses only gives
its results to the calls they answer. Reasoning streamed one part per token is one text: the parts joined with
nothing between them; ``/meta/goose/layout`` keeps each message's part kinds (a thinking part with its length, a
response with its call) for the writer.

>>> story = read_session({"id": "s1", "working_dir": "/w", "extension_data": {}, "conversation": [
...     {"role": "assistant", "created": 1785964864, "content": [
...         {"type": "thinking", "thinking": "Okay", "signature": ""},
...         {"type": "thinking", "thinking": ", so", "signature": ""},
...         {"type": "text", "text": "hi"}]}]}, "s1.json")
>>> story["turns"][0]["reason"], story["turns"][0]["msg"], story["meta"]["goose"]["layout"]
('Okay, so', [{'type': 'text', 'text': 'hi'}], [[['thinking', 4], ['thinking', 4], 'text']])
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, NoConversationError
from ...linking import SOURCE_CALL_IDS
from ...pointer import escape
from ...schema import is_time
from ..residual import Residual, origin
from .fields import (
    AGENT_ONLY,
    AGENT_VISIBLE,
    CALL_VALUE_KEYS,
    COMPACTION_CONTINUATION,
    COMPACTION_SUMMARY,
    CONTENT,
    HIDDEN,
    INFERENCE_MODEL,
    LEGACY_HINTS,
    LEGACY_LIST,
    LEGACY_NAME,
    MODEL_CONFIG,
    MODEL_NAME,
    NAME,
    NEVER_RAN,
    NOTES_FROM,
    REQUEST_KEYS,
    RESIDUAL,
    RESPONSE_KEYS,
    RESULT_VALUE_KEYS,
    ROLES,
    TEXT_KEYS,
    THINKING_KEYS,
    USAGE,
    USER_VISIBLE,
)

__all__ = ["makes_turn", "read_session"]


def makes_turn(kind: Any) -> bool:
    """Whether a part of this layout kind puts something in its message's turn (a response gives to its call)."""
    return kind in ("text", "image", "toolRequest") or (isinstance(kind, list) and kind[0] == "thinking")


def _nonempty(value: Any) -> bool:
    return type(value) is str and bool(value)


def _request(part: dict[str, Any]) -> bool:
    """A tool request this reader maps: a call that parsed (``status: "success"``) with a name and arguments."""
    call = part.get("toolCall")
    value = call.get("value") if isinstance(call, dict) else None
    return (
        _nonempty(part.get("id"))
        and call.get("status") == "success"
        and isinstance(value, dict)
        and _nonempty(value.get("name"))
        and "arguments" in value
    )


def _response_form(part: dict[str, Any]) -> str | None:
    """The form of a tool response this reader maps (``fields.CONTENT`` / ``LEGACY_LIST`` / ``NEVER_RAN``)."""
    result = part.get("toolResult")
    if not (_nonempty(part.get("id")) and isinstance(result, dict)):
        return None
    if result.get("status") == "error" and type(result.get("error")) is str:
        return NEVER_RAN
    value = result.get("value")
    if result.get("status") != "success":
        return None
    if isinstance(value, list):
        return LEGACY_LIST
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return CONTENT
    return None


def _shown(message: Any) -> tuple[bool, bool]:
    """``(userVisible, agentVisible)`` of a message: Goose's defaults (true) unless the flag is ``false``."""
    metadata = message.get("metadata") if isinstance(message, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    return metadata.get(USER_VISIBLE) is not False, metadata.get(AGENT_VISIBLE) is not False


def _visibility(conversation: list[Any]) -> list[str | None]:
    """How each message is read by what the model saw (``fields.HIDDEN`` and the context kinds; ``None``: an
    ordinary turn), from Goose's compaction (block/goose ``context_mgmt/mod.rs`` ``compact_messages``).

    A compaction leaves the summary (a ``user`` message) and a continuation (an ``assistant`` message), both hidden
    from the user, right after the history it summarised; that history is marked agent-invisible, but the model saw
    it when it answered there, so it stays ordinary turns (a later compaction marks an earlier summary invisible
    too: still a summary). An agent-invisible message after the last summary was never sent (a notice to the user:
    a system notification); neither was an invisible user message right before a summary (the last question
    not yet answered: Goose sends a fresh copy after the continuation). Any other message hidden from the user only
    is context the harness gave the model.

    >>> _visibility([{"role": "user", "metadata": {"agentVisible": False}},
    ...     {"role": "user", "metadata": {"userVisible": False}},
    ...     {"role": "assistant", "metadata": {"userVisible": False}},
    ...     {"role": "user"}, {"role": "assistant", "metadata": {"agentVisible": False}}])
    [None, 'summary', 'continuation', None, 'hidden']
    """
    shown = [_shown(m) for m in conversation]
    role = [m.get("role") if isinstance(m, dict) else None for m in conversation]
    out: list[str | None] = [None] * len(conversation)
    last = -1  # the last compaction's summary
    for i in range(len(conversation) - 1):
        if role[i] == "user" and role[i + 1] == "assistant" and not shown[i][0] and not shown[i + 1][0]:
            out[i], out[i + 1] = COMPACTION_SUMMARY, COMPACTION_CONTINUATION
            last = i
    for i, (user, agent) in enumerate(shown):
        if out[i] is not None:
            continue
        before_summary = i + 1 < len(out) and out[i + 1] == COMPACTION_SUMMARY
        if not agent and (i > last or (not user and before_summary)):
            out[i] = HIDDEN
        elif not user:
            out[i] = AGENT_ONLY
    return out


class _Reader:
    def __init__(self, document_id: str | None, jsonl: dict[str, bool] | None = None) -> None:
        self.jsonl = jsonl
        self.kept = Residual(NAME, document_id)
        self.used: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.open: dict[str, dict[str, Any]] = {}  # a call's source id → the latest such call not yet answered

    def story(self, value: dict[str, Any]) -> dict[str, Any]:
        kept = self.kept
        if not _nonempty(value.get("id")):
            raise FormatError("the session's id is not a non-empty string", pointer="/id")
        story: dict[str, Any] = {
            "schema_version": "storyline/v1",
            "origin": origin(NAME, kept.document_id),
            "session": value["id"],
            "agent": {"id": NAME},
            "turns": [],
        }
        conversation = value.get("conversation")
        for key, v in value.items():
            if key == "working_dir" and type(v) is str:
                story["task"] = {"env": {"state": {"cwd": v}}}
            elif key == "name" and type(v) is str and (v or not _nonempty(value.get(LEGACY_NAME))):
                story["notes"] = v
            elif key == "created_at" and type(v) is str and is_time(v):
                story["started_at"] = v
            elif key == "parent_session_id" and _nonempty(v):
                story["parent"] = {"psid": v, "rel": "subagent"}
            elif key == MODEL_CONFIG and isinstance(v, dict) and type(v.get(MODEL_NAME)) is str:
                story["agent"]["model"] = v[MODEL_NAME]
                for k2, v2 in v.items():
                    if k2 != MODEL_NAME:
                        kept.keep(f"/{MODEL_CONFIG}/{escape(k2)}", v2)
            elif key == "_storyline" and kept.take_envelope(v):
                continue
            elif key not in ("id", "conversation"):
                kept.keep(f"/{escape(key)}", v)
        # Goose's own rule: a session without a name is named by its description (fields.LEGACY_NAME)
        named_by = LEGACY_NAME if "notes" not in story and _nonempty(value.get(LEGACY_NAME)) else None
        if named_by is not None:
            story["notes"] = value[LEGACY_NAME]
        if not isinstance(conversation, list):
            if conversation is None:
                raise NoConversationError("the session holds no conversation", pointer="/conversation")
            raise FormatError("conversation is not a list of messages", pointer="/conversation")
        layout: list[Any] = []
        for m, (message, seen) in enumerate(zip(conversation, _visibility(conversation), strict=True)):
            if seen == HIDDEN:  # the model was never sent it: kept whole, in its place, never a turn
                kept.keep(f"/conversation/{m}", message)
                layout.append(None)
                continue
            turn, kinds = self._message(len(story["turns"]) + 1, f"/conversation/{m}", message)
            if turn is not None and seen is not None:  # the harness gave the model it: a context turn
                turn.update(copied=True, kind="context")
                turn["extra"] = {"compaction": seen} if seen != AGENT_ONLY else {NAME: {"context": seen}}
            layout.append(kinds)
            if turn is not None:
                story["turns"].append(turn)
        if not story["turns"]:
            if conversation:  # every message fell into residual: refused, not left out (nothing is lost silently)
                raise FormatError("no message this reader can read: nothing to read as turns", pointer="/conversation")
            raise NoConversationError("the session holds no message", pointer="/conversation")
        story["meta"] = {NAME: {"version": 1, "layout": layout}}
        if self.jsonl is not None:  # a session file from before the database (legacy.py): for the writer
            story["meta"][NAME][LEGACY_HINTS] = self.jsonl
        if named_by is not None:  # /notes is the description's copy: the writer writes no name from it
            story["meta"][NAME][NOTES_FROM] = named_by
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return kept.finish(story)

    # ------------------------------------------------------------------------------------------ messages

    def _kinds(self, parts: list[Any]) -> list[Any]:
        """Each part's layout kind, before anything is read: whether the message is read at all. A response maps
        when it answers a call not yet answered (of an earlier message, or of this one before it)."""
        kinds: list[Any] = []
        pending = set(self.open)
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and type(part.get("text")) is str:
                kinds.append("text")
            elif kind == "image":
                kinds.append("image")
            elif kind == "thinking" and type(part.get("thinking")) is str and type(part.get("signature")) is str:
                kinds.append(["thinking", len(part["thinking"])])
            elif kind == "toolRequest" and _request(part):
                kinds.append("toolRequest")
                pending.add(part["id"])
            elif kind == "toolResponse" and (form := _response_form(part)) is not None and part["id"] in pending:
                pending.discard(part["id"])
                kinds.append(["toolResponse", None, form])  # the call's tcid is set as the part is read
            else:
                kinds.append(RESIDUAL)
        return kinds

    def _message(self, tid: int, ptr: str, message: Any) -> tuple[dict[str, Any] | None, list[Any] | None]:
        kept = self.kept
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        kinds = self._kinds(content) if isinstance(content, list) and type(role) is str and role in ROLES else None
        if kinds is None or all(k == RESIDUAL for k in kinds):
            kept.keep(ptr, message)  # not a message this mapping knows, or nothing in it it reads: whole
            return None, None
        turn: dict[str, Any] | None = None
        if any(makes_turn(k) for k in kinds):
            turn = {"id": tid, "src": ROLES[role], "msg": []}
            self._keys(turn, ptr, message)
        else:  # tool responses only: their results go to their calls; the message's own keys stay residual
            for key, v in message.items():
                if key != "content":
                    kept.keep(f"{ptr}/{escape(key)}", v)
        reasons: list[str] = []
        calls: list[dict[str, Any]] = []
        for p, (part, kind) in enumerate(zip(content, kinds, strict=True)):
            pptr = f"{ptr}/content/{p}"
            if kind == RESIDUAL:
                kept.keep(pptr, part)
            elif kind == "text":
                turn["msg"].append({"type": "text", "text": part["text"]})
                self._rest(part, pptr, TEXT_KEYS)
            elif kind == "image":
                turn["msg"].append(dict(part))
            elif kind == "toolRequest":
                calls.append(self._call(part, pptr))
            elif kind[0] == "thinking":
                reasons.append(part["thinking"])
                if part["signature"]:
                    kept.keep(f"{pptr}/signature", part["signature"])
                self._rest(part, pptr, THINKING_KEYS)
            else:
                kind[1], hidden = self._response(part, pptr, kind[2])
                if hidden:  # where the writer puts back the blocks the model was not sent
                    kind.append(hidden)
        if turn is not None:
            if reasons:
                turn["reason"] = "".join(reasons)  # streamed one part per token: joined exactly, no separator
            if calls:
                turn["tool_calls"] = calls
        return turn, kinds

    def _keys(self, turn: dict[str, Any], ptr: str, message: dict[str, Any]) -> None:
        kept = self.kept
        for key, v in message.items():
            if key == "created" and type(v) is int and is_time(v):
                turn["ts"] = v
            elif key == "metadata" and isinstance(v, dict) and v:
                self._metadata(turn, f"{ptr}/metadata", v)
            elif key not in ("role", "content"):
                kept.keep(f"{ptr}/{escape(key)}", v)

    def _metadata(self, turn: dict[str, Any], ptr: str, metadata: dict[str, Any]) -> None:
        kept = self.kept
        for key, v in metadata.items():
            if key == "usage" and isinstance(v, dict) and v:
                metrics: dict[str, Any] = {}
                for k2, v2 in v.items():
                    place = USAGE.get(k2)
                    if place is None or type(v2) is not int or v2 < 0:
                        kept.keep(f"{ptr}/usage/{escape(k2)}", v2)
                    elif place[0] == "turn":
                        turn[place[1]] = v2
                    elif place[0] == "extra":
                        metrics.setdefault("extra", {})[place[1]] = v2
                    else:
                        metrics[place[1]] = v2
                if metrics:
                    turn["metrics"] = metrics
                continue
            if key == "inference" and isinstance(v, dict):  # derived: the object stays residual
                model = next((v[k] for k in INFERENCE_MODEL if _nonempty(v.get(k))), None)
                if model is not None:
                    turn["model"] = model
            kept.keep(f"{ptr}/{escape(key)}", v)

    def _rest(self, obj: dict[str, Any], ptr: str, mapped: tuple[str, ...]) -> None:
        for key, v in obj.items():
            if key not in mapped:
                self.kept.keep(f"{ptr}/{escape(key)}", v)

    # ------------------------------------------------------------------------------------------ calls

    def _call(self, part: dict[str, Any], pptr: str) -> dict[str, Any]:
        cid = part["id"]
        value = part["toolCall"]["value"]
        tcid, n = cid, 2
        while tcid in self.used:
            tcid, n = f"{cid}#{n}", n + 1
        if tcid != cid:
            self.renamed[tcid] = cid
        self.used.add(tcid)
        self._rest(part, pptr, REQUEST_KEYS)
        self._rest(part["toolCall"], f"{pptr}/toolCall", ("status", "value"))
        self._rest(value, f"{pptr}/toolCall/value", CALL_VALUE_KEYS)
        call = {"tcid": tcid, "fn": value["name"], "args": value["arguments"]}
        self.open[cid] = call
        return call

    def _response(self, part: dict[str, Any], pptr: str, form: str) -> tuple[str, list[int]]:
        """Put a tool response's result on the call it answers; the call's ``tcid`` (for the layout) and the
        indexes of the content blocks the model was not sent (``_content``)."""
        call = self.open.pop(part["id"])
        self._rest(part, pptr, RESPONSE_KEYS)
        result = part["toolResult"]
        rptr = f"{pptr}/toolResult"
        if form == NEVER_RAN:  # the call never ran: Goose's own error, not the tool's
            self._rest(result, rptr, ("status", "error"))
            call["result"] = {"error": result["error"]}
            call["response"] = {"status": "error"}
            return call["tcid"], []
        self._rest(result, rptr, ("status", "value"))
        value = result["value"]
        if form == LEGACY_LIST:
            call["result"], hidden = self._content(value, f"{rptr}/value")
            return call["tcid"], hidden
        self._rest(value, f"{rptr}/value", RESULT_VALUE_KEYS)
        call["result"], hidden = self._content(value["content"], f"{rptr}/value/content")
        if "isError" in value:
            if type(value["isError"]) is bool:  # the tool ran and said it failed (or did not)
                call["response"] = {"status": "error" if value["isError"] else "success"}
            else:
                self.kept.keep(f"{rptr}/value/isError", value["isError"])
        return call["tcid"], hidden

    def _content(self, blocks: list[Any], ptr: str) -> tuple[Any, list[int]]:
        """A result's content blocks the model was sent (``for_model``): the text of a single text block, text
        blocks as ``{type, text}``, else the blocks as they are (an image, a resource); and the indexes of the
        others, each kept whole in its place (a block for the user's eyes only: Goose's developer shell gives
        its output twice, once for the model and once, at priority 0, for the user)."""
        hidden = [b for b, block in enumerate(blocks) if not for_model(block)]
        for b in hidden:
            self.kept.keep(f"{ptr}/{b}", blocks[b])
        shown = [(b, block) for b, block in enumerate(blocks) if b not in hidden]
        if not all(isinstance(x, dict) and x.get("type") == "text" and type(x.get("text")) is str for _, x in shown):
            return [block for _, block in shown], hidden
        for b, block in shown:
            self._rest(block, f"{ptr}/{b}", TEXT_KEYS)
        if len(shown) == 1:
            return shown[0][1]["text"], hidden
        return [{"type": "text", "text": block["text"]} for _, block in shown], hidden


def for_model(block: Any) -> bool:
    """Whether Goose sends a tool-result content block to the model: one with no ``annotations.audience``, or
    with ``assistant`` among its audiences (goose's provider formats keep only those: ``content.audience()
    .is_none_or(|audience| audience.contains(&Role::Assistant))``).

    >>> for_user = {"type": "text", "text": "x", "annotations": {"audience": ["user"], "priority": 0.0}}
    >>> for_model({"type": "text", "text": "x"}), for_model(for_user)
    (True, False)
    """
    annotations = block.get("annotations") if isinstance(block, dict) else None
    audience = annotations.get("audience") if isinstance(annotations, dict) else None
    return not isinstance(audience, list) or "assistant" in audience


def read_session(
    value: dict[str, Any], document_id: str | None = None, jsonl: dict[str, bool] | None = None
) -> dict[str, Any]:
    """The Storyline document of one session (``value`` as ``sniff`` accepts it, or as ``legacy.session``
    assembles it from a file before the database, ``jsonl`` its hints); ``FormatError`` with its pointer."""
    return _Reader(document_id, jsonl).story(value)
