"""Reading a Qwen Code session file into one Storyline document (docs/formats/qwen-code.md).

The conversation is the ``parentUuid`` chain from the file's last record, as the CLI rebuilds it on resume
(``buildOrderedUuidChain``): its user and assistant records are turns, its ``tool_result`` records give their
calls' results, its ``system`` records (telemetry, snapshots…) are kept whole, but for a compression checkpoint's
summary, a context turn (``_compression``). Every
record off the chain is kept whole too. Each value is mapped through ``formats/layout.py``'s pointer map (only
when it comes back exactly) or kept as residual under its source pointer ``/{i}`` (``i`` the 0-based index among
the non-blank lines), so the same-source writer gives every line back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, NoConversationError
from ...linking import SOURCE_CALL_IDS
from ...pointer import join, parse
from ...schema import is_time
from ..base import Record, one_document_records
from ..layout import Layout, walkable
from ..residual import ENVELOPE_KEY, origin
from .fields import (
    AGENT_ID,
    AGENT_NAME,
    COMPACTION_EXTRA,
    COMPRESSION_SUBTYPE,
    CONTEXT_KIND,
    EXTRA_KEY,
    GIT_BRANCH,
    NAME,
    PARENT_KEY,
    PARENT_REL,
    PARENT_SUBTYPE,
    RECORD_TYPES,
    SHARED,
    SYSTEM,
    TOOL_RESULT,
    TURN_TYPES,
    USAGE,
    context_of,
)

__all__ = ["INVERSE", "is_record", "iter_records", "read_session"]

#: How the same-source writer gives back the values the pointer map derived (``layout.rebuild``): a turn's
#: ``src`` back to its record's ``type`` and its message's ``role``.
INVERSE = {"type": {"user": "user", "agent": "assistant"}, "role": {"user": "user", "agent": "model"}}


def is_record(value: Any) -> bool:
    """A Qwen Code ``ChatRecord``: string ``uuid`` and ``sessionId``, a ``type`` the recorder writes, and a
    Gemini ``Content`` message (``parts``), a ``systemPayload`` or the ``tool_result`` type (Claude Code's records
    share the first keys but hold Anthropic messages with ``content``).

    >>> is_record({"uuid": "u", "sessionId": "s", "type": "user", "message": {"role": "user", "parts": []}})
    True
    >>> is_record({"uuid": "u", "sessionId": "s", "type": "user", "message": {"role": "user", "content": "hi"}})
    False
    """
    if not (isinstance(value, dict) and type(value.get("uuid")) is str and type(value.get("sessionId")) is str):
        return False
    if value.get("type") not in RECORD_TYPES:
        return False
    msg = value.get("message")
    return (
        (isinstance(msg, dict) and isinstance(msg.get("parts"), list))
        or "systemPayload" in value
        or value["type"] == TOOL_RESULT
    )


def _chain(records: dict[int, Any]) -> list[int]:
    """The indexes of the conversation's records, root first: from the last record, ``parentUuid`` to the first
    record of each uuid, stopping at a null, missing or already visited parent (``buildOrderedUuidChain``
    without gap bridging, the CLI's default)."""
    first: dict[str, int] = {}
    last: str | None = None
    for i, rec in records.items():
        if isinstance(rec, dict) and type(rec.get("uuid")) is str:
            first.setdefault(rec["uuid"], i)
            last = rec["uuid"]
    out: list[int] = []
    seen: set[str] = set()
    uuid: Any = last
    while type(uuid) is str and uuid not in seen and uuid in first:
        seen.add(uuid)
        out.append(first[uuid])
        uuid = records[first[uuid]].get("parentUuid")
    out.reverse()
    return out


def _obj(value: Any) -> bool:
    """An object whose keys the reader may map one by one (``layout.walkable``), not an array."""
    return isinstance(value, dict) and walkable(value)


def _order(pointer: str) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in parse(pointer))


