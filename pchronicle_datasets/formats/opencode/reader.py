"""One OpenCode export (its parsed JSON object) → one Storyline document (the table in docs/formats/opencode.md).

One message is one turn: its text parts are the message, its reasoning parts the reason, its tool parts the calls
with their results; every other part and key is residual at its pointer (``/meta/opencode/layout``: each message's
part kinds, for the writer).

>>> story = read_export({"info": {"id": "ses_1"}, "messages": [{"info": {"id": "m", "role": "assistant"},
...     "parts": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "hi"}]}]}, "ses_1.json")
>>> story["turns"][0]["reason"], story["meta"]["opencode"]["layout"]
('hmm', [['reasoning', 'text']])
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, NoConversationError
from ...linking import SOURCE_CALL_IDS
from ...pointer import escape
from ...schema import is_time
from ..residual import Residual, origin
from .fields import (
    CACHE_KEYS,
    CHILD_SESSION_KEYS,
    COMPACTION_EXTRA,
    CONTEXT_ROLES,
    MAPPED_PARTS,
    NAME,
    ROLES,
    SUBAGENT_TOOLS,
    TEXT_KEYS,
    TOKEN_KEYS,
    TOOL_KEYS,
    TOTAL,
)

__all__ = ["read_export"]


def _ms_ts(value: Any) -> float | None:
    """A millisecond epoch as Storyline seconds, when it converts back exactly."""
    if type(value) is not int:
        return None
    ts = value / 1000
    return ts if is_time(ts) and round(ts * 1000) == value else None


def _metrics(info: dict[str, Any]) -> dict[str, Any] | None:
    tokens, cost = info.get("tokens"), info.get("cost")
    cache = tokens.get("cache") if isinstance(tokens, dict) else None
    if not (
        isinstance(tokens, dict)
        and tokens.keys() - {TOTAL} == TOKEN_KEYS
        and all(type(tokens[k]) is int for k in ("input", "output", "reasoning", TOTAL) if k in tokens)
        and isinstance(cache, dict)
        and cache.keys() == CACHE_KEYS
        and all(type(v) is int for v in cache.values())
    ):
        return None
    metrics: dict[str, Any] = {
        "prompt_tokens": tokens["input"],
        "completion_tokens": tokens["output"],
        "cached_tokens": cache["read"],
        "extra": {"reasoning": tokens["reasoning"], "cache_write": cache["write"]},
    }
    if TOTAL in tokens:
        metrics["extra"][TOTAL] = tokens[TOTAL]
    if type(cost) in (int, float):
        metrics["cost_usd"] = cost
    return metrics


def _mapped(part: Any) -> bool:
    """Whether a part goes into the turn: a text or reasoning part with its text, a tool part with its call."""
    kind = part.get("type") if isinstance(part, dict) else None
    if kind not in MAPPED_PARTS:
        return False
    if kind != "tool":
        return type(part.get("text")) is str
    state = part.get("state")
    return (
        type(part.get("callID")) is str
        and bool(part["callID"])
        and type(part.get("tool")) is str
        and bool(part["tool"])
        and isinstance(state, dict)
        and "input" in state
        and type(state.get("status")) is str
    )


class _Reader:
    def __init__(self, document_id: str | None) -> None:
        self.kept = Residual(NAME, document_id)
        self.used: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.children: list[str] = []

    def story(self, value: dict[str, Any]) -> dict[str, Any]:
        kept, info = self.kept, value["info"]
        if not info["id"]:
            raise FormatError("the session's info.id is empty", pointer="/info/id")
        story: dict[str, Any] = {
            "schema_version": "storyline/v1",
            "origin": origin(NAME, kept.document_id),
            "session": info["id"],
            "agent": {"id": NAME},
            "turns": [],
        }
        for key, v in info.items():
            if key == "agent" and type(v) is str:
                story["agent"]["name"] = v
            elif key == "title" and type(v) is str:
                story["notes"] = v
            elif key == "version" and type(v) is str and v:  # the OpenCode version that wrote the session
                story["agent"]["ver"] = v
            elif key == "parentID" and type(v) is str and v:
                story["parent"] = {"psid": v, "rel": "subagent"}
            elif key != "id":
                kept.keep(f"/info/{escape(key)}", v)
        for key, v in value.items():
            if key == "_storyline" and kept.take_envelope(v):
                continue
            if key not in ("info", "messages"):
                kept.keep(f"/{escape(key)}", v)
        layout = []
        for m, message in enumerate(value["messages"]):
            turn, parts = self._turn(len(story["turns"]) + 1, f"/messages/{m}", message)
            if turn is None:
                layout.append(None)
            else:
                story["turns"].append(turn)
                layout.append(parts)
        if not story["turns"]:
            if layout:  # every message fell into residual: refused, not left out (nothing is lost silently)
                raise FormatError("no message this reader can read: nothing to read as turns", pointer="/messages")
            raise NoConversationError("the export holds no message: only the session's info", pointer="/messages")
        story["meta"] = {NAME: {"version": 1, "layout": layout}}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        if self.children:
            story["children"] = self.children
        return kept.finish(story)

    def _turn(self, tid: int, ptr: str, message: Any) -> tuple[dict[str, Any] | None, list[str]]:
        kept = self.kept
        info = message.get("info") if isinstance(message, dict) else None
        role = info.get("role") if isinstance(info, dict) else None
        if not (
            isinstance(message, dict)
            and isinstance(message.get("parts"), list)
            and isinstance(role, str)  # a list or object role is unhashable: not looked up
            and (role in ROLES or role in CONTEXT_ROLES)
            and any(_mapped(part) for part in message["parts"])
        ):
            # not a message this mapping knows, or one with nothing to say (a compaction marker, step parts
            # only): kept whole in its place, not an empty turn
            kept.keep(ptr, message)
            return None, []
        turn: dict[str, Any] = {"id": tid, "src": ROLES.get(role) or CONTEXT_ROLES[role], "msg": []}
        if role not in ROLES:  # OpenCode 2's injected kinds (fields.CONTEXT_ROLES): the model saw them, as context
            turn.update(copied=True, kind="context")
            turn["extra"] = dict(COMPACTION_EXTRA) if role == "compaction" else {NAME: {"context": role}}
            kept.keep(f"{ptr}/info/role", role)  # the writer writes the role of the turn's src: the kind wins
        metrics = _metrics(info)
        for key, v in info.items():
            iptr = f"{ptr}/info/{escape(key)}"
            if key == "time" and isinstance(v, dict) and _ms_ts(v.get("created")) is not None:
                turn["ts"] = _ms_ts(v["created"])
                for k2, v2 in v.items():
                    if k2 != "created":
                        kept.keep(f"{iptr}/{escape(k2)}", v2)
            elif key == "modelID" and type(v) is str:
                turn["model"] = v
            elif key == "tokens" and metrics is not None:
                turn["metrics"] = metrics
            elif key == "cost" and metrics is not None and "cost_usd" in metrics:
                continue  # in metrics.cost_usd
            elif key != "role":
                kept.keep(iptr, v)
        for key, v in message.items():
            if key not in ("info", "parts"):
                kept.keep(f"{ptr}/{escape(key)}", v)
        kinds, reasons, calls = [], [], []
        for p, part in enumerate(message["parts"]):
            pptr = f"{ptr}/parts/{p}"
            kind = part.get("type") if isinstance(part, dict) else None
            if not _mapped(part):
                kinds.append("r")
                kept.keep(pptr, part)
                continue
            if kind == "text":
                turn["msg"].append({"type": "text", "text": part["text"]})
            elif kind == "reasoning":
                reasons.append(part["text"])
            else:
                self._call(part, pptr, calls)
            kinds.append(kind)
            for key, v in part.items():
                if key not in (TOOL_KEYS if kind == "tool" else TEXT_KEYS):
                    kept.keep(f"{pptr}/{escape(key)}", v)
        if reasons:
            turn["reason"] = "\n\n".join(reasons)
            if len(reasons) > 1:  # several: the text is a convenience, each part keeps its own
                for p, part in enumerate(message["parts"]):
                    if kinds[p] == "reasoning":
                        kept.keep(f"{ptr}/parts/{p}/text", part["text"])
        if calls:
            turn["tool_calls"] = calls
        return turn, kinds

    def _call(self, part: dict[str, Any], pptr: str, calls: list) -> None:
        state, cid, tool = part["state"], part["callID"], part["tool"]
        tcid = cid
        n = 2
        while tcid in self.used:
            tcid, n = f"{cid}#{n}", n + 1
        if tcid != cid:
            self.renamed[tcid] = cid
        self.used.add(tcid)
        call: dict[str, Any] = {
            "tcid": tcid,
            "fn": tool,
            "args": state["input"],
            "response": {"status": state["status"]},
        }
        for key, v in state.items():
            sptr = f"{pptr}/state/{escape(key)}"
            if key == "output" and state["status"] == "completed":
                call["result"] = v
            elif key == "error" and state["status"] == "error" and type(v) is str:
                call["result"] = {"error": v}
            elif key not in ("input", "status"):
                self.kept.keep(sptr, v)
        meta = state.get("metadata")
        for key in CHILD_SESSION_KEYS if tool in SUBAGENT_TOOLS and isinstance(meta, dict) else ():
            child = meta.get(key)
            if type(child) is str and child and child not in self.children:
                self.children.append(child)
        calls.append(call)


def read_export(value: dict[str, Any], document_id: str | None = None) -> dict[str, Any]:
    """The Storyline document of one export (``value`` as ``sniff`` accepts it); ``FormatError`` with its pointer."""
    return _Reader(document_id).story(value)
