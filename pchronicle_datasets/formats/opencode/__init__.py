"""The ``opencode`` format: an ``opencode export <sessionID>`` JSON file, one session (docs/formats/opencode.md).

``{"info": {id, parentID?, agent, title, tokens, …}, "messages": [{"info": {id, role, modelID, tokens, cost,
time, …}, "parts": [text | reasoning | tool | file | step-start | step-finish | patch | compaction | subtask …]}]}``.
One message is one turn: its text parts are the message, its reasoning parts the reason, its tool parts the calls
with their results. Every other part and key is residual at its pointer; the writer puts everything back.

Written from the schema (entireio/cli ``cmd/entire/cli/agent/opencode/AGENT.md``, OpenCode 1.18.30): no public
export file is known.

>>> text = ('{"info": {"id": "ses_1", "agent": "build"}, "messages": [{"info": {"id": "msg_1", "role": "user"},'
...         ' "parts": [{"type": "text", "text": "hi"}]}]}')
>>> [story] = decode(text, "ses_1.json")
>>> story["session"], story["turns"][0]["msg"]
('ses_1', [{'type': 'text', 'text': 'hi'}])
>>> import json; json.loads(encode([story])) == json.loads(text)
True
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import FormatError, PchronicleError
from ...linking import SOURCE_CALL_IDS
from ...losses import report_loss
from ...pointer import escape, parse
from ...schema import is_time
from ..base import Record, documents, read_records
from ..residual import Residual, envelope, origin, other_sources, source_fields

__all__ = ["ALIASES", "EXTENSION", "NAME", "OUTPUT", "PER_DOCUMENT", "decode", "encode", "iter_records", "sniff"]

NAME = "opencode"
ALIASES: tuple[str, ...] = ()
EXTENSION = ".json"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".json"  # convert --per-document names each file {session}.json
ROLES = {"user": "user", "assistant": "agent"}
ROLE_OF = {v: k for k, v in ROLES.items()}
#: Part types mapped into the turn; every other part type stays residual, whole, in its place.
MAPPED_PARTS = ("text", "reasoning", "tool")
_TEXT_KEYS = ("type", "text")
_TOOL_KEYS = ("type", "tool", "callID", "state")
#: ``tokens`` of a message → ``metrics``: exactly this shape, every count an integer.
TOKEN_KEYS = {"input", "output", "reasoning", "cache"}


def sniff(sample: Any) -> bool:
    """An export: ``info`` with a string ``id`` and ``messages`` whose elements are ``{info, parts}``.

    >>> sniff({"info": {"id": "ses_1"}, "messages": []}), sniff({"messages": [{"role": "user", "content": "hi"}]})
    (True, False)
    """
    if not (
        isinstance(sample, dict) and isinstance(sample.get("info"), dict) and isinstance(sample.get("messages"), list)
    ):
        return False
    if type(sample["info"].get("id")) is not str:
        return False
    return all(isinstance(m, dict) and "parts" in m and "info" in m and "role" not in m for m in sample["messages"][:8])


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
        and tokens.keys() == TOKEN_KEYS
        and all(type(tokens[k]) is int for k in ("input", "output", "reasoning"))
        and isinstance(cache, dict)
        and cache.keys() == {"read", "write"}
        and all(type(v) is int for v in cache.values())
    ):
        return None
    metrics: dict[str, Any] = {
        "prompt_tokens": tokens["input"],
        "completion_tokens": tokens["output"],
        "cached_tokens": cache["read"],
        "extra": {"reasoning": tokens["reasoning"], "cache_write": cache["write"]},
    }
    if type(cost) in (int, float):
        metrics["cost_usd"] = cost
    return metrics


def _mapped(part: Any) -> bool:
    """Whether a part goes into the turn: a text or reasoning part with its text, a tool part with its call."""
    if not isinstance(part, dict):
        return False
    if part.get("type") in ("text", "reasoning"):
        return type(part.get("text")) is str
    state = part.get("state")
    return (
        part.get("type") == "tool"
        and type(part.get("callID")) is str
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
            and role in ROLES
            and any(_mapped(part) for part in message["parts"])
        ):
            # not a message this mapping knows, or one with nothing to say (a compaction marker, step parts
            # only): kept whole in its place, not an empty turn
            kept.keep(ptr, message)
            return None, []
        turn: dict[str, Any] = {"id": tid, "src": ROLES[role], "msg": []}
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
                if key not in (_TOOL_KEYS if kind == "tool" else _TEXT_KEYS):
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
        child = meta.get("sessionId") if isinstance(meta, dict) else None
        if tool == "task" and type(child) is str and child and child not in self.children:
            self.children.append(child)
        calls.append(call)


def iter_records(data: Any, document_id: str | None = None):
    """The document of an export file (one JSON object; JSON Lines of exports give one each)."""

    def one(value: Any, raw: bytes, line: int | None) -> list[Record]:
        try:
            if not sniff(value):
                raise FormatError(
                    "an opencode export is an object with info (a string id) and messages of {info, parts}",
                    pointer="",
                    document_id=document_id,
                    line=line,
                )
            return [Record(line, raw, story=_Reader(document_id).story(value), value=value)]
        except PchronicleError as exc:
            return [Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)]

    return read_records(
        data, document_id, lambda v, raw, d, line, i: one(v, raw, line), lambda v, text: one(v, text, None)
    )


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))


# ------------------------------------------------------------------------------------------------ writing


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for k, token in enumerate(tokens[:-1]):
        if isinstance(node, list):
            node = node[int(token)]
        else:
            node = node.setdefault(token, [] if tokens[k + 1].isdigit() and token == "parts" else {})
    if isinstance(node, list):
        node[int(tokens[-1])] = value
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], layout: list) -> dict[str, Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    out: dict[str, Any] = {"info": {"id": story["session"]}, "messages": [None] * len(layout)}
    shown = (story.get("meta") or {}).get(SOURCE_CALL_IDS) or {}
    turns = iter(story["turns"])
    for m, kinds in enumerate(layout):
        if kinds is None:
            continue
        turn = next(turns)
        info: dict[str, Any] = {"role": ROLE_OF.get(turn["src"], "user")}
        if "ts" in turn:
            info["time"] = {"created": round(turn["ts"] * 1000)}
        if "model" in turn:
            info["modelID"] = turn["model"]
        metrics = turn.get("metrics")
        if isinstance(metrics, dict) and "prompt_tokens" in metrics:
            extra = metrics.get("extra") or {}
            info["tokens"] = {
                "input": metrics["prompt_tokens"],
                "output": metrics.get("completion_tokens"),
                "reasoning": extra.get("reasoning"),
                "cache": {"read": metrics.get("cached_tokens"), "write": extra.get("cache_write")},
            }
            if "cost_usd" in metrics:
                info["cost"] = metrics["cost_usd"]
        texts = (
            iter(p.get("text") for p in turn["msg"] if isinstance(p, dict))
            if isinstance(turn["msg"], list)
            else iter(())
        )
        calls = iter(turn.get("tool_calls") or ())
        parts: list[Any] = []
        for kind in kinds:
            if kind == "text":
                parts.append({"type": "text", "text": next(texts, "")})
            elif kind == "reasoning":
                parts.append({"type": "reasoning", "text": turn.get("reason", "")})
            elif kind == "tool":
                call = next(calls)
                state: dict[str, Any] = {"status": (call.get("response") or {}).get("status"), "input": call["args"]}
                if "result" in call:
                    if state["status"] == "error" and isinstance(call["result"], dict):
                        state["error"] = call["result"].get("error")
                    else:
                        state["output"] = call["result"]
                parts.append(
                    {
                        "type": "tool",
                        "callID": shown.get(call["tcid"], call["tcid"]),
                        "tool": call["fn"],
                        "state": state,
                    }
                )
            else:
                parts.append(None)
        out["messages"][m] = {"info": info, "parts": parts}
    if story.get("agent", {}).get("name") is not None:
        out["info"]["agent"] = story["agent"]["name"]
    if "notes" in story:
        out["info"]["title"] = story["notes"]
    if "parent" in story:
        out["info"]["parentID"] = story["parent"]["psid"]
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        _put(out, parse(pointer), value)
    return out


def _synthesized(story: dict[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = {"id": story["session"]}
    if isinstance(story["agent"].get("name"), str):
        info["agent"] = story["agent"]["name"]
    if isinstance(story.get("notes"), str):
        info["title"] = story["notes"]
    if "parent" in story:
        info["parentID"] = story["parent"]["psid"]
    out: dict[str, Any] = {"info": info, "messages": []}
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        out["_storyline"] = carried
    results = {}
    for turn in story["turns"]:
        for res in (
            (turn.get("observation") or {}).get("results") or [] if isinstance(turn.get("observation"), dict) else []
        ):
            if isinstance(res, dict) and isinstance(res.get("source_call_id"), str):
                results[res["source_call_id"]] = res.get("content")
    for t, turn in enumerate(story["turns"]):
        if turn["src"] not in ROLE_OF:
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
        msg = turn["msg"]
        texts = (
            [msg]
            if isinstance(msg, str)
            else [p["text"] for p in msg if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if isinstance(msg, list)
            else []
        )
        parts: list[dict[str, Any]] = [{"type": "text", "text": x} for x in texts]
        if isinstance(turn.get("reason"), str):
            parts.insert(0, {"type": "reasoning", "text": turn["reason"]})
        for call in turn.get("tool_calls") or ():
            state: dict[str, Any] = {"status": "completed", "input": call["args"]}
            result = call["result"] if "result" in call else results.get(call["tcid"])
            if result is not None:
                state["output"] = result
            parts.append({"type": "tool", "callID": call["tcid"], "tool": call["fn"], "state": state})
        minfo: dict[str, Any] = {"role": ROLE_OF.get(turn["src"], "user")}
        if isinstance(turn.get("model"), str):
            minfo["modelID"] = turn["model"]
        out["messages"].append({"info": minfo, "parts": parts})
    return out


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The export of one document ("" for none); several are refused (one file per session)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"an opencode export holds one session, not {len(stories)}: convert --per-document", pointer=""
        )
    story = stories[0]
    layout = ((story.get("meta") or {}).get(NAME) or {}).get("layout") if isinstance(story.get("meta"), dict) else None
    same = (story.get("origin") or {}).get("format") == NAME and isinstance(layout, list)
    if same and sum(k is not None for k in layout) == len(story["turns"]):
        value = _same_source(story, layout)
    else:
        value = _synthesized(story)
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n"