class _Session:
    """One file being read: the layout (residual and pointer map), the turns, the calls waiting for results."""

    def __init__(self, document_id: str | None, records: dict[int, Any]) -> None:
        self.document_id = document_id
        self.records = records
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        self.shared: dict[str, Any] = {}  # source key → the document's value (the first record's)
        self.pending: dict[str, tuple[int, int]] = {}  # source call id → (turn, call) not yet answered
        self.used_ids: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.counts = {"off_chain": 0, "orphan_results": 0}
        self.system: dict[str, int] = {}
        self.parent: dict[str, str] | None = None  # the session this sub-session was spawned from
        self.unread: str | None = None  # the first user/assistant record on the chain without a readable message
        for rec in records.values():
            for key in (*SHARED, GIT_BRANCH[0]):
                if isinstance(rec, dict) and type(rec.get(key)) is str and key not in self.shared:
                    self.shared[key] = rec[key]

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id)

    # ---------------------------------------------------------------------------------------------- records

    def read(self) -> dict[str, Any]:
        if not self.shared.get("sessionId"):
            raise self.error("/0/sessionId", "a Qwen Code session's records hold its sessionId (a non-empty string)")
        on_chain = set(_chain(self.records))
        for i, rec in self.records.items():
            ptr = f"/{i}"
            if i not in on_chain:
                self.lay.keep(ptr, rec)
                self.counts["off_chain"] += 1
                self._parent(rec)  # written once at the start: a rewind may leave it off the chain
                continue
            msg = rec.get("message")
            content = _obj(rec) and _obj(msg) and isinstance(msg.get("parts"), list)
            kind = rec["type"] if type(rec.get("type")) is str else None
            if content and kind in TURN_TYPES:
                self._turn(ptr, rec)
            elif content and kind == TOOL_RESULT:
                self._results(ptr, rec)
            elif kind == SYSTEM and rec.get("subtype") == COMPRESSION_SUBTYPE and self._compression(ptr, rec):
                self.system[COMPRESSION_SUBTYPE] = self.system.get(COMPRESSION_SUBTYPE, 0) + 1
            else:
                self.lay.keep(ptr, rec)
                if kind in TURN_TYPES and self.unread is None:
                    self.unread = ptr
                self._parent(rec)
                if kind == SYSTEM:
                    subtype = rec.get("subtype") if type(rec.get("subtype")) is str else ""
                    self.system[subtype] = self.system.get(subtype, 0) + 1
        if not any(turn["src"] != "system" for turn in self.turns) and self.unread is not None:
            raise self.error(
                f"{self.unread}/message",
                "no user or assistant record of the conversation holds a message with Gemini parts: nothing to "
                "read as turns",
            )
        if not any(turn["src"] != "system" for turn in self.turns):  # a compression checkpoint alone is no talk
            raise NoConversationError(
                "the session holds no user or assistant record on its chain: only bookkeeping",
                document_id=self.document_id,
            )
        return self._story()

    def _compression(self, ptr: str, rec: dict[str, Any]) -> bool:
        """A ``chat_compression`` record whose ``compressedHistory`` opens with a ``user`` entry of text parts (the
        summary): a context turn holding that text (``COMPRESSION_SUBTYPE``). Every other value of the record (its
        ``info``, the model's acknowledgement, the kept tail the chain already holds) stays residual at its pointer.
        False (the caller keeps the record whole) for one without such a summary."""
        payload = rec.get("systemPayload")
        history = payload.get("compressedHistory") if _obj(payload) else None
        first = history[0] if isinstance(history, list) and history else None
        parts = first.get("parts") if _obj(first) and first.get("role") == "user" else None
        texts = [
            k
            for k, part in enumerate(parts if isinstance(parts, list) else ())
            if _obj(part) and type(part.get("text")) is str and part.get("thought") is not True
        ]
        if not texts:
            return False
        t = len(self.turns)
        at = f"/turns/{t}"
        turn: dict[str, Any] = {"id": t + 1, "src": "system", "msg": None, "kind": CONTEXT_KIND}
        self.turns.append(turn)
        if is_time(rec.get("timestamp")):
            turn["ts"] = rec["timestamp"]
            self.lay.map(f"{ptr}/timestamp", rec["timestamp"], f"{at}/ts", turn["ts"])
        elif "timestamp" in rec:
            self.lay.keep(f"{ptr}/timestamp", rec["timestamp"])
        hp = f"{ptr}/systemPayload/compressedHistory"
        self.lay.rest(payload, f"{ptr}/systemPayload", ("compressedHistory",))
        self.lay.rest(first, f"{hp}/0", ("parts",))
        for j in range(1, len(history)):
            self.lay.keep(f"{hp}/{j}", history[j])
        one = len(texts) == 1
        turn["msg"] = parts[texts[0]]["text"] if one else [{"type": "text", "text": parts[k]["text"]} for k in texts]
        for k, part in enumerate(parts):
            pp = f"{hp}/0/parts/{k}"
            if k not in texts:
                self.lay.keep(pp, part)
                continue
            target = f"{at}/msg" if one else f"{at}/msg/{texts.index(k)}/text"
            self.lay.map(f"{pp}/text", part["text"], target, part["text"])
            self.lay.rest(part, pp, ("text",))
        turn["extra"] = {COMPACTION_EXTRA: COMPRESSION_SUBTYPE}
        self._record_keys(ptr, rec, ("timestamp", "systemPayload"))
        return True

    def _parent(self, rec: Any) -> None:
        """``/parent`` (derived; the record stays residual) from the first ``parent_session`` record."""
        payload = rec.get("systemPayload") if isinstance(rec, dict) and rec.get("subtype") == PARENT_SUBTYPE else None
        psid = payload.get(PARENT_KEY) if isinstance(payload, dict) else None
        if self.parent is None and type(psid) is str and psid:
            self.parent = {"psid": psid, "rel": PARENT_REL}

    def _record_keys(self, ptr: str, rec: dict[str, Any], used: tuple[str, ...]) -> None:
        """The keys every record has: the shared ones mapped when they are the document's, the rest residual
        (a ``_storyline`` envelope taken back)."""
        for key, target in (*SHARED.items(), GIT_BRANCH):
            if key in rec:
                self.lay.map(f"{ptr}/{key}", rec[key], target, self.shared.get(key))
        for key, value in rec.items():
            if key in used or key in SHARED or key == GIT_BRANCH[0]:
                continue
            if key == ENVELOPE_KEY and self.lay.kept.take_envelope(value):
                continue
            self.lay.keep(join(ptr, key), value)

    def _turn(self, ptr: str, rec: dict[str, Any]) -> None:
        t = len(self.turns)
        at = f"/turns/{t}"
        src = TURN_TYPES[rec["type"]]
        turn: dict[str, Any] = {"id": t + 1, "src": src, "msg": None}
        self.turns.append(turn)
        self.lay.map(f"{ptr}/type", rec["type"], f"{at}/src", src, "type")
        if is_time(rec.get("timestamp")):
            turn["ts"] = rec["timestamp"]
            self.lay.map(f"{ptr}/timestamp", rec["timestamp"], f"{at}/ts", turn["ts"])
        elif "timestamp" in rec:
            self.lay.keep(f"{ptr}/timestamp", rec["timestamp"])
        used = ["type", "timestamp", "message", "model", "usageMetadata"]
        context = context_of(rec) if src == "user" else None
        if context is not None:  # not the user's words: a context turn, as Claude Code's notifications are
            key, why = context
            turn.update(copied=True, kind=CONTEXT_KIND, extra={EXTRA_KEY: {"context": why}})
            self.lay.map(f"{ptr}/{key}", why, f"{at}/extra/{EXTRA_KEY}/context", why)
            used.append(key)
        self._message(ptr, rec["message"], turn, t)
        if type(rec.get("model")) is str:
            turn["model"] = rec["model"]
            self.lay.map(f"{ptr}/model", rec["model"], f"{at}/model", rec["model"])
        elif "model" in rec:
            self.lay.keep(f"{ptr}/model", rec["model"])
        if "usageMetadata" in rec:
            self._usage(f"{ptr}/usageMetadata", rec["usageMetadata"], turn, t)
        self._record_keys(ptr, rec, tuple(used))

    def _message(self, ptr: str, msg: dict[str, Any], turn: dict[str, Any], t: int) -> None:
        at = f"/turns/{t}"
        mp = f"{ptr}/message"
        if "role" in msg:
            self.lay.map(f"{mp}/role", msg["role"], f"{at}/src", turn["src"], "role")
        self.lay.rest(msg, mp, ("role", "parts"))
        parts = msg["parts"]
        if not parts:
            self.lay.keep(f"{mp}/parts", parts)
        texts: list[tuple[str, dict[str, Any]]] = []
        thoughts: list[tuple[str, dict[str, Any]]] = []
        for k, part in enumerate(parts):
            pp = f"{mp}/parts/{k}"
            text = part.get("text") if _obj(part) else None
            if type(text) is str and "functionCall" not in part and "functionResponse" not in part:
                if part.get("thought") is True:
                    thoughts.append((pp, part))
                elif "thought" in part:
                    self.lay.keep(pp, part)
                else:
                    texts.append((pp, part))
            elif _obj(part) and self._call(pp, part, turn, t):
                continue
            else:
                self.lay.keep(pp, part)
        if len(texts) == 1:
            pp, part = texts[0]
            turn["msg"] = part["text"]
            self.lay.map(f"{pp}/text", part["text"], f"{at}/msg", part["text"])
            self.lay.rest(part, pp, ("text",))
        elif texts:
            turn["msg"] = []
            for j, (pp, part) in enumerate(texts):
                turn["msg"].append({"type": "text", "text": part["text"]})
                self.lay.map(f"{pp}/text", part["text"], f"{at}/msg/{j}/text", part["text"])
                self.lay.rest(part, pp, ("text",))
        if len(thoughts) == 1:
            pp, part = thoughts[0]
            turn["reason"] = part["text"]
            self.lay.map(f"{pp}/text", part["text"], f"{at}/reason", part["text"])
            self.lay.rest(part, pp, ("text",))
        elif thoughts:  # several: reason is a derived copy, the parts stay as written
            turn["reason"] = "\n\n".join(part["text"] for _, part in thoughts)
            for pp, part in thoughts:
                self.lay.keep(pp, part)

    def _call(self, pp: str, part: dict[str, Any], turn: dict[str, Any], t: int) -> bool:
        """A ``functionCall`` part as a call of turn ``t``; False (the caller keeps the part) when it has no
        string id and name."""
        fc = part.get("functionCall")
        if not _obj(fc):
            return False
        cid, name = fc.get("id"), fc.get("name")
        if not (type(cid) is str and cid and type(name) is str and name):
            return False
        tcid, n = cid, 2
        while tcid in self.used_ids:
            tcid, n = f"{cid}#{n}", n + 1
        self.used_ids.add(tcid)
        if tcid != cid:
            self.renamed[tcid] = cid
        calls = turn.setdefault("tool_calls", [])
        c = len(calls)
        target = f"/turns/{t}/tool_calls/{c}"
        call: dict[str, Any] = {"tcid": tcid, "fn": name, "args": fc.get("args", {})}
        calls.append(call)
        fp = f"{pp}/functionCall"
        self.lay.map(f"{fp}/id", cid, f"{target}/tcid", tcid, None if tcid == cid else "renamed_id")
        self.lay.map(f"{fp}/name", name, f"{target}/fn", name)
        if "args" in fc:
            self.lay.map(f"{fp}/args", fc["args"], f"{target}/args", fc["args"])
        self.lay.rest(fc, fp, ("id", "name", "args"))
        self.lay.rest(part, pp, ("functionCall",))
        self.pending[cid] = (t, c)
        return True

    def _usage(self, up: str, usage: Any, turn: dict[str, Any], t: int) -> None:
        if not _obj(usage) or not usage:
            self.lay.keep(up, usage)
            return
        for key, value in usage.items():
            if type(value) is not int:
                self.lay.keep(join(up, key), value)
                continue
            metrics = turn.setdefault("metrics", {})
            if key in USAGE:
                metrics[USAGE[key]] = value
                self.lay.map(join(up, key), value, f"/turns/{t}/metrics/{USAGE[key]}", value)
            else:
                metrics.setdefault("extra", {})[key] = value
                self.lay.map(join(up, key), value, join(f"/turns/{t}/metrics/extra", key), value)

    def _results(self, ptr: str, rec: dict[str, Any]) -> None:
        """A ``tool_result`` record: each ``functionResponse`` the result of the pending call of its id."""
        msg = rec["message"]
        mp = f"{ptr}/message"
        self.lay.rest(msg, mp, ("parts",))
        if not msg["parts"]:
            self.lay.keep(f"{mp}/parts", msg["parts"])
        answered: dict[str, str] = {}  # source call id → the call's pointer
        for k, part in enumerate(msg["parts"]):
            pp = f"{mp}/parts/{k}"
            fr = part.get("functionResponse") if _obj(part) else None
            fid = fr.get("id") if _obj(fr) else None
            if not (type(fid) is str and fid in self.pending and "response" in fr):
                self.lay.keep(pp, part)
                self.counts["orphan_results"] += 1
                continue
            t, c = self.pending.pop(fid)
            call = self.turns[t]["tool_calls"][c]
            target = f"/turns/{t}/tool_calls/{c}"
            answered[fid] = target
            call["result"] = fr["response"]
            fp = f"{pp}/functionResponse"
            self.lay.map(f"{fp}/response", fr["response"], f"{target}/result", fr["response"])
            self.lay.map(f"{fp}/id", fid, f"{target}/tcid", call["tcid"], None if call["tcid"] == fid else "renamed_id")
            if "name" in fr:
                self.lay.map(f"{fp}/name", fr["name"], f"{target}/fn", call["fn"])
            self.lay.rest(fr, fp, ("id", "name", "response"))
            self.lay.rest(part, pp, ("functionResponse",))
        tcr = rec.get("toolCallResult")
        if "toolCallResult" in rec:
            self._status(f"{ptr}/toolCallResult", tcr, answered)
        self._record_keys(ptr, rec, ("message", "toolCallResult"))

    def _status(self, tp: str, tcr: Any, answered: dict[str, str]) -> None:
        """``toolCallResult.status`` → the answered call's ``response.status``; the rest is the UI's copy."""
        if not _obj(tcr) or not tcr:
            self.lay.keep(tp, tcr)
            return
        target = answered.get(tcr.get("callId")) if type(tcr.get("callId")) is str else None
        status = tcr.get("status")
        if target is not None and type(status) is str:
            t, c = (int(x) for x in target.split("/")[2::2])
            self.turns[t]["tool_calls"][c]["response"] = {"status": status}
            self.lay.map(f"{tp}/status", status, f"{target}/response/status", status)
            self.lay.rest(tcr, tp, ("status",))
        else:
            self.lay.rest(tcr, tp, ())

    # ---------------------------------------------------------------------------------------------- document

    def _story(self) -> dict[str, Any]:
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["session"] = self.shared["sessionId"]
        agent: dict[str, Any] = {"id": AGENT_ID, "name": AGENT_NAME}
        if "version" in self.shared:
            agent["ver"] = self.shared["version"]
        story["agent"] = agent
        state = {k: self.shared[k] for k in ("cwd", GIT_BRANCH[0]) if k in self.shared}
        if state:
            story["task"] = {"env": {"state": state}}
        stamps = [turn["ts"] for turn in self.turns if "ts" in turn]
        if stamps:
            story["started_at"], story["finished_at"] = stamps[0], stamps[-1]
        story["turns"] = self.turns
        if self.parent is not None:
            story["parent"] = self.parent
        hints: dict[str, Any] = {**self.lay.hints("object"), "records": len(self.records), **self.counts}
        # in source order, not reading order: the writer lays keys out by pointer, so a file written back reads
        # back to the same map
        hints["map"] = sorted(hints["map"], key=lambda entry: _order(entry[0]))
        if self.system:
            hints["system"] = self.system
        story["meta"] = {NAME: hints}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return self.lay.kept.finish(story)


def read_session(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The records of one session file (``base.one_document_records``): one error record per line that is not
    JSON (the other lines still make the session), then the session's document, or the error that refused it."""
    return one_document_records(
        data,
        document_id,
        "a Qwen Code session file is JSON Lines of chat records (objects)",
        lambda records: _Session(document_id, records).read(),
    )


iter_records = read_session
